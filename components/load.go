package components

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/stricttoml"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// Limits on what a catalog directory may hold (docs/reference.md, "Limits").
const (
	// MaxTOMLSize bounds catalog.toml and component.toml; real ones are a
	// few hundred bytes.
	MaxTOMLSize = 1 << 20
	// MaxFileSource bounds a [[files]] source and a rendered template:
	// the file is carried inline in blueprint.toml and the lock. Real
	// ones are configuration files of a few kilobytes.
	MaxFileSource = 1 << 20
)

// A catalog directory holds an optional catalog.toml (capabilities and
// profiles) and components/<name>/component.toml, one directory per
// component so that manifests, plugins and file sources sit beside it.
const (
	catalogFile   = "catalog.toml"
	componentsDir = "components"
	componentFile = "component.toml"
)

// What a component directory may hold beside component.toml.
const (
	// ManifestsDir is a kustomization rendered into manifests.d.
	ManifestsDir = "manifests"
	// PluginFile is an executable following the plugin calling convention
	// (docs/plugins.md); its output is rendered like ManifestsDir.
	PluginFile = "plugin"
	// ReleaseDir holds the component's own release files.
	ReleaseDir = "release"
)

//go:embed all:data
var embedded embed.FS

var loadDefault = sync.OnceValues(func() (*Catalog, error) {
	sub, err := fs.Sub(embedded, "data")
	if err != nil {
		return nil, err
	}
	parts, err := loadParts(sub, "embedded catalog", "")
	if err != nil {
		return nil, err
	}
	if parts.digests, err = parts.buildDigests(sub); err != nil {
		return nil, err
	}
	// Not checked again at run time: TestEmbeddedCatalogProblems checks
	// the catalog the binary embeds (validate checks it too), and the
	// check was a tenth of a build's CPU.
	return parts.catalog(), nil
})

// Default returns the catalog embedded in the binary. It is not checked
// when loaded (the tests check it, and 'validate' runs Problems on it);
// a catalog with a --catalog overlay is checked as a whole.
func Default() (*Catalog, error) { return loadDefault() }

// Load returns the embedded catalog with the catalog in dir overlaid on it
// ("" = embedded only). Components, capabilities and profiles in dir replace
// the embedded ones of the same name; the result is validated as a whole.
func Load(dir string) (*Catalog, error) {
	if dir == "" {
		return Default()
	}
	sub, err := fs.Sub(embedded, "data")
	if err != nil {
		return nil, err
	}
	base, err := loadParts(sub, "embedded catalog", "")
	if err != nil {
		return nil, err
	}
	embeddedDigests, err := base.buildDigests(sub)
	if err != nil {
		return nil, err
	}
	over, err := loadDir(dir)
	if err != nil {
		return nil, err
	}
	for n, c := range over.components {
		base.components[n] = c
	}
	for n, c := range over.capabilities {
		base.capabilities[n] = c
	}
	for n, p := range over.profiles {
		base.profiles[n] = p
	}
	base.digests = overlayDigests(embeddedDigests, over.digests)
	return base.finish()
}

// LoadOnly reads the catalog in dir without the embedded one; tests and
// tools that check a catalog in isolation use it.
func LoadOnly(dir string) (*Catalog, error) {
	parts, err := loadDir(dir)
	if err != nil {
		return nil, err
	}
	return parts.finish()
}

// loadDir reads a catalog directory on disk through the input gate (each
// component rooted at its own directory: its symlinks must stay inside it);
// a missing, non-directory or empty dir is an error rather than an empty
// catalog.
func loadDir(dir string) (*parts, error) {
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("catalog %s does not exist", dir)
		}
		return nil, fmt.Errorf("reading catalog: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("catalog %s is not a directory", dir)
	}
	fsys, err := inputfile.Dir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading catalog %s: %w", dir, unwrapPath(err))
	}
	p, err := loadParts(fsys, dir, dir)
	if err != nil {
		return nil, err
	}
	if len(p.components) == 0 && len(p.capabilities) == 0 && len(p.profiles) == 0 {
		return nil, fmt.Errorf("%s: not a catalog: no %s and no %s/<name>/%s", dir, catalogFile, componentsDir, componentFile)
	}
	if p.digests, err = p.buildDigests(fsys); err != nil {
		return nil, fmt.Errorf("reading catalog %s: %w", dir, unwrapPath(err))
	}
	return p, nil
}

type parts struct {
	components   map[string]*Component
	capabilities map[string]*Capability
	profiles     map[string]*Profile
	// digests are the content digests by build (Catalog.DigestFor).
	digests map[string]string
}

// catalog is the catalog of the parts, unchecked.
func (p *parts) catalog() *Catalog {
	c := &Catalog{Components: p.components, Capabilities: p.capabilities, Profiles: p.profiles, digests: p.digests}
	if k, err := knowledge.Default(); err == nil && p.digests != nil {
		c.Digest = p.digests[k.DefaultBuild().Name]
	}
	c.names = c.sortNames()
	return c
}

// finish is the catalog of the parts, checked (Problems).
func (p *parts) finish() (*Catalog, error) {
	c := p.catalog()
	if probs := c.Problems(); len(probs) > 0 {
		return nil, &ProblemsError{Problems: probs}
	}
	return c, nil
}

// ProblemsError is every problem found in a catalog. Its message is the
// first problem (and how many more), so it stays one line; validate lists
// them all.
type ProblemsError struct{ Problems []error }

func (e *ProblemsError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0].Error()
	}
	more := "problems"
	if len(e.Problems) == 2 {
		more = "problem"
	}
	return fmt.Sprintf("%v (and %d more %s; run 'microshift-compose validate' to list them)", e.Problems[0], len(e.Problems)-1, more)
}

// loadParts reads a catalog directory. display prefixes paths in messages;
// onDisk is the real directory ("" when fsys is embedded).
func loadParts(fsys fs.FS, display, onDisk string) (*parts, error) {
	p := &parts{
		components:   map[string]*Component{},
		capabilities: map[string]*Capability{},
		profiles:     map[string]*Profile{},
	}
	show := func(rel string) string {
		if onDisk != "" {
			return filepath.Join(onDisk, filepath.FromSlash(rel))
		}
		return display + ": " + rel
	}
	if data, err := readTOML(fsys, catalogFile); err == nil {
		if err := p.decodeCatalog(show(catalogFile), data); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %v", show(catalogFile), outside(err, "catalog directory"))
	}
	entries, err := fs.ReadDir(fsys, componentsDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %v", show(componentsDir), err)
	}
	for _, e := range entries {
		rel := path.Join(componentsDir, e.Name())
		if !e.IsDir() {
			return nil, fmt.Errorf("%s: not a directory: each component lives in %s/<name>/%s", show(rel), componentsDir, componentFile)
		}
		file := path.Join(rel, componentFile)
		data, err := readTOML(fsys, file)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", show(file), outside(err, "component directory"))
		}
		sub, err := fs.Sub(fsys, rel)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", show(rel), unwrapPath(err))
		}
		c, err := decodeComponent(show(file), data)
		if err != nil {
			return nil, err
		}
		if c.Name != e.Name() {
			return nil, fmt.Errorf("%s: name %q does not match its directory %q", show(file), c.Name, e.Name())
		}
		c.FS = sub
		if onDisk != "" {
			c.Dir = filepath.Join(onDisk, filepath.FromSlash(rel))
		}
		if err := readComponentDir(c, func(name string) string { return show(path.Join(rel, name)) }); err != nil {
			return nil, err
		}
		p.components[c.Name] = c
	}
	return p, nil
}

// readComponentDir notes whether the component has manifests or a plugin
// and parses its own release files, strictly, as release files are parsed
// anywhere else.
func readComponentDir(c *Component, show func(string) string) error {
	if st, err := fs.Stat(c.FS, ManifestsDir); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("%s: not a directory (a component's manifests are a kustomization directory)", show(ManifestsDir))
		}
		c.HasManifests = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %v", show(ManifestsDir), outside(unwrapPath(err), "component directory"))
	}
	if st, err := fs.Stat(c.FS, PluginFile); err == nil {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s: %v; a plugin is an executable", show(PluginFile), inputfile.NotRegular(st.Mode()))
		}
		c.HasPlugin = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %v", show(PluginFile), outside(unwrapPath(err), "component directory"))
	}
	if c.Chart != nil {
		if c.HasManifests || c.HasPlugin {
			return fmt.Errorf("%s: a component renders one way: [chart], manifests/ or a plugin, not several", show(componentFile))
		}
		for _, p := range []string{c.Chart.Path, c.Chart.Values} {
			if p == "" {
				continue
			}
			if _, err := fs.Stat(c.FS, p); err != nil {
				return fmt.Errorf("%s: %v", show(p), outside(unwrapPath(err), "component directory"))
			}
		}
		if st, err := fs.Stat(c.FS, c.Chart.Path); err == nil {
			switch {
			case c.Chart.IsArchive() && st.IsDir():
				return fmt.Errorf("%s: a directory named like a chart archive (.tgz or .tar.gz): name a chart directory without the suffix", show(c.Chart.Path))
			case !c.Chart.IsArchive() && !st.IsDir():
				return fmt.Errorf("%s: a chart is a directory or a packaged chart named .tgz or .tar.gz", show(c.Chart.Path))
			}
		}
	}
	entries, err := fs.ReadDir(c.FS, ReleaseDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("%s: %v", show(ReleaseDir), unwrapPath(err))
	}
	if rel, err := fs.Sub(c.FS, ReleaseDir); err == nil {
		if err := releases.CheckNoInterruptedUpdate(rel, show(ReleaseDir)); err != nil {
			return err
		}
	}
	for _, e := range entries {
		rel := path.Join(ReleaseDir, e.Name())
		if !e.Type().IsRegular() {
			return fmt.Errorf("%s: %v", show(rel), inputfile.NotRegular(e.Type()))
		}
		data, err := inputfile.ReadFS(c.FS, rel, releases.MaxFileSize)
		if err != nil {
			return fmt.Errorf("%s: %v", show(rel), unwrapPath(err))
		}
		f, err := releases.ParseFile(show(rel), e.Name(), data)
		if err != nil {
			return err
		}
		c.ReleaseFiles = append(c.ReleaseFiles, f)
	}
	return nil
}

func readTOML(fsys fs.FS, name string) ([]byte, error) {
	data, err := inputfile.ReadFS(fsys, name, MaxTOMLSize)
	return data, unwrapPath(err)
}

// outside words the gate's refusal of a path leaving its directory for
// the directory it must stay in ("catalog directory", "component
// directory"); other errors pass.
func outside(err error, dir string) error {
	var oe *inputfile.OutsideError
	if errors.As(err, &oe) {
		return errors.New(oe.Outside(dir) + " (only files inside it are read)")
	}
	return err
}

// unwrapPath drops fs.PathError's repetition of the path; callers name the file.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// decodeStrict decodes TOML and rejects keys the schema does not know
// (stricttoml.Decode).
func decodeStrict(display string, data []byte, v any, freeForm ...string) error {
	_, err := stricttoml.Decode(display, data, v, freeForm...)
	return err
}

type catalogTOML struct {
	Capabilities map[string]struct {
		Description string `toml:"description"`
		Default     string `toml:"default"`
	} `toml:"capabilities"`
	Profiles map[string]struct {
		Description string   `toml:"description"`
		Components  []string `toml:"components"`
	} `toml:"profiles"`
}

func (p *parts) decodeCatalog(display string, data []byte) error {
	var doc catalogTOML
	if err := decodeStrict(display, data, &doc); err != nil {
		return err
	}
	for n, c := range doc.Capabilities {
		p.capabilities[n] = &Capability{Name: n, Description: c.Description, Default: c.Default, Source: display}
	}
	for n, pr := range doc.Profiles {
		p.profiles[n] = &Profile{Name: n, Description: pr.Description, Components: pr.Components, Source: display}
	}
	return nil
}

type componentTOML struct {
	Name         string           `toml:"name"`
	Description  string           `toml:"description"`
	Order        *int             `toml:"order"`
	Arches       []string         `toml:"arches"`
	Release      string           `toml:"release"`
	Builds       []string         `toml:"builds"`
	DefaultFor   []string         `toml:"default_for"`
	Provides     []string         `toml:"provides"`
	Requires     []string         `toml:"requires"`
	Conflicts    []string         `toml:"conflicts"`
	Packages     []string         `toml:"packages"`
	Repositories []repositoryTOML `toml:"repositories"`
	Images       imagesTOML       `toml:"images"`
	Config       struct {
		Selected map[string]any `toml:"selected"`
		Omitted  map[string]any `toml:"omitted"`
	} `toml:"config"`
	Services struct {
		Enabled  []string `toml:"enabled"`
		Disabled []string `toml:"disabled"`
	} `toml:"services"`
	Firewall struct {
		Ports          []string `toml:"ports"`
		Services       []string `toml:"services"`
		TrustedSources []string `toml:"trusted_sources"`
	} `toml:"firewall"`
	Manifests struct {
		Images map[string]string `toml:"images"`
	} `toml:"manifests"`
	Chart *Chart `toml:"chart"`
	Files []struct {
		Path     string `toml:"path"`
		Mode     string `toml:"mode"`
		Content  string `toml:"content"`
		Source   string `toml:"source"`
		Template bool   `toml:"template"`
	} `toml:"files"`
	Variants []variantTOML `toml:"variant"`
}

// variantTOML is one [[variant]]; pointers tell a field left out (the
// component's own applies) from one set empty.
type variantTOML struct {
	Release      string            `toml:"release"`
	Packages     *[]string         `toml:"packages"`
	Repositories *[]repositoryTOML `toml:"repositories"`
	Images       *imagesTOML       `toml:"images"`
	Config       *struct {
		Selected map[string]any `toml:"selected"`
		Omitted  map[string]any `toml:"omitted"`
	} `toml:"config"`
	AlwaysDeployed string `toml:"always_deployed"`
}

type imagesTOML struct {
	File string   `toml:"file"`
	Keys []string `toml:"keys"`
	From string   `toml:"from"`
	Also []struct {
		File string   `toml:"file"`
		Keys []string `toml:"keys"`
		From string   `toml:"from"`
	} `toml:"also"`
}

func (im imagesTOML) images() Images {
	out := Images{File: im.File, Keys: im.Keys, From: im.From}
	for _, a := range im.Also {
		out.Also = append(out.Also, Images{File: a.File, Keys: a.Keys, From: a.From})
	}
	return out
}

type repositoryTOML struct {
	ID       string   `toml:"id"`
	Name     string   `toml:"name"`
	BaseURL  string   `toml:"baseurl"`
	Packages []string `toml:"packages"`
}

func repositories(list []repositoryTOML) []Repository {
	out := []Repository{}
	for _, r := range list {
		out = append(out, Repository(r))
	}
	return out
}

func decodeComponent(display string, data []byte) (*Component, error) {
	var doc componentTOML
	if err := decodeStrict(display, data, &doc, "config.selected", "config.omitted", "variant.config.selected", "variant.config.omitted"); err != nil {
		return nil, err
	}
	c := &Component{
		Name:        doc.Name,
		Description: doc.Description,
		Release:     doc.Release,
		Builds:      doc.Builds,
		DefaultFor:  doc.DefaultFor,
		Provides:    doc.Provides,
		Requires:    doc.Requires,
		Conflicts:   doc.Conflicts,
		Packages:    doc.Packages,
		Images:      doc.Images.images(),
		Config:      Config{Selected: doc.Config.Selected, Omitted: doc.Config.Omitted},
		Services:    Services{Enabled: doc.Services.Enabled, Disabled: doc.Services.Disabled},
		Firewall: Firewall{
			Ports:          doc.Firewall.Ports,
			Services:       doc.Firewall.Services,
			TrustedSources: doc.Firewall.TrustedSources,
		},
		Manifests: Manifests{Images: doc.Manifests.Images},
		Source:    display,
	}
	if doc.Repositories != nil {
		c.Repositories = repositories(doc.Repositories)
	}
	if doc.Name == "" {
		return nil, fmt.Errorf("%s: missing required key \"name\"", display)
	}
	if doc.Order == nil {
		return nil, fmt.Errorf("%s: missing required key \"order\" (the NNN- prefix of its manifests.d directory)", display)
	}
	c.Order = *doc.Order
	if doc.Chart != nil {
		if err := checkChart(doc.Chart); err != nil {
			return nil, fmt.Errorf("%s: chart: %w", display, err)
		}
		c.Chart = doc.Chart
	}
	for _, a := range doc.Arches {
		arch := releases.Arch(a)
		if arch != releases.X86_64 && arch != releases.AArch64 {
			if _, err := releases.ParseArch(a); err == nil {
				return nil, fmt.Errorf("%s: arches: write %q in uname style (x86_64, aarch64)", display, a)
			}
			return nil, fmt.Errorf("%s: arches: unknown arch %q (want x86_64 or aarch64)", display, a)
		}
		c.Arches = append(c.Arches, arch)
	}
	if strings.TrimSpace(doc.Release) != "" {
		con, err := semver.NewConstraint(doc.Release)
		if err != nil {
			return nil, fmt.Errorf("%s: release: invalid semver constraint %q: %v", display, doc.Release, err)
		}
		c.Constraint = con
	}
	for _, f := range doc.Files {
		c.Files = append(c.Files, File{Path: f.Path, Mode: f.Mode, Content: f.Content, Source: f.Source, Template: f.Template})
	}
	for i, v := range doc.Variants {
		if strings.TrimSpace(v.Release) == "" {
			return nil, fmt.Errorf("%s: variant[%d]: missing required key \"release\" (the MicroShift releases it applies to)", display, i)
		}
		con, err := semver.NewConstraint(v.Release)
		if err != nil {
			return nil, fmt.Errorf("%s: variant[%d]: release: invalid semver constraint %q: %v", display, i, v.Release, err)
		}
		vr := Variant{Release: v.Release, Constraint: con, AlwaysDeployed: strings.TrimSpace(v.AlwaysDeployed), Index: i}
		if v.Packages != nil {
			vr.Packages = nonNilStrings(*v.Packages)
		}
		if v.Repositories != nil {
			vr.Repositories = repositories(*v.Repositories)
		}
		if v.Images != nil {
			im := v.Images.images()
			vr.Images = &im
		}
		if v.Config != nil {
			vr.Config = &Config{Selected: v.Config.Selected, Omitted: v.Config.Omitted}
		}
		c.Variants = append(c.Variants, vr)
	}
	return c, nil
}

// nonNilStrings keeps "packages = []" in a variant distinct from leaving it
// out: an empty variant list replaces the component's packages.
func nonNilStrings(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// A catalog's digest is a plan's for the build of MicroShift the plan's
// release is: the components of other builds (builds = [...] without it)
// are left out, so that a component added for one build does not change
// the composition IDs of another's plans.

// buildDigests hashes fsys for every build of MicroShift, leaving out the
// directories of p's components that are not for it.
func (p *parts) buildDigests(fsys fs.FS) (map[string]string, error) {
	k, err := knowledge.Default()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, b := range k.Builds {
		skip := map[string]bool{}
		for n, c := range p.components {
			if !c.ForBuild(b.Name) {
				skip[path.Join(componentsDir, n)] = true
			}
		}
		if out[b.Name], err = digestFS(fsys, skip); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// overlayDigests are the digests, by build, of the embedded catalog (its
// own are base) with an overlay (over).
func overlayDigests(base, over map[string]string) map[string]string {
	out := map[string]string{}
	for b, d := range base {
		sum := sha256.Sum256([]byte(strings.Join([]string{"embedded", d, "overlay", over[b]}, "\x00")))
		out[b] = hex.EncodeToString(sum[:])
	}
	return out
}
