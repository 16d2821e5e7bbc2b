// Package operators chooses operators out of a file-based operator catalog
// (FBC) for a device: it reads the catalog image (an OCI layout or archive
// on disk, or a registry), streams the catalog's olm.package, olm.channel
// and olm.bundle objects (JSON or YAML, one file or many under the
// directory the image's operators.operatorframework.io.index.configs.v1
// label names) within bounds, resolves the packages asked for to a bundle
// each (a channel's head, or the newest bundle in a version range), closes
// the set over olm.package.required and olm.gvk.required, and builds the
// filtered catalog image: the original's layers without those that only
// held the catalog, plus one layer with the chosen packages, channels and
// bundles alone.
//
// The reader is our own, checked in the tests against opm (render and
// validate), the program OLM serves catalogs with: operator-registry's
// declcfg would link client-go and go-git into the binary and pin
// operator-registry below the releases that need go-connections v0.6.
//
// It knows nothing of plans, components or manifests: compose puts what it
// resolves into the plan, render/operators renders the device's
// CatalogSource, OperatorGroups and Subscriptions.
package operators
