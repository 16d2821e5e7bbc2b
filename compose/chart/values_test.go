package chart

import (
	"io"
	"log"
	"reflect"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/releaseutil"
)

// The functions here stand in for Helm's chartutil and releaseutil, which
// the build does not link (client-go's scheme and a JSON-schema validator
// come with them); tests may. These fuzz targets hold ours to theirs on
// any input: go test -fuzz FuzzValuesMatchHelm ./compose/chart.

// fuzzChart is a parent chart with defaults, a subchart with its own, and
// Chart.yaml dependencies (a condition, tags, an alias, import-values).
func fuzzChart(t *testing.T, parentValues, subValues string) *chart.Chart {
	t.Helper()
	ch, err := loader.LoadFiles([]*loader.BufferedFile{
		{Name: "Chart.yaml", Data: []byte("apiVersion: v2\nname: parent\nversion: 1.0.0\ndependencies:\n- name: sub\n  version: 0.x\n  condition: sub.on,other.on\n  tags: [t1]\n  import-values: [data, {child: c, parent: p.q}]\n- name: sub\n  version: 0.x\n  alias: again\n")},
		{Name: "values.yaml", Data: []byte(parentValues)},
		{Name: "charts/sub/Chart.yaml", Data: []byte("apiVersion: v2\nname: sub\nversion: 0.1.0\n")},
		{Name: "charts/sub/values.yaml", Data: []byte(subValues)},
	})
	if err != nil {
		t.Skip(err)
	}
	return ch
}

func FuzzValuesMatchHelm(f *testing.F) {
	log.SetOutput(io.Discard) // Helm logs what it skips
	f.Add("a: 1\nb: {c: 2}\nglobal: {g: 1}\n", "x: 1\nexports: {data: {e: 1}}\nc: {d: 1}\n", "b: {c: null}\nsub: {on: false}\n")
	f.Add("sub: {x: 2, y: null}\ntags: {t1: false}\n", "x: 1\ny: 2\nglobal: {g: {h: 1}}\n", "global: {g: {i: 2}}\nagain: {z: 1}\n")
	f.Add("sub: 5\n", "x: 1\n", "a: [1, 2]\n")
	f.Add("global: 1\n", "global: {a: 1}\n", "other: {on: true}\nsub: {on: 1}\n")
	f.Add("p: {q: {own: 1}}\n", "c: {from: sub, n: null}\n", "p: null\n")
	f.Fuzz(func(t *testing.T, parentValues, subValues, userValues string) {
		user, err := readValues([]byte(userValues))
		if err != nil {
			t.Skip()
		}
		theirUser, err := chartutil.ReadValues([]byte(userValues))
		if err != nil {
			t.Fatalf("chartutil.ReadValues refuses what readValues reads: %v", err)
		}
		ours, theirs := fuzzChart(t, parentValues, subValues), fuzzChart(t, parentValues, subValues)
		ourErr := processDependencies(ours, deepCopy(user).(Values))
		theirErr := chartutil.ProcessDependenciesWithMerge(theirs, theirUser)
		if (ourErr == nil) != (theirErr == nil) {
			t.Fatalf("processing dependencies: ours %v, Helm's %v", ourErr, theirErr)
		}
		if ourErr != nil {
			return
		}
		if !reflect.DeepEqual(ours.Metadata, theirs.Metadata) || !reflect.DeepEqual(ours.Values, theirs.Values) || len(ours.Dependencies()) != len(theirs.Dependencies()) {
			t.Fatalf("charts after processing dependencies differ:\nours %+v %v\nHelm %+v %v", ours.Metadata, ours.Values, theirs.Metadata, theirs.Values)
		}
		for i, d := range ours.Dependencies() {
			if d.Name() != theirs.Dependencies()[i].Name() || !reflect.DeepEqual(d.Values, theirs.Dependencies()[i].Values) {
				t.Fatalf("subchart %d differs: ours %s %v, Helm's %s %v", i, d.Name(), d.Values, theirs.Dependencies()[i].Name(), theirs.Dependencies()[i].Values)
			}
		}
		got, ourErr := coalesceValues(ours, user)
		want, theirErr := chartutil.CoalesceValues(theirs, theirUser)
		if (ourErr == nil) != (theirErr == nil) {
			t.Fatalf("coalescing: ours %v, Helm's %v", ourErr, theirErr)
		}
		if ourErr == nil && !reflect.DeepEqual(map[string]any(got), map[string]any(want)) {
			t.Fatalf("coalesced values differ:\nours %v\nHelm %v", got, want)
		}
	})
}

func FuzzDocumentsMatchHelm(f *testing.F) {
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\nkind: Job\nmetadata:\n  name: j\n  annotations:\n    helm.sh/hook: pre-install, TEST-success\n---\n\n---\nkind: Zebra\n", "kind: Namespace\n---   \nkind: Pod\nmetadata: {name: p, annotations: {helm.sh/hook: unknown}}\n")
	f.Add("---\n---\n", "# comment\n--- \nkind: Alpha\n---\nkind: Service\nmetadata: {annotations: {}}\n")
	f.Add("kind: [\n", "a: b")
	f.Add("\n\n  kind: X\n---x\n---\tkind: Y", "metadata: {annotations: {helm.sh/hook: test}}\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		rendered := map[string]string{"c/templates/b.yaml": b, "c/templates/a.yaml": a, "c/templates/_p.tpl": a}
		hooks, docs, ourErr := sortRendered(rendered)
		theirHooks, theirDocs, theirErr := releaseutil.SortManifests(rendered, nil, releaseutil.InstallOrder)
		if (ourErr == nil) != (theirErr == nil) {
			t.Fatalf("ours %v, Helm's %v", ourErr, theirErr)
		}
		if ourErr != nil {
			return
		}
		if len(hooks) != len(theirHooks) || len(docs) != len(theirDocs) {
			t.Fatalf("%d hooks and %d documents, Helm %d and %d", len(hooks), len(docs), len(theirHooks), len(theirDocs))
		}
		for i, h := range hooks {
			th := theirHooks[i]
			var events []string
			for _, e := range th.Events {
				events = append(events, string(e))
			}
			if h.kind != th.Kind || h.name != th.Name || h.file != th.Path || !reflect.DeepEqual(h.events, events) {
				t.Fatalf("hook %d: ours %+v, Helm's %+v", i, h, th)
			}
		}
		for i, d := range docs {
			td := theirDocs[i]
			if d.file != td.Name || d.content != td.Content || d.kind != td.Head.Kind {
				t.Fatalf("document %d: ours %+v, Helm's %+v", i, d, td)
			}
		}
	})
}
