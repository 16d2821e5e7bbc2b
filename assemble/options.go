package assemble

import (
	"fmt"
	"slices"
	"strings"

	"github.com/osbuild/blueprint/pkg/blueprint"
	"github.com/osbuild/images/pkg/distro"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/internal/distros"
	"github.com/microshift-compose/microshift-compose/internal/kernelargs"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/render/installer"
	"github.com/microshift-compose/microshift-compose/render/sbom"
)

// Options are what a build renders besides the plan. Each field was
// checked on its own where it was given (the command's flags, a
// composition file); what it means for the plan's target is checked
// once, by outputsFor, before anything is rendered.
type Options struct {
	// ImageType is the osbuild image type the blueprint is validated
	// against, for the plan's target distro; "" is the target's default.
	// A target without one (bootc only) writes no blueprint with Bootc,
	// and refuses to build without it.
	ImageType string
	// Bootc also renders the Containerfile of a bootc image.
	Bootc bool
	// BootcImages is how its images get in: blueprints.BootcImagesMirror
	// (the default) or blueprints.BootcImagesPull.
	BootcImages string
	// SBOM sets the SBOMs' creation time, the tool version they name and
	// the formats written (SPDX alone by default); the zero value records
	// the Unix epoch and no version.
	SBOM sbom.Options
	// Installer adds the installer outputs (microshift.ks, config.toml,
	// installer.toml) and the user and filesystem customizations.
	Installer InstallerOptions
	// noSBOM leaves the SBOM out: Validate wants the blueprint's verdict,
	// and the SBOM is a seventh of its time.
	noSBOM bool
}

// InstallerOptions are the installer outputs build writes and what goes
// into them, each parsed and checked where it was given (a user name
// useradd takes, filesystems, a device path, an ostree URL osbuild takes).
// The plan's firewall and device files (installer.AddInputs,
// registry.Add) reach them from the plan.
type InstallerOptions struct {
	// OSTree is where the commit built from blueprint.toml is served: the
	// payload of the kickstart, and of an --image-type that installs a
	// commit (which then gets installer.toml).
	OSTree *blueprints.OSTreeOptions
	// BootcImage is the bootc image the kickstart installs.
	BootcImage string
	// Kickstart writes microshift.ks.
	Kickstart bool
	// BIB writes the bootc-image-builder config.toml.
	BIB         bool
	User        *installer.User
	Filesystems []installer.Filesystem
	// InstallationDevice is the disk edge-simplified-installer installs
	// to (customizations.installation_device).
	InstallationDevice string
	// DiskSize is the size of bootc-image-builder's disk image
	// (installer.BIBOptions.DiskSize); 0 for the default.
	DiskSize uint64
}

// outputs are the outputs a build writes for a plan, decided from the
// options and the plan's target: the blueprints and their image types,
// which of them take the user, the filesystem sizes and the hardening,
// and the notes saying so. Every option the target cannot take is refused
// while they are decided; the writers then trust what they get.
type outputs struct {
	// distro is osbuild's name for the target's distro (centos-9 for
	// centos-stream-9), which its lookups take.
	distro string
	arch   releases.Arch
	// imageType is the image type asked for, or the target's
	// (defaultType); "" writes no blueprint (the target is image mode
	// only, and Bootc is set).
	imageType, defaultType string
	// main is blueprint.toml's image type: imageType, or the commit an
	// installer image type installs. installer is that installer image
	// type (installer.toml), nil when there is none.
	mainType      string
	main          distro.ImageType
	installerType string
	installer     distro.ImageType
	// defaultRef is the ref osbuild gives the commit of the distro's
	// default ostree image type: what an --ostree-url without a ref
	// installs. "" without --ostree-url.
	defaultRef string
	// What the blueprints take besides the plan.
	mainUser, mainFilesystems             bool
	installerKickstart, installerUser     bool
	installerFilesystems, installerKernel bool
	mainKernel                            bool
	hardening                             blueprints.HardeningCustomizations
	// user and filesystems are the blueprint customizations of --user
	// and --filesystem.
	user, filesystems *blueprint.Customizations
	// notes say which outputs carry what, in the order they are decided;
	// warnings what the device will lack.
	notes, warnings []string
}

// outputsFor decides the outputs of p with o, refusing what the plan's
// target cannot take, in the order a user fixes them: the bootc base, the
// hardening a bootc image cannot carry, the installer outputs, then the
// image types and what each takes.
func (o Options) outputsFor(p *plan.Plan) (*outputs, error) {
	out := &outputs{distro: p.Target.OSBuildDistro(), arch: releases.Arch(p.Arch), imageType: o.ImageType, defaultType: p.Target.ImageType, hardening: blueprints.Hardening(p)}
	if out.distro == "" { // a plan from a lock older than targets
		out.distro = p.Release.Distro
	}
	if out.imageType == "" {
		out.imageType = p.Target.ImageType
	}
	if o.Bootc && p.Target.BootcBase == "" {
		return nil, fmt.Errorf("release %s targets %s, which has no bootc base image for MicroShift %s: pass --bootc-base IMAGE", p.Release, out.distro, p.Release.Stream)
	}
	if b := p.Release.Build; o.Bootc && b != nil && !slices.ContainsFunc(p.Repositories, func(r plan.Repository) bool { return strings.HasPrefix(r.Source, "--repo-file ") }) {
		return nil, fmt.Errorf("--bootc: release %s is %s, whose MicroShift RPMs are in no repository its bootc base %s enables: name their repository with --repo-file FILE (%s)", p.Release, b.Title, p.Target.BootcBase, b.RPMSource)
	}
	if err := o.checkBootcHardening(p, out); err != nil {
		return nil, err
	}
	if err := o.Installer.checkDisk(); err != nil {
		return nil, err
	}
	switch {
	case out.imageType == "" && o.Bootc:
		// MicroShift on the distro is image mode only: the Containerfile
		// is the composition, and no image type takes the blueprint.
		out.notes = append(out.notes, fmt.Sprintf("%s not written: %s has no rpm-ostree image types, so MicroShift on it is image mode (bootc) only and the Containerfile is the composition; --image-type writes a blueprint for one of its package-based image types", output.BlueprintFile, out.distro))
		if err := o.Installer.checkWithoutBlueprint(); err != nil {
			return nil, err
		}
	case out.imageType == "":
		return nil, fmt.Errorf("%s is image mode (bootc) only for MicroShift: it has no rpm-ostree image types; use --bootc for the Containerfile, or --image-type for a package-based image (%s has %s)",
			out.distro, out.distro, strings.Join(distros.ImageTypes(out.distro, out.arch), ", "))
	default:
		if err := o.Installer.placeBlueprints(p, out); err != nil {
			return nil, err
		}
	}
	notes, err := o.checkHardening(p, out)
	if err != nil {
		return nil, err
	}
	out.notes = append(out.notes, notes...)
	if o.Installer.Kickstart && o.Installer.BootcImage == "" && o.Installer.OSTree == nil {
		return nil, fmt.Errorf("--kickstart installs an ostree commit or a bootc image: pass --ostree-url URL (and --ostree-ref) or --bootc-image IMAGE")
	}
	if o.Installer.OSTree != nil {
		if out.defaultRef, err = blueprints.CommitRef(out.distro, distros.DefaultImageType, out.arch); err != nil {
			return nil, err
		}
	}
	out.warnings = o.Installer.loginWarnings(out)
	return out, nil
}

// loginWarnings say when an installer output makes a device nobody can
// log in to: the kickstart locks root, and the bootc bases of RHEL and
// CentOS have no user and no root password; without --user (in the
// kickstart, config.toml or a blueprint that takes it) the device has no
// login at all.
func (o InstallerOptions) loginWarnings(out *outputs) []string {
	if o.User != nil || out.mainUser || out.installerUser {
		return nil
	}
	var from []string
	if o.Kickstart {
		from = append(from, output.KickstartFile+" locks root and creates no user")
	}
	if o.BIB && !o.Kickstart {
		from = append(from, output.BIBConfigFile+" creates no user, and the RHEL and CentOS bootc images have none and no root password")
	}
	if len(from) == 0 {
		return nil
	}
	return []string{strings.Join(from, "; ") + ": nobody can log in to the device, on its console or over SSH; add --user NAME --ssh-key FILE"}
}

// checkDisk refuses a disk size that no output takes: only the disk image
// of bootc-image-builder has a size; a kickstart's disk is the device's.
func (o InstallerOptions) checkDisk() error {
	if o.DiskSize == 0 {
		return nil
	}
	if !o.BIB {
		return fmt.Errorf("--disk-size is the size of bootc-image-builder's disk image: add --bootc --bib")
	}
	if o.Kickstart {
		return fmt.Errorf("--disk-size: with --kickstart, %s is for --type anaconda-iso, which installs onto the device's own disk (the kickstart gives LVMS what root and the volumes leave of it)", output.BIBConfigFile)
	}
	return nil
}

// checkWithoutBlueprint refuses installer inputs that nothing takes when
// the plan writes no blueprint.
func (o InstallerOptions) checkWithoutBlueprint() error {
	if o.OSTree != nil && !o.Kickstart {
		return fmt.Errorf("--ostree-url is the commit an installer pulls, and this build writes no blueprint: add --kickstart, or use --bootc-image for a bootc install")
	}
	if o.User != nil && !o.Kickstart && !o.BIB {
		return fmt.Errorf("--user %s: no output takes it without a blueprint: add --kickstart or --bib", o.User.Name)
	}
	if len(o.Filesystems) > 0 && !o.Kickstart && !o.BIB {
		return fmt.Errorf("--filesystem: no output takes filesystem sizes without a blueprint: add --kickstart or --bib")
	}
	return nil
}

// placeBlueprints decides the blueprints' image types (blueprint.toml, and
// installer.toml for an image type that installs an ostree commit) and
// which of them take the user, the filesystem sizes, the kickstart and the
// hardening, refusing what no output takes.
func (o InstallerOptions) placeBlueprints(p *plan.Plan, out *outputs) error {
	it, err := distros.ImageType(out.distro, out.imageType, out.arch)
	if err != nil {
		if p.Target.BootcOnly() && !slices.Contains(distros.ImageTypes(out.distro, out.arch), out.imageType) {
			return fmt.Errorf("%s is image mode (bootc) only for MicroShift: it has no rpm-ostree image types such as %s; use --bootc for the Containerfile, or --image-type for a package-based image (%s has %s)",
				out.distro, out.imageType, out.distro, strings.Join(distros.ImageTypes(out.distro, out.arch), ", "))
		}
		return err
	}
	out.mainType, out.main = out.imageType, it
	if blueprints.InstallsCommit(it) {
		if o.OSTree == nil {
			return fmt.Errorf("--image-type %s installs an ostree commit: pass --ostree-url URL where the commit built from %s (--image-type %s) is served", out.imageType, output.BlueprintFile, distros.DefaultImageType)
		}
		out.installerType, out.installer = out.imageType, it
		out.mainType = distros.DefaultImageType
		if out.main, err = distros.ImageType(out.distro, out.mainType, out.arch); err != nil {
			return err
		}
	}
	if o.InstallationDevice != "" && out.installer == nil {
		return fmt.Errorf("--installation-device is the disk of edge-simplified-installer: add --image-type edge-simplified-installer")
	}
	if o.OSTree != nil && out.installer == nil && !o.Kickstart {
		return fmt.Errorf("--ostree-url is the commit an installer pulls: add --kickstart, or an --image-type that installs a commit (edge-installer, edge-simplified-installer, edge-raw-image...)")
	}
	if err := out.placeHardening(); err != nil {
		return err
	}
	user := installer.Customizations(installer.BIBOptions{User: o.User})
	filesystems := installer.Customizations(installer.BIBOptions{Filesystems: o.Filesystems})
	out.user, out.filesystems = user, filesystems
	usedUser, usedFS := o.Kickstart || o.BIB, o.Kickstart || o.BIB
	if !o.Kickstart {
		out.mainUser = o.User != nil && blueprints.Supports(out.main, user)
		out.mainFilesystems = len(o.Filesystems) > 0 && blueprints.Supports(out.main, filesystems)
		usedUser, usedFS = usedUser || out.mainUser, usedFS || out.mainFilesystems
	}
	if it := out.installer; it != nil {
		// The installed system is FIPS when the installer is: osbuild
		// boots it with fips=1, which Anaconda and coreos-installer carry
		// over (osbuild's fips_menu).
		if out.hardening.FIPS != nil {
			if err := blueprints.Unsupported(it, &blueprint.Customizations{FIPS: out.hardening.FIPS}); err != nil {
				return fmt.Errorf("--fips: osbuild's %s for %s/%s cannot install a FIPS system (osbuild/images: %s)", out.installerType, out.distro, out.arch, text.OneLine(err.Error()))
			}
		}
		kickstart := installer.Customizations(installer.BIBOptions{Kickstart: []byte("%post\n%end\n")})
		if o.Kickstart && blueprints.Supports(it, kickstart) {
			out.installerKickstart = true
		} else {
			out.installerKernel = out.hardening.Kernel != nil && blueprints.Supports(it, &blueprint.Customizations{Kernel: out.hardening.Kernel})
			out.installerUser = o.User != nil && !out.mainUser && blueprints.Supports(it, user)
			out.installerFilesystems = len(o.Filesystems) > 0 && blueprints.Supports(it, filesystems)
			usedUser, usedFS = usedUser || out.installerUser, usedFS || out.installerFilesystems
		}
		if o.InstallationDevice != "" {
			if !blueprints.Supports(it, &blueprint.Customizations{InstallationDevice: o.InstallationDevice}) {
				return fmt.Errorf("--installation-device: osbuild's %s installs to no device of its choosing; it is for edge-simplified-installer", out.installerType)
			}
		} else if slices.Contains(it.RequiredBlueprintOptions(), "customizations.installation_device") {
			return fmt.Errorf("--image-type %s installs to a disk without asking: pass --installation-device DEVICE (e.g. /dev/vda)", out.installerType)
		}
		out.notes = append(out.notes, fmt.Sprintf("%s is the ostree commit (%s); %s builds the %s that installs it from %s", output.BlueprintFile, out.mainType, output.InstallerBlueprintFile, out.installerType, o.OSTree.URL))
	}
	if o.User != nil && !usedUser {
		return fmt.Errorf("--user %s: no output takes it: osbuild's %s has no user customization; add --kickstart or --bib", o.User.Name, out.imageType)
	}
	if len(o.Filesystems) > 0 && !usedFS {
		return fmt.Errorf("--filesystem: no output takes filesystem sizes: osbuild's %s has none (they belong to the installed disk); add --kickstart or --bib, or an --image-type that takes them (edge-raw-image, qcow2...)", out.imageType)
	}
	return nil
}

// placeHardening decides what of the plan's hardening blueprint.toml
// takes: FIPS mode and CIS are refused with osbuild's reason where its
// image type does not take them (an image that would not be what was
// asked for); kernel arguments are left to another output (the installer,
// the kickstart, the Containerfile) where it does not.
func (out *outputs) placeHardening() error {
	h, it := out.hardening, out.main
	if h.FIPS != nil {
		if err := blueprints.Unsupported(it, &blueprint.Customizations{FIPS: h.FIPS}); err != nil {
			return fmt.Errorf("--fips: osbuild's %s for %s/%s cannot build a FIPS image (osbuild/images: %s)", out.mainType, out.distro, out.arch, text.OneLine(err.Error()))
		}
	}
	if h.OpenSCAP != nil {
		if err := blueprints.Unsupported(it, &blueprint.Customizations{OpenSCAP: h.OpenSCAP}); err != nil {
			what := "it builds an image osbuild does not remediate"
			if it.OSTreeRef() != "" || out.installer != nil {
				what = "it builds an rpm-ostree commit, and osbuild runs OpenSCAP remediation on package-based images only"
			}
			return fmt.Errorf("--cis: osbuild's %s for %s/%s cannot run OpenSCAP remediation: %s (osbuild/images: %s); use an --image-type that takes customizations.openscap: %s",
				out.mainType, out.distro, out.arch, what, text.OneLine(err.Error()), strings.Join(blueprints.ImageTypesTaking(out.distro, out.arch, &blueprint.Customizations{OpenSCAP: h.OpenSCAP}), ", "))
		}
	}
	out.mainKernel = h.Kernel != nil && blueprints.Supports(it, &blueprint.Customizations{Kernel: h.Kernel})
	return nil
}

// kernelArgsIn are the blueprints that take the kernel arguments.
func (out *outputs) kernelArgsIn() []string {
	var in []string
	if out.mainKernel {
		in = append(in, output.BlueprintFile)
	}
	if out.installerKernel {
		in = append(in, output.InstallerBlueprintFile)
	}
	return in
}

// checkBootcHardening refuses hardening the Containerfile's bootc image
// cannot carry, naming why: FIPS where the release knowledge says the
// release's bootc images cannot be FIPS, and CIS, since osbuild/images
// runs OpenSCAP remediation while it builds a package-based image and
// bootc-image-builder's image types take no customizations.openscap.
func (o Options) checkBootcHardening(p *plan.Plan, out *outputs) error {
	h := p.Hardening
	if h == nil || !o.Bootc {
		return nil
	}
	if h.FIPSOn() && h.FIPS.ImageModeRefused != "" {
		return fmt.Errorf("--fips with --bootc: MicroShift %s cannot run in FIPS mode from a bootc image: %s", p.Release.Stream, h.FIPS.ImageModeRefused)
	}
	if h.CIS != nil {
		why := "image-builder's bootc image types (bootc-image-builder's too) take no customizations.openscap"
		if err := blueprints.BootcUnsupported(out.distro, out.arch, "qcow2", &blueprint.Customizations{OpenSCAP: &blueprint.OpenSCAPCustomization{ProfileID: h.CIS.Profile}}); err != nil {
			why += " (osbuild/images: " + text.OneLine(err.Error()) + ")"
		}
		return fmt.Errorf("--cis with --bootc: the Containerfile's bootc image cannot be remediated with OpenSCAP: osbuild/images remediates while it builds a package-based image, and %s; build without --bootc, with an --image-type that takes customizations.openscap (%s)",
			why, strings.Join(blueprints.ImageTypesTaking(out.distro, out.arch, &blueprint.Customizations{OpenSCAP: &blueprint.OpenSCAPCustomization{ProfileID: h.CIS.Profile}}), ", "))
	}
	return nil
}

// checkHardening refuses kernel arguments no output takes (osbuild's
// edge-commit, RHEL 9's default, has no customizations.kernel.append: an
// ostree commit's kernel command line is its deployment's), and returns
// notes saying which outputs carry what where one does not.
func (o Options) checkHardening(p *plan.Plan, out *outputs) ([]string, error) {
	h := p.Hardening
	if h == nil {
		return nil, nil
	}
	hasBlueprint := out.main != nil
	var notes []string
	if len(h.KernelArgs) > 0 {
		carriers := out.kernelArgsIn()
		if o.Installer.Kickstart {
			carriers = append(carriers, output.KickstartFile)
		}
		if o.Installer.BIB && o.Installer.Kickstart {
			carriers = append(carriers, output.BIBConfigFile)
		}
		if o.Bootc {
			carriers = append(carriers, output.Containerfile)
		}
		if len(carriers) == 0 {
			return nil, fmt.Errorf("%s: no output takes kernel arguments: osbuild's %s has no customizations.kernel.append (an ostree commit's kernel command line is set where it is deployed); add --kickstart, --bootc, or an --image-type that takes them (%s)",
				kernelargs.Flag, out.imageType, strings.Join(blueprints.ImageTypesTaking(out.distro, out.arch, &blueprint.Customizations{Kernel: &blueprint.KernelCustomization{Append: "quiet"}}), ", "))
		}
		if hasBlueprint && !out.mainKernel {
			notes = append(notes, fmt.Sprintf("kernel arguments (%s): in %s; not in %s, as osbuild's %s takes no customizations.kernel.append (an ostree commit's kernel command line is set where it is deployed)",
				kernelargs.Flag, strings.Join(carriers, ", "), output.BlueprintFile, out.mainType))
		}
	}
	if h.FIPSOn() && hasBlueprint && !o.Installer.Kickstart && o.Installer.OSTree == nil {
		if it := out.main; it.OSTreeRef() != "" && !blueprints.InstallsCommit(it) {
			notes = append(notes, fmt.Sprintf("FIPS: %s's ostree commit (%s) has the FIPS crypto policy; fips=1 on the kernel command line is set by what deploys it (--kickstart writes it into microshift.ks, an installer --image-type into installer.toml), not by the commit", output.BlueprintFile, out.mainType))
		}
	}
	return notes, nil
}
