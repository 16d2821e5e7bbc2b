package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/releases"
)

func newReleaseCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "release",
		Short: "Inspect, update, verify, diff and import MicroShift release files",
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(
		newReleaseListCmd(),
		newReleaseUpdateCmd(),
		newReleaseVerifyCmd(),
		newReleaseDiffCmd(),
		newReleaseImportCmd(),
	)
	return cmd
}

type releaseJSON struct {
	Stream  string            `json:"stream"`
	Version string            `json:"version"`
	Source  string            `json:"source"`
	Origin  string            `json:"origin,omitempty"`
	Bases   map[string]string `json:"bases"`
	Files   []string          `json:"files"`
}

func newReleaseListCmd() *cobra.Command {
	var (
		rel    releaseOptions
		format formatOptions
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the embedded releases (or the one in --release-dir)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := format.Validate(); err != nil {
				return err
			}
			var rels []*releases.Release
			var err error
			if rel.Dir == "" && rel.Constraint == "" {
				rels, err = releases.Embedded()
			} else {
				var r *releases.Release
				r, err = rel.load()
				rels = []*releases.Release{r}
			}
			if err != nil {
				return err
			}
			list := []releaseJSON{}
			for _, r := range rels {
				j := releaseJSON{Stream: r.Stream(), Version: r.Version.String(), Source: r.Source, Origin: r.Origin, Bases: map[string]string{}, Files: []string{}}
				for _, a := range r.Arches() {
					j.Bases[string(a)] = r.Base(a)
				}
				for _, f := range r.Files() {
					j.Files = append(j.Files, f.Name)
				}
				list = append(list, j)
			}
			if format.json() {
				return printJSON(cmd.OutOrStdout(), list)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "STREAM\tVERSION\tARCHES\tFILES\tSOURCE")
			for _, j := range list {
				var arches []string
				for _, a := range releases.Arches {
					if _, ok := j.Bases[string(a)]; ok {
						arches = append(arches, string(a))
					}
				}
				src := j.Source
				if j.Origin != "" {
					src += ": " + j.Origin
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", j.Stream, j.Version, strings.Join(arches, ","), len(j.Files), src)
			}
			return tw.Flush()
		},
	}
	rel.addFlags(cmd)
	format.addFlags(cmd)
	return cmd
}
