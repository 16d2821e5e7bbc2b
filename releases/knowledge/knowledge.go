// Package knowledge is what microshift-compose knows about each MicroShift
// release beyond its release files: where its config goes, which config
// keys and values it accepts, which RPMs it builds and what they configure
// themselves, the distro it runs on, and what a device does when a plan
// lacks a capability. The facts are data (data/*.toml), per release range,
// the way osbuild/images keeps distro knowledge in its definitions: adding a
// release is a data change.
//
// It answers questions for one release (For); it does not resolve plans.
package knowledge

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/microshift-compose/microshift-compose/internal/imageref"
	"github.com/microshift-compose/microshift-compose/internal/stricttoml"
)

//go:embed data/*.toml
var data embed.FS

// Knowledge is every release range's facts, as loaded.
type Knowledge struct {
	ConfigFiles    []ConfigFile
	Distros        []Distro
	Upgrades       []UpgradeRule
	Kubernetes     map[string]string // stream -> Kubernetes major.minor
	Packages       map[string]Range
	PackageConfigs []PackageConfig
	// PackageFiles are the files each RPM installs under /etc.
	PackageFiles []PackageFile
	// PackageReads are the drop-in globs RPMs' own configs read.
	PackageReads      []PackageRead
	MissingCapability []CapabilityWarning
	Config            *Schema
	// LVMSStorageClasses and HealthChecks are the device storage and
	// readiness-check facts (device.go).
	LVMSStorageClasses []LVMSStorageClasses
	HealthChecks       []HealthCheck
	// ExistingNamespaces are the namespaces devices have before their
	// manifests are applied (namespaces.go).
	ExistingNamespaces []ExistingNamespaces
	// Lvmds say what MicroShift does with an empty lvmd.yaml.
	Lvmds []Lvmd
	// FIPS, FIPSOS and CIS are the hardening facts (hardening.go).
	FIPS   []FIPS
	FIPSOS []FIPSOS
	CIS    []CIS
	// Builds are the builds of MicroShift (builds.go), in data/builds.toml
	// order.
	Builds []*BuildFacts
	// Digest is the sha256 (hex) of the data files the knowledge was
	// parsed from (releases.toml and config.toml; a build other than the
	// default adds its own, Build.Digest): part of a plan's composition ID.
	Digest string
}

// matching are the entries of list whose release range holds v, in
// order: what a release takes of a table of release-ranged facts.
func matching[T interface{ Matches(*semver.Version) bool }](list []T, v *semver.Version) []T {
	var out []T
	for _, e := range list {
		if e.Matches(v) {
			out = append(out, e)
		}
	}
	return out
}

// Range is a release constraint as written and parsed.
type Range struct {
	Release    string
	Constraint *semver.Constraints
}

// Matches reports whether v is in the range.
func (r Range) Matches(v *semver.Version) bool { return r.Constraint.Check(v) }

// ConfigFile is where a plan's MicroShift config goes.
type ConfigFile struct {
	Range
	Path string
	// Why says why this path, for the plan's notes.
	Why string
}

// Distro is a distro a release is built and tested for.
type Distro struct {
	Range
	// Name is the distro's name as --distro takes it: osbuild's
	// ("rhel-9.6"), unless OSBuild names osbuild's.
	Name string
	// OSBuild is osbuild's name for the distro when it is not Name
	// ("centos-9" for centos-stream-9).
	OSBuild string
	// Dist is the dist tag of the RPMs the distro takes ("el9"); "" when
	// the knowledge does not say.
	Dist string
	// Default marks the distro a plan targets without --distro.
	Default bool
	// ImageType is the osbuild image type a blueprint is validated for by
	// default; "" when the distro has no rpm-ostree image types, so that
	// MicroShift on it is image mode (bootc) only.
	ImageType string
	// BootcBase is the distro's bootc base image; "" when it has none.
	BootcBase string
}

// OSBuildName is osbuild's name for the distro.
func (d Distro) OSBuildName() string {
	if d.OSBuild != "" {
		return d.OSBuild
	}
	return d.Name
}

// BootcOnly reports whether MicroShift on the distro is image mode (bootc)
// only: the distro has no rpm-ostree image types (RHEL 10).
func (d Distro) BootcOnly() bool { return d.ImageType == "" }

// UpgradeRule is which data a release takes over.
type UpgradeRule struct {
	Range
	// MaxSkew is how many minors older the data may be.
	MaxSkew int
	// LastMinor names each earlier major's last minor; empty when the
	// release refuses data of another major.
	LastMinor map[uint64]uint64
}

// PackageConfig is config an RPM ships as its own drop-in.
type PackageConfig struct {
	Range
	Package string
	File    string
	// Settings are the dotted paths it sets and their values.
	Settings map[string]any
}

// PackageFile is a file an RPM installs under /etc.
type PackageFile struct {
	Range
	Package string
	Path    string
}

// PackageRead is a drop-in glob an RPM's own config makes it read: the
// observability collector's scrape_config_files.
type PackageRead struct {
	Range
	Package string
	// Glob is a path.Match pattern under /etc.
	Glob string
	// Key is the config key naming the glob in File, the package's config.
	Key, File string
}

// CapabilityWarning is what the device does without a capability.
type CapabilityWarning struct {
	Range
	Capability string
	Warning    string
	// RedBoot marks a device that can never become healthy without the
	// capability, whatever else its image holds: greenboot marks every
	// boot red and rolls back. A plan is refused unless the user accepts
	// it (--allow-red-boot).
	RedBoot bool
}

// Release is the facts for one MicroShift release.
type Release struct {
	Version *semver.Version
	// ConfigFile is where the plan's config goes, and why.
	ConfigFile, ConfigFileWhy string
	// Distro is the name of the default distro; Distros are every distro
	// the release is built for, the default first.
	Distro  string
	Distros []Distro
	// Upgrade is which data the release takes over; nil when not known.
	Upgrade *UpgradeRule
	// Kubernetes is the Kubernetes major.minor, "" when not known.
	Kubernetes string
	// PackageConfigs are the drop-ins the release's RPMs ship.
	PackageConfigs []PackageConfig
	// PackageFiles are the files the release's RPMs install under /etc.
	PackageFiles []PackageFile
	// PackageReads are the drop-in globs the release's RPMs read.
	PackageReads []PackageRead
	// Config is the config keys the release accepts.
	Config *Rules
	// LVMSStorageClasses is how lvmd's device classes become StorageClasses;
	// nil when the knowledge has none for the release.
	LVMSStorageClasses *LVMSStorageClasses
	// HealthCheck is how the device's greenboot check waits for the plan's
	// workloads; nil when the knowledge has none for the release.
	HealthCheck *HealthCheck
	// Lvmd is what the release does with an empty lvmd.yaml; nil when the
	// knowledge has nothing for it.
	Lvmd *Lvmd
	// FIPS is what the release does in FIPS mode; nil when the knowledge
	// has no FIPS facts for it (FIPS mode is refused).
	FIPS *FIPS
	// Rules is the release ("5.0") whose facts these are: the release's
	// own stream, or, for a release newer than every release the data
	// knows (a nightly of the next minor), the newest known one, whose
	// rules range forward. Newer tells the two apart.
	Rules string
	Newer bool
	// Build is the build of MicroShift the facts are for (ForBuild): the
	// default build's for For.
	Build *BuildFacts
	// Repositories are the RPM repositories the build's plans need
	// besides the OS's; none for the default build.
	Repositories []BuildRepository

	packages   map[string]bool
	missingCap map[string]CapabilityWarning
	namespaces ExistingNamespaces
	k          *Knowledge
}

// HasPackage reports whether the release builds the RPM.
func (r *Release) HasPackage(name string) bool { return r.packages[name] }

// Packages lists the RPMs the release builds, sorted.
func (r *Release) Packages() []string { return slices.Sorted(maps.Keys(r.packages)) }

// PackageRange returns the releases that build pkg, "" when none does.
func (r *Release) PackageRange(pkg string) string { return r.k.Packages[pkg].Release }

// MissingCapability says what the device does without a provider of
// capability on this release; false when nothing is known.
func (r *Release) MissingCapability(capability string) (CapabilityWarning, bool) {
	w, ok := r.missingCap[capability]
	return w, ok
}

// Stream is the release's major.minor.
func (r *Release) Stream() string { return fmt.Sprintf("%d.%d", r.Version.Major(), r.Version.Minor()) }

// ErrUnsupported is wrapped when the knowledge does not cover a release.
var ErrUnsupported = errors.New("release is not supported")

// For returns the facts for release version v (major.minor.patch).
func (k *Knowledge) For(v *semver.Version) (*Release, error) {
	r := &Release{Version: v, Build: k.DefaultBuild(), packages: map[string]bool{}, missingCap: map[string]CapabilityWarning{}, k: k}
	for _, f := range k.ConfigFiles {
		if f.Matches(v) {
			r.ConfigFile, r.ConfigFileWhy = f.Path, f.Why
			break
		}
	}
	if r.ConfigFile == "" {
		return nil, fmt.Errorf("MicroShift %d.%d: %w: microshift-compose knows releases %s", v.Major(), v.Minor(), ErrUnsupported, k.Supported())
	}
	for _, d := range k.Distros {
		if d.Matches(v) {
			if d.Default {
				r.Distro = d.Name
				r.Distros = slices.Insert(r.Distros, 0, d)
			} else {
				r.Distros = append(r.Distros, d)
			}
		}
	}
	for i := range k.Upgrades {
		if k.Upgrades[i].Matches(v) {
			r.Upgrade = &k.Upgrades[i]
			break
		}
	}
	r.Kubernetes = k.Kubernetes[r.Stream()]
	for name, rg := range k.Packages {
		if rg.Matches(v) {
			r.packages[name] = true
		}
	}
	r.PackageConfigs = append(r.PackageConfigs, matching(k.PackageConfigs, v)...)
	r.PackageFiles = append(r.PackageFiles, matching(k.PackageFiles, v)...)
	r.PackageReads = append(r.PackageReads, matching(k.PackageReads, v)...)
	for _, w := range k.MissingCapability {
		if w.Matches(v) {
			if _, dup := r.missingCap[w.Capability]; !dup {
				r.missingCap[w.Capability] = w
			}
		}
	}
	r.Config = k.Config.For(v)
	r.LVMSStorageClasses, r.HealthCheck, r.Lvmd = k.deviceFacts(v)
	r.namespaces = k.namespacesFor(v)
	r.FIPS = k.fipsFor(v)
	r.Rules = r.Stream()
	if newest := k.Newest(); newest != nil && v.GreaterThan(newest) && (v.Major() != newest.Major() || v.Minor() != newest.Minor()) {
		r.Rules, r.Newer = fmt.Sprintf("%d.%d", newest.Major(), newest.Minor()), true
	}
	return r, nil
}

// Newest is the newest release the knowledge has facts for: the newest
// stream of [kubernetes], which lists every release the data was written
// for (newer ones get the newest's rules from the open-ended ranges). Nil
// when the table is empty.
func (k *Knowledge) Newest() *semver.Version {
	var newest *semver.Version
	for stream := range k.Kubernetes {
		v, err := semver.NewVersion(stream)
		if err != nil {
			continue // Parse refuses such a key
		}
		if newest == nil || v.GreaterThan(newest) {
			newest = v
		}
	}
	return newest
}

// Supported describes the releases the knowledge covers: the config file
// ranges, joined ("">=4.14, <4.18 || ...").
func (k *Knowledge) Supported() string {
	var parts []string
	for _, f := range k.ConfigFiles {
		parts = append(parts, f.Release)
	}
	return strings.Join(parts, " || ")
}

var loadDefault = sync.OnceValues(func() (*Knowledge, error) {
	rel, err := data.ReadFile("data/releases.toml")
	if err != nil {
		return nil, err
	}
	cfg, err := data.ReadFile("data/config.toml")
	if err != nil {
		return nil, err
	}
	builds, err := data.ReadFile("data/builds.toml")
	if err != nil {
		return nil, err
	}
	// checkEveryRelease is not run again at run time:
	// TestEmbeddedKnowledgeChecked runs it on the data the binary embeds.
	k, err := parse("releases/knowledge/data/releases.toml", rel, "releases/knowledge/data/config.toml", cfg, false)
	if err != nil {
		return nil, err
	}
	if err := k.ParseBuilds("releases/knowledge/data/builds.toml", builds); err != nil {
		return nil, err
	}
	return k, nil
})

// Default returns the knowledge embedded in the binary; what Parse checks
// of every release the knowledge covers, the tests check of it.
func Default() (*Knowledge, error) { return loadDefault() }

type releasesTOML struct {
	ConfigFile []struct {
		Release string `toml:"release"`
		Path    string `toml:"path"`
		Why     string `toml:"why"`
	} `toml:"config_file"`
	Distro []struct {
		Release   string `toml:"release"`
		Name      string `toml:"name"`
		Default   bool   `toml:"default"`
		ImageType string `toml:"image_type"`
		BootcBase string `toml:"bootc_base"`
	} `toml:"distro"`
	Upgrade []struct {
		Release   string            `toml:"release"`
		MaxSkew   *int              `toml:"max_skew"`
		LastMinor map[string]uint64 `toml:"last_minor"`
	} `toml:"upgrade"`
	Kubernetes    map[string]string `toml:"kubernetes"`
	Packages      map[string]string `toml:"packages"`
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
	PackageReads []struct {
		Package string `toml:"package"`
		Release string `toml:"release"`
		Glob    string `toml:"glob"`
		Key     string `toml:"key"`
		File    string `toml:"file"`
	} `toml:"package_reads"`
	MissingCapability []struct {
		Capability string `toml:"capability"`
		Release    string `toml:"release"`
		Warning    string `toml:"warning"`
		RedBoot    bool   `toml:"red_boot"`
	} `toml:"missing_capability"`
	deviceTOML
	namespacesTOML
	hardeningTOML
}

// Parse reads the two knowledge files and checks what For relies on for
// every release they cover; names are for messages.
func Parse(releasesName string, releasesData []byte, configName string, configData []byte) (*Knowledge, error) {
	return parse(releasesName, releasesData, configName, configData, true)
}

// parse is Parse, with the check of every release (checkEveryRelease) run
// only when checkReleases is set.
func parse(releasesName string, releasesData []byte, configName string, configData []byte, checkReleases bool) (*Knowledge, error) {
	// The files do not depend on each other: config.toml is decoded
	// beside releases.toml, whose errors still come first.
	type parsedSchema struct {
		s   *Schema
		err error
	}
	schemaDone := make(chan parsedSchema, 1)
	go func() {
		s, err := ParseSchema(configName, configData)
		schemaDone <- parsedSchema{s, err}
	}()
	var doc releasesTOML
	if err := decodeStrict(releasesName, releasesData, &doc, "package_config.config", "fips.config"); err != nil {
		return nil, err
	}
	k := &Knowledge{Kubernetes: doc.Kubernetes, Packages: map[string]Range{}}
	for _, stream := range slices.Sorted(maps.Keys(doc.Kubernetes)) {
		if v, err := semver.StrictNewVersion(stream + ".0"); err != nil || v.String() != stream+".0" {
			return nil, fmt.Errorf("%s: kubernetes: %q is not a release stream (major.minor)", releasesName, stream)
		}
	}
	constraint := constraintParser()
	rng := func(where, s string) (Range, error) {
		c, err := constraint(s)
		if err != nil || strings.TrimSpace(s) == "" {
			return Range{}, fmt.Errorf("%s: %s: release: invalid semver constraint %q", releasesName, where, s)
		}
		return Range{Release: s, Constraint: c}, nil
	}
	for i, f := range doc.ConfigFile {
		r, err := rng(fmt.Sprintf("config_file[%d]", i), f.Release)
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(f.Path, "/etc/microshift/") {
			return nil, fmt.Errorf("%s: config_file[%d]: path %q is not under /etc/microshift/", releasesName, i, f.Path)
		}
		k.ConfigFiles = append(k.ConfigFiles, ConfigFile{Range: r, Path: f.Path, Why: oneLine(f.Why)})
	}
	for i, d := range doc.Distro {
		r, err := rng(fmt.Sprintf("distro[%d]", i), d.Release)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(d.Name) == "" {
			return nil, fmt.Errorf("%s: distro[%d]: name is required", releasesName, i)
		}
		if d.BootcBase != "" {
			if _, err := imageref.ParseReference(d.BootcBase, name.StrictValidation); err != nil {
				return nil, fmt.Errorf("%s: distro[%d]: bootc_base %q is not an image reference: %v", releasesName, i, d.BootcBase, err)
			}
		}
		k.Distros = append(k.Distros, Distro{Range: r, Name: d.Name, Default: d.Default, ImageType: d.ImageType, BootcBase: d.BootcBase})
	}
	for i, u := range doc.Upgrade {
		r, err := rng(fmt.Sprintf("upgrade[%d]", i), u.Release)
		if err != nil {
			return nil, err
		}
		if u.MaxSkew == nil || *u.MaxSkew < 0 {
			return nil, fmt.Errorf("%s: upgrade[%d]: max_skew must be set, 0 or more", releasesName, i)
		}
		rule := UpgradeRule{Range: r, MaxSkew: *u.MaxSkew, LastMinor: map[uint64]uint64{}}
		for major, last := range u.LastMinor {
			m, err := strconv.ParseUint(major, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: upgrade[%d]: last_minor: %q is not a major version", releasesName, i, major)
			}
			rule.LastMinor[m] = last
		}
		k.Upgrades = append(k.Upgrades, rule)
	}
	for _, name := range slices.Sorted(maps.Keys(doc.Packages)) {
		r, err := rng("packages."+name, doc.Packages[name])
		if err != nil {
			return nil, err
		}
		k.Packages[name] = r
	}
	for i, pc := range doc.PackageConfig {
		r, err := rng(fmt.Sprintf("package_config[%d]", i), pc.Release)
		if err != nil {
			return nil, err
		}
		if _, ok := k.Packages[pc.Package]; !ok {
			return nil, fmt.Errorf("%s: package_config[%d]: package %q is not in [packages]", releasesName, i, pc.Package)
		}
		settings := map[string]any{}
		flatten("", pc.Config, settings)
		k.PackageConfigs = append(k.PackageConfigs, PackageConfig{Range: r, Package: pc.Package, File: pc.File, Settings: settings})
	}
	for i, pf := range doc.PackageFile {
		r, err := rng(fmt.Sprintf("package_file[%d]", i), pf.Release)
		if err != nil {
			return nil, err
		}
		if _, ok := k.Packages[pf.Package]; !ok {
			return nil, fmt.Errorf("%s: package_file[%d]: package %q is not in [packages]", releasesName, i, pf.Package)
		}
		if !strings.HasPrefix(pf.Path, "/etc/") || path.Clean(pf.Path) != pf.Path {
			return nil, fmt.Errorf("%s: package_file[%d]: path %q is not a clean path under /etc/", releasesName, i, pf.Path)
		}
		k.PackageFiles = append(k.PackageFiles, PackageFile{Range: r, Package: pf.Package, Path: pf.Path})
	}
	for i, pr := range doc.PackageReads {
		r, err := rng(fmt.Sprintf("package_reads[%d]", i), pr.Release)
		if err != nil {
			return nil, err
		}
		if _, ok := k.Packages[pr.Package]; !ok {
			return nil, fmt.Errorf("%s: package_reads[%d]: package %q is not in [packages]", releasesName, i, pr.Package)
		}
		if _, err := path.Match(pr.Glob, ""); err != nil || !strings.HasPrefix(pr.Glob, "/etc/") || strings.TrimSpace(pr.Key) == "" {
			return nil, fmt.Errorf("%s: package_reads[%d]: glob %q is not a pattern under /etc/, or key is missing", releasesName, i, pr.Glob)
		}
		k.PackageReads = append(k.PackageReads, PackageRead{Range: r, Package: pr.Package, Glob: pr.Glob, Key: pr.Key, File: pr.File})
	}
	for i, w := range doc.MissingCapability {
		r, err := rng(fmt.Sprintf("missing_capability[%d]", i), w.Release)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(w.Capability) == "" || strings.TrimSpace(w.Warning) == "" {
			return nil, fmt.Errorf("%s: missing_capability[%d]: capability and warning are required", releasesName, i)
		}
		k.MissingCapability = append(k.MissingCapability, CapabilityWarning{Range: r, Capability: w.Capability, Warning: oneLine(w.Warning), RedBoot: w.RedBoot})
	}
	if err := k.parseDevice(releasesName, doc.deviceTOML, rng); err != nil {
		return nil, err
	}
	if err := k.parseNamespaces(releasesName, doc.namespacesTOML, rng); err != nil {
		return nil, err
	}
	if err := k.parseHardening(releasesName, doc.hardeningTOML, rng); err != nil {
		return nil, err
	}
	schema := <-schemaDone
	if schema.err != nil {
		return nil, schema.err
	}
	k.Config = schema.s
	if checkReleases {
		if err := k.checkEveryRelease(releasesName); err != nil {
			return nil, err
		}
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00", len(releasesData))
	h.Write(releasesData)
	h.Write(configData)
	k.Digest = hex.EncodeToString(h.Sum(nil))
	return k, nil
}

// checkEveryRelease checks what For relies on for every release the
// knowledge covers (each minor of 4.x to 6.x that a config_file range
// matches): exactly one default distro, no distro twice, an upgrade rule.
func (k *Knowledge) checkEveryRelease(file string) error {
	for _, v := range probeVersions() {
		covered := false
		for _, f := range k.ConfigFiles {
			covered = covered || f.Matches(v)
		}
		if !covered {
			continue
		}
		defaults, seen := 0, map[string]bool{}
		for _, d := range k.Distros {
			if !d.Matches(v) {
				continue
			}
			if seen[d.Name] {
				return fmt.Errorf("%s: release %d.%d has distro %s twice", file, v.Major(), v.Minor(), d.Name)
			}
			seen[d.Name] = true
			if d.Default {
				defaults++
			}
		}
		if defaults != 1 {
			return fmt.Errorf("%s: release %d.%d has %d default distros, want exactly one", file, v.Major(), v.Minor(), defaults)
		}
		if !slices.ContainsFunc(k.Upgrades, func(u UpgradeRule) bool { return u.Matches(v) }) {
			return fmt.Errorf("%s: release %d.%d has no upgrade rule", file, v.Major(), v.Minor())
		}
	}
	return nil
}

// flatten turns nested tables into dotted paths.
func flatten(prefix string, m map[string]any, out map[string]any) {
	for key, v := range m {
		p := strings.TrimPrefix(prefix+"."+key, ".")
		if sub, ok := v.(map[string]any); ok {
			flatten(p, sub, out)
			continue
		}
		out[p] = v
	}
}

// oneLine folds a multi-line TOML string into one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// decodeStrict decodes TOML the way every input of the tool is decoded
// (internal/stricttoml): unknown keys, outside the free-form prefixes,
// are refused with the file, the line and the closest known key.
func decodeStrict(name string, data []byte, v any, freeForm ...string) error {
	_, err := stricttoml.Decode(name, data, v, freeForm...)
	return err
}

// RefreshCommand is the one command that regenerates this data from
// upstream MicroShift's release branches (in a microshift-compose source
// tree; rebuild afterwards, the binary embeds the data).
const RefreshCommand = "make knowledge"

// Assumed says, for a release newer than the knowledge (Newer), what was
// taken from the newest known release, from the facts themselves: where
// the config goes and how many keys it may set, the RPMs, the distros, the
// upgrade rule, and what stays unknown. "" for a known release.
func (r *Release) Assumed() string {
	if !r.Newer {
		return ""
	}
	var parts []string
	if r.Config != nil {
		parts = append(parts, fmt.Sprintf("config in %s with %s's %d keys", r.ConfigFile, r.Rules, len(r.Config.Paths())))
	}
	parts = append(parts, fmt.Sprintf("%s's %d RPMs", r.Rules, len(r.packages)))
	if len(r.Distros) > 0 {
		var names []string
		for _, d := range r.Distros {
			names = append(names, d.Name)
		}
		parts = append(parts, "distros "+strings.Join(names, ", "))
	}
	if r.Upgrade != nil {
		parts = append(parts, fmt.Sprintf("upgrades from up to %d minors back", r.Upgrade.MaxSkew))
	}
	if r.Kubernetes == "" {
		parts = append(parts, "its Kubernetes version unknown")
	}
	return strings.Join(parts, ", ")
}

// NewerWarning is the warning of a plan built for a release newer than the
// knowledge: what was assumed and the command that refreshes the data.
func (r *Release) NewerWarning() string {
	if !r.Newer {
		return ""
	}
	return fmt.Sprintf("release %s is newer than the releases microshift-compose knows (the newest is %s): built assuming %s's rules: %s; refresh the knowledge from upstream's release-%s branch with '%s' in a microshift-compose source tree and rebuild, or use a microshift-compose that knows %s (--strict-release refuses it)",
		r.Stream(), r.Rules, r.Rules, r.Assumed(), r.Stream(), RefreshCommand, r.Stream())
}
