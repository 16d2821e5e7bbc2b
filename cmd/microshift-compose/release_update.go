package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/rebase"
)

// updateOptions are the sources and switches of release update.
type updateOptions struct {
	Payloads    []string
	CSV         string
	Map         []string
	ResolveTags bool
	IndexDigest bool
	AllowTags   bool
	DryRun      bool
}

func (o *updateOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&o.Payloads, "payload", nil, "ARCH=FILE: an OpenShift release payload for that arch, as its image-references file (oc adm release extract --file=image-references) or oc adm release info -o json output; repeat per arch")
	f.StringVar(&o.CSV, "csv", "", "an operator bundle's ClusterServiceVersion (YAML or JSON): keys take its spec.relatedImages")
	f.StringSliceVar(&o.Map, "map", nil, "KEY=NAME: release key KEY takes the payload tag or relatedImages entry NAME (e.g. lvms_operator=lvms-operator; repeat or comma-separate)")
	f.BoolVar(&o.ResolveTags, "resolve-tags", false, "replace tag references with digests from the registry: the platform manifest for the file's arch")
	f.BoolVar(&o.IndexDigest, "index-digest", false, "with --resolve-tags, pin the multi-arch index digest instead of the platform manifest")
	f.BoolVar(&o.AllowTags, "allow-tags", false, "let a tag replace a digest-pinned reference (with a warning)")
	f.BoolVar(&o.DryRun, "dry-run", false, "print a unified diff of the changes instead of writing them")
}

// Validate checks the flags alone; it does not read the inputs.
// Validate checks the flags; no source at all is checked by the command,
// after it has finished an interrupted update (which needs none).
func (o *updateOptions) Validate() error {
	if len(o.Payloads) > 0 && o.CSV != "" {
		return usageError{errors.New("--payload and --csv cannot be combined; run one update per source")}
	}
	if o.IndexDigest && !o.ResolveTags {
		return usageError{errors.New("--index-digest chooses what --resolve-tags writes; add --resolve-tags")}
	}
	if len(o.Map) > 0 && len(o.Payloads) == 0 && o.CSV == "" {
		return usageError{errors.New("--map maps keys to a --payload or --csv; give one")}
	}
	seen := map[string]bool{}
	for _, p := range o.Payloads {
		a, file, ok := strings.Cut(p, "=")
		if !ok || a == "" || file == "" {
			return usageError{fmt.Errorf("--payload %q: want ARCH=FILE, e.g. --payload x86_64=release-x86_64.json", p)}
		}
		arch, err := releases.ParseArch(a)
		if err != nil {
			return usageError{fmt.Errorf("--payload %s: %w", p, err)}
		}
		if seen[string(arch)] {
			return usageError{fmt.Errorf("--payload: two payloads for %s", arch)}
		}
		seen[string(arch)] = true
	}
	keys := map[string]bool{}
	for _, m := range o.Map {
		k, n, ok := strings.Cut(m, "=")
		if !ok || strings.TrimSpace(k) == "" || strings.TrimSpace(n) == "" {
			return usageError{fmt.Errorf("--map %q: want KEY=NAME, e.g. --map lvms_operator=lvms-operator", m)}
		}
		if keys[k] {
			return usageError{fmt.Errorf("--map: key %q is mapped twice", k)}
		}
		keys[k] = true
	}
	return nil
}

// hasSource reports whether a source of new references is given.
func (o *updateOptions) hasSource() bool {
	return len(o.Payloads) > 0 || o.CSV != "" || o.ResolveTags
}

// options reads the payloads and CSV and builds the library options.
func (o *updateOptions) options(sel rebase.Selection) (rebase.UpdateOptions, error) {
	uo := rebase.UpdateOptions{
		Selection: sel, ResolveTags: o.ResolveTags, IndexDigest: o.IndexDigest, AllowTags: o.AllowTags,
		Map: map[string]string{},
	}
	for _, p := range o.Payloads {
		a, file, _ := strings.Cut(p, "=")
		arch, _ := releases.ParseArch(a) // checked by Validate
		payload, err := rebase.LoadPayload(file)
		if err != nil {
			return uo, err
		}
		if uo.Payloads == nil {
			uo.Payloads = map[releases.Arch]*rebase.Payload{}
		}
		uo.Payloads[arch] = payload
	}
	if o.CSV != "" {
		csv, err := rebase.LoadCSV(o.CSV)
		if err != nil {
			return uo, err
		}
		uo.CSV = csv
	}
	for _, m := range o.Map {
		k, n, _ := strings.Cut(m, "=")
		uo.Map[strings.TrimSpace(k)] = strings.TrimSpace(n)
	}
	return uo, nil
}

// updateJSON is release update --output json.
type updateJSON struct {
	*rebase.Update
	DryRun  bool   `json:"dry_run"`
	Written int    `json:"written"`
	Diff    string `json:"diff,omitempty"`
}

func newReleaseUpdateCmd() *cobra.Command {
	var (
		upd    updateOptions
		files  fileSelectOptions
		reg    registryOptions
		format formatOptions
	)
	cmd := &cobra.Command{
		Use:   "update DIR",
		Short: "Rewrite release files from a release payload, an operator bundle CSV, or the registry",
		Long: `update rewrites the MicroShift release files in DIR (a release directory, or a
catalog component's release/ directory) in place: only values change
(image references and release.base), never keys, their order or the file's
formatting, so the git diff shows exactly what moved. Files are written
atomically, all or none, keeping their mode; --dry-run prints the diff instead.
All or none holds across a crash or kill -9: the files are committed with a
journal (.microshift-compose-update.journal) that every command refuses a
release directory for until 'release update DIR' (sources or not) finishes
the interrupted update.

Sources:
  --payload ARCH=FILE   an OpenShift release payload per arch. Keys equal to a
                        payload tag take its image (--map for other spellings);
                        release.base becomes the payload version. By default the
                        files of that arch that follow the OpenShift release are
                        updated: those whose release.base has the core file's
                        major.minor (core, OLM, Multus, ...; not Gateway API or
                        cert-manager, which carry their own versions).
  --csv FILE            an operator bundle ClusterServiceVersion, for every arch:
                        --map KEY=NAME keys take relatedImages entries; with
                        --component, keys equal to an entry name do too. A file
                        whose every image comes from the CSV takes its
                        spec.version as release.base.
  --resolve-tags        tag references become digests from the registry (the
                        platform manifest for the file's arch, or the index with
                        --index-digest); may follow --payload or --csv.

A tag never replaces a digest unless --allow-tags is given.`,
		Example: `  microshift-compose release update assets/release \
      --payload x86_64=release-amd64.json --payload aarch64=release-arm64.json --dry-run
  microshift-compose release update assets/release --csv lvms.clusterserviceversion.yaml \
      --map lvms_operator=lvms-operator
  microshift-compose release update assets/release --component ai-model-serving --resolve-tags`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, v := range []interface{ Validate() error }{&upd, &files, &reg, &format} {
				if err := v.Validate(); err != nil {
					return err
				}
			}
			// An update killed after its commit point is finished first:
			// its files are complete, and the directory is refused by
			// every reader until then.
			if !upd.DryRun {
				// Finishing it is the command's whole job when no source is
				// given, even when every file was renamed before the kill.
				pending := rebase.Interrupted(args[0])
				n, err := rebase.FinishInterrupted(args[0])
				if err != nil {
					return err
				}
				if pending {
					fmt.Fprintf(cmd.OutOrStdout(), "finished an interrupted update of %s: %d %s renamed into place\n", args[0], n, text.Plural(n, "file", "files"))
					if !upd.hasSource() {
						return nil
					}
				}
			}
			if !upd.hasSource() {
				return usageError{rebase.ErrNothingToUpdate}
			}
			uo, err := upd.options(files.selection())
			if err != nil {
				return err
			}
			if upd.ResolveTags {
				if uo.Registry, err = reg.client(); err != nil {
					return err
				}
			}
			u, err := rebase.Prepare(cmd.Context(), args[0], uo)
			if err != nil {
				return err
			}
			for _, w := range u.Warnings {
				warn(cmd.ErrOrStderr(), w)
			}
			out := cmd.OutOrStdout()
			written := 0
			if !upd.DryRun {
				if err := u.Write(); err != nil {
					return err
				}
				written = len(u.Changed())
			}
			if format.json() {
				j := updateJSON{Update: u, DryRun: upd.DryRun, Written: written}
				if upd.DryRun {
					j.Diff = string(u.Diff())
				}
				return printJSON(out, j)
			}
			if upd.DryRun {
				_, err := out.Write(u.Diff())
				return err
			}
			printUpdate(out, u, written)
			return nil
		},
	}
	upd.addFlags(cmd)
	files.addFlags(cmd)
	reg.addFlags(cmd)
	format.addFlags(cmd)
	return cmd
}

// printUpdate says, per changed file, what changed.
func printUpdate(w io.Writer, u *rebase.Update, written int) {
	unchanged := 0
	for _, f := range u.Files {
		if !f.Changed() {
			unchanged++
			continue
		}
		var parts []string
		if n := len(f.Changes); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s updated", n, text.Plural(n, "image", "images")))
		}
		if f.OldBase != f.NewBase {
			parts = append(parts, fmt.Sprintf("release.base %s -> %s", f.OldBase, f.NewBase))
		}
		line := f.Name + ": " + strings.Join(parts, ", ")
		if len(f.Kept) > 0 {
			line += " (not in the source, kept: " + strings.Join(f.Kept, ", ") + ")"
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "wrote %d %s in %s", written, text.Plural(written, "file", "files"), u.Dir)
	if unchanged > 0 {
		fmt.Fprintf(w, "; %d selected %s unchanged", unchanged, text.Plural(unchanged, "file", "files"))
	}
	fmt.Fprintln(w)
}
