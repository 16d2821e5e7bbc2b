package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/releases"
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
	// Available says whether the selected release ships the component.
	Available bool `json:"available"`
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
selection that leaves it out is refused).`,
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
				list = append(list, componentJSON{
					Name: n, Order: c.Order, Description: c.Description, Arches: arches, Release: c.Release,
					Provides: nonNil(c.Provides), Requires: nonNil(c.Requires), Conflicts: nonNil(c.Conflicts),
					Packages: nonNil(c.Packages), ImageFile: releases.FileName(c.Images.File, "<arch>"),
					ImageKeys: nonNil(c.Images.Keys), Available: c.SupportsRelease(release), AlwaysDeployed: c.AlwaysDeployed,
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
			return tw.Flush()
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
