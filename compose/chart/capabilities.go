package chart

import (
	_ "embed"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// apiVersionsText lists the API versions `helm template` offers a chart
// in .Capabilities.APIVersions when no cluster is asked (Helm's default
// set: the group versions client-go's scheme knows, and
// apiextensions.k8s.io's), in Helm's order, one a line. It is data here so
// that the build does not link client-go's scheme to compute it;
// TestCapabilitiesMatchHelm checks it against the Helm module.
//
//go:embed apiversions.txt
var apiVersionsText string

// helmVersion is .Capabilities.HelmVersion.Version: what Helm's library
// says of itself (its internal/version), not the helm CLI's release.
const helmVersion = "v3.19"

// capabilities is .Capabilities: the Kubernetes the chart renders for,
// the API versions it may use, and the Helm that renders it. The fields
// and their YAML/JSON names are Helm's, for templates that read or print
// them.
type capabilities struct {
	KubeVersion kubeVersion
	APIVersions versionSet
	HelmVersion helmBuildInfo
}

// kubeVersion is .Capabilities.KubeVersion.
type kubeVersion struct {
	Version string // v1.31.0
	Major   string
	Minor   string
}

// String is the version, as a template prints it.
func (kv *kubeVersion) String() string { return kv.Version }

// GitVersion is the version (Helm keeps the name for old charts).
func (kv *kubeVersion) GitVersion() string { return kv.Version }

// versionSet is .Capabilities.APIVersions.
type versionSet []string

// Has says whether the set holds an API version ("apps/v1").
func (v versionSet) Has(apiVersion string) bool {
	for _, x := range v {
		if x == apiVersion {
			return true
		}
	}
	return false
}

// helmBuildInfo is .Capabilities.HelmVersion.
type helmBuildInfo struct {
	Version      string `json:"version,omitempty"`
	GitCommit    string `json:"git_commit,omitempty"`
	GitTreeState string `json:"git_tree_state,omitempty"`
	GoVersion    string `json:"go_version,omitempty"`
}

var apiVersions = sync.OnceValue(func() versionSet {
	return versionSet(strings.Fields(apiVersionsText))
})

// newCapabilities are the capabilities of Kubernetes major.minor.
func newCapabilities(kube string) *capabilities {
	major, minor, _ := strings.Cut(kube, ".")
	return &capabilities{
		KubeVersion: kubeVersion{Version: "v" + kube + ".0", Major: major, Minor: minor},
		APIVersions: slices.Clone(apiVersions()),
		HelmVersion: helmBuildInfo{Version: helmVersion, GoVersion: runtime.Version()},
	}
}
