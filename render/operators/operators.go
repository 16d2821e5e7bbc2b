// Package operators renders how the device installs a plan's operator
// set: a manifests.d directory of its own (NNN-olm-operators, after OLM's
// own manifests) holding the CatalogSource of the filtered catalog image
// by digest, a Namespace and an OperatorGroup per namespace the operators
// go to, and a Subscription per package asked for (its channel, its
// bundle as startingCSV, its install plan approval). OLM installs the
// dependencies itself, in their dependents' namespaces, from the same
// catalog. It is a function of the plan (plan.Operators, decided by
// compose and package operators); it resolves nothing.
package operators

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/compose/manifests"
	opset "github.com/microshift-compose/microshift-compose/operators"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
)

// DirSuffix names the manifests.d directory: NNN-olm-operators.
const DirSuffix = "-operators"

// CatalogSourceName is the name of the CatalogSource of the filtered
// catalog: one name, so that a new build replaces the image in place.
const CatalogSourceName = "microshift-compose-operators"

// CatalogNamespace is where the CatalogSource goes: OLM's global catalog
// namespace on MicroShift (catalog-operator --namespace), whose catalogs
// every namespace's Subscriptions and OLM's dependency resolution see.
const CatalogNamespace = "openshift-marketplace"

type meta struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   meta   `json:"metadata"`
	Spec       any    `json:"spec,omitempty"`
}

type catalogSourceSpec struct {
	SourceType    string        `json:"sourceType"`
	Image         string        `json:"image"`
	DisplayName   string        `json:"displayName"`
	Publisher     string        `json:"publisher"`
	GRPCPodConfig grpcPodConfig `json:"grpcPodConfig"`
}

type grpcPodConfig struct {
	// SecurityContextConfig restricted is what MicroShift's pod security
	// admits (its documentation requires it of every CatalogSource).
	SecurityContextConfig string `json:"securityContextConfig"`
}

type operatorGroupSpec struct {
	TargetNamespaces []string `json:"targetNamespaces,omitempty"`
}

type subscriptionSpec struct {
	Channel             string `json:"channel"`
	Name                string `json:"name"`
	Source              string `json:"source"`
	SourceNamespace     string `json:"sourceNamespace"`
	StartingCSV         string `json:"startingCSV"`
	InstallPlanApproval string `json:"installPlanApproval"`
}

// Stream renders the objects of an operator set as one YAML stream:
// the CatalogSource, then per namespace (sorted) its Namespace and
// OperatorGroup, then the Subscriptions by package.
func Stream(ops *plan.Operators) ([]byte, error) {
	objs := []object{{
		APIVersion: "operators.coreos.com/v1alpha1", Kind: "CatalogSource",
		Metadata: meta{Name: CatalogSourceName, Namespace: CatalogNamespace},
		Spec: catalogSourceSpec{
			SourceType: "grpc", Image: ops.Filtered.Ref,
			DisplayName: "Operators of this device (microshift-compose)", Publisher: "microshift-compose",
			GRPCPodConfig: grpcPodConfig{SecurityContextConfig: "restricted"},
		},
	}}
	modes := map[string]string{}
	for _, p := range ops.Packages {
		if prev, ok := modes[p.Namespace]; ok && prev != p.InstallMode {
			return nil, fmt.Errorf("namespace %s: install modes %s and %s", p.Namespace, prev, p.InstallMode)
		}
		modes[p.Namespace] = p.InstallMode
	}
	for _, ns := range slices.Sorted(maps.Keys(modes)) {
		if ns == opset.GlobalNamespace {
			if modes[ns] != plan.InstallAllNamespaces {
				return nil, fmt.Errorf("namespace %s has MicroShift's OperatorGroup of all namespaces, and its operators need %s", ns, modes[ns])
			}
			continue
		}
		objs = append(objs, object{APIVersion: "v1", Kind: "Namespace", Metadata: meta{Name: ns}})
		og := object{APIVersion: "operators.coreos.com/v1", Kind: "OperatorGroup", Metadata: meta{Name: ns, Namespace: ns}, Spec: operatorGroupSpec{}}
		if modes[ns] == plan.InstallOwnNamespace {
			og.Spec = operatorGroupSpec{TargetNamespaces: []string{ns}}
		}
		objs = append(objs, og)
	}
	for _, p := range ops.Packages {
		if !p.Subscribed() {
			continue
		}
		objs = append(objs, object{
			APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription",
			Metadata: meta{Name: p.Name, Namespace: p.Namespace},
			Spec: subscriptionSpec{
				Channel: p.Channel, Name: p.Name, Source: CatalogSourceName, SourceNamespace: CatalogNamespace,
				StartingCSV: p.Bundle, InstallPlanApproval: p.Approval,
			},
		})
	}
	var b bytes.Buffer
	for i, o := range objs {
		data, err := yaml.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("encoding %s %s: %w", o.Kind, o.Metadata.Name, err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(data)
	}
	return b.Bytes(), nil
}

// Apply adds the operator set's manifests.d directory to p, after OLM's
// own manifests and those of the components applied before olm, with a
// note; nothing when p has no operator set.
func Apply(p *plan.Plan) error {
	ops := p.Operators
	if ops == nil {
		return nil
	}
	c := p.Component(compose.OLMComponent)
	if c == nil {
		return fmt.Errorf("the plan has an operator set and no component %s to install it", compose.OLMComponent)
	}
	stream, err := Stream(ops)
	if err != nil {
		return err
	}
	job, err := manifests.Prepare(manifests.Input{Component: c.Name, Resources: stream})
	if err != nil {
		return fmt.Errorf("operators: %w", err)
	}
	res, err := job.Render()
	if err != nil {
		return fmt.Errorf("component %q: rendering %s: %w", c.Name, plan.FromOperators, err)
	}
	dir := fmt.Sprintf("%s%03d-%s%s/", output.ManifestsDevicePath, c.Order, c.Name, DirSuffix)
	m, files, err := compose.RenderedDir(p, c.Name, plan.FromOperators, dir, res)
	if err != nil {
		return err
	}
	p.Manifests = compose.InsertManifest(p, m)
	var subs []string
	for _, o := range ops.Packages {
		if o.Subscribed() {
			subs = append(subs, o.Name+" in "+o.Namespace)
		}
	}
	p.Notes = append(p.Notes, fmt.Sprintf("operators: %s has the CatalogSource %s/%s of %s and the Subscriptions of %s", m.Dir, CatalogNamespace, CatalogSourceName, ops.Filtered.Ref, strings.Join(subs, ", ")))
	return p.AddFiles(files...)
}
