// Package distros looks up osbuild/images' distros and image types, once
// per process and from definitions reduced to the image type asked for
// (defs.go): what a distro has (image types, OpenSCAP profiles) and the
// image type a blueprint is validated for. It knows nothing of plans:
// compose asks it what a target distro offers, blueprints and assemble
// validate what they render with it.
package distros

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/osbuild/images/pkg/distro"
	"github.com/osbuild/images/pkg/distro/defs"
	"github.com/osbuild/images/pkg/distrofactory"

	"github.com/microshift-compose/microshift-compose/internal/suggest"
)

// Defaults for validation: the RHEL for Edge commit MicroShift documents.
const (
	DefaultDistro    = "rhel-9.6"
	DefaultImageType = "edge-commit"
)

// knownDistros are offered as suggestions for a mistyped --distro; the
// factory cannot list what it supports.
var knownDistros = []string{
	"rhel-9.4", "rhel-9.6", "rhel-9.7", "rhel-10.0", "rhel-10.1",
	"centos-9", "centos-10", "fedora-42", "fedora-43",
}

var factory = sync.OnceValue(distrofactory.NewDefault)

// osbuild parses its distro definitions (YAML) on every GetDistro call,
// tens of milliseconds each, so distros are looked up once per process,
// name and image type, from definitions reduced to that image type where
// possible (defs.go).
var distros sync.Map // lookupKey -> lookup

type lookupKey struct{ distro, imageType string }

// lookupMu serialises the lookups that miss: a matrix resolves cells in
// parallel, and each distro should be parsed once, not once per cell; it
// also keeps a full lookup from running while withDefs points osbuild at a
// reduced definition.
var lookupMu sync.Mutex

type lookup struct{ d distro.Distro } // d is nil for an unknown name

// getDistro returns the distro with at least imageType defined ("" for
// every image type).
func getDistro(name, imageType string) distro.Distro {
	key := lookupKey{name, imageType}
	if l, ok := distros.Load(key); ok {
		return l.(lookup).d
	}
	lookupMu.Lock()
	defer lookupMu.Unlock()
	if l, ok := distros.Load(key); ok {
		return l.(lookup).d
	}
	var d distro.Distro
	if dir := reducedDefs(name, imageType); imageType != "" && dir != "" {
		withDefs(dir, func() { d = factory().GetDistro(name) })
	} else {
		d = factory().GetDistro(name)
	}
	distros.Store(key, lookup{d})
	return d
}

// ImageType looks up an osbuild image type for an arch (uname style:
// x86_64, aarch64), with suggestions on typos.
func ImageType[A ~string](distroName, imageType string, arch A) (distro.ImageType, error) {
	d := getDistro(distroName, imageType)
	if d == nil {
		// Maybe the distro has the name but not the image type (a
		// reduced definition); ask again with every image type.
		d = getDistro(distroName, "")
	}
	if d == nil {
		var have []string
		for _, n := range knownDistros {
			if getDistro(n, "") != nil {
				have = append(have, n)
			}
		}
		if m := suggest.Closest(distroName, have); m != "" {
			return nil, fmt.Errorf("unknown distro %q; did you mean %q?", distroName, m)
		}
		return nil, fmt.Errorf("unknown distro %q (for example %s)", distroName, strings.Join(have, ", "))
	}
	a, err := d.GetArch(string(arch))
	if err != nil {
		// A definition reduced to the image type has only the arches
		// that image type is built for: the distro's arch may lack it
		// alone (edge-commit on s390x), which the full one says.
		full := getDistro(distroName, "")
		if full == nil {
			return nil, fmt.Errorf("distro %s does not support %s", distroName, arch)
		}
		if a, err = full.GetArch(string(arch)); err != nil {
			return nil, fmt.Errorf("distro %s does not support %s", distroName, arch)
		}
	}
	it, err := a.GetImageType(imageType)
	if err != nil {
		// The suggestions need every image type of the distro.
		if full := getDistro(distroName, ""); full != nil {
			if fa, err := full.GetArch(string(arch)); err == nil {
				a = fa
			}
		}
		types := a.ListImageTypes()
		if m := suggest.Closest(imageType, types); m != "" {
			return nil, fmt.Errorf("unknown image type %q for %s/%s; did you mean %q?", imageType, distroName, arch, m)
		}
		return nil, fmt.Errorf("unknown image type %q for %s/%s (have %s)", imageType, distroName, arch, strings.Join(types, ", "))
	}
	return it, nil
}

// ImageTypes lists the image types osbuild has for a distro and arch,
// sorted; nil when it knows neither.
func ImageTypes[A ~string](distroName string, arch A) []string {
	d := getDistro(distroName, "")
	if d == nil {
		return nil
	}
	a, err := d.GetArch(string(arch))
	if err != nil {
		return nil
	}
	types := a.ListImageTypes()
	sort.Strings(types)
	return types
}

// openSCAPProfiles caches OpenSCAPProfiles per distro name.
var openSCAPProfiles sync.Map // distro name -> []string

// OpenSCAPProfiles lists the SCAP Security Guide profile IDs osbuild/images
// allows in customizations.openscap for a distro (its distro definition's
// oscap_profiles_allowlist, which the image types' validation checks),
// sorted; nil for a distro osbuild does not know.
func OpenSCAPProfiles(distroName string) []string {
	if v, ok := openSCAPProfiles.Load(distroName); ok {
		return v.([]string)
	}
	// osbuild reads its definitions now: not while withDefs points it at
	// the reduced ones of another distro.
	envMu.Lock()
	d, err := defs.LoadDistroWithoutImageTypes(distroName)
	envMu.Unlock()
	var out []string
	if err == nil && d != nil {
		for _, p := range d.OscapProfilesAllowList {
			out = append(out, p.String())
		}
		slices.Sort(out)
	}
	openSCAPProfiles.Store(distroName, out)
	return out
}

// Whole runs fn while osbuild reads its own definitions, not the reduced
// ones another lookup points it at (bootc-image-builder's distro is looked
// up that way).
func Whole(fn func()) {
	envMu.Lock()
	defer envMu.Unlock()
	fn()
}
