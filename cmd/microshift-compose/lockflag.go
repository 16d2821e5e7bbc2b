package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
)

// lockOptions is --lock: take the plan from a build's compose.lock.json
// instead of resolving a selection.
type lockOptions struct{ Path string }

func (o *lockOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.Path, "lock", "", "take the plan from a compose.lock.json written by build, instead of --profile and the selection flags")
	markPaths(cmd, "lock")
}

// selectionFlags are the flags --lock replaces.
var selectionFlags = []string{"profile", "with", "without", "arch", "config", "lvmd", "allow-unpinned", "allow-red-boot", "catalog", "release", "release-dir", "plugin-timeout"}

// Validate refuses --lock together with selection flags: the lock already
// says what is selected. keep are flags the command uses for something
// else beside the lock.
func (o *lockOptions) Validate(cmd *cobra.Command, keep ...string) error {
	if o.Path == "" {
		return nil
	}
	var set []string
	for _, n := range selectionFlags {
		if f := cmd.Flags().Lookup(n); f != nil && f.Changed && !slices.Contains(keep, n) {
			set = append(set, "--"+n)
		}
	}
	if len(set) > 0 {
		return usageError{fmt.Errorf("--lock takes the selection from %s; drop %s", o.Path, strings.Join(set, ", "))}
	}
	return nil
}

func (o *lockOptions) load() (*plan.Plan, error) { return lockfile.Load(o.Path) }
