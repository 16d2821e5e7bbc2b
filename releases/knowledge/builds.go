package knowledge

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/microshift-compose/microshift-compose/internal/imageref"
)

// Version forms a build's RPMs take (Build.VersionForm).
const (
	// VersionFormShipped is X.Y.Z, Red Hat's RPM versions.
	VersionFormShipped = ""
	// VersionFormMicroShiftIO is microshift-io's
	// X.Y.Z[_ec.N|_rc.N]_TIMESTAMP[.pN]_gCOMMIT_OKD-TAG (releases parses it).
	VersionFormMicroShiftIO = "microshift-io"
)

// BuildFacts are one build of MicroShift (data/builds.toml): who built a
// release's RPMs and images, and what follows from it.
type BuildFacts struct {
	Name string
	// Title names it in messages: "microshift-io's build".
	Title       string
	Description string
	// Default marks the build the rest of the knowledge describes.
	Default bool
	// Range is the releases the build exists for; nil for every release.
	Range *Range
	// VersionForm is how its RPMs are versioned (VersionForm*).
	VersionForm string
	// Registries are where its images come from, as repository prefixes
	// ("quay.io/okd/").
	Registries []string
	// PullSecret says whether its images need a pull secret.
	PullSecret bool
	// RPMSource says where its MicroShift RPMs are, for a build no bootc
	// base enables a repository of; "" for the default build.
	RPMSource string
	// ResolveTags says its release files name images by tag (TopoLVM's,
	// microshift-io's): release fetch resolves them to digests.
	ResolveTags  bool
	Lacks        []Lack
	Packages     map[string]Range
	Configs      []PackageConfig
	Files        []PackageFile
	Distros      []Distro
	Repositories []BuildRepository
	// Digest is the sha256 (hex) of the builds data and the build's name:
	// what a plan of a build other than the default adds to its
	// composition ID.
	Digest string
}

// Lack is what a build does not have, and why: RPMs of MicroShift's spec
// it does not build, keys of the core release file and components' release
// files (release-<file>-<arch>.json) whose images it leaves as another
// build's, hosts of RPM repositories it cannot reach.
type Lack struct {
	Packages, Images, Files, Hosts []string
	Why                            string
}

// Needs are what a component needs of a build: its RPMs, its release file
// ("" for the core file) and keys, its repositories' URLs.
type Needs struct {
	Packages     []string
	ImageFile    string
	ImageKeys    []string
	Repositories []string
}

// BuildRepository is an RPM repository a build's plans need besides the
// OS's: osbuild needs it among its sources, and a bootc image enables it.
type BuildRepository struct {
	Range
	ID, Name string
	// BaseURL holds $basearch for the plan's arch.
	BaseURL string
}

// OwnsImage reports whether ref names an image of one of the build's
// registries.
func (b *BuildFacts) OwnsImage(ref string) bool {
	r, err := imageref.ParseReference(ref, name.StrictValidation)
	if err != nil {
		return false
	}
	repo := r.Context().RegistryStr() + "/" + r.Context().RepositoryStr() + "/"
	for _, p := range b.Registries {
		if strings.HasPrefix(repo, p) {
			return true
		}
	}
	return false
}

// LacksImage returns why the build leaves an image of a release file
// (file: its component, "" for the core file) as another build's: a key
// of the core file, or a component's whole file; "" when it does not.
func (b *BuildFacts) LacksImage(file, key string) string {
	for _, l := range b.Lacks {
		if file == "" && slices.Contains(l.Images, key) || file != "" && slices.Contains(l.Files, file) {
			return l.Why
		}
	}
	return ""
}

// Matches reports whether the build exists for release v.
func (b *BuildFacts) Matches(v *semver.Version) bool { return b.Range == nil || b.Range.Matches(v) }

// Build returns the build named n, or nil.
func (k *Knowledge) Build(n string) *BuildFacts {
	for _, b := range k.Builds {
		if b.Name == n {
			return b
		}
	}
	return nil
}

// DefaultBuild is the build the rest of the knowledge describes.
func (k *Knowledge) DefaultBuild() *BuildFacts {
	for _, b := range k.Builds {
		if b.Default {
			return b
		}
	}
	return nil
}

// BuildNames lists the builds, the default first.
func (k *Knowledge) BuildNames() []string {
	var out []string
	for _, b := range k.Builds {
		out = append(out, b.Name)
	}
	return out
}

// ErrBuildUnsupported is wrapped when a build does not exist for a
// release, as far as the knowledge knows.
var ErrBuildUnsupported = fmt.Errorf("%w by this build", ErrUnsupported)

// ForBuild returns the facts for release v of the build named build ("" is
// the default build): For's, with the build's distros, packages, package
// configs and files applied.
func (k *Knowledge) ForBuild(v *semver.Version, build string) (*Release, error) {
	r, err := k.For(v)
	if err != nil {
		return nil, err
	}
	b := k.DefaultBuild()
	if build != "" {
		if b = k.Build(build); b == nil {
			return nil, fmt.Errorf("unknown build %q (microshift-compose knows %s)", build, strings.Join(k.BuildNames(), ", "))
		}
	}
	r.Build = b
	if b == nil || b.Default {
		return r, nil
	}
	if !b.Matches(v) {
		return nil, fmt.Errorf("MicroShift %d.%d of %s: %w: microshift-compose knows its releases %s", v.Major(), v.Minor(), b.Title, ErrBuildUnsupported, b.Range.Release)
	}
	r.Distros, r.Distro = nil, ""
	for _, d := range b.Distros {
		if !d.Matches(v) {
			continue
		}
		if d.Default {
			r.Distro = d.Name
			r.Distros = slices.Insert(r.Distros, 0, d)
		} else {
			r.Distros = append(r.Distros, d)
		}
	}
	for _, l := range b.Lacks {
		for _, p := range l.Packages {
			delete(r.packages, p)
		}
	}
	for n, rg := range b.Packages {
		if rg.Matches(v) {
			r.packages[n] = true
		}
	}
	r.PackageConfigs = append(r.PackageConfigs, matching(b.Configs, v)...)
	r.PackageFiles = append(r.PackageFiles, matching(b.Files, v)...)
	r.Repositories = append(r.Repositories, matching(b.Repositories, v)...)
	return r, nil
}

// Lacking says what of a component's needs the release's build lacks and
// why: an RPM, an image of its release file, the host of a repository.
// Both are "" when it lacks none.
func (r *Release) Lacking(n Needs) (what, why string) {
	if r.Build == nil {
		return "", ""
	}
	for _, l := range r.Build.Lacks {
		for _, p := range n.Packages {
			if slices.Contains(l.Packages, p) {
				return "RPM " + p, l.Why
			}
		}
		if n.ImageFile != "" && slices.Contains(l.Files, n.ImageFile) && len(n.ImageKeys) > 0 {
			return "the images of release-" + n.ImageFile + "-<arch>.json", l.Why
		}
		for _, k := range n.ImageKeys {
			if n.ImageFile == "" && slices.Contains(l.Images, k) {
				return "image " + k, l.Why
			}
		}
		for _, raw := range n.Repositories {
			if u, err := url.Parse(raw); err == nil && slices.Contains(l.Hosts, u.Hostname()) {
				return "the repository at " + u.Hostname(), l.Why
			}
		}
	}
	return "", ""
}

type buildsTOML struct {
	Build []struct {
		Name        string            `toml:"name"`
		Title       string            `toml:"title"`
		Description string            `toml:"description"`
		Default     bool              `toml:"default"`
		Release     string            `toml:"release"`
		VersionForm string            `toml:"version_form"`
		Registries  []string          `toml:"registries"`
		PullSecret  bool              `toml:"pull_secret"`
		RPMSource   string            `toml:"rpm_source"`
		ResolveTags bool              `toml:"resolve_tags"`
		Packages    map[string]string `toml:"packages"`
		Lacks       []struct {
			Packages []string `toml:"packages"`
			Images   []string `toml:"images"`
			Files    []string `toml:"files"`
			Hosts    []string `toml:"hosts"`
			Why      string   `toml:"why"`
		} `toml:"lacks"`
		PackageConfig []struct {
			Package string         `toml:"package"`
			Release string         `toml:"release"`
			File    string         `toml:"file"`
			Config  map[string]any `toml:"config"`
		} `toml:"package_config"`
		PackageFile []struct {
			Package string `toml:"package"`
			Release string `toml:"release"`
			Path    string `toml:"path"`
		} `toml:"package_file"`
		Distro []struct {
			Release   string `toml:"release"`
			Name      string `toml:"name"`
			OSBuild   string `toml:"osbuild"`
			Dist      string `toml:"dist"`
			Default   bool   `toml:"default"`
			ImageType string `toml:"image_type"`
			BootcBase string `toml:"bootc_base"`
		} `toml:"distro"`
		Repository []struct {
			Release string `toml:"release"`
			ID      string `toml:"id"`
			Name    string `toml:"name"`
			BaseURL string `toml:"baseurl"`
		} `toml:"repository"`
	} `toml:"build"`
}

// ParseBuilds reads the builds data (data/builds.toml; file names it in
// messages) into k. Exactly one build is the default; every other build's
// distros have one default for each release it exists for.
func (k *Knowledge) ParseBuilds(file string, data []byte) error {
	var doc buildsTOML
	if err := decodeStrict(file, data, &doc, "build.package_config.config"); err != nil {
		return err
	}
	constraint := constraintParser()
	rng := func(where, s string) (Range, error) {
		c, err := constraint(s)
		if err != nil || strings.TrimSpace(s) == "" {
			return Range{}, fmt.Errorf("%s: %s: release: invalid semver constraint %q", file, where, s)
		}
		return Range{Release: s, Constraint: c}, nil
	}
	sum := sha256.Sum256(data)
	k.Builds = nil
	defaults := 0
	for i, d := range doc.Build {
		where := fmt.Sprintf("build[%d]", i)
		if !buildName(d.Name) || k.Build(d.Name) != nil {
			return fmt.Errorf("%s: %s: name %q: want a unique lower-case name (a-z, 0-9, -)", file, where, d.Name)
		}
		where = fmt.Sprintf("build %s", d.Name)
		if strings.TrimSpace(d.Title) == "" || strings.TrimSpace(d.Description) == "" {
			return fmt.Errorf("%s: %s: title and description are required", file, where)
		}
		h := sha256.New()
		h.Write(sum[:])
		h.Write([]byte("\x00" + d.Name))
		b := &BuildFacts{Name: d.Name, Title: oneLine(d.Title), Description: oneLine(d.Description), Default: d.Default, VersionForm: d.VersionForm,
			PullSecret: d.PullSecret, RPMSource: oneLine(d.RPMSource), ResolveTags: d.ResolveTags, Packages: map[string]Range{}, Digest: hex.EncodeToString(h.Sum(nil))}
		if d.Default {
			defaults++
			if d.Release != "" || len(d.Distro)+len(d.Repository)+len(d.Lacks)+len(d.Packages)+len(d.PackageConfig)+len(d.PackageFile) > 0 {
				return fmt.Errorf("%s: %s: the default build is releases.toml's: it takes no release, lacks, packages, distros or repositories", file, where)
			}
		} else if d.RPMSource == "" {
			return fmt.Errorf("%s: %s: rpm_source: say where its RPMs are", file, where)
		}
		if d.Release != "" {
			r, err := rng(where, d.Release)
			if err != nil {
				return err
			}
			b.Range = &r
		}
		switch d.VersionForm {
		case VersionFormShipped, VersionFormMicroShiftIO:
		default:
			return fmt.Errorf("%s: %s: version_form %q: want %q or none", file, where, d.VersionForm, VersionFormMicroShiftIO)
		}
		if len(d.Registries) == 0 {
			return fmt.Errorf("%s: %s: registries: list where its images come from", file, where)
		}
		for _, reg := range d.Registries {
			if !strings.HasSuffix(reg, "/") || strings.Count(reg, "/") < 1 {
				return fmt.Errorf("%s: %s: registries: %q: want a registry or repository prefix ending in /", file, where, reg)
			}
			if _, err := imageref.NewRepository(reg+"xx", name.StrictValidation); err != nil {
				return fmt.Errorf("%s: %s: registries: %q: %v", file, where, reg, err)
			}
			b.Registries = append(b.Registries, reg)
		}
		for j, l := range d.Lacks {
			if strings.TrimSpace(l.Why) == "" || len(l.Packages)+len(l.Images)+len(l.Files)+len(l.Hosts) == 0 {
				return fmt.Errorf("%s: %s: lacks[%d]: list packages, images, files or hosts, and say why", file, where, j)
			}
			b.Lacks = append(b.Lacks, Lack{Packages: l.Packages, Images: l.Images, Files: l.Files, Hosts: l.Hosts, Why: oneLine(l.Why)})
		}
		for _, n := range slices.Sorted(maps.Keys(d.Packages)) {
			r, err := rng(where+": packages."+n, d.Packages[n])
			if err != nil {
				return err
			}
			b.Packages[n] = r
		}
		known := func(pkg string) bool { _, own := b.Packages[pkg]; _, rel := k.Packages[pkg]; return own || rel }
		for j, pc := range d.PackageConfig {
			r, err := rng(fmt.Sprintf("%s: package_config[%d]", where, j), pc.Release)
			if err != nil {
				return err
			}
			if !known(pc.Package) || !strings.HasPrefix(pc.File, "/etc/microshift/config.d/") {
				return fmt.Errorf("%s: %s: package_config[%d]: package %q is not the build's nor the release's, or file %q is not a config.d drop-in", file, where, j, pc.Package, pc.File)
			}
			settings := map[string]any{}
			flatten("", pc.Config, settings)
			b.Configs = append(b.Configs, PackageConfig{Range: r, Package: pc.Package, File: pc.File, Settings: settings})
		}
		for j, pf := range d.PackageFile {
			r, err := rng(fmt.Sprintf("%s: package_file[%d]", where, j), pf.Release)
			if err != nil {
				return err
			}
			if !known(pf.Package) || !strings.HasPrefix(pf.Path, "/etc/") || path.Clean(pf.Path) != pf.Path {
				return fmt.Errorf("%s: %s: package_file[%d]: package %q is not the build's nor the release's, or path %q is not a clean path under /etc/", file, where, j, pf.Package, pf.Path)
			}
			b.Files = append(b.Files, PackageFile{Range: r, Package: pf.Package, Path: pf.Path})
		}
		for j, dd := range d.Distro {
			w := fmt.Sprintf("%s: distro[%d]", where, j)
			r, err := rng(w, dd.Release)
			if err != nil {
				return err
			}
			if strings.TrimSpace(dd.Name) == "" {
				return fmt.Errorf("%s: %s: name is required", file, w)
			}
			if dd.BootcBase != "" {
				if _, err := imageref.ParseReference(dd.BootcBase, name.StrictValidation); err != nil {
					return fmt.Errorf("%s: %s: bootc_base %q is not an image reference: %v", file, w, dd.BootcBase, err)
				}
			}
			b.Distros = append(b.Distros, Distro{Range: r, Name: dd.Name, OSBuild: dd.OSBuild, Dist: dd.Dist, Default: dd.Default, ImageType: dd.ImageType, BootcBase: dd.BootcBase})
		}
		for j, rp := range d.Repository {
			w := fmt.Sprintf("%s: repository[%d]", where, j)
			r, err := rng(w, rp.Release)
			if err != nil {
				return err
			}
			u, err := url.Parse(rp.BaseURL)
			if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || strings.TrimSpace(rp.ID) == "" {
				return fmt.Errorf("%s: %s: want an id and an https baseurl without credentials (have %q, %q)", file, w, rp.ID, rp.BaseURL)
			}
			b.Repositories = append(b.Repositories, BuildRepository{Range: r, ID: rp.ID, Name: rp.Name, BaseURL: rp.BaseURL})
		}
		k.Builds = append(k.Builds, b)
	}
	if defaults != 1 {
		return fmt.Errorf("%s: %d default builds, want exactly one", file, defaults)
	}
	return k.checkBuildDistros(file)
}

// checkBuildDistros checks, for every build but the default and every
// release it exists for that the knowledge covers, that it has exactly one
// default distro and no distro twice.
func (k *Knowledge) checkBuildDistros(file string) error {
	for _, b := range k.Builds {
		if b.Default {
			continue
		}
		for _, v := range probeVersions() {
			if !b.Matches(v) || !slices.ContainsFunc(k.ConfigFiles, func(f ConfigFile) bool { return f.Matches(v) }) {
				continue
			}
			defaults, seen := 0, map[string]bool{}
			for _, d := range b.Distros {
				if !d.Matches(v) {
					continue
				}
				if seen[d.Name] {
					return fmt.Errorf("%s: build %s: release %d.%d has distro %s twice", file, b.Name, v.Major(), v.Minor(), d.Name)
				}
				seen[d.Name] = true
				if d.Default {
					defaults++
				}
			}
			if defaults != 1 {
				return fmt.Errorf("%s: build %s: release %d.%d has %d default distros, want exactly one", file, b.Name, v.Major(), v.Minor(), defaults)
			}
		}
	}
	return nil
}

// buildName reports whether s is a build's name: lower-case letters,
// digits and dashes.
func buildName(s string) bool {
	if s == "" || s[0] == '-' {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
