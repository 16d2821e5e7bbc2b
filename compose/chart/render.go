package chart

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/openapi"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/text"
)

// Render renders the chart as `helm install` would for the release, and
// returns the resources in Helm's install order, CRDs (crds/) first, and a
// Namespace first of all when Options.CreateNamespace asks for one; notes
// say what it left out (test hooks). It refuses what `helm install`
// refuses (a library chart, a dependency missing from charts/, a
// kubeVersion the release's Kubernetes does not meet, values its schema
// rejects), what has no meaning on the device (hooks), what would not
// render the same bytes twice (see guard.go), and what goes past the
// Limits.
func Render(ctx context.Context, l *Loaded, o Options) (stream []byte, notes []string, err error) {
	if o.Limits == (Limits{}) {
		o.Limits = DefaultLimits
	}
	ch, rendered, g, err := renderTemplates(ctx, l, o, nil, nil)
	if err != nil {
		if len(g.calls) > 0 {
			// The fixed value of a refused call may be what failed:
			// the refusal is the reason.
			return nil, nil, refusedCall(ctx, l, o, func(string) bool { return true }, err)
		}
		return nil, nil, err
	}
	quiet, err := checkHookEvents(rendered)
	if err != nil {
		return nil, nil, err
	}
	var loud []string
	for _, f := range slices.Sorted(maps.Keys(g.calls)) {
		if !quiet[f] || g.leaks[f] {
			loud = append(loud, f)
			continue
		}
		notes = append(notes, fmt.Sprintf("%s calls %s (it %s) only in test hooks, which are dropped", f, g.calls[f].Func, g.calls[f].Why))
	}
	if len(loud) > 0 {
		fe := g.calls[loud[0]]
		return nil, nil, refusedCall(ctx, l, o, func(f string) bool { return slices.Contains(loud, f) }, fmt.Errorf("%s: %w", loud[0], fe))
	}
	hooks, ms, err := sortRendered(rendered)
	if err != nil {
		return nil, nil, errors.New(text.OneLine(err.Error()))
	}
	var refused []*hook
	for _, h := range hooks {
		if h.testOnly() {
			notes = append(notes, fmt.Sprintf("%s %s (%s) dropped: a test hook, which only `helm test` runs", h.kind, h.name, h.file))
			continue
		}
		refused = append(refused, h)
	}
	if len(refused) > 0 {
		return nil, nil, hookError(ctx, l, o, refused)
	}
	var docs []doc
	hasNamespace := false
	for _, m := range ms {
		ds, err := inNamespace([]byte(m.content), o.Namespace)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s", m.file, text.OneLine(err.Error()))
		}
		for _, d := range ds {
			d.source = m.file
			hasNamespace = hasNamespace || d.kind == "Namespace" && d.name == o.Namespace
			docs = append(docs, d)
		}
	}
	out := &output{limit: o.Limits.Output}
	if !hasNamespace && o.CreateNamespace {
		ns, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": o.Namespace}})
		if err != nil {
			return nil, nil, err
		}
		if err := out.add(ns); err != nil {
			return nil, nil, err
		}
	}
	for _, crd := range ch.CRDObjects() {
		if err := out.add(crd.File.Data); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", crd.Filename, err)
		}
	}
	for _, d := range docs {
		if err := out.add(d.data); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", d.source, err)
		}
	}
	if err := checkOutput(out.Bytes(), o.Limits); err != nil {
		return nil, nil, err
	}
	return out.Bytes(), notes, nil
}

// refusedCall renders the chart again with the refused calls of the
// strict files stopping it, for the template and line that call them:
// the first rendering gave them a fixed value, to see whether their result
// is used (see guard.refuse). fallback is the error when no call stops it.
func refusedCall(ctx context.Context, l *Loaded, o Options, strict func(string) bool, fallback error) error {
	_, _, g, err := renderTemplates(ctx, l, o, nil, strict)
	var fe *FuncError
	if err != nil && errors.As(g.err, &fe) {
		return err
	}
	return fallback
}

// checkHookEvents refuses a resource whose helm.sh/hook names an event
// Helm does not know, which Helm would skip with a log line. It returns
// the files that render nothing but test hooks, or nothing at all.
func checkHookEvents(rendered map[string]string) (map[string]bool, error) {
	quiet := map[string]bool{}
	for _, name := range sortedNames(rendered) {
		quiet[name] = true
		for _, d := range splitDocuments(rendered[name]) {
			var h head
			if err := yaml.Unmarshal([]byte(d), &h); err != nil {
				return nil, fmt.Errorf("%s: not YAML: %s", name, text.OneLine(err.Error()))
			}
			if h == (head{}) {
				continue // an empty document
			}
			if h.Metadata == nil {
				quiet[name] = false
				continue
			}
			events, ok := h.Metadata.Annotations[hookAnnotation]
			if !ok {
				quiet[name] = false
				continue
			}
			for _, e := range strings.Split(events, ",") {
				e = strings.ToLower(strings.TrimSpace(e))
				if e != "test" && e != "test-success" {
					quiet[name] = false
				}
				if _, known := hookEvent(e); !known {
					return nil, fmt.Errorf("%s: %s %s: %s names the event %q, which Helm does not know (it would skip the resource without a word); the events are %s",
						name, h.Kind, h.Metadata.Name, hookAnnotation, text.Excerpt(e), strings.Join(hookEventNames[:9], ", "))
				}
			}
		}
	}
	return quiet, nil
}

// output is the rendered stream, bounded while it is written.
type output struct {
	bytes.Buffer
	limit int64
}

func (o *output) add(doc []byte) error {
	o.WriteString("---\n")
	o.Write(bytes.TrimRight(doc, "\n"))
	o.WriteString("\n")
	if int64(o.Len()) > o.limit {
		return fmt.Errorf("%w: the chart renders more than %d bytes (the limit of a component's resources)", ErrLimit, o.limit)
	}
	return nil
}

// checkOutput holds the rendered resources to the budgets of a
// component's kustomize input: YAML nodes, nesting and aliases.
func checkOutput(stream []byte, lim Limits) error {
	shape, err := inputfile.CheckYAMLShape(stream)
	if err != nil {
		return fmt.Errorf("the rendered resources: %w", err)
	}
	if shape.Nodes > lim.Nodes {
		return fmt.Errorf("%w: the chart renders more than %d YAML nodes (kustomize's limit for a component, as for manifests/)", ErrLimit, lim.Nodes)
	}
	return nil
}

// doc is one rendered resource.
type doc struct {
	kind, name string
	data       []byte
	// source is the template it came from.
	source string
}

// inNamespace puts a namespaced object that names no namespace into
// namespace, as helm install does with the release namespace; whether a
// kind is namespaced is kustomize's knowledge (kyaml's OpenAPI data), as
// its namespace transformer uses it. Objects of kinds it does not know
// (custom resources) are left as the chart wrote them. A List (v1 List, or
// any kind FooList with items) becomes its items, each in the namespace,
// as helm install applies them and kustomize reads them.
func inNamespace(data []byte, namespace string) ([]doc, error) {
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, nil
	}
	kind, _ := obj["kind"].(string)
	if items, ok := obj["items"]; ok && strings.HasSuffix(kind, "List") {
		list, ok := items.([]any)
		if !ok && items != nil {
			return nil, fmt.Errorf("%s: items is not a list", kind)
		}
		var out []doc
		for i, it := range list {
			item, ok := it.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: items[%d] is not an object", kind, i)
			}
			d, err := objectInNamespace(item, namespace, nil)
			if err != nil {
				return nil, fmt.Errorf("%s: items[%d]: %w", kind, i, err)
			}
			out = append(out, d)
		}
		return out, nil
	}
	d, err := objectInNamespace(obj, namespace, data)
	if err != nil {
		return nil, err
	}
	return []doc{d}, nil
}

// objectInNamespace is inNamespace for one object; data is its YAML as
// the chart wrote it, kept when nothing changes (nil: encode it).
func objectInNamespace(obj map[string]any, namespace string, data []byte) (doc, error) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	md, _ := obj["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	if ns == "" {
		namespaced, known := openapi.IsNamespaceScoped(kyaml.TypeMeta{APIVersion: apiVersion, Kind: kind})
		if known && namespaced {
			if md == nil {
				md = map[string]any{}
				obj["metadata"] = md
			}
			md["namespace"] = namespace
			data = nil
		}
	}
	if data == nil {
		var err error
		if data, err = yaml.Marshal(obj); err != nil {
			return doc{}, err
		}
	}
	return doc{kind: kind, name: name, data: data}, nil
}
