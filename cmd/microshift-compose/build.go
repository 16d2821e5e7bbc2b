package main

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/render/provenance"
	"github.com/microshift-compose/microshift-compose/render/sbom"
	"github.com/microshift-compose/microshift-compose/write"
)

func newBuildCmd() *cobra.Command {
	var (
		cat    catalogOptions
		rel    releaseOptions
		sel    selectionOptions
		rnd    renderOptions
		reg    registryOptions
		ver    versionOptions
		hard   hardeningOptions
		trust  trustOptions
		format formatOptions
		inst   installerOptions
		sign   signOptions
		file   fileOptions
		ops    operatorOptions
		outDir string
		force  bool
		// --print-file: print the composition file of the flags.
		printOnly bool
	)
	// --expect-id: the composition ID the build must have.
	var expectID string
	// --sbom-format: which SBOMs build writes.
	sbomFormat := []string{string(sbom.FormatSPDX)}
	steps := buildSteps{reg: &reg, trust: &trust}
	ops.reg = &reg
	cmd := &cobra.Command{
		Use:   "build --profile NAME --output DIR",
		Short: "Resolve a profile and write the blueprint, image list, config drop-in and lock file",
		Long: `build resolves the selection and writes, atomically, into --output:

  blueprint.toml      osbuild blueprint (validated with osbuild/images for --distro/--image-type)
  images.txt          one digest-pinned image reference per line, sorted, unique
  compose.lock.json   the resolved plan
  sbom.spdx.json      SPDX 2.3 SBOM: the composition, its components, the RPMs with their
                      version constraints, the images with their digests and pkg:oci purls,
                      the Helm charts with their sha256;
                      created is $SOURCE_DATE_EPOCH when set, else the Unix epoch
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
  operators/catalog/  with --operator: the OCI layout of the filtered operator catalog
                      image, which 'mirror --lock' reads

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
so CRI-O, podman and bootc check what 'mirror --verify-key' checked. With
--certificate-identity (and --certificate-oidc-issuer, --fulcio-ca, --rekor-key for
keyless signatures, or --ca-roots, --ca-intermediates for your own PKI) the policy
requires a signature by that certificate identity instead (containers/image's fulcio
or pki rule), and the certificates and Rekor key are placed in /etc/containers/sigstore.

Installing devices: --kickstart writes microshift.ks, an Anaconda kickstart installing
the ostree commit (--ostree-url, --ostree-ref) or a bootc image (--bootc-image): one LVM
volume group (--lvmd's default device class, else rhel) with the root volume sized by
--filesystem /=SIZE (default 10GiB) and the rest free for LVMS, the --user with its
--ssh-key, the firewall, and in %post the pull secret (0600), the mirror's drop-in and
CA, and --ca-trust anchors. An --image-type that installs an ostree commit
(edge-installer, edge-simplified-installer, edge-raw-image, edge-ami, edge-vsphere)
needs --ostree-url and writes installer.toml beside the commit's blueprint.toml. --bib
(with --bootc) writes config.toml for bootc-image-builder: for its disk images the same
volume group as customizations.disk, in a disk of --disk-size (default: the volumes
plus 10GiB free for LVMS), checked with osbuild/images' bootc distro; with --kickstart
the kickstart for --type anaconda-iso. --firewall-port and
--ca-trust reach the blueprint and the Containerfile too. A blueprint part the image
type would drop is refused by name.

Operators: --operator PACKAGE[:CHANNEL][@VERSION-RANGE] (repeatable) installs a package
of the file-based catalog image --operator-catalog names (oci:DIR, oci-archive:FILE: read
here, offline; docker://REFERENCE: read from its registry, a tag resolved to the digest
the lock records) with the bundles it requires: its channel's head, or the newest bundle
in the range. The plan gets component olm, the filtered catalog image (only the chosen
bundles) and every bundle and related image by digest; manifests.d/NNN-olm-operators
holds the CatalogSource, OperatorGroups and Subscriptions, and greenboot waits for the
operators' deployments.

Components with a manifests/ kustomization are rendered in process (no kustomize
binary); components with a plugin run it first (docs/plugins.md). Every container
image a rendered manifest names must be one of the plan's images.

With --resolve-sizes, build reads the images' manifests from their registries and
adds a footprint section to compose.lock.json (see 'microshift-compose footprint').
A failed build leaves a previous output directory untouched. Without
--resolve-sizes, build needs no network.

build prints one line naming the output and its composition ID; with --format json,
a summary for scripts: the ID, the release (and whose rules were applied), every file
written with its sha256 and size, the counts and the warnings. The composition ID (the
lock's "id") is the sha256 of the normalised selection, the catalog's and the release
files' content and the options that change what build writes (not paths, flag order or
time): equal IDs are the same composition. --output 'out/{id}' names the directory after
it ({profile}, {arch}, {release} expand too). --expect-id ID fails the build, writing
nothing, when the ID is another: the CI jobs 'matrix --emit' describes check with it
that they build the composition that was planned. build's -o is --output, the directory;
-o json and -o text are refused rather than written as directories.

A release newer than every release this microshift-compose knows (a nightly of the
next minor through --release-dir) is built with the newest known release's rules, with
a warning, and the lock's release.rules names them; --strict-release refuses it.

An existing --output is replaced only when it holds a previous build and
nothing else: its compose.lock.json parses and every entry is one build
writes (a mirrored images/ layout is kept across builds). Otherwise build
refuses and names the first foreign file; --force replaces it anyway.
Temporary directories (.<output>.tmp-*) of killed builds are removed by the
next build, and a mirrored images/ layout in one is recovered.

A composition file (-f FILE, TOML) holds what these flags hold, one key per
flag (docs/composition.schema.json, docs/composition.md); its paths
are relative to the file. Precedence: a flag given on the command line, then
the file's key, then the flag's default; a list flag (--with, --verify-key,
--filesystem...) replaces the file's list. The same request has the same
composition ID from the file as from the flags; the lock records the file's
path and sha256 (composition_file). --print-file prints the file the other
flags describe instead of building, to save and use with -f.`,
		Example: `  microshift-compose build --profile full --arch x86_64 --output out/
  microshift-compose build --profile full --arch x86_64 --output 'out/{id}' --format json
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
  microshift-compose build --profile full --bootc --bib --kickstart --bootc-image quay.io/example/microshift:4.19 --user admin --ssh-key admin.pub --output out/
  microshift-compose build -f device.toml
  microshift-compose build -f device.toml --arch aarch64 --output out-arm/
  microshift-compose build --profile full --pull-secret pull-secret.json --kickstart --ostree-url http://edge.example.com/repo --output out/ --print-file > device.toml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := file.apply(cmd, false); err != nil {
				return err
			}
			// Every flag is checked, whether or not it is used (--jobs -1
			// is a mistake even without --resolve-sizes), and whether the
			// build runs or --print-file prints the file: what the build
			// would refuse before resolving is not printed.
			for _, v := range []interface{ Validate() error }{&sel, &reg, &format, &hard, &rnd, &rel, &ops} {
				if err := v.Validate(); err != nil {
					return err
				}
			}
			if err := steps.Validate(cmd); err != nil {
				return err
			}
			if err := inst.Validate(steps.boot.Enabled, trust.enabled() || steps.dev.Mirror != ""); err != nil {
				return err
			}
			formats, err := sbomFormats(sbomFormat)
			if err != nil {
				return err
			}
			if printOnly {
				if outDir != "" {
					if err := checkBuildOutput(outDir); err != nil {
						return err
					}
				}
				return printFile(cmd)
			}
			if err := checkBuildOutput(outDir); err != nil {
				return err
			}
			// JSON strings are UTF-8: encoding/json would print another
			// path (U+FFFD for each bad byte) than the one written.
			if format.json() && !utf8.ValidString(outDir) {
				return usageError{fmt.Errorf("--output %s: the path is not valid UTF-8, which --format json cannot print as it is: choose a UTF-8 name, or --format text", text.Escape(outDir))}
			}
			if err := checkExpectID(expectID); err != nil {
				return err
			}
			instOpts, err := inst.options()
			if err != nil {
				return err
			}
			steps.installer = &instOpts
			steps.installerInputs = inst.apply
			steps.sbom.Formats = formats
			signer, err := sign.start()
			if err != nil {
				return err
			}
			defer steps.settle()
			// The catalog is closed once the output is written: its layers
			// are copied into the filtered catalog's layout.
			defer ops.close()
			p, err := resolvePlan(cmd, &cat, &rel, &sel, &rnd, steps.lookAhead, ver.apply, hard.apply, steps.request, ops.request(cmd.Context()))
			if err != nil {
				return err
			}
			file.record(p)
			out, err := steps.build(cmd.Context(), p)
			if err != nil {
				return err
			}
			if expectID != "" && out.Plan.ID != expectID {
				return fmt.Errorf("composition ID %s is not %s (--expect-id): the catalog, the release files, the tool's release knowledge or the flags differ from those the composition was planned with; nothing written", out.Plan.ID, expectID)
			}
			dir, err := write.Expand(outDir, out.Plan)
			if err != nil {
				return usageError{err}
			}
			if s, err := signer(); err != nil {
				return err
			} else if s != nil {
				if err := provenance.Sign(cmd.Context(), out, s, toolVersion()); err != nil {
					return err
				}
			}
			// What writing says (a killed build's leftovers) is printed
			// at once, and recorded with the build's other warnings.
			warn := warnOnce(cmd.ErrOrStderr())
			var written []string
			writeOpts := write.Options{Force: force, Warn: func(msg string) {
				written = append(written, msg)
				warn(msg)
			}}
			if err := write.Write(cmd.Context(), dir, out, writeOpts); err != nil {
				return err
			}
			s := assemble.Summarize(out, dir)
			s.AddWarnings(written...)
			if format.json() {
				if err := printJSON(cmd.OutOrStdout(), s); err != nil {
					return err
				}
			} else {
				fmt.Fprintln(cmd.OutOrStdout(), s.Line())
			}
			// Every warning the build recorded (the lock's, osbuild's,
			// the installer's added after resolution), once each.
			for _, w := range s.Warnings {
				warn(w)
			}
			return nil
		},
	}
	cat.addFlags(cmd)
	rel.addFlags(cmd)
	sel.addFlags(cmd)
	rnd.addFlags(cmd)
	rnd.addHealthFlags(cmd)
	steps.addFlags(cmd)
	reg.addFlags(cmd)
	ver.addFlags(cmd)
	hard.addFlags(cmd)
	trust.addBuildFlags(cmd)
	format.addFormatFlag(cmd, "summary format on stdout: text (one line) or json (the composition ID, every file written with its sha256, counts)")
	inst.addFlags(cmd)
	sign.addFlags(cmd)
	addSBOMFormatFlag(cmd, &sbomFormat)
	cmd.Flags().StringVarP(&outDir, "output", "o", "", "output directory (created, or replaced if it holds a previous build and nothing else); {id}, {profile}, {arch} and {release} expand, e.g. 'out/{id}'")
	cmd.Flags().BoolVar(&force, "force", false, "replace --output even when it holds files a build does not write (a mirrored images/ layout is still kept)")
	cmd.Flags().StringVar(&expectID, "expect-id", "", "fail, writing nothing, unless the composition ID is this one (64 hex digits): a CI job rebuilding a cell 'matrix --emit' planned checks it builds that composition")
	file.addFlags(cmd)
	cmd.Flags().BoolVar(&printOnly, "print-file", false, "print the composition file (TOML) the other flags (and -f) describe on stdout, paths as given (relative to the working directory: save it there), instead of building")
	ops.addFlags(cmd)
	cmd.Flags().BoolVar(&steps.sizes, "resolve-sizes", false, "read image manifests from their registries and add a footprint section to compose.lock.json (needs network)")
	return cmd
}

// checkBuildOutput checks build's --output before anything is resolved: it
// is required, its placeholders are known, and it is no format name: -o
// is the output format of resolve, images and the listing commands, and
// 'build -o json' writing a directory ./json/ would surprise.
func checkBuildOutput(dir string) error {
	switch dir {
	case "":
		return usageError{errors.New("--output DIR is required")}
	case "json", "text":
		return usageError{fmt.Errorf("--output %s: build's -o/--output is the output directory, not a format; for the summary as JSON use --format json (to write into a directory named %s, pass --output ./%s)", dir, dir, dir)}
	}
	if err := write.CheckTemplate(dir); err != nil {
		return usageError{err}
	}
	return nil
}

// compositionID is what a composition ID looks like: a sha256 in hex.
var compositionID = lazyregexp.New(`^[0-9a-f]{64}$`)

// checkExpectID checks --expect-id before anything is resolved.
func checkExpectID(id string) error {
	if id != "" && !compositionID.MatchString(id) {
		return usageError{fmt.Errorf("--expect-id %q is not a composition ID (64 lowercase hex digits, the lock's \"id\")", id)}
	}
	return nil
}

// buildSteps is what build does with a resolved plan: the device files,
// the image sizes, and the rendered outputs checked by osbuild. build and
// matrix share it.
type buildSteps struct {
	bp    blueprintOptions
	dev   deviceOptions
	boot  bootcOptions
	reg   *registryOptions
	trust *trustOptions
	sizes bool
	// sbom is set by Validate from SOURCE_DATE_EPOCH and the tool version.
	sbom sbom.Options
	// installer and installerInputs are build's installer options (nil in
	// matrix, whose cells write no installer inputs).
	installer       *assemble.InstallerOptions
	installerInputs func(*plan.Plan) error
	// lookedAhead waits for the distro lookup lookAhead started; nil when
	// none was.
	lookedAhead func()
}

// lookAhead starts osbuild's lookup of the image type the blueprint will
// be validated for as soon as the release is known (assemble.LookAhead),
// to overlap with resolving; settle waits for it.
func (b *buildSteps) lookAhead(rel *releases.Release, req compose.Request) {
	b.lookedAhead = assemble.LookAhead(rel, req, b.bp.ImageType)
}

// settle waits for what lookAhead started, so that the command does not
// end while osbuild's definitions are being written to the cache.
func (b *buildSteps) settle() {
	if b.lookedAhead != nil {
		b.lookedAhead()
	}
}

func (b *buildSteps) addFlags(cmd *cobra.Command) {
	b.bp.addFlags(cmd)
	b.dev.addFlags(cmd)
	b.boot.addFlags(cmd)
}

// Validate checks the flags of the steps.
func (b *buildSteps) Validate(cmd *cobra.Command) error {
	if err := b.boot.Validate(cmd); err != nil {
		return err
	}
	if err := b.dev.Validate(); err != nil {
		return err
	}
	if err := b.trust.validateBuild(); err != nil {
		return err
	}
	bom, err := sbomOptions()
	if err != nil {
		return err
	}
	b.sbom = bom
	return nil
}

// request sets the request fields the steps' flags choose.
func (b *buildSteps) request(req *compose.Request) error {
	req.Distro, req.BootcBase = b.bp.Distro, b.boot.Base
	files, err := b.boot.repoFiles()
	req.RepoFiles = files
	return err
}

// build adds the device files (and sizes) to p and renders the outputs.
// It prints nothing: the warnings of the device options are recorded in
// the plan, osbuild's in the output, and assemble.Summarize holds them all.
func (b *buildSteps) build(ctx context.Context, p *plan.Plan) (*output.Dir, error) {
	// The bootc image the device updates from, when build names it.
	var osImage string
	if b.installer != nil {
		osImage = b.installer.BootcImage
	}
	if err := b.dev.apply(p, osImage); err != nil {
		return nil, err
	}
	if err := b.trust.applyDevice(p, b.dev.Mirror, b.boot.Enabled, osImage); err != nil {
		return nil, err
	}
	if b.installerInputs != nil {
		if err := b.installerInputs(p); err != nil {
			return nil, err
		}
	}
	if b.sizes {
		rc, err := b.reg.client()
		if err != nil {
			return nil, err
		}
		fp, err := airgap.Footprint(ctx, p, airgap.Options{Registry: rc, Arch: releases.Arch(p.Arch)})
		if err != nil {
			return nil, fmt.Errorf("resolving image sizes: %w", err)
		}
		p.Footprint = fp
		if err := p.SetInput("footprint", true); err != nil {
			return nil, err
		}
	}
	opts := assemble.Options{ImageType: b.bp.ImageType, Bootc: b.boot.Enabled, BootcImages: b.boot.Images, SBOM: b.sbom}
	if b.installer != nil {
		opts.Installer = *b.installer
	}
	return assemble.Build(ctx, p, opts)
}
