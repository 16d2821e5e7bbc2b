package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/compose"
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
	// Builds are the builds of MicroShift it is for (none: every build).
	Builds []string `json:"builds,omitempty"`
	// Available says whether the selected release ships the component;
	// Unavailable why not.
	Available   bool   `json:"available"`
	Unavailable string `json:"unavailable,omitempty"`
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
		Short: "List the components of the catalog and whether the release ships them",
		Long: `components lists the catalog's components as they are for the selected release
(its [[variant]] applied: packages, image keys), and whether that release ships
them: yes, no, or always (the release deploys it whatever the plan says, so a
selection that leaves it out is refused). A component is not available on
another build of MicroShift than its own (kindnet and TopoLVM are
microshift-io's), nor where the release's build lacks what it needs (Red
Hat's RPMs and images on microshift-io's build): the lines after the table
say why.`,
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
			// Packages, image keys and the like as they are for the release.
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
				why := compose.Unavailable(c, release, facts, know)
				list = append(list, componentJSON{
					Name: n, Order: c.Order, Description: c.Description, Arches: arches, Release: c.Release,
					Provides: nonNil(c.Provides), Requires: nonNil(c.Requires), Conflicts: nonNil(c.Conflicts),
					Packages: nonNil(c.Packages), ImageFile: strings.Join(files, ","), ImageKeys: keys, Builds: c.Builds,
					Available: why == "", Unavailable: why, AlwaysDeployed: c.AlwaysDeployed,
				})
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
			for _, c := range list {
				if c.Unavailable != "" && (c.Builds != nil || !facts.Build.Default) {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: not available: %s\n", c.Name, c.Unavailable)
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
