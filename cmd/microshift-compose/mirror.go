package main

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/compose/plan"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/releases"
)

func newMirrorCmd() *cobra.Command {
	var (
		cat          catalogOptions
		rel          releaseOptions
		sel          selectionOptions
		rnd          renderOptions
		lock         lockOptions
		reg          registryOptions
		format       formatOptions
		trust        trustOptions
		file         fileOptions
		to, from     string
		allPlatforms bool
		quiet        bool
	)
	cmd := &cobra.Command{
		Use:   "mirror --to DESTINATION (--profile NAME | --lock compose.lock.json | --from oci:DIR|oci-archive:FILE)",
		Short: "Copy every image of a plan into an OCI layout, an archive file or a mirror registry, verified and resumable",
		Long: `mirror copies every image a plan needs, by digest, from its registry (or from
an OCI layout with --from) to a destination:

  --to oci:DIR                 one OCI image layout with all images; blobs shared by
                               images are stored once. Each image is named in index.json
                               by its reference (org.opencontainers.image.ref.name and
                               io.containerd.image.name), so
                               skopeo copy oci:DIR:REF containers-storage:REF loads it.
  --to dir:DIR                 the layout of oci:DIR plus one skopeo dir: directory per
                               image (DIR/<sha256 of the reference and a newline>/, listed
                               in DIR/image-list.txt), blobs hard-linked: every skopeo
                               version reads it. What build --bootc's Containerfile embeds.
  --to oci-archive:FILE        the layout in one tar file, to carry across an air gap;
                               it is staged in .FILE.partial/ (resumable) and renamed into
                               place when complete. An existing FILE's images are kept.
  --to docker://REGISTRY/PREFIX  push to a registry: quay.io/org/repo@sha256:X goes to
                               REGISTRY/PREFIX/org/repo@sha256:X, digests unchanged. A blob
                               several repositories need is uploaded once and mounted
                               into the others.

--from oci:DIR or --from oci-archive:FILE (oci:FILE works too) reads the images from
a layout instead of their registries (the disconnected side: an archive into a
registry), in place: every image the layout names, or the plan's with --lock or
--profile.

Of a multi-arch index, oci: and dir: get only the plan arch's manifest and blobs;
the index itself is kept, so the reference keeps the digest the release pins (the
layout spec allows the other platforms' manifests to be absent). A registry cannot
hold part of an index, so docker:// gets every platform, and so does oci-archive:,
which is made to be loaded into a registry. --all-platforms copies every platform
everywhere.

Sources: registries.conf mirrors of a registry are tried first, as podman and skopeo
do; credentials come from --authfile or $REGISTRY_AUTH_FILE, else the auth files
podman reads; TLS is verified with the host's certs.d certificates unless
--tls-verify=false or --insecure-registry. Every blob and manifest is checked against
its digest; content that does not match is refused. Each request is retried with
backoff on timeouts (--timeout), dropped connections, 408, 429 and 5xx. A rerun
skips blobs already present (after re-checking them). Progress goes to stderr (bars
on a terminal), the summary to stdout.

Signatures: with --policy FILE (a containers-policy.json) or --verify-key FILE
(sigstore public keys, repeatable), every image is checked against the trust
policy with containers/image, as podman and CRI-O check it, before anything is
copied: its sigstore signatures (the sha256-<digest>.sig attachments cosign
pushes beside it) are verified offline (no transparency log, no Fulcio). One
refused image (unsigned, signed by another key, signed for another repository,
a signature that does not match) fails the command, naming each image and the
policy rule, with the destination untouched. The signature attachments are then
copied with the images (to a registry by their tag too), so the next hop can
verify them again. Without --policy or --verify-key, signatures are neither
checked nor copied (the build host's /etc/containers/policy.json is not read:
pass it with --policy to apply it).`,
		Example: `  microshift-compose mirror --profile full --arch x86_64 --to oci:out/images
  microshift-compose mirror --lock out/compose.lock.json --to dir:out/images
  microshift-compose mirror --lock out/compose.lock.json --to oci-archive:microshift-images.tar
  microshift-compose mirror --from oci-archive:microshift-images.tar --to docker://mirror.example.com:5000/microshift
  microshift-compose mirror --lock out/compose.lock.json --to docker://mirror.example.com:5000/microshift --authfile auth.json
  microshift-compose mirror --lock out/compose.lock.json --verify-key redhat-release-key3.pub --to oci-archive:microshift-images.tar
  microshift-compose mirror -f device.toml --to docker://mirror.example.com:5000/microshift`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := file.apply(cmd, false); err != nil {
				return err
			}
			if to == "" {
				return usageError{errors.New("--to is required: oci:DIR, dir:DIR, oci-archive:FILE or docker://REGISTRY/PREFIX")}
			}
			target, err := airgap.ParseDestination(to)
			if err != nil {
				return usageError{fmt.Errorf("--to: %w", err)}
			}
			var source airgap.Target
			if from != "" {
				if source, err = airgap.ParseSource(from); err != nil {
					return usageError{fmt.Errorf("--from: %w", err)}
				}
			}
			if err := reg.Validate(); err != nil {
				return err
			}
			if err := format.Validate(); err != nil {
				return err
			}
			if err := trust.Validate(); err != nil {
				return err
			}
			if from != "" && trust.enabled() {
				return usageError{errors.New("--policy and --verify-key check signatures in the images' registries, and --from reads a layout: verify when mirroring from the registries (the signatures are copied into the layout with the images), or load the layout into a registry and verify there")}
			}
			var refs []string
			var arch releases.Arch
			if from != "" && lock.Path == "" && sel.Profile == "" {
				for _, n := range selectionFlags {
					if f := cmd.Flags().Lookup(n); f != nil && f.Changed {
						return usageError{fmt.Errorf("--%s selects a plan: add --profile (or --lock), or drop it to copy every image of %s", n, from)}
					}
				}
				if refs, err = airgap.LayoutImages(source, registryclient.Options{}); err != nil {
					return err
				}
			} else {
				p, err := planFrom(cmd, &lock, &cat, &rel, &sel, &rnd)
				if err != nil {
					return err
				}
				refs, arch = p.ImageRefs(), releases.Arch(p.Arch)
			}
			// Nothing to copy is a mistake (an edited or truncated lock, an
			// empty layout), not a mirror of nothing that exits 0.
			if len(refs) == 0 {
				switch {
				case lock.Path != "":
					return fmt.Errorf("lock file %s lists no images: nothing to mirror", lock.Path)
				case from != "" && sel.Profile == "":
					return fmt.Errorf("--from %s holds no images: nothing to mirror", from)
				}
				return errors.New("the plan has no images: nothing to mirror")
			}
			rc, err := reg.client()
			if err != nil {
				return err
			}
			copyRefs := refs
			if trust.enabled() {
				// Every image is verified before anything is copied: a
				// refused image leaves the destination untouched.
				if err := trust.verify(cmd.Context(), cmd.ErrOrStderr(), refs, rc, "nothing was mirrored"); err != nil {
					return err
				}
				sigs, err := trust.signatureRefs(cmd.Context(), refs, rc)
				if err != nil {
					return err
				}
				copyRefs = append(slices.Clone(refs), sigs...)
			}
			sum, err := airgap.Mirror(cmd.Context(), copyRefs, target, airgap.Options{
				Registry:     rc,
				Arch:         arch,
				AllPlatforms: allPlatforms,
				From:         source,
				Progress:     newProgress(cmd.ErrOrStderr(), quiet),
			})
			if err != nil {
				return fmt.Errorf("mirroring to %s: %w", target, err)
			}
			if sum.Images == len(copyRefs) {
				sum.Images, sum.Signatures = countSignatures(copyRefs)
			}
			if format.json() {
				return printJSON(cmd.OutOrStdout(), sum)
			}
			printMirrorSummary(cmd.OutOrStdout(), target, sum)
			return nil
		},
	}
	cat.addFlags(cmd)
	rel.addFlags(cmd)
	sel.addFlags(cmd)
	rnd.addFlags(cmd)
	lock.addFlags(cmd)
	reg.addFlags(cmd)
	format.addFlags(cmd)
	file.addFlags(cmd)
	trust.addFlags(cmd, "every image must satisfy before anything is copied; the signatures are copied with the images")
	f := cmd.Flags()
	f.StringVar(&to, "to", "", "destination: oci:DIR, dir:DIR, oci-archive:FILE or docker://REGISTRY/PREFIX")
	f.StringVar(&from, "from", "", "read the images from an OCI layout, oci:DIR or oci-archive:FILE, instead of their registries")
	f.BoolVar(&allPlatforms, "all-platforms", false, "copy every platform of multi-arch images, not only the plan's arch")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress on stderr")
	return cmd
}

// printMirrorSummary prints the one-line summary of a mirror.
func printMirrorSummary(w io.Writer, to airgap.Target, sum *airgap.Summary) {
	head := fmt.Sprintf("mirrored %d images (%d blobs, %d manifests) to %s", sum.Images, sum.Blobs, sum.Manifests, sum.Destination)
	if sum.Signatures > 0 {
		head = fmt.Sprintf("mirrored %d images and %d %s (%d blobs, %d manifests) to %s", sum.Images, sum.Signatures, text.Plural(sum.Signatures, "signature", "signatures"), sum.Blobs, sum.Manifests, sum.Destination)
	}
	if to.Transport == airgap.TransportDocker {
		fmt.Fprintf(w, "%s: %s uploaded in %d %s, %s mounted from other repositories in %d %s, %s already present, in %.1fs\n",
			head, humanBytes(sum.Fetched), sum.Uploads, text.Plural(sum.Uploads, "blob", "blobs"),
			humanBytes(sum.Mounted), sum.Mounts, text.Plural(sum.Mounts, "blob", "blobs"), humanBytes(sum.Skipped), sum.Duration.Seconds())
		return
	}
	fmt.Fprintf(w, "%s: %s fetched, %s already present, in %.1fs\n", head, humanBytes(sum.Fetched), humanBytes(sum.Skipped), sum.Duration.Seconds())
}

// planFrom is the plan a registry command works on: the lock file's, or
// the selection's.
func planFrom(cmd *cobra.Command, lock *lockOptions, cat *catalogOptions, rel *releaseOptions, sel *selectionOptions, rnd *renderOptions) (*plan.Plan, error) {
	if err := lock.Validate(cmd); err != nil {
		return nil, err
	}
	if lock.Path != "" {
		return lock.load()
	}
	if sel.Profile == "" {
		return nil, usageError{errors.New("--profile or --lock is required")}
	}
	if err := sel.Validate(); err != nil {
		return nil, err
	}
	return resolvePlan(cmd, cat, rel, sel, rnd)
}
