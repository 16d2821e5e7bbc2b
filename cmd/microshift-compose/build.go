package main

import (
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/compose"
)

func newBuildCmd() *cobra.Command {
	var (
		cat    catalogOptions
		rel    releaseOptions
		sel    selectionOptions
		rnd    renderOptions
		bp     blueprintOptions
		outDir string
	)
	cmd := &cobra.Command{
		Use:   "build --profile NAME --output DIR",
		Short: "Resolve a profile and write the blueprint, image list, config drop-in and lock file",
		Long: `build resolves the selection and writes, atomically, into --output:

  blueprint.toml      osbuild blueprint (validated with osbuild/images for --distro/--image-type)
  images.txt          one digest-pinned image reference per line, sorted, unique
  compose.lock.json   the resolved plan
  config.d/           the MicroShift config drop-in the plan needs
  manifests.d/        NNN-<component>/: prerendered kustomize manifests (kustomization.yaml
                      and one file per resource), images pinned to the plan's digests
  files/              other files the device gets, at their device paths (e.g. lvmd.yaml)

Components with a manifests/ kustomization are rendered in process (no kustomize
binary); components with a plugin run it first (docs/plugins.md). Every container
image a rendered manifest names must be one of the plan's images.

A failed build leaves a previous output directory untouched. build needs no network.`,
		Example: `  microshift-compose build --profile full --arch x86_64 --output out/
  microshift-compose build --profile minimal --arch aarch64 --with multus --output out-min/
  microshift-compose build --profile full --release-dir /usr/share/microshift/release --output out/
  microshift-compose build --profile storage-only --lvmd lvmd.yaml --config config.yaml --output out/
  microshift-compose build --profile minimal --with networking-bridge,storage-hostpath --output out-light/`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := sel.Validate(); err != nil {
				return err
			}
			if outDir == "" {
				return usageError{fmt.Errorf("--output DIR is required")}
			}
			p, err := resolvePlan(cmd, &cat, &rel, &sel, &rnd)
			if err != nil {
				return err
			}
			out, err := compose.Build(cmd.Context(), p, compose.BuildOptions{Distro: bp.Distro, ImageType: bp.ImageType})
			if err != nil {
				return err
			}
			for _, w := range out.Warnings {
				slog.Warn("osbuild: " + w)
			}
			if err := compose.Write(cmd.Context(), outDir, out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: profile %s, release %s, %s: %d components, %d images, %d packages, %d device files, %d manifests.d directories\n",
				outDir, p.Profile, p.Release.Stream, p.Arch, len(p.Components), len(p.Images), len(p.Packages), len(p.Files), len(p.Manifests))
			return nil
		},
	}
	cat.addFlags(cmd)
	rel.addFlags(cmd)
	sel.addFlags(cmd)
	rnd.addFlags(cmd)
	bp.addFlags(cmd)
	cmd.Flags().StringVarP(&outDir, "output", "o", "", "output directory (created, or replaced if it holds a previous build)")
	return cmd
}
