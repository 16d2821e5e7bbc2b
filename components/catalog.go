package components

import (
	"io/fs"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/releases"
)

// Component is one pluggable unit of MicroShift. The TOML schema is
// documented in docs/catalog.md.
type Component struct {
	Name        string
	Description string
	// Order is the NNN- prefix of the component's manifests.d directory and
	// its place in apply order.
	Order int
	// Arches the component ships for; empty means every arch.
	Arches []releases.Arch
	// Release is the semver constraint on the MicroShift release, as written;
	// nil Constraint means any release.
	Release    string
	Constraint *semver.Constraints
	// Builds are the builds of MicroShift the component is for (release
	// knowledge's builds: "redhat", "microshift-io"); empty means every
	// build.
	Builds []string
	// DefaultFor are the capabilities it provides that it is the default
	// provider of on its builds: profiles take it in place of the
	// catalog-wide default's providers there.
	DefaultFor []string
	Provides   []string
	Requires   []string
	Conflicts  []string
	Packages   []string
	// Repositories are where packages come from that neither the OS nor
	// MicroShift's own repositories hold ([[repositories]]).
	Repositories []Repository
	Images       Images
	Config       Config
	Services     Services
	Firewall     Firewall
	Files        []File
	// Manifests maps the image names a component's manifests (or plugin
	// output) use to its release-file keys: [manifests.images].
	Manifests Manifests
	// HasManifests is true when the component directory holds a
	// manifests/ kustomization; HasPlugin when it holds an executable
	// plugin. A plugin's output replaces manifests/ (it may reference it).
	HasManifests bool
	HasPlugin    bool
	// Chart is the component's Helm chart ([chart]), rendered offline at
	// build time instead of manifests/; nil without one.
	Chart *Chart
	// ReleaseFiles are release files the component brings itself
	// (release/release-<images.file>-<arch>.json), used when the selected
	// release lacks them.
	ReleaseFiles []*releases.File
	// Variants are what changes with the MicroShift release: each applies
	// to the releases its constraint matches, over the fields above
	// ([[variant]] in component.toml). A component with variants is
	// available only for releases one of them matches.
	Variants []Variant
	// AlwaysDeployed, when set, says why MicroShift deploys the component
	// whatever the plan says on the release the catalog was narrowed to
	// (ForRelease): a selection that leaves it out cannot be honoured.
	AlwaysDeployed string

	// Source is the component.toml path as shown in messages.
	Source string
	// FS is the component's directory (manifests, plugin, file sources).
	FS fs.FS
	// Dir is the directory on disk, "" for the embedded catalog.
	Dir string
}

// Variant is one release range of a component: the fields it sets replace
// the component's own for releases matching Constraint.
type Variant struct {
	// Release is the constraint as written; Constraint is it parsed.
	Release    string
	Constraint *semver.Constraints
	// Packages, Repositories, Images and Config replace the component's
	// when non-nil.
	Packages     []string
	Repositories []Repository
	Images       *Images
	Config       *Config
	// AlwaysDeployed: see Component.AlwaysDeployed.
	AlwaysDeployed string
	// Index is the variant's position in component.toml, for messages.
	Index int
}

// Manifests says how a component's Kubernetes manifests name its images.
type Manifests struct {
	// Images maps an image name as written in the manifests (repository
	// without tag or digest, as in a kustomization's images[].name) to a
	// key of the component's images.keys. Rendering overrides every such
	// image with the plan's digest-pinned reference for the target arch.
	Images map[string]string
}

// Renders reports whether the component produces manifests for
// /etc/microshift/manifests.d (static ones or a plugin's).
func (c *Component) Renders() bool { return c.HasManifests || c.HasPlugin || c.Chart != nil }

// Images names the component's images: keys of one release file.
type Images struct {
	// File is the <component> part of release-<component>-<arch>.json; ""
	// means the core release-<arch>.json.
	File string
	Keys []string
	// From says where the file comes from when MicroShift's release does
	// not ship it (another product's release-info RPM), for the error of a
	// release without it.
	From string
	// Also are the component's images in other release files
	// ([[images.also]]: kindnet's kube-proxy), each a file and its keys.
	Also []Images
}

// ImageSets are the component's images file by file, Images then Also,
// but a set without keys.
func (c *Component) ImageSets() []Images {
	return slices.DeleteFunc(c.Images.files(), func(im Images) bool { return len(im.Keys) == 0 })
}

// files are im and its Also.
func (im Images) files() []Images { return append([]Images{im}, im.Also...) }

// Repository is an RPM repository a component's packages come from
// besides the OS's and MicroShift's own (rhocp, fast-datapath): the build
// needs it among osbuild's sources, or enabled on a bootc build host.
type Repository struct {
	// ID is the repository ID as dnf and composer-cli know it; $basearch
	// stands for the plan's arch.
	ID   string
	Name string
	// BaseURL is the directory holding repodata/; $basearch as in ID.
	BaseURL string
	// Packages are the component's packages it provides: they are not
	// MicroShift's, so they are neither checked against MicroShift's RPM
	// list nor pinned to its version.
	Packages []string
}

// Config is MicroShift configuration the component needs: Selected is merged
// into the config drop-in when the component is in the plan, Omitted when it
// is not (e.g. network.cniPlugin: none when OVN-K is left out).
type Config struct {
	Selected map[string]any
	Omitted  map[string]any
}

// Services are systemd units to enable or disable on the device.
type Services struct {
	Enabled  []string
	Disabled []string
}

// Firewall is what the component needs open. Ports are "port:proto" or
// "from-to:proto"; the port "node-ports" stands for the configured service
// node port range. TrustedSources go to the trusted zone; the source
// "cluster-network" stands for the configured cluster network CIDRs.
type Firewall struct {
	Ports          []string
	Services       []string
	TrustedSources []string
}

// File is an extra file the component puts on the device.
type File struct {
	Path string
	// Mode is an octal string such as "0644".
	Mode string
	// Exactly one of Content and Source is set; Source is relative to the
	// component directory.
	Content string
	Source  string
	// Template renders the content with Go text/template over the plan's
	// config parameters (see docs/catalog.md), e.g. {{ index .ClusterNetwork 0 }}.
	Template bool
}

// RepositoryOf returns the repository that provides pkg, or nil for a
// package of the OS or of MicroShift.
func (c *Component) RepositoryOf(pkg string) *Repository {
	for i := range c.Repositories {
		if slices.Contains(c.Repositories[i].Packages, pkg) {
			return &c.Repositories[i]
		}
	}
	return nil
}

// SupportsArch reports whether the component ships for arch.
func (c *Component) SupportsArch(a releases.Arch) bool {
	if len(c.Arches) == 0 {
		return true
	}
	for _, x := range c.Arches {
		if x == a {
			return true
		}
	}
	return false
}

// SupportsRelease reports whether the component works with release r: it
// is for r's build, its release constraint matches and, when it has
// variants, one of them does.
func (c *Component) SupportsRelease(r *releases.Release) bool {
	return c.ForBuild(r.Build) && c.supportsVersion(r.Version)
}

// ForBuild reports whether the component is for the build of MicroShift
// named build ("" is any).
func (c *Component) ForBuild(build string) bool {
	return len(c.Builds) == 0 || build == "" || slices.Contains(c.Builds, build)
}

func (c *Component) supportsVersion(v *semver.Version) bool {
	if c.Constraint != nil && !c.Constraint.Check(v) {
		return false
	}
	return len(c.Variants) == 0 || len(c.variantsFor(v)) > 0
}

// variantsFor returns the variants whose constraint matches v; catalog
// validation ensures at most one does.
func (c *Component) variantsFor(v *semver.Version) []*Variant {
	var out []*Variant
	for i := range c.Variants {
		if c.Variants[i].Constraint.Check(v) {
			out = append(out, &c.Variants[i])
		}
	}
	return out
}

// ReleaseRange describes the releases the component is available for, for
// messages: its release constraint, else its variants' ("4.14 - 4.16 ||
// >=4.17"), else "any".
func (c *Component) ReleaseRange() string {
	if c.Release != "" {
		return c.Release
	}
	var parts []string
	for _, v := range c.Variants {
		parts = append(parts, v.Release)
	}
	if len(parts) > 0 {
		return strings.Join(parts, " || ")
	}
	return "any"
}

// withVariant returns a copy of the component with v's fields applied.
func (c *Component) withVariant(v *Variant) *Component {
	cp := *c
	if v == nil {
		return &cp
	}
	if v.Packages != nil {
		cp.Packages = v.Packages
	}
	if v.Repositories != nil {
		cp.Repositories = v.Repositories
	}
	if v.Images != nil {
		cp.Images = *v.Images
	}
	if v.Config != nil {
		cp.Config = *v.Config
	}
	cp.AlwaysDeployed = v.AlwaysDeployed
	return &cp
}

// ForRelease returns the catalog as it is for MicroShift release version v:
// every component with the variant matching v applied over its own fields.
// Components v does not support are kept unchanged (selecting them is an
// error that names the release range they need). Capabilities and profiles
// are shared with c.
func (c *Catalog) ForRelease(v *semver.Version) *Catalog {
	out := &Catalog{Components: make(map[string]*Component, len(c.Components)), Capabilities: c.Capabilities, Profiles: c.Profiles, Digest: c.Digest, digests: c.digests, names: c.names}
	for n, comp := range c.Components {
		var applied *Variant
		if comp.supportsVersion(v) {
			if vs := comp.variantsFor(v); len(vs) > 0 {
				applied = vs[0]
			}
		}
		out.Components[n] = comp.withVariant(applied)
	}
	if out.names == nil {
		// A catalog built by hand: sort once here rather than on every
		// ComponentNames call of the resolver.
		out.names = out.sortNames()
	}
	return out
}

// Capability is an interchangeable role (cni, csi); at most one selected
// component may provide it.
type Capability struct {
	Name        string
	Description string
	// Default is the provider pulled in when a selected component requires
	// the capability and nothing selected provides it.
	Default string
	// Source is the catalog.toml that declares it, as shown in messages.
	Source string
}

// Profile is a named selection of components.
type Profile struct {
	Name        string
	Description string
	Components  []string
	Source      string
}

// Catalog is components, capabilities and profiles, validated together.
type Catalog struct {
	Components   map[string]*Component
	Capabilities map[string]*Capability
	Profiles     map[string]*Profile
	// Digest is the sha256 (hex) of the catalog's content: every file of
	// the embedded catalog and of the --catalog overlay, by path inside
	// the catalog and bytes, not by where the directory is, but for the
	// components of builds of MicroShift other than the default. It is
	// part of a plan's composition ID (DigestFor: the plan's build's); ""
	// for a catalog built by hand.
	Digest string
	// digests are the digests by build.
	digests map[string]string

	// names is ComponentNames, computed when the catalog is loaded (a
	// catalog is not changed after that); nil for a catalog built by hand.
	names []string
}

// DigestFor is the catalog's digest for a plan of the build of MicroShift
// named build: its content but the components of other builds.
func (c *Catalog) DigestFor(build string) string {
	if d, ok := c.digests[build]; ok {
		return d
	}
	return c.Digest
}

// ComponentNames returns component names sorted by apply order (order,
// then name). The slice is shared: callers must not change it.
func (c *Catalog) ComponentNames() []string {
	if c.names != nil && len(c.names) == len(c.Components) {
		return c.names
	}
	return c.sortNames()
}

func (c *Catalog) sortNames() []string {
	names := make([]string, 0, len(c.Components))
	for n := range c.Components {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := c.Components[names[i]], c.Components[names[j]]
		if a.Order != b.Order {
			return a.Order < b.Order
		}
		return a.Name < b.Name
	})
	return names
}

// ProfileNames returns profile names sorted.
func (c *Catalog) ProfileNames() []string { return slices.Sorted(maps.Keys(c.Profiles)) }

// CapabilityNames returns capability names sorted.
func (c *Catalog) CapabilityNames() []string { return slices.Sorted(maps.Keys(c.Capabilities)) }

// Providers returns the components that provide capability, sorted.
func (c *Catalog) Providers(capability string) []string {
	var out []string
	for _, n := range slices.Sorted(maps.Keys(c.Components)) {
		for _, p := range c.Components[n].Provides {
			if p == capability {
				out = append(out, n)
			}
		}
	}
	return out
}

// WithReleaseFiles returns rel with the release files components bring
// themselves added where rel lacks them, and which component each added
// file comes from (file name -> component). Files rel ships win.
func (c *Catalog) WithReleaseFiles(rel *releases.Release) (*releases.Release, map[string]string) {
	var extra []*releases.File
	from := map[string]string{}
	for _, n := range c.ComponentNames() {
		if !c.Components[n].SupportsRelease(rel) {
			continue // its files would be images no plan for rel embeds
		}
		for _, f := range c.Components[n].ReleaseFiles {
			extra = append(extra, f)
			from[f.Name] = n
		}
	}
	if len(extra) == 0 {
		return rel, map[string]string{}
	}
	out, added := rel.WithFiles(extra)
	used := make(map[string]string, len(added))
	for _, name := range added {
		used[name] = from[name]
	}
	return out, used
}
