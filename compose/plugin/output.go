package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/k8sname"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Output is what "plugin run" printed, in one of the two forms the
// convention allows.
type Output struct {
	// Kustomization is set when the output is a single document of kind
	// Kustomization: it is rendered as the kustomization at the root of the
	// plugin's directory, so it may reference co-located files.
	Kustomization []byte
	// Resources is set when the output is a stream of Kubernetes resources
	// (documents separated by ---): rendered as one kustomization resource.
	Resources []byte
	// Documents is how many documents the output holds.
	Documents int
}

// Empty reports whether the plugin printed no documents at all.
func (o *Output) Empty() bool { return o.Documents == 0 }

// ParseOutput checks a plugin's stdout: YAML documents that are either one
// Kustomization or Kubernetes resources (apiVersion, kind and
// metadata.name each; a v1 List counts as its items). Errors are one line
// and name the document.
func ParseOutput(data []byte) (*Output, error) {
	if !utf8Valid(data) {
		return nil, errors.New("output is not UTF-8 text")
	}
	shape, err := inputfile.CheckYAMLShape(data)
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	if shape.Nodes > inputfile.MaxManifestNodes {
		return nil, fmt.Errorf("output: more than %d YAML nodes (kustomize's limit for a component)", inputfile.MaxManifestNodes)
	}
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}).Read()
	if err != nil {
		msg := strings.TrimPrefix(text.OneLine(err.Error()), "MalformedYAMLError: ")
		return nil, fmt.Errorf("output is not YAML: %s", strings.TrimSuffix(msg, " in File: unknown"))
	}
	out := &Output{Documents: len(nodes)}
	if len(nodes) == 0 {
		return out, nil
	}
	for i, n := range nodes {
		if n.YNode().Kind != yaml.MappingNode {
			return nil, fmt.Errorf("document %d: not a Kubernetes resource or kustomization: got a %s", i+1, nodeKind(n.YNode()))
		}
		meta, _ := n.GetMeta() // missing fields are reported below
		kind := n.GetKind()
		// Values reach messages and file names: check their form first.
		if kind != "" {
			if err := k8sname.Kind(kind); err != nil {
				return nil, fmt.Errorf("document %d: %w", i+1, err)
			}
		}
		if meta.APIVersion != "" {
			if err := k8sname.APIVersion(meta.APIVersion); err != nil {
				return nil, fmt.Errorf("document %d: %s: %w", i+1, kind, err)
			}
		}
		switch {
		case kind == "Kustomization" || kind == "Component":
			if kind == "Component" || !strings.HasPrefix(meta.APIVersion, "kustomize.config.k8s.io/") {
				return nil, fmt.Errorf("document %d: kind %s with apiVersion %q: want a Kustomization of kustomize.config.k8s.io/v1beta1", i+1, kind, meta.APIVersion)
			}
			if len(nodes) > 1 {
				return nil, fmt.Errorf("document %d: a Kustomization must be the only document of the output (got %d documents)", i+1, len(nodes))
			}
			out.Kustomization = data
			return out, nil
		case kind == "":
			return nil, fmt.Errorf("document %d: missing kind (a resource needs apiVersion, kind and metadata.name; a kustomization needs kind: Kustomization)", i+1)
		case meta.APIVersion == "":
			return nil, fmt.Errorf("document %d: %s: missing apiVersion", i+1, kind)
		case meta.Name == "":
			return nil, fmt.Errorf("document %d: %s: missing metadata.name", i+1, kind)
		}
	}
	out.Resources = data
	return out, nil
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	}
	return "document"
}

func utf8Valid(b []byte) bool {
	return strings.ToValidUTF8(string(b), "\uFFFD") == string(b) && !bytes.Contains(b, []byte{0})
}
