package blueprints

import (
	"slices"
	"strings"

	"github.com/osbuild/blueprint/pkg/blueprint"

	"github.com/microshift-compose/microshift-compose/internal/distros"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// HardeningCustomizations are the blueprint customizations of the plan's
// hardening, each nil when the plan has none: FIPS mode, the kernel
// arguments (the user's: osbuild adds fips=1 itself with FIPS mode), and
// the OpenSCAP remediation with its tailoring.
type HardeningCustomizations struct {
	FIPS     *bool
	Kernel   *blueprint.KernelCustomization
	OpenSCAP *blueprint.OpenSCAPCustomization
}

// Hardening returns the plan's hardening customizations.
func Hardening(p *plan.Plan) HardeningCustomizations {
	var out HardeningCustomizations
	h := p.Hardening
	if h == nil {
		return out
	}
	if h.FIPS != nil {
		on := true
		out.FIPS = &on
	}
	if len(h.KernelArgs) > 0 {
		// osbuild passes append on as written (it "leaves quoting to the
		// user"): the arguments need none (internal/kernelargs).
		out.Kernel = &blueprint.KernelCustomization{Append: strings.Join(h.KernelArgs, " ")}
	}
	if c := h.CIS; c != nil {
		out.OpenSCAP = &blueprint.OpenSCAPCustomization{ProfileID: c.Profile}
		if len(c.Unselected) > 0 {
			out.OpenSCAP.Tailoring = &blueprint.OpenSCAPTailoringCustomizations{Unselected: slices.Clone(c.Unselected)}
		}
	}
	return out
}

// Each returns one customization per part, for checking one at a time
// what an image type takes; the names are the blueprint's keys.
func (h HardeningCustomizations) Each() []NamedCustomization {
	var out []NamedCustomization
	if h.FIPS != nil {
		out = append(out, NamedCustomization{"customizations.fips", &blueprint.Customizations{FIPS: h.FIPS}})
	}
	if h.Kernel != nil {
		out = append(out, NamedCustomization{"customizations.kernel.append", &blueprint.Customizations{Kernel: h.Kernel}})
	}
	if h.OpenSCAP != nil {
		out = append(out, NamedCustomization{"customizations.openscap", &blueprint.Customizations{OpenSCAP: h.OpenSCAP}})
	}
	return out
}

// NamedCustomization is one part of a blueprint's customizations and its
// key.
type NamedCustomization struct {
	Key string
	C   *blueprint.Customizations
}

// ImageTypesTaking lists the image types of a distro and arch that take
// the customizations c, sorted: where a refused option could go instead.
func ImageTypesTaking(distroName string, arch releases.Arch, c *blueprint.Customizations) []string {
	var out []string
	for _, name := range distros.ImageTypes(distroName, arch) {
		if it, err := distros.ImageType(distroName, name, arch); err == nil && Supports(it, c) {
			out = append(out, name)
		}
	}
	return out
}

// BootcUnsupported is osbuild/images' verdict on the customizations c for
// bootc-image-builder's image type imageType ("qcow2", which takes what
// raw, ami and vmdk take; "anaconda-iso") of a bootc image of distroName:
// nil when it takes them.
func BootcUnsupported(distroName string, arch releases.Arch, imageType string, c *blueprint.Customizations) error {
	d, err := bibDistro(distroName, arch)
	if err != nil {
		return err
	}
	a, err := d.GetArch(string(arch))
	if err != nil {
		return err
	}
	it, err := a.GetImageType(imageType)
	if err != nil {
		return err
	}
	return Unsupported(it, c)
}
