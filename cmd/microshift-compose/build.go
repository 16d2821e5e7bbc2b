package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/releases"
)

func newBuildCmd() *cobra.Command {
	var (
		cat    catalogOptions
		rel    releaseOptions
		sel    selectionOptions
		rnd    renderOptions
		bp     blueprintOptions
		reg    registryOptions
		dev    deviceOptions
		boot   bootcOptions
		ver    versionOptions
		trust  trustOptions
		inst   installerOptions
		outDir string
		force  bool
		sizes  bool
	)
	cmd := &cobra.Command{
		Use:   "build --profile NAME --output DIR",
		Short: "Resolve a profile and write the blueprint, image list, config drop-in and lock file",
		Long: `build resolves the selection and writes, atomically, into --output:

  blueprint.toml      osbuild blueprint (validated with osbuild/images for --distro/--image-type)
  images.txt          one digest-pinned image reference per line, sorted, unique
  compose.lock.json   the resolved plan
  config.d/           the MicroShift config drop-in the plan needs (releases 4.19 and later;
                      earlier ones read only files/etc/microshift/config.yaml); none when
                      the plan changes nothing
  manifests.d/        NNN-<component>/: prerendered kustomize manifests (kustomization.yaml
                      and one file per resource), images pinned to the plan's digests
  files/              other files the device gets, at their device paths (e.g. lvmd.yaml,
                      the mirror's registries.conf.d drop-in and CA)
  Containerfile       with --bootc: the same composition as a bootc image, embedding the
                      images that 'mirror --to dir:<output>/images' writes, or pulling
                      them during the image build (--bootc-images pull)

The device's registry access: --pull-secret FILE goes to /etc/crio/openshift-pull-secret
(0600), where CRI-O reads it: in the blueprint (written 0600), and in the Containerfile
from a build secret (podman build --secret id=pullsecret,src=FILE), never in files/ or
the lock. --mirror-registry REGISTRY[/PREFIX] writes a registries.conf.d drop-in that
sends every image of the plan to the mirror first, with the mapping 'mirror --to
docker://REGISTRY/PREFIX' pushes with (checked by resolving every image through it with
containers/image); --mirror-ca adds the mirror's CA to /etc/containers/certs.d.

The device's trust: --verify-key FILE (repeatable) places each PEM public key at
/etc/containers/sigstore/<name>.pub and writes /etc/containers/policy.json requiring a
sigstore signature by one of them (signedIdentity matchRepository) for every
repository of the plan, accepting the bootc images directory, and rejecting every
other image, as MicroShift's own sigstore test kickstart does; --policy FILE places
your containers-policy.json instead (keys given with it are placed too, for its
keyPath entries). Either way /etc/containers/registries.d/50-microshift-compose.yaml
turns on sigstore attachments for the plan's repositories and the --mirror-registry,
so CRI-O, podman and bootc check what 'mirror --verify-key' checked.

Installing devices: --kickstart writes microshift.ks, an Anaconda kickstart installing
the ostree commit (--ostree-url, --ostree-ref) or a bootc image (--bootc-image): one LVM
volume group (--lvmd's default device class, else rhel) with the root volume sized by
--filesystem /=SIZE (default 10GiB) and the rest free for LVMS, the --user with its
--ssh-key, the firewall, and in %post the pull secret (0600), the mirror's drop-in and
CA, and --ca-trust anchors. An --image-type that installs an ostree commit
(edge-installer, edge-simplified-installer, edge-raw-image, edge-ami, edge-vsphere)
needs --ostree-url and writes installer.toml beside the commit's blueprint.toml. --bib
(with --bootc) writes config.toml for bootc-image-builder. --firewall-port and
--ca-trust reach the blueprint and the Containerfile too. A blueprint part the image
type would drop is refused by name.

Components with a manifests/ kustomization are rendered in process (no kustomize
binary); components with a plugin run it first (docs/plugins.md). Every container
image a rendered manifest names must be one of the plan's images.

With --resolve-sizes, build reads the images' manifests from their registries and
adds a footprint section to compose.lock.json (see 'microshift-compose footprint').
A failed build leaves a previous output directory untouched. Without
--resolve-sizes, build needs no network.

An existing --output is replaced only when it holds a previous build and
nothing else: its compose.lock.json parses and every entry is one build
writes (a mirrored images/ layout is kept across builds). Otherwise build
refuses and names the first foreign file; --force replaces it anyway.
Temporary directories (.<output>.tmp-*) of killed builds are removed by the
next build, and a mirrored images/ layout in one is recovered.`,
		Example: `  microshift-compose build --profile full --arch x86_64 --output out/
  microshift-compose build --profile minimal --arch aarch64 --with multus --output out-min/
  microshift-compose build --profile full --release-dir /usr/share/microshift/release --output out/
  microshift-compose build --profile storage-only --lvmd lvmd.yaml --config config.yaml --output out/
  microshift-compose build --profile networking-only --with storage-hostpath --allow-unpinned --output out-light/
  microshift-compose build --profile full --release 4.16 --output out-416/
  microshift-compose build --profile full --arch x86_64 --bootc --output out/
  microshift-compose build --profile full --pull-secret pull-secret.json --mirror-registry mirror.example.com:5000/microshift --mirror-ca ca.crt --output out/
  microshift-compose build --profile full --bootc --bootc-images pull --pull-secret pull-secret.json --output out/
  microshift-compose build --profile full --verify-key redhat-release-key3.pub --mirror-registry mirror.example.com:5000/microshift --output out/
  microshift-compose build --profile full --kickstart --ostree-url http://edge.example.com/repo --user admin --ssh-key admin.pub --filesystem /=20GiB --pull-secret pull-secret.json --output out/
  microshift-compose build --profile full --image-type edge-installer --ostree-url http://edge.example.com/repo --kickstart --output out/
  microshift-compose build --profile full --bootc --bib --kickstart --bootc-image quay.io/example/microshift:4.19 --user admin --ssh-key admin.pub --output out/`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Every flag is checked, whether or not it is used: --jobs -1
			// is a mistake even without --resolve-sizes.
			for _, v := range []interface{ Validate() error }{&sel, &reg} {
				if err := v.Validate(); err != nil {
					return err
				}
			}
			if err := boot.Validate(cmd); err != nil {
				return err
			}
			if err := dev.Validate(); err != nil {
				return err
			}
			if err := inst.Validate(boot.Enabled); err != nil {
				return err
			}
			if outDir == "" {
				return usageError{fmt.Errorf("--output DIR is required")}
			}
			p, err := resolvePlan(cmd, &cat, &rel, &sel, &rnd, ver.apply, func(req *compose.Request) error {
				req.Distro, req.BootcBase = bp.Distro, boot.Base
				return nil
			})
			if err != nil {
				return err
			}
			if err := dev.apply(cmd.ErrOrStderr(), p); err != nil {
				return err
			}
			if err := trust.applyDevice(p, dev.Mirror, boot.Enabled); err != nil {
				return err
			}
			if err := inst.apply(p); err != nil {
				return err
			}
			instOpts, err := inst.options()
			if err != nil {
				return err
			}
			if sizes {
				rc, err := reg.client()
				if err != nil {
					return err
				}
				fp, err := airgap.Footprint(cmd.Context(), p, airgap.Options{Registry: rc, Arch: releases.Arch(p.Arch)})
				if err != nil {
					return fmt.Errorf("resolving image sizes: %w", err)
				}
				p.Footprint = fp
			}
			out, err := compose.Build(cmd.Context(), p, compose.BuildOptions{ImageType: bp.ImageType, Bootc: boot.Enabled, BootcImages: boot.Images, Installer: instOpts})
			if err != nil {
				return err
			}
			for _, w := range out.Warnings {
				warn(cmd.ErrOrStderr(), "osbuild: "+w)
			}
			writeOpts := compose.WriteOptions{Force: force, Warn: func(msg string) { warn(cmd.ErrOrStderr(), msg) }}
			if err := compose.Write(cmd.Context(), outDir, out, writeOpts); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: profile %s, release %s, %s: %d components, %d images, %d packages, %d device files, %d manifests.d directories\n",
				outDir, p.Profile, p.Release.Stream, p.Arch, len(p.Components), len(p.Images), len(p.Packages), len(p.Files), len(p.Manifests))
			warnDevice(cmd, out.Plan)
			return nil
		},
	}
	cat.addFlags(cmd)
	rel.addFlags(cmd)
	sel.addFlags(cmd)
	rnd.addFlags(cmd)
	rnd.addHealthFlags(cmd)
	bp.addFlags(cmd)
	reg.addFlags(cmd)
	dev.addFlags(cmd)
	boot.addFlags(cmd)
	ver.addFlags(cmd)
	trust.addBuildFlags(cmd)
	inst.addFlags(cmd)
	cmd.Flags().StringVarP(&outDir, "output", "o", "", "output directory (created, or replaced if it holds a previous build and nothing else)")
	cmd.Flags().BoolVar(&force, "force", false, "replace --output even when it holds files a build does not write (a mirrored images/ layout is still kept)")
	cmd.Flags().BoolVar(&sizes, "resolve-sizes", false, "read image manifests from their registries and add a footprint section to compose.lock.json (needs network)")
	return cmd
}
