package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/lockdiff"
)

func newDiffCmd() *cobra.Command {
	var format formatOptions
	cmd := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Show what changed between two builds (compose.lock.json files)",
		Long: `diff compares two compose.lock.json files, or two build output directories
holding one: release and base version, components added and removed, images
added, removed and changed per component and release-file key, packages,
config drop-in values, device files, manifests.d directories (and their
resources) and, when both locks carry a footprint section
(build --resolve-sizes), the change in compressed and unique bytes per
component, shared between components and in total. The locks are read as
strictly as build writes them: a field this version does not know is an error.

The text output is Markdown for a pull request description; --output json is
for machines. To compare release files, use 'microshift-compose release diff'.`,
		Example: `  microshift-compose diff out-main/compose.lock.json out-pr/compose.lock.json
  microshift-compose diff out-main/ out-pr/ --output json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := format.Validate(); err != nil {
				return err
			}
			var locks [2]*lockdiff.Lock
			for i, arg := range args {
				path := arg
				if st, err := os.Stat(arg); err == nil && st.IsDir() {
					path = filepath.Join(arg, compose.LockFile)
					if _, err := os.Stat(path); err != nil {
						return fmt.Errorf("%s has no %s: diff compares build outputs or their lock files (compare release directories with 'microshift-compose release diff')", arg, compose.LockFile)
					}
				}
				p, err := compose.LoadLock(path)
				if err != nil {
					return err
				}
				locks[i] = &lockdiff.Lock{Path: path, Plan: p}
			}
			d := lockdiff.Compare(locks[0], locks[1])
			if format.json() {
				return printJSON(cmd.OutOrStdout(), d)
			}
			_, err := cmd.OutOrStdout().Write(d.Markdown())
			return err
		},
	}
	format.addFlags(cmd)
	return cmd
}
