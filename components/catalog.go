package components

import (
	"io/fs"
	"maps"
	"slices"
	"sort"

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
	Provides   []string
	Requires   []string
	Conflicts  []string
	Packages   []string
	Images     Images
	Config     Config
	Services   Services
	Firewall   Firewall
	Files      []File
	// Manifests maps the image names a component's manifests (or plugin
	// output) use to its release-file keys: [manifests.images].
	Manifests Manifests
	// HasManifests is true when the component directory holds a
	// manifests/ kustomization; HasPlugin when it holds an executable
	// plugin. A plugin's output replaces manifests/ (it may reference it).
	HasManifests bool
	HasPlugin    bool
	// ReleaseFiles are release files the component brings itself
	// (release/release-<images.file>-<arch>.json), used when the selected
	// release lacks them.
	ReleaseFiles []*releases.File

	// Source is the component.toml path as shown in messages.
	Source string
	// FS is the component's directory (manifests, plugin, file sources).
	FS fs.FS
	// Dir is the directory on disk, "" for the embedded catalog.
	Dir string
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
func (c *Component) Renders() bool { return c.HasManifests || c.HasPlugin }

// Images names the component's images: keys of one release file.
type Images struct {
	// File is the <component> part of release-<component>-<arch>.json; ""
	// means the core release-<arch>.json.
	File string
	Keys []string
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

// SupportsRelease reports whether the component works with release r.
func (c *Component) SupportsRelease(r *releases.Release) bool {
	return c.Constraint == nil || c.Constraint.Check(r.Version)
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
}

// ComponentNames returns component names sorted by apply order (order, then name).
func (c *Catalog) ComponentNames() []string {
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
