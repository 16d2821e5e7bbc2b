package k8sname

import (
	"strings"
	"testing"
)

func TestName(t *testing.T) {
	for _, tc := range []struct {
		apiVersion, kind, name string
		ok                     bool
	}{
		{"v1", "ConfigMap", "edge-config.v2", true},
		{"v1", "ConfigMap", "Edge", false},
		{"v1", "ConfigMap", "a b", false},
		{"v1", "ConfigMap", "x\nRUN touch /tmp/p", false},
		{"v1", "ConfigMap", "../../etc", false},
		{"v1", "ConfigMap", strings.Repeat("a", 254), false},
		{"v1", "Namespace", "edge", true},
		{"v1", "Namespace", "edge.example", false},
		{"v1", "Service", "1web", false},
		{"v1", "Service", "web", true},
		{"rbac.authorization.k8s.io/v1", "ClusterRole", "system:openshift:scc:privileged", true},
		{"rbac.authorization.k8s.io/v1", "ClusterRole", "a/b", false},
		{"rbac.authorization.k8s.io/v1", "ClusterRole", "..", false},
		{"rbac.authorization.k8s.io/v1", "ClusterRole", "a b", false},
		{"rbac.authorization.k8s.io/v1", "ClusterRole", "*x", false},
		{"example.com/v1", "Widget", "w1", true},
		{"example.com/v1", "Widget", "W1", false},
	} {
		if err := Name(tc.apiVersion, tc.kind, tc.name); (err == nil) != tc.ok {
			t.Errorf("Name(%q, %q, %q) = %v, want ok=%t", tc.apiVersion, tc.kind, tc.name, err, tc.ok)
		}
	}
}

func TestKindAndAPIVersion(t *testing.T) {
	for _, k := range []string{"ConfigMap", "CustomResourceDefinition", "V1"} {
		if err := Kind(k); err != nil {
			t.Errorf("Kind(%q) = %v", k, err)
		}
	}
	for _, k := range []string{"", "0", "0\n0", "Config Map", "a-b"} {
		if err := Kind(k); err == nil {
			t.Errorf("Kind(%q) = nil, want an error", k)
		}
	}
	for _, v := range []string{"v1", "apps/v1", "kustomize.config.k8s.io/v1beta1", "example.com/v1alpha1"} {
		if err := APIVersion(v); err != nil {
			t.Errorf("APIVersion(%q) = %v", v, err)
		}
	}
	for _, v := range []string{"", "0 0", "apps/", "/v1", "Apps/v1", "a/b/c", "v1\n"} {
		if err := APIVersion(v); err == nil {
			t.Errorf("APIVersion(%q) = nil, want an error", v)
		}
	}
	if err := Namespace("Edge"); err == nil {
		t.Error("Namespace(Edge) = nil")
	}
}

// FuzzName: a name accepted for any kind is safe in a file name and a
// kustomization.yaml line: no path separators, no spaces, no control
// characters, no YAML indicators at its start.
func FuzzName(f *testing.F) {
	for _, s := range []string{"a", "system:auth-delegator", "A B", "a/b", "..", "a\nb", "*", "&x"} {
		f.Add("v1", "ConfigMap", s)
		f.Add("rbac.authorization.k8s.io/v1", "ClusterRole", s)
	}
	f.Fuzz(func(t *testing.T, apiVersion, kind, name string) {
		if APIVersion(apiVersion) != nil || Kind(kind) != nil {
			return
		}
		if err := Name(apiVersion, kind, name); err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\ \t\n\r%*?[]'\"`$&!|#{}") || !isASCIIPrint(name) {
			t.Fatalf("Name(%q, %q) accepted %q", apiVersion, kind, name)
		}
	})
}

func isASCIIPrint(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
