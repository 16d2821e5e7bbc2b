package plan

import "io"

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
