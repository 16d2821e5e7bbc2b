package chart

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"text/template"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
)

// The template engine: a chart's templates rendered with text/template
// and Helm's function map (funcs.go), as Helm's engine renders them, so
// that a chart gives the objects `helm template` gives: every template of
// the chart and its subcharts parsed into one set (deepest first, so that
// a parent's define wins), each file that is not a partial (_*) executed
// with its chart's data (.Values, .Chart, .Files, .Release, .Capabilities,
// .Subcharts, .Template), missing keys printing nothing, and include, tpl,
// required and fail as Helm defines them. What Helm's engine has no hook
// for is done here at each point: every function goes through the guard,
// which counts, bounds and refuses (guard.go); every parse tree, the
// chart's and each tpl text's, is instrumented by the guard before it
// runs; every byte a template, an include or a tpl writes goes through the
// guard's writer; an error quotes at most 64 bytes of a tpl text. There is
// no cluster: lookup is refused, and getHostByName answers "".

// maxIncludes bounds how many times one template may be included inside
// itself (Helm's bound; the guard's Depth is lower).
const maxIncludes = 1000

// templateFile is one of the chart's templates with what it renders with.
type templateFile struct {
	text string
	data Values
	// base is .Template.BasePath: the templates directory of its chart.
	base string
}

// engine is one rendering of a chart's templates.
type engine struct {
	g *guard
	// included counts, per template name, the includes under way.
	included map[string]int
}

// renderChart renders the templates of ch and its subcharts with top
// (Values, Release and Capabilities), by file name (chart/templates/x.yaml,
// chart/charts/sub/templates/y.yaml); partials render nothing.
func renderChart(g *guard, ch *chart.Chart, top Values) (rendered map[string]string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("rendering template failed: %v", r)
		}
	}()
	e := &engine{g: g, included: map[string]int{}}
	tpls := map[string]templateFile{}
	collectTemplates(ch, top, tpls)
	names := parseOrder(tpls)

	set := template.New("gotpl").Option("missingkey=zero")
	set.Funcs(e.funcs(set))
	for _, name := range names {
		if _, err := set.New(name).Parse(tpls[name].text); err != nil {
			return nil, parseError(name, err)
		}
	}
	if err := g.Parsed(set); err != nil {
		return nil, err
	}
	rendered = make(map[string]string, len(names))
	for _, name := range names {
		if strings.HasPrefix(path.Base(name), "_") {
			continue
		}
		f := tpls[name]
		f.data["Template"] = Values{"Name": name, "BasePath": f.base}
		g.File(name)
		var b strings.Builder
		if err := set.ExecuteTemplate(g.Writer(&b), name, f.data); err != nil {
			return nil, execError(name, err)
		}
		// missingkey=zero still prints <no value> for a missing key of a
		// map of interfaces: Helm prints nothing.
		rendered[name] = strings.ReplaceAll(b.String(), "<no value>", "")
	}
	return rendered, nil
}

// collectTemplates adds the templates of ch and its subcharts to tpls,
// each with its chart's data: the top's Release and Capabilities, the
// chart's own Values (a subchart's table of its parent's), Chart (its
// metadata and IsRoot), Files, and Subcharts (each subchart's data by
// name). A library chart offers only its partials. It returns ch's data.
func collectTemplates(ch *chart.Chart, parent Values, tpls map[string]templateFile) map[string]any {
	subcharts := map[string]any{}
	data := Values{
		"Chart": struct {
			chart.Metadata
			IsRoot bool
		}{*ch.Metadata, ch.IsRoot()},
		"Files":        newFiles(ch.Files),
		"Release":      parent["Release"],
		"Capabilities": parent["Capabilities"],
		"Values":       Values{},
		"Subcharts":    subcharts,
	}
	if ch.IsRoot() {
		data["Values"] = parent["Values"]
	} else if v, err := parent.Table("Values." + ch.Name()); err == nil {
		data["Values"] = v
	}
	for _, sub := range ch.Dependencies() {
		subcharts[sub.Name()] = collectTemplates(sub, data, tpls)
	}
	library := strings.EqualFold(ch.Metadata.Type, "library")
	for _, t := range ch.Templates {
		if t == nil || library && !strings.HasPrefix(path.Base(t.Name), "_") {
			continue
		}
		tpls[path.Join(ch.ChartFullPath(), t.Name)] = templateFile{
			text: string(t.Data),
			data: data,
			base: path.Join(ch.ChartFullPath(), "templates"),
		}
	}
	return data
}

// parseOrder is the order templates are parsed and rendered in: the
// deepest paths first, and at one depth in reverse order of name.
func parseOrder(tpls map[string]templateFile) []string {
	names := make([]string, 0, len(tpls))
	for name := range tpls {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		if da, db := strings.Count(a, "/"), strings.Count(b, "/"); da != db {
			return db - da
		}
		return strings.Compare(b, a)
	})
	return names
}

// funcs is the function map of the template set t: Helm's, with include,
// tpl, required and fail, under the guard.
func (e *engine) funcs(t *template.Template) template.FuncMap {
	m := helmFuncs()
	m["include"] = e.include(t)
	m["tpl"] = e.tpl(t)
	m["required"] = required
	m["fail"] = fail
	e.g.Funcs(m)
	return m
}

// include renders the template name of t with data, as a string.
func (e *engine) include(t *template.Template) func(string, any) (string, error) {
	return func(name string, data any) (string, error) {
		if e.included[name] > maxIncludes {
			return "", fmt.Errorf("rendering template has a nested reference name: %s: unable to execute template", name)
		}
		e.included[name]++
		defer func() { e.included[name]-- }()
		var b strings.Builder
		err := t.ExecuteTemplate(e.g.Writer(&b), name, data)
		return b.String(), err
	}
}

// tpl renders text as a template with data: a copy of the set t, so that
// it may include the chart's templates and define its own, with include
// and tpl bound to that copy.
func (e *engine) tpl(t *template.Template) func(string, any) (string, error) {
	return func(text string, data any) (string, error) {
		if err := e.g.Enter("tpl", t); err != nil {
			return "", err
		}
		c, err := t.Clone()
		if err != nil {
			return "", fmt.Errorf("cannot clone template: %w", err)
		}
		c.Option("missingkey=zero")
		bound := template.FuncMap{"include": e.include(c), "tpl": e.tpl(c)}
		e.g.Funcs(bound)
		c.Funcs(bound)
		// A new template of the copy: text that only defines templates
		// would otherwise leave the set's own as it was.
		if c, err = c.New(t.Name()).Parse(text); err != nil {
			return "", fmt.Errorf("cannot parse template %q: %w", excerpt(text), err)
		}
		if err := e.g.Parsed(c); err != nil {
			return "", err
		}
		var b strings.Builder
		if err := c.Execute(e.g.Writer(&b), data); err != nil {
			return "", fmt.Errorf("error during tpl function execution for %q: %w", excerpt(text), err)
		}
		return strings.ReplaceAll(b.String(), "<no value>", ""), nil
	}
}

// excerpt shortens a tpl text quoted in an error: it may be as long as
// the largest value.
func excerpt(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}

// parseError words a parse error as Helm does: "parse error at
// (file:line): what".
func parseError(name string, err error) error {
	parts := strings.Split(err.Error(), ": ")
	if len(parts) == 1 {
		return fmt.Errorf("parse error in (%s): %s", name, err)
	}
	return fmt.Errorf("parse error at (%s): %s", parts[1], parts[len(parts)-1])
}

// marks finds the message of required or fail in an error.
var marks = lazyregexp.New(messageStart + `((?s).*)` + messageEnd)

// execError words an execution error as Helm does: the message of
// required or fail alone, "execution error at (file:line:col): message";
// other errors as text/template gives them.
func execError(name string, err error) error {
	if _, ok := err.(template.ExecError); !ok {
		return err
	}
	parts := strings.SplitN(err.Error(), ": ", 3)
	if len(parts) != 3 {
		return fmt.Errorf("execution error in (%s): %s", name, err)
	}
	if m := marks.FindStringSubmatch(parts[2]); m != nil {
		return fmt.Errorf("execution error at (%s): %s", parts[1], m[1])
	}
	return err
}
