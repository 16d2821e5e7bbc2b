package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/rebase"
	"github.com/microshift-compose/microshift-compose/releases/rpmrepo"
)

// defaultDataDir is where the embedded release bundles live in the source tree.
const defaultDataDir = "releases/data"

func newReleaseImportCmd() *cobra.Command {
	var (
		origin, dataDir string
		force           bool
		store           storeOptions
		reg             registryOptions
	)
	cmd := &cobra.Command{
		Use:   "import DIR | FILE.rpm...",
		Short: "Add a MicroShift release directory to the embedded release data, or store the release of release-info RPMs",
		Long: `import turns a MicroShift release directory (the files the microshift-release-info
RPMs install in /usr/share/microshift/release, or assets/**/release*.json of a
MicroShift checkout, laid out flat) into the project's embedded release data:
releases/data/<stream>.json, one reviewable document holding every release
file in MicroShift's own format, with --origin saying where it came from.

Run it in the microshift-compose source tree (or pass --data-dir), review the
new file, and rebuild: the binary embeds releases/data at build time. An
existing bundle for the stream is replaced only with --force, and then the
change is summarised.

Given .rpm files instead (microshift-release-info-X.Y.Z and the
microshift-<component>-release-info RPMs of the same build, as dnf download
fetches them), import reads them (no rpm2cpio needed) and stores their
release in the per-user cache for --release X.Y.Z, as release fetch does, or
writes it to --output DIR; with --data-dir it becomes the stream's embedded
bundle, its origin the RPMs' NEVRA unless --origin says otherwise.
microshift-io's RPMs (github.com/microshift-io/microshift releases,
microshift-rpms-<arch>.tgz) are stored as release fetch stores them, their
TopoLVM tag resolved to a digest when the registry answers; the embedded
bundles are Red Hat's, one per stream.`,
		Example: `  microshift-compose release import /usr/share/microshift/release \
      --origin "microshift-release-info-4.19.2-1.el9 RPM"
  microshift-compose release import ../microshift-release --origin "openshift/microshift at 1a2b3c4d5e6f" --force
  microshift-compose release import microshift-*release-info-4.18.7-*.noarch.rpm`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if rpms, err := rpmArgs(args); err != nil {
				return err
			} else if rpms {
				if err := reg.Validate(); err != nil {
					return err
				}
				return importRPMs(cmd, args, &store, &reg, origin, dataDir, cmd.Flags().Changed("data-dir"), force)
			}
			if store.Output != "" {
				return usageError{errors.New("--output takes the release of .rpm files; a directory is imported into --data-dir")}
			}
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
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing bundle for the stream (or stored release, or --output directory)")
	cmd.Flags().StringVar(&store.Output, "output", "", "with .rpm files: write the release directory here (for --release-dir) instead of storing it for --release VERSION")
	reg.addAccessFlags(cmd)
	return cmd
}

// rpmArgs reports whether import's arguments are .rpm files (then every
// one must be) rather than one release directory. A file is taken for an
// RPM whatever its name (its lead says whether it is one); a name that
// does not exist is a directory unless it ends in .rpm.
func rpmArgs(args []string) (bool, error) {
	n := 0
	for _, a := range args {
		if isFileArg(a) {
			n++
		}
	}
	switch {
	case n == len(args):
		return true, nil
	case n > 0:
		return false, usageError{errors.New("give one release directory, or only .rpm files")}
	case len(args) > 1:
		return false, usageError{fmt.Errorf("give one release directory (got %d arguments), or .rpm files", len(args))}
	}
	return false, nil
}

func isFileArg(a string) bool {
	if strings.HasSuffix(a, ".rpm") {
		return true
	}
	st, err := os.Stat(a)
	return err == nil && !st.IsDir()
}

// importRPMs stores (or writes to --output, or embeds with --data-dir)
// the release of release-info RPM files.
func importRPMs(cmd *cobra.Command, files []string, store *storeOptions, reg *registryOptions, origin, dataDir string, embed, force bool) error {
	if embed && store.Output != "" {
		return usageError{errors.New("--data-dir embeds the release, --output writes a release directory: give one")}
	}
	rel, err := rpmrepo.ReadFiles(files)
	if errors.Is(err, rpmrepo.ErrNotRPM) && len(files) == 1 && !strings.HasSuffix(files[0], ".rpm") {
		// One file that is not an RPM, by a name that does not say it is:
		// name both things import takes.
		return fmt.Errorf("%s: not an RPM file (it does not begin with the RPM lead, magic ed ab ee db) and not a directory: release import takes one release directory (as /usr/share/microshift/release) or release-info .rpm files", files[0])
	}
	if err != nil {
		return err
	}
	if !embed {
		if strings.TrimSpace(origin) != "" {
			return usageError{errors.New("--origin is recorded in an embedded bundle (--data-dir); a stored release records its RPMs")}
		}
		resolved, err := resolveTags(cmd.Context(), rel, reg, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		store.Force = force
		res, err := store.write(rel, resolved)
		if err != nil {
			return err
		}
		printStored(cmd.OutOrStdout(), rel, resolved, res, store.Output == "")
		return nil
	}
	if v := rel.Release.MicroShiftIO; v != nil {
		return fmt.Errorf("--data-dir: %s is microshift-io's build; the embedded release data is Red Hat's, one bundle per stream: store it instead (drop --data-dir), and build it with --release %s", rel.RPMs[0].NEVRA, rel.Release.Version)
	}
	if strings.TrimSpace(origin) == "" {
		origin = rel.RPMs[0].NEVRA + " RPM (sha256:" + rel.RPMs[0].SHA256 + ")"
	}
	tmp, err := os.MkdirTemp("", "microshift-compose-import-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if _, err := releases.WriteDir(filepath.Join(tmp, "release"), rel.Files, rel.RPMs, false); err != nil {
		return err
	}
	res, err := rebase.Import(filepath.Join(tmp, "release"), dataDir, origin, force)
	if err != nil {
		return err
	}
	printImport(cmd.OutOrStdout(), res)
	return nil
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
