package main

import (
	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/plan/lockfile"
	"github.com/microshift-compose/microshift-compose/render/describe"
)

func newResolveCmd() *cobra.Command {
	var (
		cat     catalogOptions
		rel     releaseOptions
		sel     selectionOptions
		rnd     renderOptions
		ver     versionOptions
		hard    hardeningOptions
		format  formatOptions
		file    fileOptions
		ops     operatorOptions
		explain bool
	)
	cmd := &cobra.Command{
		Use:   "resolve --profile NAME",
		Short: "Show the plan for a selection: components in apply order and why each is there",
		Example: `  microshift-compose resolve --profile storage-only --explain
  microshift-compose resolve --profile minimal --with multus --output json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := file.apply(cmd, false); err != nil {
				return err
			}
			if err := sel.Validate(); err != nil {
				return err
			}
			if err := format.Validate(); err != nil {
				return err
			}
			if err := ops.Validate(); err != nil {
				return err
			}
			defer ops.close()
			p, err := resolvePlan(cmd, &cat, &rel, &sel, &rnd, nil, ver.apply, hard.apply, ops.request(cmd.Context()))
			if err != nil {
				return err
			}
			file.record(p)
			if format.json() {
				lock, err := lockfile.Encode(p)
				if err != nil {
					return err
				}
				if _, err = cmd.OutOrStdout().Write(lock); err == nil {
					warnDevice(cmd, p)
				}
				return err
			}
			// The text form lists the warnings itself.
			return describe.Plan(cmd.OutOrStdout(), p, explain)
		},
	}
	cat.addFlags(cmd)
	rel.addFlags(cmd)
	sel.addFlags(cmd)
	rnd.addFlags(cmd)
	ver.addFlags(cmd)
	hard.addFlags(cmd)
	rnd.addHealthFlags(cmd)
	format.addFlags(cmd)
	file.addFlags(cmd)
	ops.addFlags(cmd)
	cmd.Flags().BoolVar(&explain, "explain", false, "also list every image, package, config value and device file with where it comes from")
	return cmd
}
