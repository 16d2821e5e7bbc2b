package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/rebase"
)

// defaultDataDir is where the embedded release bundles live in the source tree.
const defaultDataDir = "releases/data"

func newReleaseImportCmd() *cobra.Command {
	var (
		origin, dataDir string
		force           bool
	)
	cmd := &cobra.Command{
		Use:   "import DIR",
		Short: "Add a MicroShift release directory to the embedded release data",
		Long: `import turns a MicroShift release directory (the files the microshift-release-info
RPMs install in /usr/share/microshift/release, or assets/**/release*.json of a
MicroShift checkout, laid out flat) into the project's embedded release data:
releases/data/<stream>.json, one reviewable document holding every release
file in MicroShift's own format, with --origin saying where it came from.

Run it in the microshift-compose source tree (or pass --data-dir), review the
new file, and rebuild: the binary embeds releases/data at build time. An
existing bundle for the stream is replaced only with --force, and then the
change is summarised.`,
		Example: `  microshift-compose release import /usr/share/microshift/release \
      --origin "microshift-release-info-4.19.2-1.el9 RPM"
  microshift-compose release import ../microshift-release --origin "openshift/microshift at 1a2b3c4d5e6f" --force`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(origin) == "" {
				return usageError{fmt.Errorf(`--origin is required: say where the files come from, e.g. --origin "openshift/microshift at <commit>"`)}
			}
			res, err := rebase.Import(args[0], dataDir, origin, force)
			if err != nil {
				return err
			}
			printImport(cmd.OutOrStdout(), res)
			return nil
		},
	}
	cmd.Flags().StringVar(&origin, "origin", "", `where the release files come from, recorded in the bundle (e.g. "openshift/microshift at <commit>")`)
	cmd.Flags().StringVar(&dataDir, "data-dir", defaultDataDir, "the release data directory of the microshift-compose source tree")
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing bundle for the stream")
	return cmd
}

func printImport(w io.Writer, r *rebase.ImportResult) {
	if r.Unchanged {
		fmt.Fprintf(w, "%s is already up to date: release %s, %d files, %d images\n", r.Path, r.Version, r.Files, r.Images)
		return
	}
	verb := "wrote"
	if r.Replaced {
		verb = "replaced"
	}
	unpinned := ""
	if r.Unpinned > 0 {
		unpinned = fmt.Sprintf(" (%d not pinned by digest)", r.Unpinned)
	}
	fmt.Fprintf(w, "%s %s: release %s (stream %s), %d files, %d images%s\n", verb, r.Path, r.Version, r.Stream, r.Files, r.Images, unpinned)
	for _, a := range releases.Arches {
		if b, ok := r.Bases[a]; ok {
			fmt.Fprintf(w, "  %s base %s\n", a, b)
		}
	}
	fmt.Fprintf(w, "  origin %q\n", r.Origin)
	if d := r.Diff; d != nil {
		s := d.Summary
		fmt.Fprintf(w, "  changes from the previous bundle: %d images added, %d removed, %d re-digested, %d otherwise changed, %d release.base changes\n",
			s.Added, s.Removed, s.Redigested, s.OtherChange, s.BaseChanges)
	}
	fmt.Fprintln(w, "review the file, then rebuild to embed it")
}
