// Package k8sname checks the names Kubernetes gives meaning to (kinds,
// apiVersions, namespaces, object names) by the rules the API server
// applies, through k8s.io/apimachinery's own validation, so that a
// rendered manifest the device would reject, or a name that would change
// the structure of a file it becomes part of (a file name, a
// kustomization.yaml line), fails the build instead. It knows nothing of
// manifests or plugins.
package k8sname

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Kind checks a kind: the API server's rule for a custom resource's kind
// (lowercased, an RFC 1035 label), without '-' (no built-in or custom
// kind has one, and kustomize matches kinds as identifiers).
func Kind(s string) error {
	if s == "" || strings.Contains(s, "-") || len(validation.IsDNS1035Label(strings.ToLower(s))) > 0 {
		return fmt.Errorf("kind %q is not a Kubernetes kind (letters and digits, starting with a letter)", s)
	}
	return nil
}

// APIVersion checks "version" or "group/version": the group an RFC 1123
// subdomain, the version an RFC 1123 label.
func APIVersion(s string) error {
	group, version, grouped := strings.Cut(s, "/")
	if !grouped {
		group, version = "", s
	}
	if (grouped && len(validation.IsDNS1123Subdomain(group)) > 0) || len(validation.IsDNS1123Label(version)) > 0 {
		return fmt.Errorf("apiVersion %q is not a Kubernetes apiVersion (group/version or version, such as apps/v1 or v1)", s)
	}
	return nil
}

// Namespace checks a namespace name: an RFC 1123 label.
func Namespace(s string) error {
	if len(validation.IsDNS1123Label(s)) > 0 {
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
		if len(validation.IsDNS1123Label(s)) > 0 {
			return fmt.Errorf("metadata.name %q is not a valid Namespace name (an RFC 1123 label: lowercase letters, digits and '-', at most 63 characters)", s)
		}
	case kind == "Service" && group == "":
		if len(validation.IsDNS1035Label(s)) > 0 {
			return fmt.Errorf("metadata.name %q is not a valid Service name (an RFC 1035 label: lowercase letters, digits and '-', starting with a letter, at most 63 characters)", s)
		}
	case rbacKinds[kind] && group == "rbac.authorization.k8s.io":
		if s == "" || len(s) > 253 || len(path.IsValidPathSegmentName(s)) > 0 || !rbacFileSafe(s) {
			return fmt.Errorf("metadata.name %q is not a valid %s name (letters, digits and \":._@+-\", at most 253 characters)", s, kind)
		}
	default:
		if len(validation.IsDNS1123Subdomain(s)) > 0 {
			return fmt.Errorf("metadata.name %q is not a valid %s name (an RFC 1123 subdomain: lowercase letters, digits, '-' and '.', at most 253 characters)", s, kind)
		}
	}
	return nil
}

// rbacFileSafe narrows the API server's path segment rule (anything but
// "/", "%", "." and "..") for RBAC names, which become file names and
// kustomization.yaml lines here: letters, digits and ":._@+-", starting
// with a letter or digit, which every real one uses
// ("system:auth-delegator").
func rbacFileSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune(":._@+-", rune(c))) {
			return false
		}
	}
	return true
}
