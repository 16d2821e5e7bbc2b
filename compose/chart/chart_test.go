package chart_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/compose/chart"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// docs decodes a YAML stream into its objects, keyed by kind/namespace/name.
func docs(t *testing.T, stream []byte) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, d := range strings.Split(string(stream), "\n---") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(d), &obj); err != nil {
			t.Fatalf("decoding %q: %v", d, err)
		}
		if obj == nil {
			continue
		}
		md, _ := obj["metadata"].(map[string]any)
		key := obj["kind"].(string) + "/" + str(md["namespace"]) + "/" + str(md["name"])
		out[key] = obj
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

// TestPodinfoMatchesHelmTemplate renders the real podinfo chart (testdata/
// charts/podinfo, from its Go module) in process and compares every
// object with what Helm's own `helm template` renders for the same
// release, namespace, values and Kubernetes version.
func TestPodinfoMatchesHelmTemplate(t *testing.T) {
	// The helm CLI, pinned by the Makefile (HELM_VERSION): the Helm the
	// build renders with.
	helm := testutil.PinnedTool(t, "helm")
	dir := filepath.Join(testutil.Root(t), "testdata", "charts", "podinfo")
	values := []byte("replicaCount: 2\nredis:\n  enabled: true\n")
	fsys := fstest.MapFS{"values.yaml": {Data: values}}
	if err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		fsys[filepath.ToSlash(filepath.Join("podinfo", rel))] = &fstest.MapFile{Data: data}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	l, err := chart.Load(fsys, chart.Spec{Path: "podinfo", Namespace: "edge", Values: "values.yaml"})
	if err != nil {
		t.Fatalf("Load(podinfo) = %v", err)
	}
	ours, notes, err := chart.Render(t.Context(), l, chart.Options{Release: "web", Namespace: "edge", KubeVersion: "1.31", CreateNamespace: true})
	if err != nil {
		t.Fatalf("Render(podinfo) = %v", err)
	}
	if len(notes) == 0 || !strings.Contains(strings.Join(notes, "\n"), "a test hook, which only `helm test` runs") {
		t.Errorf("podinfo's test hooks are dropped without a note: %q", notes)
	}
	vf := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(vf, values, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(helm, "template", "web", dir, "--namespace", "edge", "--kube-version", "1.31.0", "--values", vf, "--no-hooks")
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	theirs, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	got, want := docs(t, ours), docs(t, theirs)
	// helm template leaves the namespace to the client; we set it on
	// namespaced objects, as helm install does, and create the namespace.
	delete(got, "Namespace//edge")
	for k, obj := range want {
		if md, ok := obj["metadata"].(map[string]any); ok && md["namespace"] == nil {
			md["namespace"] = "edge"
			delete(want, k)
			want[obj["kind"].(string)+"/edge/"+str(md["name"])] = obj
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d objects, helm template %d:\nours %v\nhelm %v", len(got), len(want), keys(got), keys(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("helm template renders %s, we do not", k)
		} else if !reflect.DeepEqual(g, w) {
			gy, _ := yaml.Marshal(g)
			wy, _ := yaml.Marshal(w)
			t.Errorf("%s differs:\nours:\n%s\nhelm template:\n%s", k, gy, wy)
		}
	}
	var images []string
	for _, obj := range got {
		walkImages(obj, &images)
	}
	sort.Strings(images)
	t.Logf("podinfo images before pinning: %v", images)
	if len(images) == 0 {
		t.Errorf("no images in the rendered podinfo chart")
	}
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func walkImages(v any, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "image" {
				*out = append(*out, s)
			}
			walkImages(e, out)
		}
	case []any:
		for _, e := range v {
			walkImages(e, out)
		}
	}
}

// tgz builds a chart archive from entries (name -> content; a "->" value
// prefix makes a symlink).
func tgz(t *testing.T, entries map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	var names []string
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := entries[n]
		h := &tar.Header{Name: n, Mode: 0o644, Size: int64(len(c)), Typeflag: tar.TypeReg}
		if target, ok := strings.CutPrefix(c, "->"); ok {
			h = &tar.Header{Name: n, Mode: 0o777, Typeflag: tar.TypeSymlink, Linkname: target}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(c))
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func digest(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

const chartYAML = "apiVersion: v2\nname: hello\nversion: 0.1.0\n"
const deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: {{ required \"image is required\" .Values.image }}\n"

// TestChartRefusals is every chart the build refuses, in one line naming
// what is wrong.
func TestChartRefusals(t *testing.T) {
	good := tgz(t, map[string]string{"hello/Chart.yaml": chartYAML, "hello/templates/d.yaml": deployment, "hello/values.yaml": "image: quay.io/x/y:1\n"})
	for _, tc := range []struct {
		name  string
		files fstest.MapFS
		spec  chart.Spec
		want  string
	}{
		{name: "sha256 mismatch", files: fstest.MapFS{"c.tgz": {Data: good}}, spec: chart.Spec{Path: "c.tgz", SHA256: strings.Repeat("0", 64)},
			want: "chart c.tgz: sha256 is " + digest(good) + ", the component says " + strings.Repeat("0", 64)},
		{name: "symlink inside the archive", spec: chart.Spec{Path: "c.tgz"},
			files: fstest.MapFS{"c.tgz": {Data: tgz(t, map[string]string{"hello/Chart.yaml": chartYAML, "hello/templates/x.yaml": "->/etc/shadow"})}},
			want:  `entry "hello/templates/x.yaml" is a link (to "/etc/shadow")`},
		{name: "path traversal in the archive", spec: chart.Spec{Path: "c.tgz"},
			files: fstest.MapFS{"c.tgz": {Data: tgz(t, map[string]string{"hello/Chart.yaml": chartYAML, "hello/../../evil.yaml": "x: 1\n"})}},
			want:  `entry "hello/../../evil.yaml" leaves the chart's directory`},
		{name: "archive over the size bound", spec: chart.Spec{Path: "c.tgz"},
			files: fstest.MapFS{"c.tgz": {Data: make([]byte, chart.MaxArchiveSize+1)}},
			want:  "reading chart c.tgz: "},
		{name: "not a gzip archive", spec: chart.Spec{Path: "c.tgz"}, files: fstest.MapFS{"c.tgz": {Data: []byte("hello")}}, want: "not a gzip archive"},
		{name: "missing required value", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/templates/d.yaml": {Data: []byte(deployment)}},
			want:  "image is required"},
		{name: "an install hook", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/templates/job.yaml": {Data: []byte("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations:\n    helm.sh/hook: pre-install\n")}},
			want:  "chart hooks have no meaning for MicroShift's manifest loader, which applies the manifests once with no install or upgrade event: Job migrate (hello/templates/job.yaml, pre-install): no value of the chart leaves it out"},
		{name: "lookup", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/templates/s.yaml": {Data: []byte("{{ $s := lookup \"v1\" \"Secret\" \"ns\" \"x\" }}\nkind: ConfigMap\n")}},
			want:  "hello/templates/s.yaml:1:9: lookup needs a cluster"},
		{name: "no Chart.yaml", spec: chart.Spec{Path: "c"}, files: fstest.MapFS{"c/templates/d.yaml": {Data: []byte(deployment)}}, want: "Chart.yaml file is missing"},
		{name: "an absolute path in the archive", spec: chart.Spec{Path: "c.tgz"},
			files: fstest.MapFS{"c.tgz": {Data: tgz(t, map[string]string{"/hello/Chart.yaml": chartYAML})}},
			want:  `entry "/hello/Chart.yaml" is an absolute path`},
		{name: "two charts in the archive", spec: chart.Spec{Path: "c.tgz"},
			files: fstest.MapFS{"c.tgz": {Data: tgz(t, map[string]string{"hello/Chart.yaml": chartYAML, "other/templates/x.yaml": "x: 1\n"})}},
			want:  `entry "other/templates/x.yaml" is outside the chart's directory hello/`},
		{name: "a link in a subchart's archive", spec: chart.Spec{Path: "c.tgz"},
			files: fstest.MapFS{"c.tgz": {Data: tgz(t, map[string]string{"hello/Chart.yaml": chartYAML,
				"hello/charts/sub.tgz": string(tgz(t, map[string]string{"sub/Chart.yaml": "apiVersion: v2\nname: sub\nversion: 1.0.0\n", "sub/templates/x.yaml": "->/etc/shadow"}))})}},
			want: `charts/sub.tgz: entry "sub/templates/x.yaml" is a link`},
		{name: "a file unpacking past its bound", spec: chart.Spec{Path: "c.tgz"},
			files: fstest.MapFS{"c.tgz": {Data: tgz(t, map[string]string{"hello/Chart.yaml": chartYAML, "hello/zeros": strings.Repeat("\x00", chart.MaxChartFile+1)})}},
			want:  `entry "hello/zeros" unpacks to 5242881 bytes, more than a chart file may hold (5242880)`},
		{name: "a chart unpacking past its bound", spec: chart.Spec{Path: "c.tgz"},
			files: fstest.MapFS{"c.tgz": {Data: tgz(t, map[string]string{"hello/Chart.yaml": chartYAML, "hello/a": strings.Repeat("a", 4<<20), "hello/b": strings.Repeat("b", 4<<20), "hello/c": strings.Repeat("c", 4<<20)})}},
			want:  `the chart unpacks to more than 10485760 bytes (at "hello/c")`},
		{name: "a subchart archive unpacking past the chart's bound", spec: chart.Spec{Path: "c.tgz"},
			files: fstest.MapFS{"c.tgz": {Data: tgz(t, map[string]string{"hello/Chart.yaml": chartYAML, "hello/a": strings.Repeat("a", 4<<20), "hello/b": strings.Repeat("b", 4<<20),
				"hello/charts/sub.tgz": string(tgz(t, map[string]string{"sub/Chart.yaml": "apiVersion: v2\nname: sub\nversion: 1.0.0\n", "sub/c": strings.Repeat("c", 4<<20)}))})}},
			want: `charts/sub.tgz: the chart unpacks to more than 10485760 bytes (at "sub/c")`},
		{name: "an alias bomb in the archive's values.yaml", spec: chart.Spec{Path: "c.tgz"},
			files: fstest.MapFS{"c.tgz": {Data: tgz(t, map[string]string{"hello/Chart.yaml": chartYAML, "hello/values.yaml": aliasBomb})}},
			want:  "values.yaml: document 1: excessive YAML aliasing"},
		{name: "a deep Chart.yaml in a chart directory", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML + "annotations: " + strings.Repeat("[", 200) + strings.Repeat("]", 200) + "\n")}},
			want:  "Chart.yaml: line 4: YAML nested deeper than 100 levels"},
		{name: "a deep values.schema.json", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/values.schema.json": {Data: []byte(strings.Repeat("[", 1000) + strings.Repeat("]", 1000))}},
			want:  "values.schema.json: "},
		{name: "a CRD alias bomb in a subchart directory", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/charts/sub/Chart.yaml": {Data: []byte("apiVersion: v2\nname: sub\nversion: 1.0.0\n")}, "c/charts/sub/crds/x.yaml": {Data: []byte(aliasBomb)}},
			want:  "charts/sub/crds/x.yaml: document 1: excessive YAML aliasing"},
		{name: "an alias bomb in the values file", spec: chart.Spec{Path: "c", Values: "v.yaml"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "v.yaml": {Data: []byte(aliasBomb)}},
			want:  "values v.yaml: document 1: excessive YAML aliasing"},
		{name: "a sha256 for a chart directory", spec: chart.Spec{Path: "c", SHA256: strings.Repeat("a", 64)},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}},
			want:  "chart c: a sha256 is given for a chart directory, which has none to check"},
		{name: "a library chart", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML + "type: library\n")}, "c/templates/_h.tpl": {Data: []byte(`{{ define "x" }}{{ end }}`)}},
			want:  "chart hello is a library chart, which helm install refuses"},
		{name: "a dependency missing from charts/", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML + "dependencies:\n- name: redis\n  version: 1.0.0\n  repository: https://charts.example.com\n")}},
			want:  "chart hello: dependency redis is in Chart.yaml but not in charts/, which helm install refuses"},
		{name: "a dependency missing from a subchart's charts/", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/charts/sub/Chart.yaml": {Data: []byte("apiVersion: v2\nname: sub\nversion: 1.0.0\ndependencies:\n- name: deep\n  version: 1.0.0\n")}},
			want:  "chart hello/charts/sub: dependency deep is in Chart.yaml but not in charts/"},
		{name: "an incompatible kubeVersion", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML + "kubeVersion: \">=1.33.0-0\"\n")}},
			want:  "chart hello requires kubeVersion >=1.33.0-0, which is incompatible with Kubernetes v1.31.0 of the release"},
		{name: "a kubeVersion that is no constraint", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML + "kubeVersion: \"newest\"\n")}},
			want:  `chart hello: kubeVersion "newest" is not a version constraint`},
		{name: "an unknown hook event", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/templates/job.yaml": {Data: []byte("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations:\n    helm.sh/hook: pre-instal\n")}},
			want:  `hello/templates/job.yaml: Job migrate: helm.sh/hook names the event "pre-instal", which Helm does not know`},
		{name: "an unknown hook event beside a known one", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/templates/job.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations:\n    helm.sh/hook: test, on-boot\n")}},
			want:  `hello/templates/job.yaml: Job migrate: helm.sh/hook names the event "on-boot"`},
		{name: "values its schema refuses", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/values.yaml": {Data: []byte("replicas: many\n")}, "c/values.schema.json": {Data: []byte(`{"type": "object", "properties": {"replicas": {"type": "integer"}}}`)}},
			want:  "chart hello: the values do not meet its values.schema.json: "},
		{name: "a schema referring to a URL", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/values.schema.json": {Data: []byte(`{"$ref": "https://schemas.example.com/values.json"}`)}},
			want:  "it refers to https://schemas.example.com/values.json, which a build does not read"},
		{name: "a draft-07 schema referring to a file", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/values.schema.json": {Data: []byte(`{"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"x": {"$ref": "file:///etc/passwd"}}}`)}},
			want:  "it refers to file:///etc/passwd, which a build does not read"},
		{name: "a draft-07 schema referring to a URL", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/values.schema.json": {Data: []byte(`{"$schema": "http://json-schema.org/draft-07/schema#", "$ref": "https://schemas.example.com/v.json#/x"}`)}},
			want:  "it refers to https://schemas.example.com/v.json"},
		{name: "a schema of draft 2019-09", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/values.schema.json": {Data: []byte(`{"$schema": "https://json-schema.org/draft/2019-09/schema"}`)}},
			want:  "chart hello: values.schema.json: it declares JSON Schema draft 2019-09, which the build does not validate"},
		{name: "a schema of an unknown meta-schema", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/values.schema.json": {Data: []byte(`{"$schema": "https://example.com/my-meta"}`)}},
			want:  "it refers to https://example.com/my-meta, which a build does not read"},
		{name: "a schema referring to a file", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/values.schema.json": {Data: []byte(`{"properties": {"x": {"$ref": "file:///etc/shadow"}}}`)}},
			want:  "it refers to file:///etc/shadow, which a build does not read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Namespace = "hello"
			if tc.spec.SHA256 == "" && strings.HasSuffix(tc.spec.Path, ".tgz") && tc.files[tc.spec.Path] != nil {
				tc.spec.SHA256 = digest(tc.files[tc.spec.Path].Data)
			}
			l, err := chart.Load(tc.files, tc.spec)
			if err == nil {
				_, _, err = chart.Render(t.Context(), l, chart.Options{Release: "hello", Namespace: "hello", KubeVersion: "1.31", CreateNamespace: true})
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error = %v\nwant one line containing %q", err, tc.want)
			}
		})
	}
}

// aliasBomb is YAML whose aliases expand a billion times.
const aliasBomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n" +
	"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"

// TestChartDirectoryPackedDeterministically: a chart directory is packed
// into the same bytes every time, and its archive loads back.
func TestChartDirectoryPackedDeterministically(t *testing.T) {
	fsys := fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/templates/d.yaml": {Data: []byte(deployment)}, "c/values.yaml": {Data: []byte("image: quay.io/x/y:1\n")}}
	a, err := chart.Load(fsys, chart.Spec{Path: "c", Namespace: "edge"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := chart.Load(fsys, chart.Spec{Path: "c", Namespace: "edge"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Archive, b.Archive) || a.SHA256 != digest(a.Archive) || a.File() != "hello-0.1.0.tgz" {
		t.Fatalf("archives differ or misnamed: %s %s %s", a.SHA256, b.SHA256, a.File())
	}
	again, err := chart.Load(fstest.MapFS{"x.tgz": {Data: a.Archive}}, chart.Spec{Path: "x.tgz", SHA256: a.SHA256, Namespace: "n"})
	if err != nil {
		t.Fatalf("the packed archive does not load back: %v", err)
	}
	s1, _, err := chart.Render(t.Context(), a, chart.Options{Release: "r", Namespace: "edge", KubeVersion: "1.31", CreateNamespace: true})
	if err != nil {
		t.Fatal(err)
	}
	s2, _, err := chart.Render(t.Context(), again, chart.Options{Release: "r", Namespace: "edge", KubeVersion: "1.31", CreateNamespace: true})
	if err != nil || !bytes.Equal(s1, s2) {
		t.Errorf("the directory and its archive render differently (%v)", err)
	}
	if !strings.Contains(string(s1), "namespace: edge") || !strings.HasPrefix(string(s1), "---\napiVersion: v1\nkind: Namespace\n") {
		t.Errorf("render does not create and use the namespace:\n%s", s1)
	}
}

// FuzzChartArchive feeds arbitrary bytes to the chart input path: an error
// or a chart, never a panic.
func FuzzChartArchive(f *testing.F) {
	f.Add([]byte("hello"))
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := chart.Load(fstest.MapFS{"c.tgz": {Data: data}}, chart.Spec{Path: "c.tgz", SHA256: digest(data), Namespace: "n"})
		if err != nil {
			return
		}
		chart.Render(t.Context(), l, chart.Options{Release: "r", Namespace: "n", KubeVersion: "1.31", CreateNamespace: true})
	})
}

// TestHookRefusalNamesTheValue: a refused hook the chart has a value for
// is refused with the value that leaves it out (cert-manager's
// startupapicheck.enabled); one the chart always renders says so.
func TestHookRefusalNamesTheValue(t *testing.T) {
	job := func(name, hook string) string {
		return "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " + name + "\n  annotations:\n    helm.sh/hook: " + hook + "\nspec:\n  template:\n    spec:\n      containers:\n      - name: x\n        image: quay.io/x/y:1\n"
	}
	files := fstest.MapFS{
		"c/Chart.yaml":                         {Data: []byte(chartYAML)},
		"c/values.yaml":                        {Data: []byte("metrics:\n  enabled: true\nwebhook:\n  enabled: true\nstartupapicheck:\n  enabled: true\ncleanup:\n  hooks: true\nalways: true\n")},
		"c/templates/startupapicheck-job.yaml": {Data: []byte("{{ if .Values.startupapicheck.enabled }}" + job("hello-startupapicheck", "post-install") + "{{ end }}")},
		"c/templates/cleanup.yaml":             {Data: []byte("{{ if .Values.cleanup.hooks }}" + job("hello-cleanup", "pre-delete") + "{{ end }}")},
		"c/templates/forever.yaml":             {Data: []byte(job("hello-forever", "post-upgrade"))},
		"edge.yaml":                            {Data: []byte("webhook:\n  enabled: true\n")},
	}
	l, err := chart.Load(files, chart.Spec{Path: "c", Namespace: "hello", Values: "edge.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = chart.Render(t.Context(), l, chart.Options{Release: "hello", Namespace: "hello", KubeVersion: "1.31", CreateNamespace: true})
	for _, want := range []string{
		"Job hello-startupapicheck (hello/templates/startupapicheck-job.yaml, post-install): set startupapicheck.enabled: false in edge.yaml to leave it out",
		"Job hello-cleanup (hello/templates/cleanup.yaml, pre-delete): set cleanup.hooks: false in edge.yaml to leave it out",
		"Job hello-forever (hello/templates/forever.yaml, post-upgrade): no value of the chart leaves it out",
	} {
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Render = %v\nwant one line containing %q", err, want)
		}
	}
}

// TestListItemsInNamespace: the items of a List (v1 List, or FooList) are
// resources of their own in the release namespace, as helm install
// applies them; a cluster-scoped item or one naming its namespace is kept.
func TestListItemsInNamespace(t *testing.T) {
	list := "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n- apiVersion: rbac.authorization.k8s.io/v1\n  kind: ClusterRole\n  metadata:\n    name: b\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: c\n    namespace: other\n" +
		"---\napiVersion: v1\nkind: ServiceList\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata:\n    name: d\n"
	out, err := render(t, map[string]string{"templates/list.yaml": list}, "", chart.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got := docs(t, []byte(out))
	for _, k := range []string{"Namespace//hello", "ConfigMap/hello/a", "ClusterRole//b", "Secret/other/c", "Service/hello/d"} {
		if got[k] == nil {
			t.Errorf("no %s in:\n%s", k, out)
		}
	}
	if len(got) != 5 {
		t.Errorf("%d objects, want 5: %v", len(got), keys(got))
	}
}

// TestNamespaceOnlyWhenAsked: a chart installed into a namespace the
// device has (kube-system) gets no Namespace object, one installed
// elsewhere gets one, first; one the chart renders itself is not doubled.
func TestNamespaceOnlyWhenAsked(t *testing.T) {
	fsys, spec := chartFS(map[string]string{"templates/cm.yaml": fmt.Sprintf(cm, "a", "b")}, "")
	l, err := chart.Load(fsys, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, create := range []bool{false, true} {
		out, _, err := chart.Render(t.Context(), l, chart.Options{Release: "r", Namespace: "kube-system", KubeVersion: "1.31", CreateNamespace: create})
		if err != nil {
			t.Fatal(err)
		}
		if has := strings.HasPrefix(string(out), "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: kube-system\n"); has != create || strings.Count(string(out), "kind: Namespace") != map[bool]int{false: 0, true: 1}[create] {
			t.Errorf("CreateNamespace %v:\n%s", create, out)
		}
	}
	fsys, spec = chartFS(map[string]string{"templates/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: edge\n  labels:\n    team: a\n"}, "")
	l, err = chart.Load(fsys, spec)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := chart.Render(t.Context(), l, chart.Options{Release: "r", Namespace: "edge", KubeVersion: "1.31", CreateNamespace: true})
	if err != nil || strings.Count(string(out), "kind: Namespace") != 1 || !strings.Contains(string(out), "team: a") {
		t.Errorf("the chart's own Namespace (%v):\n%s", err, out)
	}
}

// TestTarGzChart: a chart packaged as .tar.gz loads as a .tgz does.
func TestTarGzChart(t *testing.T) {
	data := tgz(t, map[string]string{"hello/Chart.yaml": chartYAML, "hello/templates/d.yaml": deployment, "hello/values.yaml": "image: quay.io/x/y:1\n"})
	l, err := chart.Load(fstest.MapFS{"hello-0.1.0.tar.gz": {Data: data}}, chart.Spec{Path: "hello-0.1.0.tar.gz", SHA256: digest(data), Namespace: "n"})
	if err != nil {
		t.Fatalf("Load(.tar.gz) = %v", err)
	}
	if l.File() != "hello-0.1.0.tgz" || !bytes.Equal(l.Archive, data) {
		t.Errorf("file %s, archive kept as given: %v", l.File(), bytes.Equal(l.Archive, data))
	}
}
