package chart_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
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

// helmBinary is the helm CLI `make test-deps` builds pinned into bin/;
// in CI a missing one fails, elsewhere the comparison skips in one line.
func helmBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(testutil.Root(t), "bin", "helm")
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("bin/helm missing: `make test-deps` builds it (CI must compare with helm template)")
		}
		t.Skip("bin/helm missing: run `make test-deps` to compare with helm template")
	}
	return bin
}

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
	helm := helmBinary(t)
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
	ours, notes, err := chart.Render(l, "web", "edge", "1.31")
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
			want:  "chart illegally references parent directory"},
		{name: "archive over the size bound", spec: chart.Spec{Path: "c.tgz"},
			files: fstest.MapFS{"c.tgz": {Data: make([]byte, chart.MaxArchiveSize+1)}},
			want:  "reading chart c.tgz: "},
		{name: "not a gzip archive", spec: chart.Spec{Path: "c.tgz"}, files: fstest.MapFS{"c.tgz": {Data: []byte("hello")}}, want: "not a gzip archive"},
		{name: "missing required value", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/templates/d.yaml": {Data: []byte(deployment)}},
			want:  "image is required"},
		{name: "an install hook", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/templates/job.yaml": {Data: []byte("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations:\n    helm.sh/hook: pre-install\n")}},
			want:  "chart hooks have no meaning for MicroShift's manifest loader, which applies the manifests once with no install or upgrade event: Job migrate (hello/templates/job.yaml)"},
		{name: "lookup", spec: chart.Spec{Path: "c"},
			files: fstest.MapFS{"c/Chart.yaml": {Data: []byte(chartYAML)}, "c/templates/s.yaml": {Data: []byte("{{ $s := lookup \"v1\" \"Secret\" \"ns\" \"x\" }}\nkind: ConfigMap\n")}},
			want:  "template hello/templates/s.yaml calls lookup, which needs a cluster"},
		{name: "no Chart.yaml", spec: chart.Spec{Path: "c"}, files: fstest.MapFS{"c/templates/d.yaml": {Data: []byte(deployment)}}, want: "Chart.yaml file is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Namespace = "hello"
			if tc.spec.SHA256 == "" && strings.HasSuffix(tc.spec.Path, ".tgz") {
				tc.spec.SHA256 = digest(tc.files[tc.spec.Path].Data)
			}
			l, err := chart.Load(tc.files, tc.spec)
			if err == nil {
				_, _, err = chart.Render(l, "hello", "hello", "1.31")
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error = %v\nwant one line containing %q", err, tc.want)
			}
		})
	}
}

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
	s1, _, err := chart.Render(a, "r", "edge", "1.31")
	if err != nil {
		t.Fatal(err)
	}
	s2, _, err := chart.Render(again, "r", "edge", "1.31")
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
		chart.Render(l, "r", "n", "1.31")
	})
}
