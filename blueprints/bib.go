package blueprints

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
	"github.com/osbuild/blueprint/pkg/blueprint"
	osarch "github.com/osbuild/images/pkg/arch"
	"github.com/osbuild/images/pkg/bib/osinfo"
	"github.com/osbuild/images/pkg/bootc"
	"github.com/osbuild/images/pkg/container"
	"github.com/osbuild/images/pkg/distro"
	"github.com/osbuild/images/pkg/distro/generic"
	"github.com/osbuild/images/pkg/manifest"

	"github.com/microshift-compose/microshift-compose/internal/distros"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/releases"
)

// BIBDiskTypes are bootc-image-builder's disk image types: they read the
// user and the disk layout of config.toml.
var BIBDiskTypes = []string{"qcow2", "raw", "ami", "vmdk"}

// bibImage stands for the bootc image in the manifests generated to check
// a config: bootc-image-builder is given the real one on its command
// line, and only its name and digest reach the manifest.
const bibImage = "localhost/microshift-compose-bib-check:latest"

// bibDistros are osbuild/images' bootc distros, as bootc-image-builder
// makes one from the image it builds from, per distro name and arch
// (parsing the bootc image type definitions takes milliseconds).
var bibDistros sync.Map // [2]string{distro, arch} -> func() (distro.Distro, error)

func bibDistro(distroName string, arch releases.Arch) (distro.Distro, error) {
	key := [2]string{distroName, string(arch)}
	f, _ := bibDistros.LoadOrStore(key, sync.OnceValues(func() (distro.Distro, error) {
		id, version, ok := strings.Cut(distroName, "-")
		if !ok || id == "" || version == "" {
			id, version = "rhel", "9.6"
		}
		// osbuild reads the bootc definitions now: not while a lookup
		// points it at the reduced ones of another distro.
		var d distro.Distro
		var err error
		distros.Whole(func() {
			// What bootc-image-builder reads from the image: its
			// os-release, arch, default root filesystem (xfs on RHEL
			// and CentOS bootc images) and size (here the least, so
			// that the layout is the config's own).
			d, err = generic.NewBootc("bootc", &bootc.Info{
				Imgref:        bibImage,
				Arch:          string(arch),
				DefaultRootFs: "xfs",
				Size:          1,
				OSInfo:        &osinfo.Info{OSRelease: osinfo.OSRelease{ID: id, VersionID: version, Name: id}},
			})
		})
		return d, err
	}))
	return f.(func() (distro.Distro, error))()
}

// DecodeBIBConfig decodes a bootc-image-builder config.toml as
// bootc-image-builder does (osbuild/images' pkg/bib/blueprintload): a
// blueprint, every key known.
func DecodeBIBConfig(data []byte) (*blueprint.Blueprint, error) {
	var bp blueprint.Blueprint
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&bp)
	if err != nil {
		return nil, err
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("unknown keys found: %v", und)
	}
	return &bp, nil
}

// BIBManifest generates the osbuild manifest bootc-image-builder would
// build a disk image type of bp from, for a bootc image of distroName
// (e.g. rhel-9.6) and arch, with osbuild/images' bootc distro, and
// serializes it with the image standing for the real one. It returns
// osbuild's warnings: a customization the image type does not support is
// one.
func BIBManifest(bp *blueprint.Blueprint, imageType, distroName string, arch releases.Arch) (mf manifest.OSBuildManifest, warnings []string, err error) {
	// osbuild/images panics on some layouts it cannot serialize (a
	// mount unit name it cannot write): an error here, as it is a
	// failed build there.
	defer func() {
		if r := recover(); r != nil {
			mf, err = nil, fmt.Errorf("osbuild/images: %v", r)
		}
	}()
	d, err := bibDistro(distroName, arch)
	if err != nil {
		return nil, nil, err
	}
	a, err := d.GetArch(string(arch))
	if err != nil {
		return nil, nil, err
	}
	it, err := a.GetImageType(imageType)
	if err != nil {
		return nil, nil, err
	}
	seed := int64(0)
	m, warnings, err := it.Manifest(bp, distro.ImageOptions{}, nil, &seed)
	warnings = imageWarnings(warnings)
	if err != nil {
		return nil, warnings, err
	}
	archi, err := osarch.FromString(string(arch))
	if err != nil {
		return nil, warnings, err
	}
	specs := map[string][]container.Spec{}
	for pipeline, sources := range m.GetContainerSourceSpecs() {
		for _, s := range sources {
			specs[pipeline] = append(specs[pipeline], container.Spec{
				Source:       s.Source,
				Digest:       "sha256:" + strings.Repeat("0", 64),
				ImageID:      "sha256:" + strings.Repeat("1", 64),
				LocalName:    s.Name,
				LocalStorage: s.Local,
				Arch:         archi,
			})
		}
	}
	mf, err = m.Serialize(nil, specs, nil, nil, nil)
	return mf, warnings, err
}

// CheckBIBConfig checks a bootc-image-builder config for the disk image
// types the way bootc-image-builder reads it: decoded strictly, and the
// manifest of every disk type generated without an error or a warning.
func CheckBIBConfig(file string, data []byte, distroName string, arch releases.Arch) error {
	bp, err := DecodeBIBConfig(data)
	if err != nil {
		return fmt.Errorf("checking %s: bootc-image-builder cannot read it: %s", file, text.OneLine(err.Error()))
	}
	for _, t := range BIBDiskTypes {
		_, warnings, err := BIBManifest(bp, t, distroName, arch)
		if err != nil {
			return fmt.Errorf("checking %s: bootc-image-builder --type %s refuses it: %s", file, t, text.OneLine(err.Error()))
		}
		if len(warnings) > 0 {
			return fmt.Errorf("checking %s: bootc-image-builder --type %s warns: %s", file, t, text.OneLine(strings.Join(warnings, "; ")))
		}
	}
	return nil
}
