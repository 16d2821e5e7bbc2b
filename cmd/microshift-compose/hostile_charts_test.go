package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/microshift-compose/microshift-compose/matrix"
)

// Round three of the hostile suite (issue 25), Helm charts: rendering
// bounded in time, memory and output; the same inputs the same bytes or a
// refusal (random, clock, key and cluster functions, however a template
// calls them); refusals parsed rather than searched (what helm install
// refuses, unknown hook events, chart archives); what the lock and SBOM
// list exists.

const chartMeta = "apiVersion: v2\nname: hello\nversion: 0.1.0\n"

// cmTemplate is a ConfigMap whose data value is v.
func cmTemplate(name, v string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  v: " + v + "\n"
}

// chart writes component name with a [chart] of the chart directory
// "chart" holding files (Chart.yaml added unless given) and, when values
// is not empty, a values file.
func (h *hostileEnv) chart(name string, files map[string]string, values string) {
	h.t.Helper()
	table := "[chart]\npath = \"chart\"\nnamespace = \"edge\"\n"
	if values != "" {
		h.write("catalog/components/"+name+"/values.yaml", values)
		table += "values = \"values.yaml\"\n"
	}
	h.component(name, table)
	if _, ok := files["Chart.yaml"]; !ok {
		h.write("catalog/components/"+name+"/chart/Chart.yaml", chartMeta)
	}
	for f, data := range files {
		h.write("catalog/components/"+name+"/chart/"+f, data)
	}
}

// chartArchive writes component name with a [chart] of a packaged chart
// of the entries (a "->" value is a symlink), named file.
func (h *hostileEnv) chartArchive(name, file string, entries map[string]string) {
	h.t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		hd := &tar.Header{Name: n, Mode: 0o644, Size: int64(len(entries[n])), Typeflag: tar.TypeReg}
		if target, ok := strings.CutPrefix(entries[n], "->"); ok {
			hd = &tar.Header{Name: n, Mode: 0o777, Typeflag: tar.TypeSymlink, Linkname: target}
		}
		if err := tw.WriteHeader(hd); err != nil {
			h.t.Fatal(err)
		}
		if hd.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(entries[n])); err != nil {
				h.t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		h.t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		h.t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	h.component(name, fmt.Sprintf("[chart]\npath = %q\nsha256 = %q\nnamespace = \"edge\"\n", file, hex.EncodeToString(sum[:])))
	h.write("catalog/components/"+name+"/"+file, buf.String())
}

// withChart is a build adding the case catalog's chart component edge.
func withChart(h *hostileEnv, files map[string]string, values string) []string {
	h.chart("edge", files, values)
	return withEdge(h)
}

func chartCases() []hostileCase {
	var cases []hostileCase
	// The same inputs, the same bytes: every function whose result they
	// do not determine, in each way a template can call it.
	calls := map[string]string{
		"randAlphaNum": `randAlphaNum 8`, "randAlpha": `randAlpha 8`, "randAscii": `randAscii 8`, "randNumeric": `randNumeric 8`,
		"randBytes": `randBytes 8`, "randInt": `randInt 1 9`, "uuidv4": `uuidv4`, "shuffle": `shuffle "abc"`,
		"bcrypt": `bcrypt "pw"`, "htpasswd": `htpasswd "u" "pw"`, "encryptAES": `encryptAES "k" "t"`,
		"genPrivateKey": `genPrivateKey "ecdsa"`, "genCA": `(genCA "ca" 365).Cert`, "genSelfSignedCert": `(genSelfSignedCert "x" nil nil 365).Cert`,
		"now": `now`, "ago": `ago 0`, "date": `date "2006" .Values.num`, "htmlDate": `htmlDate "x"`,
		"lookup": `lookup "v1" "Secret" "kube-system" "x"`,
	}
	ways := []struct {
		name  string
		setup func(h *hostileEnv, call string) ([]string, string)
	}{
		{"directly", func(h *hostileEnv, c string) ([]string, string) {
			return withChart(h, map[string]string{"templates/cm.yaml": cmTemplate("a", "{{ "+c+" | toString | quote }}")}, "num: 1.5\n"), "hello/templates/cm.yaml:6:"
		}},
		{"through tpl of a value", func(h *hostileEnv, c string) ([]string, string) {
			return withChart(h, map[string]string{"templates/cm.yaml": cmTemplate("a", "{{ tpl .Values.t . | quote }}")}, fmt.Sprintf("num: 1.5\nt: %q\n", "{{ "+c+" }}")), "hello/templates/cm.yaml:6:"
		}},
		{"in a sub-subchart's include, after a } in the action", func(h *hostileEnv, c string) ([]string, string) {
			return withChart(h, map[string]string{
				"Chart.yaml":                               chartMeta,
				"charts/sub/Chart.yaml":                    "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
				"charts/sub/charts/deep/Chart.yaml":        "apiVersion: v2\nname: deep\nversion: 0.1.0\n",
				"charts/sub/charts/deep/templates/_h.tpl":  `{{ define "deep.v" }}{{ list "}}" (` + c + `) | last | toString }}{{ end }}`,
				"charts/sub/charts/deep/templates/cm.yaml": cmTemplate("deep", `{{ include "deep.v" . | b64enc }}`),
			}, "sub:\n  deep:\n    num: 1.5\n"), "hello/charts/sub/charts/deep/templates/cm.yaml:6:"
		}},
	}
	why := map[string]string{
		"bcrypt": "salts at random", "htpasswd": "salts at random", "encryptAES": "uses a random IV", "genPrivateKey": "generates a key",
		"genCA": "generates a key and a certificate dated now", "genSelfSignedCert": "generates a key and a certificate dated now",
		"now": "reads the clock", "ago": "reads the clock", "date": "reads the clock: its time argument is a float64", "htmlDate": "reads the clock: its time argument is a string",
		"lookup": "needs a cluster",
	}
	names := make([]string, 0, len(calls))
	for n := range calls {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, fn := range names {
		want := why[fn]
		if want == "" {
			want = "is random"
		}
		for _, w := range ways {
			cases = append(cases, hostileCase{class: "chart/reproducible", name: fn + " " + w.name,
				setup: func(h *hostileEnv) ([]string, string) { return w.setup(h, calls[fn]) }, want: fn + " " + want})
		}
	}
	// Bounded in time, memory and output.
	for _, b := range []struct {
		name, want string
		files      map[string]string
		values     string
	}{
		{"repeat 300000000", "repeat would return more bytes than the limit", map[string]string{"templates/cm.yaml": cmTemplate("a", `{{ repeat 300000000 "x" }}`)}, ""},
		{"tpl of itself", "templates nested deeper than the limit", map[string]string{"templates/cm.yaml": cmTemplate("a", `{{ tpl .Values.t . }}`)}, "t: '{{ tpl .Values.t . }}'\n"},
		{"include of itself", "templates nested deeper than the limit", map[string]string{"templates/_h.tpl": `{{ define "a" }}{{ include "a" . }}{{ end }}`, "templates/cm.yaml": cmTemplate("a", `{{ include "a" . }}`)}, ""},
		{"a loop of a hundred billion doing nothing", "more template steps", map[string]string{"templates/cm.yaml": `{{ range 100000000000 }}{{ end }}` + cmTemplate("a", "b")}, ""},
		{"until a billion", "until would return more bytes than the limit", map[string]string{"templates/cm.yaml": `{{ range until 1000000000 }}{{ end }}` + cmTemplate("a", "b")}, ""},
		{"50,000 ConfigMaps", "YAML nodes", map[string]string{"templates/cm.yaml": `{{ range until 50000 }}` + "---\n" + cmTemplate("c{{ . }}", "b") + `{{ end }}`}, ""},
		{"a 5 MB CRD", "more than 200000 YAML nodes", map[string]string{"crds/big.yaml": bigCRD(5 << 20), "templates/cm.yaml": cmTemplate("a", "b")}, ""},
		{"a 1 MB CRD", "the chart renders more than 20000 YAML nodes", map[string]string{"crds/big.yaml": bigCRD(1 << 20), "templates/cm.yaml": cmTemplate("a", "b")}, ""},
		{"a 30 MB ConfigMap from a file", "bytes", map[string]string{"big.txt": strings.Repeat("x", 4<<20), "templates/cm.yaml": cmTemplate("a", `{{ range until 8 }}{{ $.Files.Get "big.txt" }}{{ end }}`)}, ""},
		{"a string doubled", "cat would return more bytes than the limit", map[string]string{"templates/cm.yaml": `{{ $s := "xxxxxxxx" }}{{ range until 64 }}{{ $s = cat $s $s }}{{ end }}` + cmTemplate("a", "b")}, ""},
		{"replace into every gap", "replace would return more bytes than the limit", map[string]string{"templates/cm.yaml": cmTemplate("a", `{{ replace "" (repeat 100000 "y") (repeat 100000 "x") }}`)}, ""},
		{"fromYaml of an alias bomb", "excessive YAML aliasing", map[string]string{"templates/cm.yaml": cmTemplate("a", `{{ fromYaml .Values.bomb | toJson | quote }}`)}, fmt.Sprintf("bomb: %q\n", chartAliasBomb)},
	} {
		cases = append(cases, hostileCase{class: "chart/bounded", name: b.name, want: b.want,
			setup: func(h *hostileEnv) ([]string, string) {
				return withChart(h, b.files, b.values), `component "edge": `
			}})
	}
	// What helm install refuses, and what it would drop.
	for _, r := range []struct {
		name, want string
		files      map[string]string
	}{
		{"a dependency missing from charts/", "dependency redis is in Chart.yaml but not in charts/", map[string]string{"Chart.yaml": chartMeta + "dependencies:\n- name: redis\n  version: 1.0.0\n"}},
		{"a library chart", "chart hello is a library chart, which helm install refuses", map[string]string{"Chart.yaml": chartMeta + "type: library\n"}},
		{"an incompatible kubeVersion", "requires kubeVersion >=1.99.0-0, which is incompatible with Kubernetes v1.36.0", map[string]string{"Chart.yaml": chartMeta + "kubeVersion: \">=1.99.0-0\"\n"}},
		{"an unknown hook event", `helm.sh/hook names the event "pre-instal", which Helm does not know`, map[string]string{"templates/job.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  annotations:\n    helm.sh/hook: pre-instal\n"}},
		{"a hook the chart can turn off", "Job j (hello/templates/job.yaml, post-install): set job.enabled: false in the values file ([chart] values) to leave it out",
			map[string]string{"values.yaml": "job:\n  enabled: true\n", "templates/job.yaml": "{{ if .Values.job.enabled }}apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  annotations:\n    helm.sh/hook: post-install\n{{ end }}"}},
		{"a values schema referring to a URL", "which a build does not read", map[string]string{"values.schema.json": `{"$ref": "https://schemas.example.com/x.json"}`}},
	} {
		cases = append(cases, hostileCase{class: "chart/helm-refuses", name: r.name, want: r.want,
			setup: func(h *hostileEnv) ([]string, string) {
				return withChart(h, r.files, ""), `component "edge": rendering chart chart: `
			}})
	}
	cases = append(cases,
		hostileCase{class: "chart/archive", name: "an absolute path in the archive", want: `entry "/hello/Chart.yaml" is an absolute path`,
			setup: func(h *hostileEnv) ([]string, string) {
				h.chartArchive("edge", "hello.tgz", map[string]string{"/hello/Chart.yaml": chartMeta})
				return withEdge(h), "chart hello.tgz"
			}},
		hostileCase{class: "chart/archive", name: "a .tar.gz with a link to a secret", want: `entry "hello/templates/x.yaml" is a link`,
			setup: func(h *hostileEnv) ([]string, string) {
				h.chartArchive("edge", "hello-0.1.0.tar.gz", map[string]string{"hello/Chart.yaml": chartMeta, "hello/templates/x.yaml": "->" + h.secret})
				return withEdge(h), "chart hello-0.1.0.tar.gz"
			}},
		hostileCase{class: "chart/archive", name: "a subchart archive unpacking past the bound", want: "more than a chart file may hold",
			setup: func(h *hostileEnv) ([]string, string) {
				var sub bytes.Buffer
				zw := gzip.NewWriter(&sub)
				tw := tar.NewWriter(zw)
				_ = tw.WriteHeader(&tar.Header{Name: "sub/zeros", Mode: 0o644, Size: 6 << 20, Typeflag: tar.TypeReg})
				_, _ = tw.Write(make([]byte, 6<<20))
				_ = tw.Close()
				_ = zw.Close()
				h.chartArchive("edge", "hello.tgz", map[string]string{"hello/Chart.yaml": chartMeta, "hello/charts/sub.tgz": sub.String()})
				return withEdge(h), "charts/sub.tgz"
			}},
		hostileCase{class: "chart/archive", name: "a 4 MB CRD inside the archive", want: "crds/big.yaml: line 100000: more than 200000 YAML nodes",
			setup: func(h *hostileEnv) ([]string, string) {
				crd := bigCRD(4 << 20)
				h.chartArchive("edge", "hello.tgz", map[string]string{"hello/Chart.yaml": chartMeta, "hello/crds/big.yaml": crd[:strings.LastIndex(crd[:4<<20], "\n          field")+1]})
				return withEdge(h), "chart hello.tgz"
			}},
		hostileCase{class: "chart/archive", name: "an alias bomb in the archive's values.yaml", want: "values.yaml: document 1: excessive YAML aliasing",
			setup: func(h *hostileEnv) ([]string, string) {
				h.chartArchive("edge", "hello.tgz", map[string]string{"hello/Chart.yaml": chartMeta, "hello/values.yaml": chartAliasBomb})
				return withEdge(h), "chart hello.tgz"
			}},
		hostileCase{class: "chart/archive", name: "a sha256 for a chart directory", want: `is a chart directory, which has no sha256 to check`,
			setup: func(h *hostileEnv) ([]string, string) {
				h.component("edge", "[chart]\npath = \"chart\"\nsha256 = \""+strings.Repeat("a", 64)+"\"\nnamespace = \"edge\"\n")
				h.write("catalog/components/edge/chart/Chart.yaml", chartMeta)
				return withEdge(h), "component.toml"
			}},
		hostileCase{class: "chart/listed", name: "two components' different charts of one name and version", want: `carry different charts named hello 0.1.0`,
			setup: func(h *hostileEnv) ([]string, string) {
				h.chart("edge", map[string]string{"templates/cm.yaml": cmTemplate("a", "b")}, "")
				h.chart("edge-two", map[string]string{"templates/cm.yaml": cmTemplate("a", "c")}, "")
				h.write("catalog/components/edge-two/component.toml", strings.Replace(readFile(h.t, h.compDir("edge-two")+"/component.toml"), "order = 900", "order = 901", 1))
				return withEdge(h, "--with", "edge-two"), `components "edge" and "edge-two"`
			}},
	)
	return cases
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// chartAliasBomb is YAML whose aliases expand a billion times.
const chartAliasBomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n" +
	"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"

// bigCRD is a CRD of about size bytes.
func bigCRD(size int) string {
	var b strings.Builder
	b.WriteString("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: bigs.example.com\nspec:\n  group: example.com\n  names:\n    kind: Big\n    plural: bigs\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "          field%d:\n            type: string\n            description: a field of the big resource, number %d\n", i, i)
	}
	return b.String()
}

// TestMatrixSurvivesAHostileChart: in a matrix, the cell whose chart
// goes past its limits (tpl recursion, on the release whose Kubernetes
// the chart tests for) fails alone: every other cell is written and the
// summary printed.
func TestMatrixSurvivesAHostileChart(t *testing.T) {
	h := newHostileEnv(t)
	h.chart("edge", map[string]string{"templates/cm.yaml": cmTemplate("a", `{{ if semverCompare ">=1.36.0-0" .Capabilities.KubeVersion.Version }}{{ tpl .Values.t . }}{{ else }}ok{{ end }}`)}, "t: '{{ tpl .Values.t . }}'\n")
	out := filepath.Join(h.dir, "matrix")
	stdout, stderr, code := runGuarded(t, 120*time.Second, "matrix", "--profile", "minimal", "--arch", "x86_64", "--release", "4.19,5.0", "--catalog", h.catalogDir(), "--with", "edge", "--output", out)
	if code != exitError {
		t.Fatalf("matrix = exit %d with a failing cell, want %d; stderr %q", code, exitError, stderr)
	}
	var sum matrix.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("matrix printed no summary: %v\n%s", err, stdout)
	}
	if sum.OK != 1 || sum.Failed != 1 || len(sum.Cells) != 2 {
		t.Fatalf("summary %+v, want one cell ok and one failed", sum)
	}
	for _, c := range sum.Cells {
		switch c.Release {
		case "5.0":
			if c.Status != matrix.StatusFailed || !strings.Contains(c.Error, "templates nested deeper than the limit") {
				t.Errorf("cell %s: %+v", c.Cell, c)
			}
		default:
			if _, err := os.Stat(filepath.Join(out, c.Cell, "compose.lock.json")); c.Status != matrix.StatusOK || err != nil {
				t.Errorf("cell %s: %+v, written: %v", c.Cell, c, err)
			}
		}
	}
}
