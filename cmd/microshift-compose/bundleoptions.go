package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/containers/image/v5/docker/reference"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/osbuild/images/pkg/datasizes"
	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/imageref"
	"github.com/microshift-compose/microshift-compose/internal/safetext"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
	"github.com/microshift-compose/microshift-compose/releases"
)

// bundleOptions are what mirror carries across an air gap beyond a plain
// copy: a differential bundle (--since), images beyond the plan (--image,
// the bootc OS image first of all), and an archive cut into parts that
// fit the media (--max-size).
type bundleOptions struct {
	Since   []string
	Images  []string
	MaxSize string
	// built are the filtered operator catalogs the locks of --since name,
	// where their builds wrote them (set by bases).
	built []airgap.Target
}

// minPartSize is the smallest --max-size: smaller parts only multiply
// files.
const minPartSize = 1 << 20

func (o *bundleOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&o.Since, "since", nil, "write a differential bundle that leaves out the blobs OLD reaches, OLD being what the site holds already: a compose.lock.json (its images' manifests are read from the source), an image REF@sha256:… (the OS image the devices run, which no lock names), an oci:DIR layout or an oci-archive:FILE (split or not, a bundle itself too); repeatable")
	f.StringArrayVar(&o.Images, "image", nil, "copy this image too, beyond the plan (the bootc OS image built from the Containerfile first of all), verified with --policy/--verify-key as the plan's; digest-pinned unless --allow-unpinned; repeatable")
	f.StringVar(&o.MaxSize, "max-size", "", "write --to oci-archive:FILE as numbered parts FILE.001, FILE.002, … of at most SIZE each (e.g. 4GiB, 700MB; at least 1MiB) and FILE.parts.json listing their sizes and sha256; a rerun writes only the parts missing or different")
}

// Validate checks the flags against the destination; the files are read
// later.
func (o *bundleOptions) Validate(to airgap.Target, allowUnpinned bool) error {
	if len(o.Since) > 0 && to.Transport != airgap.TransportOCI && to.Transport != airgap.TransportArchive {
		return usageError{fmt.Errorf("--since writes a differential bundle to oci:DIR or oci-archive:FILE, which the site applies with 'mirror --from'; --to %s is not one", to)}
	}
	if o.MaxSize != "" {
		if to.Transport != airgap.TransportArchive {
			return usageError{fmt.Errorf("--max-size cuts an oci-archive:FILE into parts; --to %s is not one", to)}
		}
		if _, err := o.partSize(); err != nil {
			return err
		}
	}
	for _, ref := range o.Images {
		if err := checkExtraImage(ref, allowUnpinned); err != nil {
			return err
		}
	}
	return nil
}

// checkExtraImage refuses an --image that is not a full reference, holds
// credentials, or is not pinned by digest (unless allowed).
func checkExtraImage(ref string, allowUnpinned bool) error {
	if safetext.RegistryCredentials(ref) {
		return usageError{errors.New("--image holds credentials (user:password@ before the registry): give them in the auth file (--authfile, podman login), not in the reference")}
	}
	// A full reference, the registry named: ParseNamed refuses what would
	// be normalized (ubuntu -> docker.io/library/ubuntu).
	_, err := reference.ParseNamed(ref)
	r, perr := imageref.ParseReference(ref, name.StrictValidation)
	if err != nil || perr != nil {
		return usageError{fmt.Errorf("--image %q is not a full image reference (registry/repository@sha256:…)", clipArg(ref))}
	}
	if _, ok := r.(name.Digest); !ok && !allowUnpinned {
		return usageError{fmt.Errorf("--image %s is not pinned by digest: name it as %s@sha256:… (podman push --digestfile, skopeo inspect), or add --allow-unpinned to copy what the tag names now", ref, r.Context().Name())}
	}
	return nil
}

func clipArg(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// partSize is --max-size in bytes (0 without it), parsed with
// osbuild/images' datasizes: 700MB is decimal, 4GiB binary.
func (o *bundleOptions) partSize() (int64, error) {
	if o.MaxSize == "" {
		return 0, nil
	}
	n, err := datasizes.Parse(o.MaxSize)
	if err != nil {
		return 0, usageError{fmt.Errorf("--max-size %q is not a size (e.g. 4GiB, 700MB, 4000MB for FAT32 media)", o.MaxSize)}
	}
	if n < minPartSize {
		return 0, usageError{fmt.Errorf("--max-size %q is smaller than 1 MiB", o.MaxSize)}
	}
	if n > 1<<50 {
		return 0, usageError{fmt.Errorf("--max-size %q is larger than 1 PiB", o.MaxSize)}
	}
	return int64(n), nil
}

// bases reads the --since values: oci:DIR and oci-archive:FILE are
// layouts, anything else a lock file.
func (o *bundleOptions) bases() ([]airgap.Base, error) {
	var out []airgap.Base
	for _, s := range o.Since {
		if isLayoutArg(s) {
			t, err := airgap.ParseSource(s)
			if err != nil {
				return nil, usageError{fmt.Errorf("--since: %w", err)}
			}
			out = append(out, airgap.Base{Name: s, Layout: t})
			continue
		}
		if _, err := os.Stat(s); err != nil && strings.Contains(s, "@sha256:") && checkExtraImage(s, false) == nil {
			// An image the site holds: the OS image its devices run.
			out = append(out, airgap.Base{Name: s, Refs: []string{s}, Image: s})
			continue
		}
		if _, err := os.Stat(s); err != nil && looksLikeRegistryRef(s) {
			return nil, usageError{fmt.Errorf("--since %s: a registry reference is not a base: --since names what the site holds, a compose.lock.json, an image pinned by digest (REF@sha256:…), an oci:DIR layout or an oci-archive:FILE; pin the image (%s@sha256:…) if the site runs it", clipArg(s), clipArg(registryRepo(s)))}
		}
		if st, err := os.Stat(s); err == nil && st.IsDir() || looksLikeArchive(s) {
			return nil, usageError{fmt.Errorf("--since %s: name a layout as oci:%s or an archive as oci-archive:%s (a bare path is a compose.lock.json)", s, s, s)}
		}
		p, err := lockfile.Load(s)
		if err != nil {
			return nil, fmt.Errorf("--since: %w", err)
		}
		out = append(out, airgap.Base{Name: s, Refs: p.ImageRefs(), Composition: p.ID, Arch: releases.Arch(p.Arch)})
		if t, ok := airgap.BuiltLayout(s, p); ok {
			o.built = append(o.built, t)
		}
	}
	return out, nil
}

// looksLikeRegistryRef reports whether s, which is no file, names an
// image in a registry (docker://REF, REPO:TAG, REPO@DIGEST) rather than a
// lock file that is missing.
func looksLikeRegistryRef(s string) bool {
	if strings.HasPrefix(s, "docker://") {
		return true
	}
	if strings.HasSuffix(s, ".json") {
		return false
	}
	named, err := reference.ParseNamed(s)
	return err == nil && !reference.IsNameOnly(named)
}

// registryRepo is the repository of a registry reference s (for the
// message), s itself when it does not parse.
func registryRepo(s string) string {
	s = strings.TrimPrefix(s, "docker://")
	if named, err := reference.ParseNamed(s); err == nil {
		return named.Name()
	}
	return s
}

// isLayoutArg reports whether s names a layout by its transport: oci:,
// oci-archive: or dir:.
func isLayoutArg(s string) bool {
	for _, tr := range []string{airgap.TransportOCI, airgap.TransportArchive, airgap.TransportDir} {
		if strings.HasPrefix(s, tr+":") {
			return true
		}
	}
	return false
}

func looksLikeArchive(s string) bool {
	for _, suf := range []string{".tar", airgap.PartsSuffix} {
		if strings.HasSuffix(s, suf) {
			return true
		}
	}
	n := len(s)
	return n > 4 && s[n-4] == '.' && strings.Trim(s[n-3:], "0123456789") == ""
}

// withImages adds the --image references to the plan's, once each.
func (o *bundleOptions) withImages(refs []string) []string {
	out := slices.Clone(refs)
	for _, r := range o.Images {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}
