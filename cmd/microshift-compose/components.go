package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

type componentJSON struct {
	Name        string   `json:"name"`
	Order       int      `json:"order"`
	Description string   `json:"description"`
	Arches      []string `json:"arches"`
	Release     string   `json:"release"`
	Provides    []string `json:"provides"`
	Requires    []string `json:"requires"`
	Conflicts   []string `json:"conflicts"`
	Packages    []string `json:"packages"`
	ImageFile   string   `json:"image_file"`
	ImageKeys   []string `json:"image_keys"`
	// Builds are the builds of MicroShift it is for (none: every build);
	// Unavailable says why it is not available on the release's build
	// (another build's, or needing what the build lacks).
	Builds      []string `json:"builds,omitempty"`
	Unavailable string   `json:"unavailable,omitempty"`
	// Available says whether build takes the component on the selected
	// release, on every arch it supports, as things are: the release ships
	// it, its release file is there and pins its images.
	Available bool `json:"available"`
	// AllowUnpinned says that build takes it only with --allow-unpinned:
	// the release names some of its images by tag only.
	AllowUnpinned bool `json:"allow_unpinned,omitempty"`
	// Refused says, per arch, why build refuses the component there.
	Refused map[string]string `json:"refused,omitempty"`
	// AlwaysDeployed says why the release deploys it whatever the plan
	// says (a selection that leaves it out is refused).
	AlwaysDeployed string `json:"always_deployed,omitempty"`
}

func newComponentsCmd() *cobra.Command {
	var (
		cat    catalogOptions
		rel    releaseOptions
		format formatOptions
	)
	cmd := &cobra.Command{
		Use:   "components",
		Short: "List the components of the catalog and whether build takes them on the release",
		Long: `components lists the catalog's components as they are for the selected release
(its [[variant]] applied: packages, image keys), and whether build takes them on
that release, on each arch they support, as build resolves them (with what they
require): yes; no (the release does not ship it, or its release file is missing
or incomplete: the lines after the table say why, per arch, as --output json
does); unpinned (build takes it only
with --allow-unpinned: the release names images by tag only); or always (the
release deploys it whatever the plan says, so a selection that leaves it out is
refused). A component is not available on another build of MicroShift than its
own (kindnet and TopoLVM are microshift-io's), nor where the release's build
lacks what it needs (Red Hat's RPMs and images on microshift-io's build): the
lines after the table say why.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := format.Validate(); err != nil {
				return err
			}
			catalog, err := cat.load()
			if err != nil {
				return err
			}
			release, err := rel.load()
			if err != nil {
				return err
			}
			know, err := knowledge.Default()
			if err != nil {
				return err
			}
			facts, err := know.ForBuild(release.Version, release.Build)
			if err != nil {
				return fmt.Errorf("release %s: %w", release, err)
			}
			// Packages, image keys and the like as they are for the release;
			// what build takes is asked of the catalog as given.
			full := catalog
			catalog = catalog.ForRelease(release.Version)
			list := []componentJSON{}
			for _, n := range catalog.ComponentNames() {
				c := catalog.Components[n]
				arches := []string{}
				for _, a := range releases.Arches {
					if c.SupportsArch(a) {
						arches = append(arches, string(a))
					}
				}
				files := []string{releases.FileName(c.Images.File, "<arch>")}
				keys := nonNil(c.Images.Keys)
				for _, also := range c.Images.Also {
					files = append(files, releases.FileName(also.File, "<arch>"))
					keys = append(keys, also.Keys...)
				}
				j := componentJSON{
					Name: n, Order: c.Order, Description: c.Description, Arches: arches, Release: c.Release,
					Provides: nonNil(c.Provides), Requires: nonNil(c.Requires), Conflicts: nonNil(c.Conflicts),
					Packages: nonNil(c.Packages), ImageFile: strings.Join(files, ","), ImageKeys: keys,
					Builds: c.Builds, Unavailable: compose.Unavailable(c, release, facts, know), AlwaysDeployed: c.AlwaysDeployed,
				}
				for _, a := range arches {
					switch err := compose.Availability(cmd.Context(), full, release, releases.Arch(a), n); {
					case err == nil:
					case errors.Is(err, compose.ErrUnpinned):
						j.AllowUnpinned = true
					default:
						if j.Refused == nil {
							j.Refused = map[string]string{}
						}
						j.Refused[a] = text.OneLine(err.Error())
					}
				}
				j.Available = len(j.Refused) == 0 && !j.AllowUnpinned && len(arches) > 0
				list = append(list, j)
			}
			if format.json() {
				return printJSON(cmd.OutOrStdout(), list)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "release %s\n", release)
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ORDER\tNAME\tPROVIDES\tREQUIRES\tARCHES\tRELEASE\tAVAILABLE\tDESCRIPTION")
			for _, c := range list {
				avail := "yes"
				switch {
				case len(c.Refused) > 0:
					avail = "no"
				case c.AllowUnpinned:
					avail = "unpinned"
				case !c.Available:
					avail = "no"
				case c.AlwaysDeployed != "":
					avail = "always"
				}
				fmt.Fprintf(tw, "%03d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Order, c.Name, dash(c.Provides), dash(c.Requires),
					strings.Join(c.Arches, ","), dashStr(c.Release), avail, c.Description)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			// Why a build's component is not available (the RELEASE column
			// says it for a release range).
			// The AVAILABLE column said: why build refuses a component
			// on an arch, or what it takes with tags only.
			for _, c := range list {
				if c.Unavailable != "" {
					// A release range is the RELEASE column's to say.
					if c.Builds != nil || !facts.Build.Default {
						fmt.Fprintf(cmd.OutOrStdout(), "%s: not available: %s\n", c.Name, c.Unavailable)
					}
					continue
				}
				for _, a := range slices.Sorted(maps.Keys(c.Refused)) {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: no on %s: %s\n", c.Name, a, c.Refused[a])
				}
				if c.AllowUnpinned && len(c.Refused) == 0 {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: unpinned: the release names some of its images by tag only; build takes it with --allow-unpinned\n", c.Name)
				}
			}
			return nil
		},
	}
	cat.addFlags(cmd)
	rel.addFlags(cmd)
	format.addFlags(cmd)
	return cmd
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func dash(s []string) string { return dashStr(strings.Join(s, ",")) }

func dashStr(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
