package blueprints

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/osbuild/blueprint/pkg/blueprint"
	"github.com/osbuild/images/pkg/distro"
	"github.com/osbuild/images/pkg/ostree"

	"github.com/microshift-compose/microshift-compose/internal/distros"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/render/installer"
)

// InstallerBlueprintFile is the blueprint of an image type that installs
// an ostree commit (edge-installer, edge-simplified-installer,
// edge-raw-image, edge-ami, edge-vsphere): it holds only what that image
// type takes, and pulls the commit built from blueprint.toml.
const InstallerBlueprintFile = "installer.toml"

// OSTreeOptions are where an image type that installs an ostree commit
// pulls it from.
type OSTreeOptions struct {
	// URL of the ostree repository serving the commit.
	URL string
	// Ref of the commit; "" is the image type's default
	// (rhel/9/x86_64/edge).
	Ref string
}

// CheckOSTree checks the URL (http, https or file) and the ref with
// osbuild's own rules.
func CheckOSTree(o OSTreeOptions) error {
	if err := installer.CheckOSTreeURL(o.URL); err != nil {
		return err
	}
	if err := (ostree.ImageOptions{URL: o.URL, ImageRef: o.Ref}).Validate(); err != nil {
		return fmt.Errorf("--ostree-ref %q: %s", o.Ref, text.OneLine(err.Error()))
	}
	return nil
}

// InstallsCommit reports whether an image type installs an ostree commit
// built from another blueprint rather than building one: it has an ostree
// ref but takes no packages.
func InstallsCommit(it distro.ImageType) bool {
	return it.OSTreeRef() != "" && !slices.Contains(it.SupportedBlueprintOptions(), "packages")
}

// CommitRef is the ref osbuild gives the commit of an ostree image type of
// a distro and arch (rhel/9/x86_64/edge).
func CommitRef(distroName, imageType string, arch releases.Arch) (string, error) {
	it, err := distros.ImageType(distroName, imageType, arch)
	if err != nil {
		return "", err
	}
	return it.OSTreeRef(), nil
}

// Supports reports whether osbuild's image type takes every non-zero part
// of the customizations c.
func Supports(it distro.ImageType, c *blueprint.Customizations) bool {
	return Unsupported(it, c) == nil
}

// Unsupported is osbuild's own verdict on the customizations c for an
// image type: nil when it takes every non-zero part of them, else its
// error naming the first part it does not ("customizations.openscap: not
// supported"), down to sub-keys (edge-commit takes
// customizations.kernel.name but not customizations.kernel.append).
// Options the image type requires are not asked for: c is a part of a
// blueprint.
func Unsupported(it distro.ImageType, c *blueprint.Customizations) error {
	bp := blueprint.Blueprint{Customizations: c}
	if dropped := Dropped(it, &bp); len(dropped) > 0 {
		return fmt.Errorf("%s: not supported", dropped[0])
	}
	return distro.ValidateConfig(supportedOnly{it}, bp)
}

// supportedOnly is an image type that requires nothing, for
// distro.ValidateConfig to check what it supports only.
type supportedOnly struct{ distro.ImageType }

func (supportedOnly) RequiredBlueprintOptions() []string { return nil }

// Dropped lists the parts of bp that osbuild would leave out of an image
// of type it (osbuild only warns about them): packages, containers,
// customizations.files, customizations.firewall... by the image type's
// own list of the blueprint options it supports.
func Dropped(it distro.ImageType, bp *blueprint.Blueprint) []string {
	supported := it.SupportedBlueprintOptions()
	takes := func(key string) bool {
		return slices.ContainsFunc(supported, func(o string) bool { return o == key || strings.HasPrefix(o, key+".") })
	}
	var out []string
	v := reflect.ValueOf(*bp)
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || empty(v.Field(i)) {
			continue
		}
		key := tomlName(f)
		switch {
		case key == "name" || key == "description" || key == "version" || key == "distro":
			continue
		case f.Name == "Customizations":
			c := reflect.ValueOf(*bp.Customizations)
			for j := 0; j < c.NumField(); j++ {
				cf := c.Type().Field(j)
				if cf.IsExported() && !empty(c.Field(j)) && !takes("customizations."+tomlName(cf)) {
					out = append(out, "customizations."+tomlName(cf))
				}
			}
		case !takes(key):
			out = append(out, key)
		}
	}
	return out
}

func empty(v reflect.Value) bool {
	return v.IsZero() || (v.Kind() == reflect.Slice && v.Len() == 0)
}

func tomlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if name == "" {
		name, _, _ = strings.Cut(f.Tag.Get("json"), ",")
	}
	if name == "" {
		name = strings.ToLower(f.Name)
	}
	return name
}

// ValidateImage is Validate for any image type: an image type that installs
// an ostree commit gets ost (its URL is required), and a blueprint with
// parts the image type would drop, or without what it requires, is
// refused naming them (osbuild itself only warns).
func ValidateImage(bp *blueprint.Blueprint, distroName, imageType string, arch releases.Arch, ost *OSTreeOptions) ([]string, error) {
	it, err := distros.ImageType(distroName, imageType, arch)
	if err != nil {
		return nil, err
	}
	return ValidateImageType(bp, it, distroName, imageType, arch, ost)
}

// ValidateImageType is ValidateImage for an image type looked up already
// (distros.ImageType) by those names.
func ValidateImageType(bp *blueprint.Blueprint, it distro.ImageType, distroName, imageType string, arch releases.Arch, ost *OSTreeOptions) ([]string, error) {
	if dropped := Dropped(it, bp); len(dropped) > 0 {
		return nil, fmt.Errorf("osbuild's %s for %s/%s would drop the blueprint's %s (it takes %s)", imageType, distroName, arch, strings.Join(dropped, ", "), strings.Join(takes(it), ", "))
	}
	if err := distro.ValidateConfig(it, *bp); err != nil {
		return nil, fmt.Errorf("osbuild rejects blueprint %s for %s %s/%s: %s", bp.Name, distroName, imageType, arch, text.OneLine(err.Error()))
	}
	opts := distro.ImageOptions{}
	if it.OSTreeRef() != "" {
		opts.OSTree = &ostree.ImageOptions{}
		if ost != nil {
			opts.OSTree.URL, opts.OSTree.ImageRef = ost.URL, ost.Ref
		}
	}
	seed := int64(0)
	_, warnings, err := it.Manifest(bp, opts, nil, &seed)
	warnings = imageWarnings(warnings)
	if err != nil {
		return warnings, fmt.Errorf("osbuild rejects blueprint %s for %s %s/%s: %s", bp.Name, distroName, imageType, arch, text.OneLine(err.Error()))
	}
	return warnings, nil
}

// takes lists what an image type takes besides the blueprint's metadata.
func takes(it distro.ImageType) []string {
	var out []string
	for _, o := range it.SupportedBlueprintOptions() {
		switch o {
		case "name", "version", "description", "distro":
			continue
		}
		out = append(out, o)
	}
	return out
}

// InstallerBlueprint is the blueprint of an image type that installs the
// plan's ostree commit: its customizations only.
func InstallerBlueprint(p *plan.Plan, c *blueprint.Customizations) *blueprint.Blueprint {
	bp := &blueprint.Blueprint{
		Name:        Name(p) + "-installer",
		Description: fmt.Sprintf("Installs the MicroShift %s commit of profile %s, %s (blueprint %s)", p.Release.Stream, p.Profile, p.Arch, Name(p)),
		Version:     p.Release.Version,
	}
	if c != nil && !reflect.ValueOf(*c).IsZero() {
		bp.Customizations = c
	}
	return bp
}

// AddCustomizations merges installer customizations (a user, filesystem
// sizes) into the plan's blueprint.
func AddCustomizations(bp *blueprint.Blueprint, c *blueprint.Customizations) {
	if c == nil || reflect.ValueOf(*c).IsZero() {
		return
	}
	if bp.Customizations == nil {
		bp.Customizations = &blueprint.Customizations{}
	}
	bp.Customizations.User = append(bp.Customizations.User, c.User...)
	bp.Customizations.Filesystem = append(bp.Customizations.Filesystem, c.Filesystem...)
	if c.Installer != nil {
		bp.Customizations.Installer = c.Installer
	}
}

// hostFIPSWarning starts what osbuild/images warns, for a FIPS image, when
// the host generating the manifest is not in FIPS mode.
const hostFIPSWarning = "The host building this image is not running in FIPS mode."

// imageWarnings are osbuild's warnings about the image: microshift-compose
// generates a manifest only to check a blueprint, and the image is built
// elsewhere (by osbuild-composer, image-builder or bootc-image-builder on
// their own host), so what osbuild says about the FIPS mode of the host it
// runs on is about no host of the build's.
func imageWarnings(warnings []string) []string {
	return slices.DeleteFunc(warnings, func(w string) bool { return strings.HasPrefix(strings.TrimSpace(w), hostFIPSWarning) })
}
