package knowledge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/internal/k8sname"
)

// ExistingNamespaces are the namespaces a release's devices have before
// any manifest is applied: by name, and by prefix.
type ExistingNamespaces struct {
	Range
	Names    []string
	Prefixes []string
}

type namespacesTOML struct {
	ExistingNamespaces []struct {
		Release  string   `toml:"release"`
		Names    []string `toml:"names"`
		Prefixes []string `toml:"prefixes"`
	} `toml:"existing_namespaces"`
}

// parseNamespaces checks and adds [[existing_namespaces]].
func (k *Knowledge) parseNamespaces(file string, doc namespacesTOML, rng func(where, s string) (Range, error)) error {
	for i, e := range doc.ExistingNamespaces {
		where := fmt.Sprintf("existing_namespaces[%d]", i)
		r, err := rng(where, e.Release)
		if err != nil {
			return err
		}
		for _, n := range e.Names {
			if err := k8sname.Namespace(n); err != nil {
				return fmt.Errorf("%s: %s: names: %q: %w", file, where, n, err)
			}
		}
		for _, p := range e.Prefixes {
			// A prefix is the start of a namespace name: a name with one
			// more letter must be valid.
			if err := k8sname.Namespace(p + "a"); err != nil || p == "" {
				return fmt.Errorf("%s: %s: prefixes: %q is not the start of a namespace name", file, where, p)
			}
		}
		k.ExistingNamespaces = append(k.ExistingNamespaces, ExistingNamespaces{Range: r, Names: e.Names, Prefixes: e.Prefixes})
	}
	return nil
}

// namespacesFor merges the entries that match v.
func (k *Knowledge) namespacesFor(v *semver.Version) ExistingNamespaces {
	var out ExistingNamespaces
	for _, e := range k.ExistingNamespaces {
		if e.Matches(v) {
			out.Names = append(out.Names, e.Names...)
			out.Prefixes = append(out.Prefixes, e.Prefixes...)
		}
	}
	return out
}

// NamespaceExists reports whether every device of the release has the
// namespace before its manifests are applied (kube-system, openshift-dns).
func (r *Release) NamespaceExists(namespace string) bool {
	if slices.Contains(r.namespaces.Names, namespace) {
		return true
	}
	for _, p := range r.namespaces.Prefixes {
		if strings.HasPrefix(namespace, p) {
			return true
		}
	}
	return false
}
