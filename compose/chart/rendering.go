package chart

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/chart"

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

// renderTemplates loads a chart of its own from l, checks it as `helm
// install` does, and renders its templates with the values (overrides on
// top of l's values file, for hookSwitches) under a guard; strict is the
// guard's (nil: no file). The guard is returned, nil when rendering did
// not start.
func renderTemplates(ctx context.Context, l *Loaded, o Options, override func(Values), strict func(string) bool) (*chart.Chart, map[string]string, *guard, error) {
	g := newGuard(ctx, o.Limits, strict)
	ch, rendered, err := renderWith(g, l, o, override)
	return ch, rendered, g, err
}

func renderWith(g *guard, l *Loaded, o Options, override func(Values)) (*chart.Chart, map[string]string, error) {
	ch, err := l.load()
	if err != nil {
		return nil, nil, err
	}
	kube := "v" + o.KubeVersion + ".0"
	if err := installable(ch, kube); err != nil {
		return nil, nil, err
	}
	vals := Values{}
	if l.values != nil {
		if vals, err = readValues(l.values); err != nil {
			return nil, nil, fmt.Errorf("reading values %s: %s", l.Values, text.OneLine(err.Error()))
		}
	}
	if override != nil {
		override(vals)
	}
	if err := processDependencies(ch, vals); err != nil {
		return nil, nil, fmt.Errorf("processing dependencies: %s", text.OneLine(err.Error()))
	}
	values, err := coalesceValues(ch, vals)
	if err != nil {
		return nil, nil, errors.New(text.OneLine(err.Error()))
	}
	if err := validateSchemas(ch, values, ch.Name()); err != nil {
		return nil, nil, err
	}
	top := Values{
		"Values":       values,
		"Capabilities": newCapabilities(o.KubeVersion),
		"Release": map[string]any{
			"Name":      o.Release,
			"Namespace": o.Namespace,
			"IsUpgrade": false,
			"IsInstall": true,
			"Revision":  1,
			"Service":   "Helm",
		},
	}
	rendered, err := renderChart(g, ch, top)
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
			if !compatible(c.Metadata.KubeVersion, kube) {
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
