package assemble

import (
	"fmt"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/internal/distros"
	"github.com/microshift-compose/microshift-compose/internal/kernelargs"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/osbuild/blueprint/pkg/blueprint"
)

// checkHardeningOutputs refuses hardening that the outputs a build writes
// cannot carry, naming why, and returns notes saying which outputs carry
// what where one does not:
//   - FIPS in the Containerfile of a release whose bootc images cannot be
//     FIPS (the release knowledge says why);
//   - CIS in the Containerfile: osbuild/images runs OpenSCAP remediation
//     while it builds a package-based image, and bootc-image-builder's
//     image types take no customizations.openscap, so nothing would
//     remediate the bootc image;
//   - kernel arguments no output takes: osbuild's edge-commit (RHEL 9's
//     default) has no customizations.kernel.append, as an ostree commit's
//     kernel command line is its deployment's.
//
// hasBlueprint: a blueprint.toml is written; kargsIn are the blueprints that
// took the kernel arguments.
func checkHardeningOutputs(p *plan.Plan, opts Options, imageType string, hasBlueprint bool, kargsIn []string) ([]string, error) {
	h := p.Hardening
	if h == nil {
		return nil, nil
	}
	distro, arch := p.Target.Distro, releases.Arch(p.Arch)
	if opts.Bootc && h.FIPSOn() && h.FIPS.ImageModeRefused != "" {
		return nil, fmt.Errorf("--fips with --bootc: MicroShift %s cannot run in FIPS mode from a bootc image: %s", p.Release.Stream, h.FIPS.ImageModeRefused)
	}
	if opts.Bootc && h.CIS != nil {
		why := "bootc-image-builder takes no customizations.openscap"
		if err := blueprints.BootcUnsupported(distro, arch, "qcow2", &blueprint.Customizations{OpenSCAP: &blueprint.OpenSCAPCustomization{ProfileID: h.CIS.Profile}}); err != nil {
			why += " (osbuild/images: " + text.OneLine(err.Error()) + ")"
		}
		return nil, fmt.Errorf("--cis with --bootc: the Containerfile's bootc image cannot be remediated with OpenSCAP: osbuild/images remediates while it builds a package-based image, and %s; build without --bootc, with an --image-type that takes customizations.openscap (%s)",
			why, strings.Join(blueprints.ImageTypesTaking(distro, arch, &blueprint.Customizations{OpenSCAP: &blueprint.OpenSCAPCustomization{ProfileID: h.CIS.Profile}}), ", "))
	}
	// blueprint.toml is the commit an installer image type installs.
	bpType := imageType
	if it, err := distros.ImageType(distro, imageType, arch); err == nil && blueprints.InstallsCommit(it) {
		bpType = distros.DefaultImageType
	}
	var notes []string
	if len(h.KernelArgs) > 0 {
		carriers := slices.Clone(kargsIn)
		if opts.Installer.Kickstart {
			carriers = append(carriers, output.KickstartFile)
		}
		if opts.Installer.BIB && opts.Installer.Kickstart {
			carriers = append(carriers, output.BIBConfigFile)
		}
		if opts.Bootc {
			carriers = append(carriers, output.Containerfile)
		}
		if len(carriers) == 0 {
			return nil, fmt.Errorf("%s: no output takes kernel arguments: osbuild's %s has no customizations.kernel.append (an ostree commit's kernel command line is set where it is deployed); add --kickstart, --bootc, or an --image-type that takes them (%s)",
				kernelargs.Flag, imageType, strings.Join(blueprints.ImageTypesTaking(distro, arch, &blueprint.Customizations{Kernel: &blueprint.KernelCustomization{Append: "quiet"}}), ", "))
		}
		if hasBlueprint && !slices.Contains(kargsIn, output.BlueprintFile) {
			notes = append(notes, fmt.Sprintf("kernel arguments (%s): in %s; not in %s, as osbuild's %s takes no customizations.kernel.append (an ostree commit's kernel command line is set where it is deployed)",
				kernelargs.Flag, strings.Join(carriers, ", "), output.BlueprintFile, bpType))
		}
	}
	if h.FIPSOn() && hasBlueprint && !opts.Installer.Kickstart && opts.Installer.OSTree == nil {
		if it, err := distros.ImageType(distro, bpType, arch); err == nil && it.OSTreeRef() != "" && !blueprints.InstallsCommit(it) {
			notes = append(notes, fmt.Sprintf("FIPS: %s's ostree commit (%s) has the FIPS crypto policy; fips=1 on the kernel command line is set by what deploys it (--kickstart writes it into microshift.ks, an installer --image-type into installer.toml), not by the commit", output.BlueprintFile, bpType))
		}
	}
	return notes, nil
}
