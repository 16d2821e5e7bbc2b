package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/compose/airgap"
	"github.com/microshift-compose/microshift-compose/compose/plan"
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
		to           string
		allPlatforms bool
		quiet        bool
	)
	cmd := &cobra.Command{
		Use:   "mirror --to oci:DIR|docker://REGISTRY/PREFIX (--profile NAME | --lock compose.lock.json)",
		Short: "Copy every image of a plan into an OCI image layout or a mirror registry, verified and resumable",
		Long: `mirror copies every image a plan needs, by digest, for the plan's arch:

  --to oci:DIR                 one OCI image layout with all images; blobs shared by
                               images are stored once. Each image is named in index.json
                               by its reference (org.opencontainers.image.ref.name and
                               io.containerd.image.name), so
                               skopeo copy oci:DIR:REF containers-storage:REF loads it.
  --to docker://REGISTRY/PREFIX  push to a registry: quay.io/org/repo@sha256:X goes to
                               REGISTRY/PREFIX/org/repo@sha256:X, digests unchanged.

Of a multi-arch index only the plan arch's manifest and blobs are copied; the index
itself is kept, so the reference keeps the digest the release pins (in an OCI layout
the other platforms' manifests are left out, as the OCI layout spec allows). A
registry cannot hold part of an index, so to a registry an index is copied whole.
--all-platforms copies every platform everywhere.

Blobs are streamed to disk and checked against their digests; a blob that does not
match is refused. A rerun skips blobs already present (after re-checking them) and
discards partial blobs of an interrupted run. Requests are retried with backoff on
5xx, 429, timeouts and dropped connections. Credentials come from the Docker and
Podman auth files. Progress goes to stderr (bars on a terminal), the summary to stdout.`,
		Example: `  microshift-compose mirror --profile full --arch x86_64 --to oci:out/images
  microshift-compose mirror --lock out/compose.lock.json --to oci:out/images
  microshift-compose mirror --lock out/compose.lock.json --to docker://mirror.example.com:5000/microshift`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "" {
				return usageError{errors.New("--to is required: oci:DIR or docker://REGISTRY/PREFIX")}
			}
			target, err := airgap.ParseDestination(to)
			if err != nil {
				return usageError{fmt.Errorf("--to: %w", err)}
			}
			if err := reg.Validate(); err != nil {
				return err
			}
			if err := format.Validate(); err != nil {
				return err
			}
			p, err := planFrom(cmd, &lock, &cat, &rel, &sel, &rnd)
			if err != nil {
				return err
			}
			sum, err := airgap.Mirror(cmd.Context(), p.ImageRefs(), target, airgap.Options{
				Registry:     reg.client(),
				Arch:         releases.Arch(p.Arch),
				AllPlatforms: allPlatforms,
				Progress:     newProgress(cmd.ErrOrStderr(), quiet),
			})
			if err != nil {
				return fmt.Errorf("mirroring to %s: %w", target, err)
			}
			if format.json() {
				return printJSON(cmd.OutOrStdout(), sum)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "mirrored %d images (%d blobs, %d manifests) to %s: %s fetched, %s already present, in %.1fs\n",
				sum.Images, sum.Blobs, sum.Manifests, sum.Destination, humanBytes(sum.Fetched), humanBytes(sum.Skipped), sum.Duration.Seconds())
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
	f := cmd.Flags()
	f.StringVar(&to, "to", "", "destination: oci:DIR (an OCI image layout) or docker://REGISTRY/PREFIX")
	f.BoolVar(&allPlatforms, "all-platforms", false, "copy every platform of multi-arch images, not only the plan's arch")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress on stderr")
	return cmd
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
