package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// footprintJSON is one plan's footprint in --output json.
type footprintJSON struct {
	Profile   string          `json:"profile"`
	Release   string          `json:"release"`
	Arch      string          `json:"arch"`
	Footprint *plan.Footprint `json:"footprint"`
}

func newFootprintCmd() *cobra.Command {
	var (
		cat      catalogOptions
		rel      releaseOptions
		sel      selectionOptions
		rnd      renderOptions
		lock     lockOptions
		reg      registryOptions
		format   formatOptions
		profiles []string
	)
	cmd := &cobra.Command{
		Use:   "footprint (--profile NAME... | --lock compose.lock.json)",
		Short: "Report what each component's images cost in compressed bytes, from their registry manifests",
		Long: `footprint reads the manifests of a plan's images for its arch (no layers are
downloaded) and reports, per component and in total, compressed bytes as
registries store them (config and layer blobs):

  COMPRESSED  a component: the distinct blobs of its images;
              the total: every image's size added up, a layer shared by two
              images counted twice (what pulling them one by one moves).
  UNIQUE      a component: the blobs no other selected component's images use,
              what leaving the component out saves;
              the total: every distinct blob once, what the device stores.
  shared      blobs used by images of more than one component, counted once
              (the components' UNIQUE plus this is the total UNIQUE).

Registries are reached as podman reaches them (auth files or --authfile,
registries.conf mirrors, certs.d certificates; see mirror --help).
Repeat --profile to compare profiles side by side. --output json prints a list
with one entry per profile, in the form build --resolve-sizes writes to
compose.lock.json.`,
		Example: `  microshift-compose footprint --profile full --arch x86_64
  microshift-compose footprint --profile minimal --profile full --arch aarch64
  microshift-compose footprint --lock out/compose.lock.json --output json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := reg.Validate(); err != nil {
				return err
			}
			if err := format.Validate(); err != nil {
				return err
			}
			if err := lock.Validate(cmd); err != nil {
				return err
			}
			var plans []*plan.Plan
			switch {
			case lock.Path != "":
				p, err := lock.load()
				if err != nil {
					return err
				}
				plans = append(plans, p)
			case len(profiles) == 0:
				return usageError{errors.New("--profile or --lock is required (repeat --profile to compare profiles)")}
			default:
				for _, name := range profiles {
					s := sel
					s.Profile = name
					if err := s.Validate(); err != nil {
						return err
					}
					p, err := resolvePlan(cmd, &cat, &rel, &s, &rnd, nil)
					if err != nil {
						return err
					}
					plans = append(plans, p)
				}
			}
			rc, err := reg.client()
			if err != nil {
				return err
			}
			var out []footprintJSON
			for _, p := range plans {
				opts := airgap.Options{Registry: rc, Arch: releases.Arch(p.Arch)}
				if t, ok := airgap.BuiltLayout(lock.Path, p); ok {
					opts.Built = []airgap.Target{t}
				}
				fp, err := airgap.Footprint(cmd.Context(), p, opts)
				if err != nil {
					return fmt.Errorf("reading the footprint of profile %s: %w", p.Profile, err)
				}
				out = append(out, footprintJSON{Profile: p.Profile, Release: p.Release.Stream, Arch: p.Arch, Footprint: fp})
			}
			switch {
			case format.json():
				err = printJSON(cmd.OutOrStdout(), out)
			case len(out) == 1:
				err = printFootprint(cmd.OutOrStdout(), out[0])
			default:
				err = compareFootprints(cmd.OutOrStdout(), out)
			}
			if err == nil {
				warnDevice(cmd, plans...)
			}
			return err
		},
	}
	cat.addFlags(cmd)
	rel.addFlags(cmd)
	sel.addAdjustFlags(cmd)
	rnd.addFlags(cmd)
	lock.addFlags(cmd)
	reg.addFlags(cmd)
	format.addFlags(cmd)
	cmd.Flags().StringSliceVarP(&profiles, "profile", "p", nil, "profile to report; repeat to compare profiles side by side")
	return cmd
}

func printFootprint(w io.Writer, f footprintJSON) error {
	fp := f.Footprint
	fmt.Fprintf(w, "profile %s, release %s, %s: %d images, compressed bytes\n\n", f.Profile, f.Release, f.Arch, fp.Total.Images)
	t := newTable("COMPONENT", "IMAGES", "COMPRESSED", "UNIQUE")
	for _, c := range fp.Components {
		t.row(c.Name, fmt.Sprint(c.Images), humanBytes(c.Compressed), humanBytes(c.Unique))
	}
	t.row("shared between components", "", "", humanBytes(fp.SharedBetweenComponents))
	t.row("total", fmt.Sprint(fp.Total.Images), humanBytes(fp.Total.Compressed), humanBytes(fp.Total.Unique))
	if err := t.write(w); err != nil {
		return err
	}
	fmt.Fprint(w, "\nUNIQUE: bytes no other component uses (what leaving it out saves); total UNIQUE counts each layer once (what the device stores).\n")
	return nil
}

// compareFootprints prints one column per profile: each component's
// compressed bytes ("-" when the profile leaves it out) and the totals.
func compareFootprints(w io.Writer, fs []footprintJSON) error {
	var names []string
	seen := map[string]bool{}
	for _, f := range fs {
		for _, c := range f.Footprint.Components {
			if !seen[c.Name] {
				seen[c.Name] = true
				names = append(names, c.Name)
			}
		}
	}
	header := []string{"COMPONENT"}
	for _, f := range fs {
		header = append(header, strings.ToUpper(f.Profile))
	}
	t := newTable(header...)
	row := func(label string, cell func(f footprintJSON) string) {
		cells := []string{label}
		for _, f := range fs {
			cells = append(cells, cell(f))
		}
		t.row(cells...)
	}
	for _, n := range names {
		row(n, func(f footprintJSON) string {
			for _, c := range f.Footprint.Components {
				if c.Name == n {
					return humanBytes(c.Compressed)
				}
			}
			return "-"
		})
	}
	row("shared between components", func(f footprintJSON) string { return humanBytes(f.Footprint.SharedBetweenComponents) })
	row("images", func(f footprintJSON) string { return fmt.Sprint(f.Footprint.Total.Images) })
	row("total compressed", func(f footprintJSON) string { return humanBytes(f.Footprint.Total.Compressed) })
	row("total unique", func(f footprintJSON) string { return humanBytes(f.Footprint.Total.Unique) })
	if err := t.write(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nrelease %s, %s; per component: the compressed bytes of its images. Total unique counts each layer once: what the device stores.\n", fs[0].Release, fs[0].Arch)
	return nil
}

// table lays out rows with the first column left-aligned and the numbers
// right-aligned.
type table struct{ rows [][]string }

func newTable(header ...string) *table { return &table{rows: [][]string{header}} }

func (t *table) row(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) error {
	width := 0
	for _, r := range t.rows {
		width = max(width, len(r[0]))
	}
	// No tabwriter padding: it would go left of the first column too; the
	// other cells carry their own two-space gap.
	tw := tabwriter.NewWriter(w, 0, 0, 0, ' ', tabwriter.AlignRight)
	for _, r := range t.rows {
		fmt.Fprintf(tw, "%-*s", width, r[0])
		for _, c := range r[1:] {
			fmt.Fprintf(tw, "\t  %s", c)
		}
		fmt.Fprint(tw, "\t\n")
	}
	return tw.Flush()
}
