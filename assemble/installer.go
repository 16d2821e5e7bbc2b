package assemble

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/osbuild/blueprint/pkg/blueprint"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/render/installer"
	"github.com/microshift-compose/microshift-compose/render/registry"
)

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

// kickstartOptions are the kickstart's inputs for a plan: the payload is
// set by the caller.
func kickstartOptions(p *plan.Plan, opts InstallerOptions, vg string) installer.KickstartOptions {
	ko := installer.KickstartOptions{VolumeGroup: vg, Filesystems: opts.Filesystems, User: opts.User, Files: installerFiles(p), KernelArgs: p.Hardening.KernelCommandLine()}
	if p.Hardening.FIPSOn() {
		ko.OSTreePost = p.Hardening.FIPS.KickstartPost
	}
	return ko
}

// installerOutput is the kickstart and bootc-image-builder config a build
// writes, rendered before the blueprints that embed the kickstart.
type installerOutput struct {
	// vg is the volume group the kickstart or the bootc-image-builder
	// disk creates.
	vg string
	ko installer.KickstartOptions
	// body is the kickstart without its payload (an installer image type
	// or bootc-image-builder's anaconda-iso installs it), and customization
	// it as an installer blueprint takes it; nil without --kickstart.
	body          []byte
	customization *blueprint.Customizations
	warnings      []string
}

// renderInstaller renders the kickstart's body and picks the volume
// group, for the installer outputs that take them.
func renderInstaller(p *plan.Plan, outs *outputs, o InstallerOptions) (*installerOutput, error) {
	inst := &installerOutput{vg: installer.DefaultVolumeGroup}
	if !o.Kickstart && !o.BIB {
		return inst, nil
	}
	var err error
	if inst.vg, inst.warnings, err = volumeGroup(p, o); err != nil {
		return nil, err
	}
	if o.Kickstart {
		inst.ko = kickstartOptions(p, o, inst.vg)
		if inst.body, err = installer.Kickstart(p, inst.ko); err != nil {
			return nil, err
		}
		inst.customization = installer.Customizations(installer.BIBOptions{Kickstart: inst.body})
	}
	return inst, nil
}

// renderedBlueprints are blueprint.toml and installer.toml, encoded, and
// osbuild's warnings about them.
type renderedBlueprints struct {
	main, installer []byte
	warnings        []string
}

// renderBlueprints renders, validates with osbuild/images and encodes
// blueprint.toml and, for an image type that installs an ostree commit,
// installer.toml, each with the customizations outs gives it.
func renderBlueprints(p *plan.Plan, outs *outputs, o InstallerOptions, kickstart *blueprint.Customizations) (*renderedBlueprints, error) {
	r := &renderedBlueprints{}
	if outs.main == nil {
		return r, nil
	}
	main := blueprints.FromPlan(p)
	h := outs.hardening
	if h != (blueprints.HardeningCustomizations{}) {
		if main.Customizations == nil {
			main.Customizations = &blueprint.Customizations{}
		}
		main.Customizations.FIPS, main.Customizations.OpenSCAP = h.FIPS, h.OpenSCAP
		if outs.mainKernel {
			main.Customizations.Kernel = h.Kernel
		}
	}
	if outs.mainUser {
		blueprints.AddCustomizations(main, outs.user)
	}
	if outs.mainFilesystems {
		blueprints.AddCustomizations(main, outs.filesystems)
	}
	var err error
	if r.warnings, err = blueprints.ValidateImageType(main, outs.main, outs.distro, outs.mainType, outs.arch, nil); err != nil {
		return nil, err
	}
	data, err := blueprints.Encode(main)
	if err != nil {
		return nil, err
	}
	r.main = markTagOnly(data, p)
	if outs.installer == nil {
		return r, nil
	}
	c := &blueprint.Customizations{FIPS: h.FIPS, InstallationDevice: o.InstallationDevice}
	switch {
	case outs.installerKickstart:
		c.Installer = kickstart.Installer
	default:
		if outs.installerKernel {
			c.Kernel = h.Kernel
		}
		if outs.installerUser {
			c.User = outs.user.User
		}
		if outs.installerFilesystems {
			c.Filesystem = outs.filesystems.Filesystem
		}
	}
	ibp := blueprints.InstallerBlueprint(p, c)
	w, err := blueprints.ValidateImageType(ibp, outs.installer, outs.distro, outs.installerType, outs.arch, o.OSTree)
	r.warnings = append(r.warnings, w...)
	if err != nil {
		return nil, err
	}
	if r.installer, err = blueprints.Encode(ibp); err != nil {
		return nil, err
	}
	return r, nil
}

// files renders microshift.ks, with its payload, and config.toml.
func (inst *installerOutput) files(p *plan.Plan, outs *outputs, o InstallerOptions) ([]output.File, error) {
	var out []output.File
	if o.Kickstart {
		ko := inst.ko
		switch {
		case o.BootcImage != "":
			ko.Payload = installer.Payload{BootcImage: o.BootcImage}
		default:
			ref := cmp.Or(o.OSTree.Ref, outs.defaultRef)
			ko.Payload = installer.Payload{OSTreeURL: o.OSTree.URL, OSTreeRef: ref}
		}
		ks, err := installer.Kickstart(p, ko)
		if err != nil {
			return nil, err
		}
		out = append(out, output.File{Path: output.KickstartFile, Data: ks, Private: p.HasSecret()})
	}
	if o.BIB {
		body := inst.body
		if len(body) > 0 && len(inst.ko.OSTreePost) > 0 {
			// The body of bootc-image-builder's anaconda-iso installs a
			// bootc image: no fips-mode-setup.
			bko := inst.ko
			bko.Payload, bko.OSTreePost = installer.Payload{}, nil
			var err error
			if body, err = installer.Kickstart(p, bko); err != nil {
				return nil, err
			}
		}
		cfg, err := installer.EncodeBIBConfig(p, installer.BIBOptions{User: o.User, VolumeGroup: inst.vg, Filesystems: o.Filesystems, DiskSize: o.DiskSize, Kickstart: body, FIPS: p.Hardening.FIPSOn()})
		if err != nil {
			return nil, err
		}
		if len(body) == 0 {
			// What bootc-image-builder makes of it: the disk image types'
			// manifests, generated by osbuild/images' bootc distro.
			if err := blueprints.CheckBIBConfig(output.BIBConfigFile, cfg, outs.distro, outs.arch); err != nil {
				return nil, err
			}
		}
		out = append(out, output.File{Path: output.BIBConfigFile, Data: cfg, Private: len(body) > 0 && p.HasSecret()})
	}
	return out, nil
}
