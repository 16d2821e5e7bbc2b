package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

type profileJSON struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Components  []string `json:"components"`
}

func newProfilesCmd() *cobra.Command {
	var (
		cat    catalogOptions
		format formatOptions
	)
	cmd := &cobra.Command{
		Use:   "profiles",
		Short: "List the profiles of the catalog",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := format.Validate(); err != nil {
				return err
			}
			catalog, err := cat.load()
			if err != nil {
				return err
			}
			list := []profileJSON{}
			for _, n := range catalog.ProfileNames() {
				p := catalog.Profiles[n]
				list = append(list, profileJSON{Name: n, Description: p.Description, Components: p.Components})
			}
			if format.json() {
				return printJSON(cmd.OutOrStdout(), list)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tCOMPONENTS\tDESCRIPTION")
			for _, p := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, strings.Join(p.Components, ","), p.Description)
			}
			return tw.Flush()
		},
	}
	cat.addFlags(cmd)
	format.addFlags(cmd)
	return cmd
}
