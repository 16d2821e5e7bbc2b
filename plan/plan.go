// Package plan holds the Plan: the resolved composition every output is
// generated from. It is plain data with a stable JSON form (compose.lock.json);
// it does not resolve, render or write anything.
package plan

import (
	"fmt"
	"io"
	"strings"
)

// Schema is the version of the compose.lock.json layout.
const Schema = 1

// Plan is a resolved selection for one release and arch.
type Plan struct {
	Schema int `json:"schema"`
	// ID is the composition ID: the sha256 (hex) of Inputs. Equal IDs are
	// the same composition, whatever machine, directory or flag order
	// produced them.
	ID string `json:"id"`
	// Inputs are what ID hashes; nil for a plan read from a lock.
	Inputs  *Inputs `json:"-"`
	Release Release `json:"release"`
	Arch    string  `json:"arch"`
	// Target is the operating system the plan is built for.
	Target  Target   `json:"target"`
	Profile string   `json:"profile"`
	With    []string `json:"with"`
	Without []string `json:"without"`
	// Capabilities maps each provided capability to its provider.
	Capabilities map[string]string `json:"capabilities"`
	// Components are the selected components in apply order.
	Components []Component `json:"components"`
	Packages   []Package   `json:"packages"`
	// Repositories are the RPM repositories packages come from besides
	// the OS's and MicroShift's own (a component's [[repositories]]):
	// osbuild needs them among its sources, a bootc build host enabled.
	Repositories []Repository `json:"repositories,omitempty"`
	Images       []Image      `json:"images"`
	// Config is the MicroShift config the plan writes, as a tree: what
	// differs from MicroShift's defaults and from what the plan's RPMs set
	// themselves.
	Config map[string]any `json:"config"`
	// ConfigFile is where Config goes on the device (config.yaml or a
	// config.d drop-in, by release); "" when the plan writes no config.
	ConfigFile string `json:"config_file,omitempty"`
	// ConfigSources says where each config value comes from.
	ConfigSources []ConfigSetting `json:"config_sources"`
	Services      Services        `json:"services"`
	Firewall      Firewall        `json:"firewall"`
	// Files are the files placed on the device, sorted by path.
	Files []File `json:"files"`
	// Manifests are the manifests.d directories rendered for components
	// with manifests or a plugin, in apply order.
	Manifests []Manifest `json:"manifests"`
	// Charts are the Helm charts rendered into Manifests, kept in the
	// output (charts/) so a rebuild or the device has them offline.
	Charts []Chart `json:"charts,omitempty"`
	// Operators is the operator set chosen from a file-based catalog
	// (build --operator); nil for none.
	Operators *Operators `json:"operators,omitempty"`
	// Hardening is the device's FIPS mode, kernel arguments and CIS
	// profile (build --fips, --karg, --cis); nil for none.
	Hardening *Hardening `json:"hardening,omitempty"`
	Notes     []string   `json:"notes"`
	Warnings  []string   `json:"warnings"`
	// Footprint is what the images cost, read from their registries; only
	// with build --resolve-sizes (absent otherwise, and from older locks).
	Footprint *Footprint `json:"footprint,omitempty"`
	// CompositionFile is the composition file the request was read from
	// (-f FILE); absent when flags alone gave it. No part of the ID: the
	// file and the same flags are one composition.
	CompositionFile *CompositionFile `json:"composition_file,omitempty"`
}

// CompositionFile names a composition file by its path as given and the
// sha256 of its content.
type CompositionFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Release identifies the release the plan was resolved against.
type Release struct {
	Version string `json:"version"`
	Stream  string `json:"stream"`
	// Base is the core release file's release.base for the plan's arch.
	Base string `json:"base"`
	// Kubernetes is the release's Kubernetes major.minor, "" when unknown.
	Kubernetes string `json:"kubernetes,omitempty"`
	// Distro is the release's default distro (Target.Distro is the one the
	// plan is built for).
	Distro string `json:"distro"`
	Source string `json:"source"`
	Origin string `json:"origin,omitempty"`
	// RPMs are the release-info RPMs the release files came from (release
	// fetch, release import FILE.rpm), the core package first.
	RPMs []ReleaseRPM `json:"rpms,omitempty"`
	// Kind says what Base names: "shipped" (X.Y.Z), "nightly",
	// "candidate", "pre-release" (releases.BaseKind).
	Kind string `json:"kind"`
	// Pin is how MicroShift's RPMs are pinned: PinExact to Base, or
	// PinStream to the release's major.minor when Base is no published
	// RPM version.
	Pin string `json:"pin"`
	// Rules is the release whose knowledge (config keys, RPMs, distros,
	// upgrade rules) the plan was resolved with: Stream, or, for a release
	// newer than the tool knows, the newest release it knows. Empty in
	// locks older than the field.
	Rules string `json:"rules,omitempty"`
	// UpgradeFrom is set when the plan was checked to take over the data
	// of an earlier release (build --upgrade-from).
	UpgradeFrom *Upgrade `json:"upgrade_from,omitempty"`
	// Build is the build of MicroShift the release is, when it is not
	// the default (Red Hat's): absent for Red Hat's releases.
	Build *Build `json:"build,omitempty"`
}

// Build is a release's build of MicroShift other than Red Hat's (release
// knowledge's builds: microshift-io's): what its plans need that Red
// Hat's do not say.
type Build struct {
	// Name is the build's ("microshift-io"); Title names it in text.
	Name  string `json:"name"`
	Title string `json:"title"`
	// Version is the version-release of its MicroShift RPMs when its
	// release-info RPMs were recorded ("4.21.0_..._okd_scos.6-1.el9"):
	// the exact version every MicroShift RPM is pinned to.
	Version string `json:"version,omitempty"`
	// OKD is the OKD release its images come from ("4.21.0-okd-scos.6").
	OKD string `json:"okd,omitempty"`
	// PullSecret says whether its images need a pull secret.
	PullSecret bool `json:"pull_secret"`
	// RPMSource says where its MicroShift RPMs are: no bootc base enables
	// their repository (build --repo-file names it).
	RPMSource string `json:"rpm_source,omitempty"`
}

// ReleaseRPM is a release-info RPM a plan's release files came from.
type ReleaseRPM struct {
	// NEVRA is name-[epoch:]version-release.arch.
	NEVRA string `json:"nevra"`
	// SHA256 is the hex sha256 of the .rpm file.
	SHA256 string `json:"sha256"`
}

// How MicroShift's RPMs are pinned.
const (
	// PinExact pins every MicroShift RPM to the release's version: the
	// RPMs whose release-info lists exactly the embedded images.
	PinExact = "exact"
	// PinStream pins them to the release's major.minor ("4.18.*").
	PinStream = "stream"
)

// Upgrade is the verdict on the plan's release starting on the data of an
// earlier one, by the plan's release's own rule.
type Upgrade struct {
	From string `json:"from"`
	// Distance is how many minors newer the plan's release is.
	Distance int `json:"distance"`
	MaxSkew  int `json:"max_skew"`
}

// Target is the operating system a plan is built for: a distro its release
// is built and tested for.
type Target struct {
	// Distro is the osbuild distro: the release's default, or --distro.
	Distro string `json:"distro"`
	// ImageType is the osbuild image type the blueprint is validated for
	// by default; "" when the distro has no rpm-ostree image types, so
	// that MicroShift on it is image mode (bootc) only.
	ImageType string `json:"image_type,omitempty"`
	// BootcBase is the bootc Containerfile's base image: the distro's, or
	// --bootc-base; "" when the distro has none.
	BootcBase string `json:"bootc_base,omitempty"`
	// OSBuild is osbuild's name for Distro when it is not Distro
	// ("centos-9" for centos-stream-9).
	OSBuild string `json:"osbuild_distro,omitempty"`
}

// BootcOnly reports whether the target has no rpm-ostree image types.
func (t Target) BootcOnly() bool { return t.ImageType == "" }

// OSBuildDistro is osbuild's name for the target's distro, which its
// distro and image type lookups take.
func (t Target) OSBuildDistro() string {
	if t.OSBuild != "" {
		return t.OSBuild
	}
	return t.Distro
}

// Component is a selected component and why it is there.
type Component struct {
	Name        string   `json:"name"`
	Order       int      `json:"order"`
	Description string   `json:"description"`
	Provides    []string `json:"provides"`
	Reasons     []Reason `json:"reasons"`
}

// Reason kinds.
const (
	ReasonProfile    = "profile"
	ReasonWith       = "with"
	ReasonRequired   = "required"
	ReasonCapability = "capability"
	// ReasonOperators is the operators asked for (build --operator),
	// which OLM installs.
	ReasonOperators = "operators"
)

// Reason says why a component is in the plan.
type Reason struct {
	Kind string `json:"kind"`
	// Profile for ReasonProfile.
	Profile string `json:"profile,omitempty"`
	// By is the component that required it (ReasonRequired, ReasonCapability).
	By string `json:"by,omitempty"`
	// Capability is the capability it was pulled in to provide.
	Capability string `json:"capability,omitempty"`
}

func (r Reason) String() string {
	switch r.Kind {
	case ReasonProfile:
		return "profile " + r.Profile
	case ReasonWith:
		return "--with"
	case ReasonRequired:
		return "required by " + r.By
	case ReasonCapability:
		return fmt.Sprintf("default %s provider, required by %s", r.Capability, r.By)
	case ReasonOperators:
		return "--operator"
	}
	return r.Kind
}

// Package is an RPM to install.
type Package struct {
	Name string `json:"name"`
	// Version is an exact version ("4.18.7"), a glob ("4.18.*"), or ""
	// for any.
	Version    string   `json:"version"`
	Components []string `json:"components"`
}

// Repository is an RPM repository a plan's packages come from.
type Repository struct {
	// ID is the repository ID, $basearch expanded for the plan's arch.
	ID      string `json:"id"`
	Name    string `json:"name,omitempty"`
	BaseURL string `json:"baseurl"`
	// Packages are the plan's packages it provides.
	Packages   []string `json:"packages"`
	Components []string `json:"components"`
	// Enable says the bootc Containerfile enables it itself: a
	// repository of the release's build (its dependencies, --repo-file's)
	// that no bootc base has; the build host enables the others.
	Enable bool `json:"enable,omitempty"`
	// GPGCheck and GPGKey are dnf's gpgcheck (nil: dnf's default) and
	// gpgkey for an enabled repository.
	GPGCheck *bool    `json:"gpgcheck,omitempty"`
	GPGKey   []string `json:"gpgkey,omitempty"`
	// Source says where it was named: "--repo-file FILE", the build's
	// knowledge; "" for a component's [[repositories]].
	Source string `json:"source,omitempty"`
}

// Image is one container image the device needs.
type Image struct {
	Ref    string `json:"ref"`
	Pinned bool   `json:"pinned"`
	// Tag is the tag reference the release file names when Ref is the
	// digest release fetch resolved it to: the device's manifests pull
	// it by that tag, so the image is named by it too.
	Tag  string     `json:"tag,omitempty"`
	Uses []ImageUse `json:"uses"`
}

// ImageUse records which component's release-file entry names an image.
type ImageUse struct {
	Component string `json:"component"`
	File      string `json:"file"`
	Key       string `json:"key"`
}

// ConfigSetting is one leaf of the config drop-in and where it comes from.
type ConfigSetting struct {
	Path  string `json:"path"`
	Value any    `json:"value"`
	// Source is "<component>" (selected), "<component> left out", or the
	// user's config file.
	Source string `json:"source"`
}

// Services are systemd units to enable or disable.
type Services struct {
	Enabled  []string `json:"enabled"`
	Disabled []string `json:"disabled"`
}

// Firewall is what the device's firewall must allow.
type Firewall struct {
	Ports    []string `json:"ports"`
	Services []string `json:"services"`
	// TrustedSources go to firewalld's trusted zone.
	TrustedSources []string `json:"trusted_sources"`
}

// File is a file placed on the device.
type File struct {
	Path string `json:"path"`
	// Mode is octal, e.g. "0644".
	Mode string `json:"mode"`
	// Component is the component that ships the file; "" for files the
	// plan itself derives (the config drop-in).
	Component string `json:"component,omitempty"`
	// Source names a user-supplied input the file is ("--lvmd lvmd.yaml").
	Source string `json:"source,omitempty"`
	// Secret marks a credential (the pull secret): the lock records where
	// it goes, never its content or digest, and build writes it only into
	// the blueprint.
	Secret bool   `json:"secret,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Size   int    `json:"size"`
	Data   []byte `json:"-"`
}

// Manifest sources.
const (
	FromManifests = "manifests"
	FromPlugin    = "plugin"
	// FromChart is the component's Helm chart, rendered offline.
	FromChart = "chart"
	// FromLvmd is the StorageClasses and VolumeSnapshotClasses of --lvmd's
	// device classes (storage-lvms).
	FromLvmd = "lvmd"
	// FromOperators is the CatalogSource, OperatorGroups and
	// Subscriptions of the operator set (olm).
	FromOperators = "operators"
)

// Manifest is one rendered manifests.d directory.
type Manifest struct {
	Component string `json:"component"`
	// Dir is the device directory, /etc/microshift/manifests.d/NNN-<name>/.
	Dir string `json:"dir"`
	// From is FromManifests (the component's manifests/ kustomization),
	// FromPlugin (its plugin's output) or FromLvmd (--lvmd's device classes).
	From string `json:"from"`
	// Resources name the rendered objects in apply order: "Kind ns/name".
	Resources []string `json:"resources"`
	// Images are the container images they run, sorted and unique.
	Images []string `json:"images"`
}

// Component returns the selected component named n, or nil.
func (p *Plan) Component(n string) *Component {
	for i := range p.Components {
		if p.Components[i].Name == n {
			return &p.Components[i]
		}
	}
	return nil
}

// ComponentNames lists selected components in apply order.
func (p *Plan) ComponentNames() []string {
	out := make([]string, len(p.Components))
	for i, c := range p.Components {
		out[i] = c.Name
	}
	return out
}

// ImageRefs lists image references, sorted and unique.
func (p *Plan) ImageRefs() []string {
	out := make([]string, len(p.Images))
	for i, im := range p.Images {
		out[i] = im.Ref
	}
	return out
}

// String names the release for messages: "4.18 (embedded)".
func (r Release) String() string {
	return strings.TrimSpace(r.Stream + " (" + r.Source + ")")
}

// Footprint is what a plan's images cost for its arch, in compressed bytes
// as registries store and serve them (config and layer blobs of the arch's
// image manifest; manifests themselves are not counted).
type Footprint struct {
	// Images are the plan's images, in plan order.
	Images []ImageFootprint `json:"images"`
	// Components are the selected components with images, in apply order.
	Components []ComponentFootprint `json:"components"`
	// SharedBetweenComponents is the bytes of blobs that images of more
	// than one component use, counted once: they are in no component's
	// Unique, so the Unique values plus this add up to Total.Unique.
	SharedBetweenComponents int64          `json:"shared_between_components"`
	Total                   FootprintTotal `json:"total"`
}

// ImageFootprint is one image's size.
type ImageFootprint struct {
	Ref string `json:"ref"`
	// Manifest is the digest of the arch's image manifest: Ref's own digest,
	// or the one picked out of the index Ref names.
	Manifest   string `json:"manifest"`
	Blobs      int    `json:"blobs"`
	Compressed int64  `json:"compressed"`
}

// ComponentFootprint is what one component's images cost.
type ComponentFootprint struct {
	Name   string `json:"name"`
	Images int    `json:"images"`
	// Compressed is the bytes of the distinct blobs of its images.
	Compressed int64 `json:"compressed"`
	// Unique is the bytes of the blobs that no other selected component's
	// images use: what leaving the component out saves.
	Unique int64 `json:"unique"`
}

// FootprintTotal sums the plan.
type FootprintTotal struct {
	Images int `json:"images"`
	// Blobs is the number of distinct blobs.
	Blobs int `json:"blobs"`
	// Compressed is the sum of the images' sizes, a blob shared by two
	// images counted twice: what pulling them one by one transfers.
	Compressed int64 `json:"compressed"`
	// Unique is the bytes of the distinct blobs, each counted once: what
	// the device stores and what a mirror writes.
	Unique int64 `json:"unique"`
}

// Chart is a Helm chart a component rendered from.
type Chart struct {
	Component string `json:"component"`
	Name      string `json:"name"`
	Version   string `json:"version"`
	// File is the archive in the build output (charts/NAME-VERSION.tgz).
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	// Data is the archive; not in the lock, which names it by digest.
	Data []byte `json:"-"`
}

// Operators is a plan's operator set: packages chosen from a file-based
// operator catalog (build --operator), each resolved to one bundle, with
// the bundles they require; carried to the device as a catalog image of
// only those bundles and every bundle and related image by digest, and
// installed there by OLM from the CatalogSource, OperatorGroups and
// Subscriptions render/operators writes.
type Operators struct {
	Catalog  OperatorCatalog   `json:"catalog"`
	Filtered FilteredCatalog   `json:"filtered"`
	Packages []OperatorPackage `json:"packages"`
}

// OperatorCatalog is the catalog image the packages were chosen from.
type OperatorCatalog struct {
	// Source is the catalog as --operator-catalog named it (an OCI layout
	// or archive on the build machine, or a registry's image).
	Source string `json:"source"`
	// Ref is the catalog image by digest: as pinned, or the digest its
	// tag named when build read it.
	Ref string `json:"ref"`
	// Manifest is the digest of its image manifest for the plan's arch.
	Manifest string `json:"manifest"`
	// ConfigsDir is the directory of its FBC, as its
	// operators.operatorframework.io.index.configs.v1 label names it.
	ConfigsDir string `json:"configs_dir"`
}

// FilteredCatalog is the catalog image of the chosen bundles alone, built
// by build: the original's layers but those that held only the catalog,
// and one layer of the filtered configs.
type FilteredCatalog struct {
	// Ref is the image by digest, in the original's repository: one of
	// the plan's images, which the device's CatalogSource names.
	Ref string `json:"ref"`
	// Layout is the OCI layout build writes it to, relative to the
	// output directory; mirror reads it from there.
	Layout string `json:"layout"`
	// KeptLayers and DroppedLayers count the original's layers it keeps
	// and leaves out.
	KeptLayers    int `json:"kept_layers"`
	DroppedLayers int `json:"dropped_layers"`
	// Files are the layout's files, for build to write; a plan read from
	// a lock has none (the layout is in the output).
	Files []LayoutFile `json:"-"`
}

// LayoutFile is one file of the filtered catalog's layout: its data, or,
// for a layer kept from the original image, a way to read it.
type LayoutFile struct {
	// Path is relative to the layout.
	Path string
	Data []byte
	// Open streams a kept layer (Data is nil); SHA256 (hex) and Size
	// are the blob's.
	Open   func() (io.ReadCloser, error)
	SHA256 string
	Size   int64
}

// Subscription install plan approvals and OperatorGroup install modes.
const (
	ApprovalAutomatic    = "Automatic"
	ApprovalManual       = "Manual"
	InstallAllNamespaces = "AllNamespaces"
	InstallOwnNamespace  = "OwnNamespace"
)

// OperatorPackage is a selected package and its bundle.
type OperatorPackage struct {
	Name    string `json:"name"`
	Channel string `json:"channel"`
	// Versions is the version range asked for; "" for the channel's
	// head.
	Versions string `json:"versions,omitempty"`
	// Bundle is the bundle (its CSV's name) and Version its version.
	Bundle  string `json:"bundle"`
	Version string `json:"version"`
	// Image is the bundle image; "" for a bundle the catalog holds whole
	// (its manifests as olm.bundle.object).
	Image         string         `json:"image,omitempty"`
	RelatedImages []RelatedImage `json:"related_images"`
	// RequiredBy is the package whose bundle requires this one and
	// Requirement the property that does; both "" for a package asked
	// for.
	RequiredBy  string `json:"required_by,omitempty"`
	Requirement string `json:"requirement,omitempty"`
	// Namespace is where OLM installs it: a package asked for gets a
	// Subscription there; a dependency is installed by OLM in its
	// dependent's namespace.
	Namespace string `json:"namespace"`
	// Approval is the Subscription's installPlanApproval (a package asked
	// for); "" for a dependency.
	Approval string `json:"approval,omitempty"`
	// InstallMode is the install mode of the namespace's OperatorGroup.
	InstallMode string `json:"install_mode"`
	// Deployments are the deployments of the bundle's CSV, which the
	// greenboot check waits for; absent when the catalog carries no
	// install strategy (olm.csv.metadata alone).
	Deployments []string `json:"deployments,omitempty"`
}

// RelatedImage is an image a bundle names.
type RelatedImage struct {
	Name  string `json:"name,omitempty"`
	Image string `json:"image"`
}

// Subscribed reports whether the package was asked for: it gets a
// Subscription.
func (o OperatorPackage) Subscribed() bool { return o.RequiredBy == "" }

// OperatorImagesComponent is the component an operator set's images are
// used by (ImageUse.Component), and OperatorImagesFile their ImageUse.File.
const (
	OperatorImagesComponent = "olm"
	OperatorImagesFile      = "operators"
)

// Hardening is what the plan asks of the device's OS beyond its files:
// every writer (blueprint, Containerfile, kickstart, bootc-image-builder
// config) takes it from here, each in its own form.
type Hardening struct {
	// FIPS turns on FIPS mode: fips=1 on the kernel command line and the
	// FIPS crypto policy; nil for none.
	FIPS *FIPS `json:"fips,omitempty"`
	// KernelArgs are the user's kernel arguments in the order given,
	// checked (internal/kernelargs); fips=1 is not among them.
	KernelArgs []string `json:"kernel_args,omitempty"`
	// CIS is the OpenSCAP remediation of a CIS profile; nil for none.
	CIS *CIS `json:"cis,omitempty"`
}

// FIPS is how the plan's OS turns FIPS mode on, from the release
// knowledge for its release and RHEL major.
type FIPS struct {
	// Arches are the arches the release supports FIPS mode on; the
	// bootc kargs.d file matches them.
	Arches []string `json:"arches"`
	// BootcPackages set the FIPS crypto policy in a bootc image.
	BootcPackages []string `json:"bootc_packages,omitempty"`
	// KickstartPost are what a kickstart installing an ostree commit runs
	// in %post (fips-mode-setup on RHEL 9).
	KickstartPost []string `json:"kickstart_post,omitempty"`
	// ImageModeRefused says why a bootc image of the release cannot be
	// FIPS; "" when it can.
	ImageModeRefused string `json:"image_mode_refused,omitempty"`
}

// CIS is the plan's CIS hardening: osbuild's OpenSCAP remediation with a
// profile and the tailoring MicroShift needs on the plan's RHEL major.
type CIS struct {
	// Profile is the SCAP Security Guide profile ID
	// (xccdf_org.ssgproject.content_profile_cis).
	Profile string `json:"profile"`
	// Unselected are the rules the tailoring leaves out, so that
	// remediation keeps what MicroShift needs (IP forwarding).
	Unselected []string `json:"unselected"`
	// Unavoidable are the rules a scan of the running device fails, and
	// why: MicroShift's CIS guide lists them as unavoidable.
	Unavoidable []CISRules `json:"unavoidable"`
	// AuditRule is the rule the first-boot unit resolves by regenerating
	// the audit rules of setuid and setgid programs.
	AuditRule string `json:"audit_rule,omitempty"`
}

// CISRules are CIS rules and why a device fails them.
type CISRules struct {
	Rules []string `json:"rules"`
	Why   string   `json:"why"`
}

// FIPSOn reports whether the plan turns FIPS mode on.
func (h *Hardening) FIPSOn() bool { return h != nil && h.FIPS != nil }

// KernelCommandLine is what the plan adds to the kernel command line, in
// order: fips=1 with FIPS mode, then the user's arguments.
func (h *Hardening) KernelCommandLine() []string {
	if h == nil {
		return nil
	}
	var out []string
	if h.FIPS != nil {
		out = append(out, "fips=1")
	}
	return append(out, h.KernelArgs...)
}
