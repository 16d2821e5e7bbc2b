package releases

import (
	"fmt"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// A release is one build of MicroShift (knowledge's builds): Red Hat's, or
// microshift-io's. Its build is what its release-info RPMs' version says
// when they were recorded (SetBuild), else the build whose registries its
// images come from (New). Release files that mix two builds' images are
// refused, but for the keys a build is known to leave as another's
// (microshift-io's lvms_operator, which OKD does not build).

// imageOwner is one image of a release and the build whose registries
// hold it.
type imageOwner struct {
	file, key, ref string
	build          *knowledge.BuildFacts
}

// owners lists the images of files that some build's registries hold.
func owners(k *knowledge.Knowledge, files []*File) []imageOwner {
	var out []imageOwner
	for _, f := range files {
		for _, im := range f.Images {
			for _, b := range k.Builds {
				if b.OwnsImage(im.Ref) {
					out = append(out, imageOwner{f.Name, im.Key, im.Ref, b})
					break
				}
			}
		}
	}
	return out
}

// foreign returns the first image of owned that build b may not have: one of
// another build's registries, unless b leaves that key of the core file as
// another's.
func foreign(b *knowledge.BuildFacts, owned []imageOwner, files map[string]*File) *imageOwner {
	for i, o := range owned {
		if o.build == b {
			continue
		}
		if f := files[o.file]; f != nil && b.LacksImage(f.Component, o.key) != "" {
			continue
		}
		return &owned[i]
	}
	return nil
}

// identify returns the build of files by their images: the one build
// whose images they are (a build's own plus what it leaves as another's),
// the default build when no build's registry names any.
func identify(source string, files map[string]*File, list []*File) (string, error) {
	k, err := knowledge.Default()
	if err != nil {
		return "", err
	}
	owned := owners(k, list)
	if len(owned) == 0 {
		return k.DefaultBuild().Name, nil
	}
	var fits []*knowledge.BuildFacts
	for _, b := range k.Builds {
		if foreign(b, owned, files) == nil {
			fits = append(fits, b)
		}
	}
	switch len(fits) {
	case 0:
		return "", mixError(source, owned, owned[0].build, files)
	case 1:
		return fits[0].Name, nil
	}
	// Several builds may have these images (only what one leaves as the
	// other's): the build whose registries hold one, else the default.
	for _, b := range fits {
		if slices.ContainsFunc(owned, func(o imageOwner) bool { return o.build == b }) {
			return b.Name, nil
		}
	}
	return k.DefaultBuild().Name, nil
}

// mixError says which two images of two builds a release mixes.
func mixError(source string, owned []imageOwner, b *knowledge.BuildFacts, files map[string]*File) error {
	first := owned[0]
	other := foreign(b, owned, files)
	if first.build != b {
		for _, o := range owned {
			if o.build == b {
				first = o
				break
			}
		}
	}
	if other == nil {
		for i := range owned {
			if owned[i].build != first.build {
				other = &owned[i]
				break
			}
		}
	}
	if other == nil { // not reached: a mix has images of two builds
		return fmt.Errorf("%s: release files of %s hold images it does not build", source, b.Title)
	}
	return fmt.Errorf("%s: release files mix images of %s and of %s: %s %q is %s, %s %q is %s; a release is one build's (its release-info RPMs install one build's files)",
		source, first.build.Title, other.build.Title, first.file, first.key, first.ref, other.file, other.key, other.ref)
}

// SetBuild makes r the release of the build named name, as the version of
// its release-info RPMs says (v for microshift-io's); its images must be
// that build's (or of no build's registry), but for the keys the build
// leaves as another's.
func (r *Release) SetBuild(name string, v *MicroShiftIOVersion) error {
	k, err := knowledge.Default()
	if err != nil {
		return err
	}
	b := k.Build(name)
	if b == nil {
		return fmt.Errorf("%s: unknown build %q", r.Source, name)
	}
	list := r.Files()
	if o := foreign(b, owners(k, list), r.files); o != nil {
		return fmt.Errorf("%s: the release-info RPMs are %s, but %s %q is %s, an image of %s: release files that mix builds' images are refused",
			r.Source, b.Title, o.file, o.key, o.ref, o.build.Title)
	}
	r.Build, r.MicroShiftIO = name, v
	return nil
}

// BuildOfVersion returns the build an RPM version names, by the version
// forms of the builds: microshift-io's (ParseMicroShiftIOVersion), else
// the default build's X.Y.Z. v is nil for the default build.
func BuildOfVersion(version string) (string, *MicroShiftIOVersion, error) {
	k, err := knowledge.Default()
	if err != nil {
		return "", nil, err
	}
	for _, b := range k.Builds {
		if b.VersionForm != knowledge.VersionFormMicroShiftIO {
			continue
		}
		if v, err := ParseMicroShiftIOVersion(version); err == nil {
			return b.Name, v, nil
		} else if strings.Contains(version, "_") {
			return "", nil, err
		}
	}
	return k.DefaultBuild().Name, nil, nil
}

// setBuildOfRPMs sets r's build from the version of its recorded
// release-info RPMs.
func (r *Release) setBuildOfRPMs() error {
	evr := r.RPMVersion()
	if evr == "" {
		return nil
	}
	version, _, _ := strings.Cut(evr, "-")
	name, v, err := BuildOfVersion(version)
	if err != nil {
		return err
	}
	return r.SetBuild(name, v)
}

// RPMDist is the dist tag of the release-info RPMs r was taken from ("el9"
// of 1.el9); "" when none were recorded or their release has none.
func (r *Release) RPMDist() string {
	_, rel, ok := strings.Cut(r.RPMVersion(), "-")
	if !ok {
		return ""
	}
	for _, part := range strings.Split(rel, ".") {
		if n, ok := strings.CutPrefix(part, "el"); ok && digits(n, 1, 3) {
			return part
		}
	}
	return ""
}

// RPMVersion is the version-release of the release-info RPMs r was taken
// from ("4.21.0_..._okd_scos.6-1.el9"); "" when none were recorded.
func (r *Release) RPMVersion() string {
	if len(r.RPMs) == 0 {
		return ""
	}
	nevra := r.RPMs[0].NEVRA
	if i := strings.LastIndexByte(nevra, '.'); i > 0 {
		nevra = nevra[:i] // .arch
	}
	rel := strings.LastIndexByte(nevra, '-')
	if rel <= 0 {
		return ""
	}
	ver := strings.LastIndexByte(nevra[:rel], '-')
	if ver <= 0 {
		return ""
	}
	evr := nevra[ver+1:]
	if _, after, ok := strings.Cut(evr, ":"); ok {
		evr = after
	}
	return evr
}
