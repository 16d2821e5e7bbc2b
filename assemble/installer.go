package assemble

import (
	"fmt"
	"slices"
	"strings"

	"github.com/osbuild/blueprint/pkg/blueprint"
	"github.com/osbuild/images/pkg/distro"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
	"github.com/microshift-compose/microshift-compose/internal/distros"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/render/installer"
	"github.com/microshift-compose/microshift-compose/render/registry"
)

// InstallerOptions are the installer outputs build writes and what goes
// into them. The plan's firewall and device files (AddInstallerInputs,
// AddDeviceRegistry) reach them from the plan.
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

// installerFiles are the plan's device files the kickstart writes in %post:
// registry access and trust, which the installer and a bootc image built
// elsewhere need too.
func installerFiles(p *plan.Plan) []plan.File {
	var out []plan.File
	for _, f := range p.Files {
		if f.Secret || f.Path == registry.MirrorConfPath || strings.HasPrefix(f.Path, registry.CertsDPath+"/") || strings.HasPrefix(f.Path, installer.CATrustDir+"/") {
			out = append(out, f)
		}
	}
	return out
}

// volumeGroup is the volume group the kickstart or the
// bootc-image-builder disk creates: the one of --lvmd's default device
// class, else installer.DefaultVolumeGroup, which MicroShift picks as the
// host's only group. Groups of other device classes need disks of their
// own: a warning says so.
func volumeGroup(p *plan.Plan, opts InstallerOptions) (string, []string, error) {
	for _, f := range p.Files {
		if f.Path != lvmdconfig.DevicePath {
			continue
		}
		c, err := lvmdconfig.Parse(f.Source, f.Data)
		if err != nil {
			return "", nil, err
		}
		vg := c.Default().VolumeGroup
		if vg == "" {
			vg = installer.DefaultVolumeGroup
		}
		var others []string
		for _, dc := range c.DeviceClasses {
			if dc.VolumeGroup != vg && !slices.Contains(others, dc.VolumeGroup) {
				others = append(others, dc.VolumeGroup)
			}
		}
		if len(others) > 0 {
			creator := output.KickstartFile
			if !opts.Kickstart {
				creator = "the disk of " + output.BIBConfigFile
			}
			return vg, []string{fmt.Sprintf("%s creates volume group %s only; the volume groups %s of other --lvmd device classes need disks of their own, set up before MicroShift starts", creator, vg, strings.Join(others, ", "))}, nil
		}
		return vg, nil, nil
	}
	return installer.DefaultVolumeGroup, nil, nil
}

// installerBuild is what installer options add to a build.
type installerBuild struct {
	files    []output.File
	notes    []string
	warnings []string
	// fsInBlueprint: a blueprint took the filesystem sizes (not only the
	// kickstart).
	fsInBlueprint bool
	// kargsIn are the blueprints (BlueprintFile, InstallerBlueprintFile)
	// that took the kernel arguments.
	kargsIn []string
}

// buildBlueprints validates and encodes blueprint.toml and, for an image
// type that installs an ostree commit, installer.toml; user and
// filesystem customizations go where the image types take them.
func buildBlueprints(p *plan.Plan, distro, imageType string, arch releases.Arch, opts InstallerOptions, body []byte) (bp []byte, ib *installerBuild, warnings []string, err error) {
	ib = &installerBuild{}
	mainType, installerType := imageType, ""
	if it, err := distros.ImageType(distro, imageType, arch); err == nil && blueprints.InstallsCommit(it) {
		if opts.OSTree == nil {
			return nil, nil, nil, fmt.Errorf("--image-type %s installs an ostree commit: pass --ostree-url URL where the commit built from %s (--image-type %s) is served", imageType, output.BlueprintFile, distros.DefaultImageType)
		}
		mainType, installerType = distros.DefaultImageType, imageType
	}
	if opts.InstallationDevice != "" && installerType == "" {
		return nil, nil, nil, fmt.Errorf("--installation-device is the disk of edge-simplified-installer: add --image-type edge-simplified-installer")
	}
	if opts.OSTree != nil && installerType == "" && !opts.Kickstart {
		return nil, nil, nil, fmt.Errorf("--ostree-url is the commit an installer pulls: add --kickstart, or an --image-type that installs a commit (edge-installer, edge-simplified-installer, edge-raw-image...)")
	}
	userC := installer.Customizations(installer.BIBOptions{User: opts.User})
	fsC := installer.Customizations(installer.BIBOptions{Filesystems: opts.Filesystems})
	usedUser, usedFS := opts.Kickstart || opts.BIB, opts.Kickstart || opts.BIB
	userInMain := false

	main := blueprints.FromPlan(p)
	hard := blueprints.Hardening(p)
	if mainIT, err := distros.ImageType(distro, mainType, arch); err == nil {
		taken, err := addHardening(main, mainIT, hard, distro, mainType, arch, installerType != "")
		if err != nil {
			return nil, nil, nil, err
		}
		if taken {
			ib.kargsIn = append(ib.kargsIn, output.BlueprintFile)
		}
	}
	if mainIT, err := distros.ImageType(distro, mainType, arch); err == nil && !opts.Kickstart {
		if opts.User != nil && blueprints.Supports(mainIT, userC) {
			blueprints.AddCustomizations(main, userC)
			usedUser, userInMain = true, true
		}
		if len(opts.Filesystems) > 0 && blueprints.Supports(mainIT, fsC) {
			blueprints.AddCustomizations(main, fsC)
			usedFS, ib.fsInBlueprint = true, true
		}
	}
	if warnings, err = blueprints.Validate(main, distro, mainType, arch); err != nil {
		return nil, nil, warnings, err
	}
	if bp, err = blueprints.Encode(main); err != nil {
		return nil, nil, warnings, err
	}

	if installerType != "" {
		it, _ := distros.ImageType(distro, installerType, arch)
		c := &blueprint.Customizations{}
		ksC := installer.Customizations(installer.BIBOptions{Kickstart: body})
		// The installed system is FIPS when the installer is: osbuild
		// boots it with fips=1, which Anaconda and coreos-installer carry
		// over (osbuild's fips_menu).
		if hard.FIPS != nil {
			if err := blueprints.Unsupported(it, &blueprint.Customizations{FIPS: hard.FIPS}); err != nil {
				return nil, nil, warnings, fmt.Errorf("--fips: osbuild's %s for %s/%s cannot install a FIPS system (osbuild/images: %s)", installerType, distro, arch, text.OneLine(err.Error()))
			}
			c.FIPS = hard.FIPS
		}
		if len(body) > 0 && blueprints.Supports(it, ksC) {
			c.Installer = ksC.Installer
		} else {
			if hard.Kernel != nil && blueprints.Supports(it, &blueprint.Customizations{Kernel: hard.Kernel}) {
				c.Kernel = hard.Kernel
				ib.kargsIn = append(ib.kargsIn, output.InstallerBlueprintFile)
			}
			if opts.User != nil && !userInMain && blueprints.Supports(it, userC) {
				c.User = userC.User
				usedUser = true
			}
			if len(opts.Filesystems) > 0 && blueprints.Supports(it, fsC) {
				c.Filesystem = fsC.Filesystem
				usedFS, ib.fsInBlueprint = true, true
			}
		}
		if opts.InstallationDevice != "" {
			// It reaches the installer's kernel command line.
			if err := installer.CheckInstallationDevice(opts.InstallationDevice); err != nil {
				return nil, nil, warnings, err
			}
			c.InstallationDevice = opts.InstallationDevice
			if !blueprints.Supports(it, &blueprint.Customizations{InstallationDevice: opts.InstallationDevice}) {
				return nil, nil, warnings, fmt.Errorf("--installation-device: osbuild's %s installs to no device of its choosing; it is for edge-simplified-installer", installerType)
			}
		} else if slices.Contains(it.RequiredBlueprintOptions(), "customizations.installation_device") {
			return nil, nil, warnings, fmt.Errorf("--image-type %s installs to a disk without asking: pass --installation-device DEVICE (e.g. /dev/vda)", installerType)
		}
		ibp := blueprints.InstallerBlueprint(p, c)
		w, err := blueprints.ValidateImage(ibp, distro, installerType, arch, opts.OSTree)
		warnings = append(warnings, w...)
		if err != nil {
			return nil, nil, warnings, err
		}
		data, err := blueprints.Encode(ibp)
		if err != nil {
			return nil, nil, warnings, err
		}
		ib.files = append(ib.files, output.File{Path: output.InstallerBlueprintFile, Data: data})
		ib.notes = append(ib.notes, fmt.Sprintf("%s is the ostree commit (%s); %s builds the %s that installs it from %s", output.BlueprintFile, mainType, output.InstallerBlueprintFile, installerType, opts.OSTree.URL))
	}
	if opts.User != nil && !usedUser {
		return nil, nil, warnings, fmt.Errorf("--user %s: no output takes it: osbuild's %s has no user customization; add --kickstart or --bib", opts.User.Name, imageType)
	}
	if len(opts.Filesystems) > 0 && !usedFS {
		return nil, nil, warnings, fmt.Errorf("--filesystem: no output takes filesystem sizes: osbuild's %s has none (they belong to the installed disk); add --kickstart or --bib, or an --image-type that takes them (edge-raw-image, qcow2...)", imageType)
	}
	return bp, ib, warnings, nil
}

// kickstartOptions are the kickstart's inputs for a plan: the payload is
// set by the caller.
func kickstartOptions(p *plan.Plan, opts InstallerOptions, vg string) installer.KickstartOptions {
	ko := installer.KickstartOptions{VolumeGroup: vg, Filesystems: opts.Filesystems, User: opts.User, Files: installerFiles(p), KernelArgs: p.Hardening.KernelCommandLine()}
	if p.Hardening.FIPSOn() {
		ko.OSTreePost = p.Hardening.FIPS.KickstartPost
	}
	return ko
}

// addHardening adds the plan's hardening customizations to the blueprint
// of an image type, each where osbuild takes it: FIPS mode and CIS are
// refused with osbuild's reason where it does not (an image that would
// not be what was asked for); kernel arguments are left to another output
// (the installer, the kickstart, the Containerfile) and taken reports
// whether this one took them. committed: the image is an ostree commit
// another image type installs.
func addHardening(bp *blueprint.Blueprint, it distro.ImageType, h blueprints.HardeningCustomizations, distroName, imageType string, arch releases.Arch, committed bool) (taken bool, err error) {
	if h == (blueprints.HardeningCustomizations{}) {
		return false, nil
	}
	if bp.Customizations == nil {
		bp.Customizations = &blueprint.Customizations{}
	}
	if h.FIPS != nil {
		if err := blueprints.Unsupported(it, &blueprint.Customizations{FIPS: h.FIPS}); err != nil {
			return false, fmt.Errorf("--fips: osbuild's %s for %s/%s cannot build a FIPS image (osbuild/images: %s)", imageType, distroName, arch, text.OneLine(err.Error()))
		}
		bp.Customizations.FIPS = h.FIPS
	}
	if h.OpenSCAP != nil {
		if err := blueprints.Unsupported(it, &blueprint.Customizations{OpenSCAP: h.OpenSCAP}); err != nil {
			what := "it builds an image osbuild does not remediate"
			if it.OSTreeRef() != "" || committed {
				what = "it builds an rpm-ostree commit, and osbuild runs OpenSCAP remediation on package-based images only"
			}
			return false, fmt.Errorf("--cis: osbuild's %s for %s/%s cannot run OpenSCAP remediation: %s (osbuild/images: %s); use an --image-type that takes customizations.openscap: %s",
				imageType, distroName, arch, what, text.OneLine(err.Error()), strings.Join(blueprints.ImageTypesTaking(distroName, arch, &blueprint.Customizations{OpenSCAP: h.OpenSCAP}), ", "))
		}
		bp.Customizations.OpenSCAP = h.OpenSCAP
	}
	if h.Kernel != nil && blueprints.Supports(it, &blueprint.Customizations{Kernel: h.Kernel}) {
		bp.Customizations.Kernel = h.Kernel
		taken = true
	}
	return taken, nil
}

// installerOutputs renders microshift.ks and config.toml.
func installerOutputs(p *plan.Plan, distro string, arch releases.Arch, opts InstallerOptions, ko installer.KickstartOptions, vg string, body []byte) ([]output.File, error) {
	var out []output.File
	if opts.Kickstart {
		switch {
		case opts.BootcImage != "":
			ko.Payload = installer.Payload{BootcImage: opts.BootcImage}
		case opts.OSTree != nil:
			ref := opts.OSTree.Ref
			if ref == "" {
				var err error
				if ref, err = blueprints.CommitRef(distro, distros.DefaultImageType, arch); err != nil {
					return nil, err
				}
			}
			ko.Payload = installer.Payload{OSTreeURL: opts.OSTree.URL, OSTreeRef: ref}
		default:
			return nil, fmt.Errorf("--kickstart installs an ostree commit or a bootc image: pass --ostree-url URL (and --ostree-ref) or --bootc-image IMAGE")
		}
		ks, err := installer.Kickstart(p, ko)
		if err != nil {
			return nil, err
		}
		out = append(out, output.File{Path: output.KickstartFile, Data: ks, Private: p.HasSecret()})
	}
	if opts.BIB {
		if len(body) > 0 && len(ko.OSTreePost) > 0 {
			// The body of bootc-image-builder's anaconda-iso installs a
			// bootc image: no fips-mode-setup.
			bko := ko
			bko.Payload, bko.OSTreePost = installer.Payload{}, nil
			var err error
			if body, err = installer.Kickstart(p, bko); err != nil {
				return nil, err
			}
		}
		cfg, err := installer.EncodeBIBConfig(p, installer.BIBOptions{User: opts.User, VolumeGroup: vg, Filesystems: opts.Filesystems, DiskSize: opts.DiskSize, Kickstart: body, FIPS: p.Hardening.FIPSOn()})
		if err != nil {
			return nil, err
		}
		if len(body) == 0 {
			// What bootc-image-builder makes of it: the disk image types'
			// manifests, generated by osbuild/images' bootc distro.
			if err := blueprints.CheckBIBConfig(output.BIBConfigFile, cfg, distro, arch); err != nil {
				return nil, err
			}
		}
		out = append(out, output.File{Path: output.BIBConfigFile, Data: cfg, Private: len(body) > 0 && p.HasSecret()})
	}
	return out, nil
}

// checkBootcOnlyInstaller refuses installer inputs that nothing takes when
// the plan writes no blueprint.
func checkBootcOnlyInstaller(opts InstallerOptions) error {
	if opts.OSTree != nil && !opts.Kickstart {
		return fmt.Errorf("--ostree-url is the commit an installer pulls, and this build writes no blueprint: add --kickstart, or use --bootc-image for a bootc install")
	}
	if opts.User != nil && !opts.Kickstart && !opts.BIB {
		return fmt.Errorf("--user %s: no output takes it without a blueprint: add --kickstart or --bib", opts.User.Name)
	}
	if len(opts.Filesystems) > 0 && !opts.Kickstart && !opts.BIB {
		return fmt.Errorf("--filesystem: no output takes filesystem sizes without a blueprint: add --kickstart or --bib")
	}
	return nil
}

// checkDiskSize refuses a disk size that no output takes: only the disk
// image of bootc-image-builder has a size; a kickstart's disk is the
// device's.
func checkDiskSize(opts InstallerOptions) error {
	if opts.DiskSize == 0 {
		return nil
	}
	if !opts.BIB {
		return fmt.Errorf("--disk-size is the size of bootc-image-builder's disk image: add --bootc --bib")
	}
	if opts.Kickstart {
		return fmt.Errorf("--disk-size: with --kickstart, %s is for --type anaconda-iso, which installs onto the device's own disk (the kickstart gives LVMS what root and the volumes leave of it)", output.BIBConfigFile)
	}
	return nil
}
