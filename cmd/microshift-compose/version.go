package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	var format formatOptions
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
		Long: `version prints the version of microshift-compose, the git commit it was built
from and that commit's date, and the Go toolchain and platform. Release builds
and 'make build' stamp them; a plain 'go build' says what Go recorded from the
checkout, and "(devel)" for the version when it recorded none.

--version on the command itself prints the same line.`,
		Example: `  microshift-compose version
  microshift-compose --version
  microshift-compose version --output json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := format.Validate(); err != nil {
				return err
			}
			b := currentBuild()
			if format.json() {
				return printJSON(cmd.OutOrStdout(), b)
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "microshift-compose %s\n", b)
			return err
		},
	}
	format.addFlags(cmd)
	return cmd
}
