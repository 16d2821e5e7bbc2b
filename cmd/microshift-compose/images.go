package main

import (
	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/spf13/cobra"
)

func newImagesCmd() *cobra.Command {
	var (
		cat    catalogOptions
		rel    releaseOptions
		sel    selectionOptions
		rnd    renderOptions
		ver    versionOptions
		format formatOptions
		file   fileOptions
		ops    operatorOptions
	)
	cmd := &cobra.Command{
		Use:   "images --profile NAME",
		Short: "List the digest-pinned images a selection needs, one per line (like images.txt)",
		Example: `  microshift-compose images --profile full --arch aarch64
  microshift-compose images --profile full --output json`,
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
			p, err := resolvePlan(cmd, &cat, &rel, &sel, &rnd, nil, ver.apply, ops.request(cmd.Context()))
			if err != nil {
				return err
			}
			if format.json() {
				err = printJSON(cmd.OutOrStdout(), p.Images)
			} else {
				_, err = cmd.OutOrStdout().Write(assemble.ImageList(p))
			}
			if err == nil {
				warnDevice(cmd, p)
			}
			return err
		},
	}
	cat.addFlags(cmd)
	rel.addFlags(cmd)
	sel.addFlags(cmd)
	rnd.addFlags(cmd)
	ver.addFlags(cmd)
	format.addFlags(cmd)
	file.addFlags(cmd)
	ops.addFlags(cmd)
	return cmd
}
