package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/rebase"
)

func newReleaseDiffCmd() *cobra.Command {
	var (
		format formatOptions
		moved  transferOptions
		arches []string
	)
	cmd := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Show what changed between two releases, for a pull request",
		Long: `diff compares two releases file by file: the core release.base per arch, and
per component and arch the images added, removed and re-digested (same
repository, new digest) or moved (another repository). OLD and NEW are each a
release directory (e.g. /usr/share/microshift/release, assets/release) or an
embedded release version ("4.18", "5.0").

With --resolve-sizes (the manifests from the images' registries, reached as
footprint reaches them) or --from oci:DIR|oci-archive:FILE (from OCI layouts or
archives), it adds per arch (--arch to choose) what the update moves to a site
that holds the old release's images: the blobs and manifests the new release's
images reach that the old ones do not, per component, shared, and in total
beside what a full bundle holds.

The text output is Markdown for a pull request description (digests shortened
to 12 hex digits); --output json has every reference whole. To compare two
builds, use 'microshift-compose diff' on their compose.lock.json files.`,
		Example: `  microshift-compose release diff 4.18 5.0
  microshift-compose release diff 5.0 assets/release > pr-body.md
  microshift-compose release diff old/release new/release --output json
  microshift-compose release diff 4.18 4.19 --resolve-sizes --arch x86_64`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := format.Validate(); err != nil {
				return err
			}
			if err := moved.Validate(); err != nil {
				return err
			}
			want := releases.Arches
			if len(arches) > 0 {
				if !moved.enabled() {
					return usageError{errors.New("--arch chooses the arches whose transfer --resolve-sizes or --from reports: add one of them")}
				}
				want = nil
				for _, s := range arches {
					a, err := releases.ParseArch(s)
					if err != nil {
						return usageError{fmt.Errorf("--arch: %w", err)}
					}
					want = append(want, a)
				}
			}
			oldRel, oldLabel, err := loadReleaseArg(args[0])
			if err != nil {
				return err
			}
			newRel, newLabel, err := loadReleaseArg(args[1])
			if err != nil {
				return err
			}
			d := rebase.DiffReleases(oldRel, newRel, oldLabel, newLabel)
			if moved.enabled() {
				read, err := moved.reader(cmd.Context())
				if err != nil {
					return err
				}
				if err := d.AddTransfer(oldRel, newRel, want, read); err != nil {
					return err
				}
			}
			if format.json() {
				return printJSON(cmd.OutOrStdout(), d)
			}
			_, err = cmd.OutOrStdout().Write(d.Markdown())
			return err
		},
	}
	format.addFlags(cmd)
	moved.addFlags(cmd)
	cmd.Flags().StringSliceVar(&arches, "arch", nil, "arch to report the transfer of (x86_64, aarch64; repeatable; default: every arch of the new release)")
	return cmd
}

// loadReleaseArg reads a release diff argument: a release directory, or
// the version of an embedded release.
func loadReleaseArg(arg string) (*releases.Release, string, error) {
	st, err := os.Stat(arg)
	switch {
	case err == nil && st.IsDir():
		if _, err := os.Stat(filepath.Join(arg, output.LockFile)); err == nil {
			return nil, "", fmt.Errorf("%s is a build output (it holds %s); compare builds with 'microshift-compose diff'", arg, output.LockFile)
		}
		r, err := releases.LoadDir(arg)
		return r, arg, err
	case err == nil:
		return nil, "", fmt.Errorf("%s is a file; release diff compares release directories or embedded release versions (compare compose.lock.json files with 'microshift-compose diff')", arg)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, "", fmt.Errorf("reading %s: %w", arg, err)
	}
	rels, err := releases.Embedded()
	if err != nil {
		return nil, "", err
	}
	var have []string
	for i := len(rels) - 1; i >= 0; i-- {
		have = append(have, rels[i].Stream())
	}
	if _, err := semver.NewConstraint(arg); err != nil {
		return nil, "", fmt.Errorf("%s: no such directory, and not an embedded release version (have %s)", arg, strings.Join(have, ", "))
	}
	r, err := releases.Select(rels, arg)
	if err != nil {
		return nil, "", fmt.Errorf("%s: no such directory, and no embedded release matches it (have %s)", arg, strings.Join(have, ", "))
	}
	return r, r.String(), nil
}
