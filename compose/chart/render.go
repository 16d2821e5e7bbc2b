package chart

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/compose/chart/internal/engine"
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/internal/text"
)

// Options are what a chart is rendered for.
type Options struct {
	// Release is the Helm release name, Namespace the release namespace.
	Release, Namespace string
	// KubeVersion is the Kubernetes major.minor ("1.31"):
	// .Capabilities.KubeVersion and what Chart.yaml's kubeVersion is
	// checked against.
	KubeVersion string
	// CreateNamespace adds a Namespace object for Namespace when the chart
	// renders none (helm install --create-namespace); false for a
	// namespace the device already has.
	CreateNamespace bool
	// Limits bound the rendering; the zero value is DefaultLimits.
	Limits Limits
}

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
	hooks, ms, err := releaseutil.SortManifests(rendered, nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, nil, errors.New(text.OneLine(err.Error()))
	}
	var refused []*release.Hook
	for _, h := range hooks {
		if isTestHook(h) {
			notes = append(notes, fmt.Sprintf("%s %s (%s) dropped: a test hook, which only `helm test` runs", h.Kind, h.Name, h.Path))
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
		ds, err := inNamespace([]byte(m.Content), o.Namespace)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s", m.Name, text.OneLine(err.Error()))
		}
		for _, d := range ds {
			d.source = m.Name
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

// renderTemplates loads a chart of its own from l, checks it as `helm
// install` does, and renders its templates with the values (overrides on
// top of l's values file, for hookSwitches) under a guard; strict is the
// guard's (nil: no file). The guard is returned, nil when rendering did
// not start.
func renderTemplates(ctx context.Context, l *Loaded, o Options, override func(chartutil.Values), strict func(string) bool) (*chart.Chart, map[string]string, *guard, error) {
	g := newGuard(ctx, o.Limits, strict)
	ch, rendered, err := renderWith(g, l, o, override)
	return ch, rendered, g, err
}

func renderWith(g *guard, l *Loaded, o Options, override func(chartutil.Values)) (*chart.Chart, map[string]string, error) {
	ch, err := l.load()
	if err != nil {
		return nil, nil, err
	}
	kube := "v" + o.KubeVersion + ".0"
	if err := installable(ch, kube); err != nil {
		return nil, nil, err
	}
	vals := chartutil.Values{}
	if l.values != nil {
		if vals, err = chartutil.ReadValues(l.values); err != nil {
			return nil, nil, fmt.Errorf("reading values %s: %s", l.Values, text.OneLine(err.Error()))
		}
	}
	if override != nil {
		override(vals)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	major, minor, _ := strings.Cut(o.KubeVersion, ".")
	caps.KubeVersion = chartutil.KubeVersion{Version: kube, Major: major, Minor: minor}
	if err := chartutil.ProcessDependenciesWithMerge(ch, vals); err != nil {
		return nil, nil, fmt.Errorf("processing dependencies: %s", text.OneLine(err.Error()))
	}
	opts := chartutil.ReleaseOptions{Name: o.Release, Namespace: o.Namespace, Revision: 1, IsInstall: true}
	// Helm's schema validation loads what a schema refers to from files
	// and URLs; validateSchemas does it offline.
	top, err := chartutil.ToRenderValuesWithSchemaValidation(ch, vals, opts, caps, true)
	if err != nil {
		return nil, nil, errors.New(text.OneLine(err.Error()))
	}
	values, _ := top["Values"].(chartutil.Values)
	if err := validateSchemas(ch, values, ch.Name()); err != nil {
		return nil, nil, err
	}
	rendered, err := engine.Engine{Guard: g}.Render(ch, top)
	if g.err != nil {
		return nil, nil, guardError(g.err, err, g.file)
	}
	if err != nil {
		return nil, nil, errors.New(text.OneLine(err.Error()))
	}
	for name := range rendered {
		if strings.HasSuffix(name, "NOTES.txt") {
			delete(rendered, name)
		}
	}
	if err := checkRendered(ch, rendered, o.Limits); err != nil {
		return nil, nil, err
	}
	return ch, rendered, nil
}

// checkRendered holds what the templates rendered and the CRDs to the
// budgets of a component's kustomize input (bytes, YAML nodes, nesting,
// aliases) before anything parses them: parsing 50,000 objects or a
// 20 MB one takes longer than the rendering did.
func checkRendered(ch *chart.Chart, rendered map[string]string, lim Limits) error {
	var size int64
	var nodes int
	add := func(name string, data []byte) error {
		if size += int64(len(data)); size > lim.Output {
			return fmt.Errorf("%s: %w: the chart renders more than %d bytes (the limit of a component's resources)", name, ErrLimit, lim.Output)
		}
		if line, n := largestDocument(data); n > MaxObject {
			return fmt.Errorf("%s: %w: the resource at line %d is %d bytes, more than the API server stores (%d, etcd's request limit): it could never be applied", name, ErrLimit, line, n, MaxObject)
		}
		shape, err := inputfile.CheckYAMLShape(data)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if nodes += shape.Nodes; nodes > lim.Nodes {
			return fmt.Errorf("%s: %w: the chart renders more than %d YAML nodes (kustomize's limit for a component, as for manifests/)", name, ErrLimit, lim.Nodes)
		}
		return nil
	}
	for _, crd := range ch.CRDObjects() {
		if err := add(crd.Filename, crd.File.Data); err != nil {
			return err
		}
	}
	for _, name := range sortedNames(rendered) {
		if err := add(name, []byte(rendered[name])); err != nil {
			return err
		}
	}
	return nil
}

// installable refuses what `helm install` refuses before it renders: a
// chart type other than application, a dependency of Chart.yaml missing
// from charts/, a kubeVersion that kube does not meet. Helm checks the
// top chart; subcharts are checked too, since the one missing would
// render as nothing.
func installable(ch *chart.Chart, kube string) error {
	switch ch.Metadata.Type {
	case "", "application":
	default:
		return fmt.Errorf("chart %s is a %s chart, which helm install refuses: a %s chart only provides templates to other charts", ch.Name(), ch.Metadata.Type, ch.Metadata.Type)
	}
	var check func(c *chart.Chart, where string) error
	check = func(c *chart.Chart, where string) error {
		if c.Metadata.KubeVersion != "" {
			if _, err := semver.NewConstraint(c.Metadata.KubeVersion); err != nil {
				return fmt.Errorf("chart %s: kubeVersion %q is not a version constraint: %s", where, c.Metadata.KubeVersion, text.OneLine(err.Error()))
			}
			if !chartutil.IsCompatibleRange(c.Metadata.KubeVersion, kube) {
				return fmt.Errorf("chart %s requires kubeVersion %s, which is incompatible with Kubernetes %s of the release", where, c.Metadata.KubeVersion, kube)
			}
		}
		var missing []string
		for _, d := range c.Metadata.Dependencies {
			if d == nil {
				continue
			}
			if !slices.ContainsFunc(c.Dependencies(), func(s *chart.Chart) bool { return s.Name() == d.Name }) {
				missing = append(missing, d.Name)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("chart %s: dependency %s is in Chart.yaml but not in charts/, which helm install refuses: vendor it into the chart (helm dependency build)", where, strings.Join(missing, ", "))
		}
		for _, s := range c.Dependencies() {
			if s.Metadata.Type == "library" {
				continue // library subcharts provide templates, as meant
			}
			if err := check(s, where+"/charts/"+s.Name()); err != nil {
				return err
			}
		}
		return nil
	}
	return check(ch, ch.Name())
}

// offlineLoader is the schema loader of a build: a values.schema.json
// that refers to another file or a URL is refused, where Helm would read
// the file or fetch the URL.
type offlineLoader struct{}

func (offlineLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("it refers to %s, which a build does not read (builds are offline and read only the chart): put the schema in values.schema.json", url)
}

// validateSchemas validates the values of ch and of each subchart against
// their values.schema.json, as Helm's chartutil.ValidateAgainstSchema
// does, with no loader but the schema itself.
func validateSchemas(ch *chart.Chart, vals map[string]any, where string) error {
	if ch.Schema != nil {
		schema, err := jsonschema.UnmarshalJSON(bytes.NewReader(ch.Schema))
		if err != nil {
			return fmt.Errorf("chart %s: values.schema.json: %s", where, text.OneLine(err.Error()))
		}
		c := jsonschema.NewCompiler()
		c.UseLoader(offlineLoader{})
		if err := c.AddResource("file:///values.schema.json", schema); err != nil {
			return fmt.Errorf("chart %s: values.schema.json: %s", where, text.OneLine(err.Error()))
		}
		v, err := c.Compile("file:///values.schema.json")
		if err != nil {
			return fmt.Errorf("chart %s: values.schema.json: %s", where, text.OneLine(err.Error()))
		}
		if err := v.Validate(vals); err != nil {
			msg := strings.TrimPrefix(err.Error(), "jsonschema validation failed with 'file:///values.schema.json#'")
			return fmt.Errorf("chart %s: the values do not meet its values.schema.json: %s", where, text.OneLine(msg))
		}
	}
	for _, s := range ch.Dependencies() {
		sub, _ := vals[s.Name()].(map[string]any)
		if sub == nil {
			sub = map[string]any{}
		}
		if err := validateSchemas(s, sub, where+"/charts/"+s.Name()); err != nil {
			return err
		}
	}
	return nil
}

// location is where text/template says an error happened.
var location = lazyregexp.New(`^template: ([^ ]+:\d+(?::\d+)?): `)

// guardError words what the guard stopped, with where: the template the
// call was in, and the ones included or tpl-rendered on the way, as
// text/template's errors wrapped in each other name them.
func guardError(cause, rendered error, file string) error {
	var where []string
	for e := rendered; e != nil; e = errors.Unwrap(e) {
		if m := location.FindStringSubmatch(e.Error()); m != nil {
			loc := strings.Replace(m[1], "gotpl:", "tpl text:", 1)
			if len(where) == 0 || where[len(where)-1] != loc {
				where = append(where, loc)
			}
		}
	}
	if len(where) > 5 {
		// A recursion: the first steps and the last.
		where = slices.Concat(where[:3], []string{fmt.Sprintf("%d more", len(where)-4)}, where[len(where)-1:])
	}
	at := ""
	if len(where) == 0 && file != "" {
		at = file + ": " // a write, which text/template reports without a place
	}
	if len(where) > 0 {
		at = where[0]
		if len(where) > 1 {
			at += " (through " + strings.Join(where[1:], ", ") + ")"
		}
		at += ": "
	}
	var le *LimitError
	if errors.As(cause, &le) {
		return fmt.Errorf("%s%w: %s", at, ErrLimit, le.Error())
	}
	return fmt.Errorf("%s%w", at, cause)
}

// largestDocument is the largest YAML document of a stream and the line
// it starts on, the documents split at lines that start with ---.
func largestDocument(data []byte) (line, size int) {
	start, startLine, ln := 0, 1, 1
	end := func(at int) {
		if at-start > size {
			line, size = startLine, at-start
		}
	}
	for i := 0; i < len(data); i++ {
		if data[i] != '\n' {
			continue
		}
		ln++
		if rest := data[i+1:]; bytes.HasPrefix(rest, []byte("---")) && (len(rest) == 3 || rest[3] == '\n' || rest[3] == ' ' || rest[3] == '\r') {
			end(i + 1)
			start, startLine = i+1, ln
		}
	}
	end(len(data))
	return line, size
}

// hookEvents are the events Helm knows for helm.sh/hook
// (releaseutil's, test-success the Helm 2 name of test).
var hookEvents = []string{"pre-install", "post-install", "pre-delete", "post-delete", "pre-upgrade", "post-upgrade", "pre-rollback", "post-rollback", "test", "test-success"}

// checkHookEvents refuses a resource whose helm.sh/hook names an event
// Helm does not know, which Helm would skip with a log line. It returns
// the files that render nothing but test hooks, or nothing at all.
func checkHookEvents(rendered map[string]string) (map[string]bool, error) {
	quiet := map[string]bool{}
	for _, name := range sortedNames(rendered) {
		quiet[name] = true
		docs := releaseutil.SplitManifests(rendered[name])
		keys := make([]string, 0, len(docs))
		for k := range docs {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			if releaseutil.BySplitManifestsOrder([]string{a, b}).Less(0, 1) {
				return -1
			}
			return 1
		})
		for _, k := range keys {
			var head releaseutil.SimpleHead
			if err := yaml.Unmarshal([]byte(docs[k]), &head); err != nil {
				return nil, fmt.Errorf("%s: not YAML: %s", name, text.OneLine(err.Error()))
			}
			if head == (releaseutil.SimpleHead{}) {
				continue // an empty document
			}
			if head.Metadata == nil {
				quiet[name] = false
				continue
			}
			events, ok := head.Metadata.Annotations[release.HookAnnotation]
			if !ok {
				quiet[name] = false
				continue
			}
			for _, e := range strings.Split(events, ",") {
				e = strings.ToLower(strings.TrimSpace(e))
				if e != "test" && e != "test-success" {
					quiet[name] = false
				}
				if !slices.Contains(hookEvents, e) {
					return nil, fmt.Errorf("%s: %s %s: %s names the event %q, which Helm does not know (it would skip the resource without a word); the events are %s",
						name, head.Kind, head.Metadata.Name, release.HookAnnotation, text.Excerpt(e), strings.Join(hookEvents[:9], ", "))
				}
			}
		}
	}
	return quiet, nil
}

func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// isTestHook says whether a hook is only for `helm test`.
func isTestHook(h *release.Hook) bool {
	for _, e := range h.Events {
		if e != release.HookTest {
			return false
		}
	}
	return len(h.Events) > 0
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
