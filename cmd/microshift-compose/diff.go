package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/transfer"
	"github.com/microshift-compose/microshift-compose/lockdiff"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
	"github.com/microshift-compose/microshift-compose/releases"
)

func newDiffCmd() *cobra.Command {
	var (
		format formatOptions
		moved  transferOptions
	)
	cmd := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Show what changed between two builds (compose.lock.json files)",
		Long: `diff compares two compose.lock.json files, or two build output directories
holding one: release and base version, components added and removed, images
added, removed and changed per component and release-file key, packages,
config drop-in values, device files, manifests.d directories (and their
resources) and, when both locks carry a footprint section
(build --resolve-sizes), the change in compressed and unique bytes per
component, shared between components and in total. The locks are read as
strictly as build writes them: a field this version does not know is an error.

With --resolve-sizes (the manifests from the images' registries, reached as
footprint reaches them) or --from oci:DIR|oci-archive:FILE (from OCI layouts or
archives, such as the bundle a site already holds and the new one), it adds what
the update moves to a site that holds the old images: the blobs and manifests
the new images reach (for the new lock's arch) that the old ones do not, per
component of the new lock (blobs only its images need), shared between
components, and in total beside what a full bundle of the new images holds.

The text output is Markdown for a pull request description; --output json is
for machines. To compare release files, use 'microshift-compose release diff'.`,
		Example: `  microshift-compose diff out-main/compose.lock.json out-pr/compose.lock.json
  microshift-compose diff out-main/ out-pr/ --output json
  microshift-compose diff out-4.18/ out-4.19/ --resolve-sizes
  microshift-compose diff old/compose.lock.json new/compose.lock.json --from oci-archive:old-images.tar --from oci-archive:new-images.tar`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := format.Validate(); err != nil {
				return err
			}
			if err := moved.Validate(); err != nil {
				return err
			}
			var locks [2]*lockdiff.Lock
			for i, arg := range args {
				path := arg
				if st, err := os.Stat(arg); err == nil && st.IsDir() {
					path = filepath.Join(arg, output.LockFile)
					if _, err := os.Stat(path); err != nil {
						return fmt.Errorf("%s has no %s: diff compares build outputs or their lock files (compare release directories with 'microshift-compose release diff')", arg, output.LockFile)
					}
				}
				p, err := lockfile.Load(path)
				if err != nil {
					return err
				}
				locks[i] = &lockdiff.Lock{Path: path, Plan: p}
			}
			d, err := lockdiff.Compare(locks[0], locks[1])
			if err != nil {
				return err
			}
			if moved.enabled() {
				var built []airgap.Target
				for _, l := range locks {
					if t, ok := airgap.BuiltLayout(l.Path, l.Plan); ok {
						built = append(built, t)
					}
				}
				read, err := moved.reader(cmd.Context(), built...)
				if err != nil {
					return err
				}
				err = d.AddTransfer(locks[0], locks[1], func(refs []string, arch string) (map[string]transfer.Image, error) {
					return read(refs, releases.Arch(arch))
				})
				if err != nil {
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
	return cmd
}
