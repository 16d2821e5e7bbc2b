// Package k8sname checks the names Kubernetes gives meaning to (kinds,
// apiVersions, namespaces, object names) by the rules the API server
// applies, so that a rendered manifest the device would reject, or a name
// that would change the structure of a file it becomes part of (a file
// name, a kustomization.yaml line), fails the build instead. It knows
// nothing of manifests or plugins.
package k8sname

import (
	"fmt"
	"regexp"
	"strings"
)

var (
	dns1123Label     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dns1035Label     = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	dns1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	kindPattern      = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)
	versionPattern   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	// RBAC objects may be named with any path segment; real ones use
	// letters, digits and ":._@+-" ("system:auth-delegator"), and names
	// become file names, so that is what is accepted.
	rbacName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9:._@+-]*$`)
)

// Kind checks a kind: letters and digits, starting with a letter.
func Kind(s string) error {
	if len(s) > 63 || !kindPattern.MatchString(s) {
		return fmt.Errorf("kind %q is not a Kubernetes kind (letters and digits, starting with a letter)", s)
	}
	return nil
}

// APIVersion checks "version" or "group/version".
func APIVersion(s string) error {
	group, version, grouped := strings.Cut(s, "/")
	if !grouped {
		group, version = "", s
	}
	if (grouped && (len(group) > 253 || !dns1123Subdomain.MatchString(group))) || len(version) > 63 || !versionPattern.MatchString(version) {
		return fmt.Errorf("apiVersion %q is not a Kubernetes apiVersion (group/version or version, such as apps/v1 or v1)", s)
	}
	return nil
}

// Namespace checks a namespace name: an RFC 1123 label.
func Namespace(s string) error {
	if len(s) > 63 || !dns1123Label.MatchString(s) {
		return fmt.Errorf("namespace %q is not a valid namespace name (an RFC 1123 label: lowercase letters, digits and '-', at most 63 characters)", s)
	}
	return nil
}

// rbacKinds are named by path segment rules rather than DNS rules.
var rbacKinds = map[string]bool{"Role": true, "ClusterRole": true, "RoleBinding": true, "ClusterRoleBinding": true}

// Name checks metadata.name for an object of kind and apiVersion: an RFC
// 1123 label for a Namespace, an RFC 1035 label for a Service, a path
// segment for RBAC objects, and an RFC 1123 subdomain for every other kind
// (custom resources included, as the API server validates them).
func Name(apiVersion, kind, s string) error {
	group, _, _ := strings.Cut(apiVersion, "/")
	if !strings.Contains(apiVersion, "/") {
		group = ""
	}
	switch {
	case kind == "Namespace" && group == "":
		if len(s) > 63 || !dns1123Label.MatchString(s) {
			return fmt.Errorf("metadata.name %q is not a valid Namespace name (an RFC 1123 label: lowercase letters, digits and '-', at most 63 characters)", s)
		}
	case kind == "Service" && group == "":
		if len(s) > 63 || !dns1035Label.MatchString(s) {
			return fmt.Errorf("metadata.name %q is not a valid Service name (an RFC 1035 label: lowercase letters, digits and '-', starting with a letter, at most 63 characters)", s)
		}
	case rbacKinds[kind] && group == "rbac.authorization.k8s.io":
		if len(s) > 253 || !rbacName.MatchString(s) {
			return fmt.Errorf("metadata.name %q is not a valid %s name (letters, digits and \":._@+-\", at most 253 characters)", s, kind)
		}
	default:
		if len(s) > 253 || !dns1123Subdomain.MatchString(s) {
			return fmt.Errorf("metadata.name %q is not a valid %s name (an RFC 1123 subdomain: lowercase letters, digits, '-' and '.', at most 253 characters)", s, kind)
		}
	}
	return nil
}
