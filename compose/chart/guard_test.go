package chart_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/microshift-compose/microshift-compose/compose/chart"
)

// chartFS is a chart directory "c" of the given files (relative to the
// chart), Chart.yaml added unless given, and values.yaml of the component
// when values is not empty.
func chartFS(files map[string]string, values string) (fstest.MapFS, chart.Spec) {
	fsys := fstest.MapFS{}
	if _, ok := files["Chart.yaml"]; !ok {
		fsys["c/Chart.yaml"] = &fstest.MapFile{Data: []byte(chartYAML)}
	}
	for n, d := range files {
		fsys["c/"+n] = &fstest.MapFile{Data: []byte(d)}
	}
	spec := chart.Spec{Path: "c", Namespace: "hello"}
	if values != "" {
		fsys["values.yaml"] = &fstest.MapFile{Data: []byte(values)}
		spec.Values = "values.yaml"
	}
	return fsys, spec
}

func render(t *testing.T, files map[string]string, values string, lim chart.Limits) (string, error) {
	t.Helper()
	fsys, spec := chartFS(files, values)
	l, err := chart.Load(fsys, spec)
	if err != nil {
		return "", err
	}
	out, _, err := chart.Render(t.Context(), l, chart.Options{Release: "hello", Namespace: "hello", KubeVersion: "1.31", CreateNamespace: true, Limits: lim})
	return string(out), err
}

const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  v: %s\n"

// unreproducible are the functions of Helm v3.19.0's function map (Sprig
// v3.3.0's and Helm's own) whose result the chart and values do not
// determine, each with a call that type-checks, as read from their
// sources: random, key and certificate generation, the clock, the
// cluster.
var unreproducible = map[string]string{
	"randAlphaNum":             `randAlphaNum 8`,
	"randAlpha":                `randAlpha 8`,
	"randAscii":                `randAscii 8`,
	"randNumeric":              `randNumeric 8`,
	"randBytes":                `randBytes 8`,
	"randInt":                  `randInt 1 9`,
	"uuidv4":                   `uuidv4`,
	"shuffle":                  `shuffle "abc"`,
	"bcrypt":                   `bcrypt "pw"`,
	"htpasswd":                 `htpasswd "u" "pw"`,
	"encryptAES":               `encryptAES "key" "text"`,
	"genPrivateKey":            `genPrivateKey "ecdsa"`,
	"genCA":                    `(genCA "ca" 365).Cert`,
	"genCAWithKey":             `(genCAWithKey "ca" 365 (.Files.Get "key.pem")).Cert`,
	"genSelfSignedCert":        `(genSelfSignedCert "x" nil nil 365).Cert`,
	"genSelfSignedCertWithKey": `(genSelfSignedCertWithKey "x" nil nil 365 (.Files.Get "key.pem")).Cert`,
	"genSignedCert":            `(genSignedCert "x" nil nil 365 (buildCustomCert (.Files.Get "cert.b64") (.Files.Get "key.b64"))).Cert`,
	"genSignedCertWithKey":     `(genSignedCertWithKey "x" nil nil 365 (buildCustomCert (.Files.Get "cert.b64") (.Files.Get "key.b64")) (.Files.Get "key.pem")).Cert`,
	"now":                      `now`,
	"ago":                      `ago 0`,
	"lookup":                   `lookup "v1" "Secret" "ns" "x"`,
}

// clockReads are calls of date functions that read the clock though
// their name says nothing of it: Sprig formats time.Now() when the time
// argument is not a time or a whole number (a number from the values is
// a float64).
var clockReads = map[string]string{
	"date of a string":            `date "2006" "x"`,
	"date of a values number":     `date "2006" .Values.num`,
	"dateInZone of nothing":       `dateInZone "2006" nil "UTC"`,
	"date_in_zone of a string":    `date_in_zone "2006" "x" "UTC"`,
	"htmlDate of a string":        `htmlDate "x"`,
	"htmlDateInZone of a float":   `htmlDateInZone 1.5 "UTC"`,
	"durationRound of a time":     `durationRound (toDate "2006" "2020")`,
	"date of now through a pipe":  `now | date "2006"`,
	"dateModify of now":           `now | dateModify "1h" | unixEpoch`,
	"ago through a variable call": `ago (toDate "2006" "2020")`,
}

// TestUnreproducibleRefused: every function whose result the inputs do
// not determine is refused, naming the function and the template, however
// the template calls it: directly, in a pipeline, after a } in the same
// action, through include, through tpl (values, Files, a text made with
// printf), in a sub-subchart, in a range, in a define included from a
// subchart; and the same template without the call renders.
func TestUnreproducibleRefused(t *testing.T) {
	type way struct {
		name  string
		files func(call string) map[string]string
		vals  func(call string) string
		where string
	}
	sub := func(files map[string]string) map[string]string {
		out := map[string]string{
			"Chart.yaml":                          "apiVersion: v2\nname: hello\nversion: 0.1.0\ndependencies:\n- name: sub\n  version: 0.1.0\n",
			"charts/sub/Chart.yaml":               "apiVersion: v2\nname: sub\nversion: 0.1.0\ndependencies:\n- name: subsub\n  version: 0.1.0\n",
			"charts/sub/charts/subsub/Chart.yaml": "apiVersion: v2\nname: subsub\nversion: 0.1.0\n",
		}
		for k, v := range files {
			out[k] = v
		}
		return out
	}
	ways := []way{
		{"direct", func(c string) map[string]string {
			return map[string]string{"templates/cm.yaml": fmt.Sprintf(cm, "a", "{{ "+c+" | quote }}")}
		}, nil, "hello/templates/cm.yaml:6:"},
		{"in a variable, printing nothing", func(c string) map[string]string {
			return map[string]string{"templates/cm.yaml": "{{ $x := " + c + " }}" + fmt.Sprintf(cm, "a", "b")}
		}, nil, "hello/templates/cm.yaml:1:"},
		{"after a } in the same action", func(c string) map[string]string {
			return map[string]string{"templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ $x := list "}}" (`+c+`) "{{" }}{{ "}" | quote }}`)}
		}, nil, "hello/templates/cm.yaml:6:"},
		{"include", func(c string) map[string]string {
			return map[string]string{"templates/_h.tpl": `{{ define "h" }}{{ ` + c + ` | toString | b64enc }}{{ end }}`, "templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ include "h" . | quote }}`)}
		}, nil, "hello/templates/cm.yaml:6:"},
		{"template action in a range", func(c string) map[string]string {
			return map[string]string{"templates/_h.tpl": `{{ define "h" }}{{ ` + c + ` | toString | b64enc }}{{ end }}`, "templates/cm.yaml": `{{ range list 1 }}` + fmt.Sprintf(cm, "a", `{{ template "h" $ }}`) + `{{ end }}`}
		}, nil, "hello/templates/"},
		{"tpl of a value", func(string) map[string]string {
			return map[string]string{"templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ tpl .Values.t . | quote }}`)}
		}, func(c string) string { return fmt.Sprintf("num: 1.5\nt: %q\n", "{{ "+c+" }}") }, "hello/templates/cm.yaml:6:"},
		{"tpl of a text built with printf", func(c string) map[string]string {
			return map[string]string{"templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ tpl (printf "{{ %s }}" .Values.f) . | quote }}`)}
		}, func(c string) string { return fmt.Sprintf("num: 1.5\nf: %q\n", c) }, "hello/templates/cm.yaml:6:"},
		{"tpl of a file", func(c string) map[string]string {
			return map[string]string{"f.txt": "{{ " + c + " }}", "templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ tpl (.Files.Get "f.txt") . | quote }}`)}
		}, nil, "hello/templates/cm.yaml:6:"},
		{"sub-subchart", func(c string) map[string]string {
			return sub(map[string]string{"charts/sub/charts/subsub/templates/cm.yaml": fmt.Sprintf(cm, "deep", "{{ "+c+" | quote }}")})
		}, nil, "hello/charts/sub/charts/subsub/templates/cm.yaml:6:"},
		{"subchart define included by the parent", func(c string) map[string]string {
			return sub(map[string]string{"charts/sub/templates/_h.tpl": `{{ define "sub.h" }}{{ ` + c + ` | toString }}{{ end }}`, "templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ include "sub.h" . | quote }}`)})
		}, nil, "hello/templates/cm.yaml:6:"},
	}
	calls := map[string]string{}
	for f, c := range unreproducible {
		calls[f] = c
	}
	for n, c := range clockReads {
		calls[n] = c
	}
	for name, call := range calls {
		for _, w := range ways {
			t.Run(name+"/"+w.name, func(t *testing.T) {
				files := withKeys(t, w.files(call))
				vals := "num: 1.5\n"
				if w.vals != nil {
					vals = w.vals(call)
				}
				_, err := render(t, files, vals, chart.Limits{})
				fn := strings.Fields(strings.Trim(call, "("))[0]
				if strings.Contains(call, "| ") {
					fn = strings.Fields(call)[0]
				}
				want := chart.ErrNotReproducible
				if fn == "lookup" {
					want = chart.ErrNeedsCluster
				}
				if err == nil || !errors.Is(err, want) || !strings.Contains(err.Error(), fn+" ") || !strings.Contains(err.Error(), w.where) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("Render = %v\nwant one line: %v, naming %s and %s", err, want, fn, w.where)
				}
			})
		}
	}
	// The ways themselves render: a deterministic call in the same place.
	for _, w := range ways {
		t.Run("control/"+w.name, func(t *testing.T) {
			files := w.files(`upper "x"`)
			vals := "num: 1.5\n"
			if w.vals != nil {
				vals = w.vals(`upper "x"`)
			}
			if _, err := render(t, files, vals, chart.Limits{}); err != nil {
				t.Fatalf("Render = %v", err)
			}
		})
	}
}

// withKeys adds to every chart of files a private key (key.pem) and a
// certificate and key in base64 (cert.b64, key.b64): the functions that
// take them fail before anything random without them.
func withKeys(t *testing.T, files map[string]string) map[string]string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	cert, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert})
	for _, dir := range []string{"", "charts/sub/", "charts/sub/charts/subsub/"} {
		if _, ok := files[dir+"Chart.yaml"]; !ok && dir != "" {
			continue
		}
		files[dir+"key.pem"] = string(keyPEM)
		files[dir+"cert.b64"] = base64.StdEncoding.EncodeToString(certPEM)
		files[dir+"key.b64"] = base64.StdEncoding.EncodeToString(keyPEM)
	}
	return files
}

// TestDeterministicFunctions: what Helm leaves to Go's map order or the
// build machine's zone renders one way: keys and values in sorted key
// order, dates in UTC.
func TestDeterministicFunctions(t *testing.T) {
	saved := time.Local
	time.Local = time.FixedZone("far", 11*3600)
	t.Cleanup(func() { time.Local = saved })
	var keys []string
	for i := range 40 {
		keys = append(keys, fmt.Sprintf("%q: %d", fmt.Sprintf("k%02d", 39-i), i))
	}
	vals := "m: {" + strings.Join(keys, ", ") + "}\n"
	tpl := fmt.Sprintf(cm, "a", `{{ keys .Values.m | join "," | quote }}`) + "  w: {{ values .Values.m | toJson | quote }}\n" +
		`  d: {{ date "2006-01-02T15:04" 1700000000 | quote }}` + "\n" +
		`  h: {{ htmlDate 1700000000 | quote }}` + "\n" +
		`  t: {{ toDate "2006-01-02" "2024-03-01" | unixEpoch | quote }}` + "\n"
	var first string
	for i := range 5 {
		out, err := render(t, map[string]string{"templates/cm.yaml": tpl}, vals, chart.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = out
		} else if out != first {
			t.Fatalf("two renderings differ:\n%s\n%s", first, out)
		}
	}
	var sorted, values []string
	for i := range 40 {
		sorted = append(sorted, fmt.Sprintf("k%02d", i))
		values = append(values, fmt.Sprint(39-i))
	}
	for _, want := range []string{
		"v: " + strings.Join(sorted, ","),
		"w: '[" + strings.Join(values, ",") + "]'",
		"d: 2023-11-14T22:13", // 1700000000 in UTC, not in the zone +11
		"h: \"2023-11-14\"",
		"t: \"1709251200\"", // 2024-03-01 00:00 UTC
	} {
		if !strings.Contains(first, want) {
			t.Errorf("rendered lacks %q:\n%s", want, first)
		}
	}
}

// TestRenderBounded: templates that would take the process's memory,
// time or the build's output are stopped, in one line naming the template
// and what went past which limit, and the memory they took is bounded.
func TestRenderBounded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		files  map[string]string
		values string
		lim    chart.Limits
		want   string
	}{
		{name: "repeat 300000000", files: map[string]string{"templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ repeat 300000000 "x" }}`)},
			want: "hello/templates/cm.yaml:6:8: chart rendering is bounded: repeat would return more bytes than the limit"},
		{name: "tpl of itself", files: map[string]string{"templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ tpl .Values.t . }}`)}, values: "t: '{{ tpl .Values.t . }}'\n",
			want: "templates nested deeper than the limit"},
		{name: "include of itself, two names", files: map[string]string{"templates/_h.tpl": `{{ define "a" }}{{ include "b" . }}{{ end }}{{ define "b" }}{{ include "a" . }}{{ end }}`, "templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ include "a" . }}`)},
			want: "templates nested deeper than the limit"},
		{name: "template action of itself", files: map[string]string{"templates/_h.tpl": `{{ define "a" }}{{ template "a" . }}{{ end }}`, "templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ template "a" . }}`)},
			want: "templates nested deeper than the limit"},
		{name: "a loop over a number, doing nothing", files: map[string]string{"templates/cm.yaml": `{{ range 100000000000 }}{{ end }}` + fmt.Sprintf(cm, "a", "b")},
			want: "more template steps"},
		{name: "until 1000000000", files: map[string]string{"templates/cm.yaml": `{{ range until 1000000000 }}{{ end }}` + fmt.Sprintf(cm, "a", "b")},
			want: "until would return more bytes than the limit"},
		{name: "50,000 ConfigMaps", files: map[string]string{"templates/cm.yaml": `{{ range until 50000 }}---` + "\n" + fmt.Sprintf(cm, "c{{ . }}", "b") + `{{ end }}`},
			want: "YAML nodes"},
		{name: "25,000 ConfigMaps in 50 templates", files: manyTemplates(50, `{{ range until 500 }}---`+"\n"+fmt.Sprintf(cm, "c{{ $.Template.Name | base | trimSuffix \".yaml\" }}-{{ . }}", "b")+`{{ end }}`),
			want: "the chart renders more than 20000 YAML nodes"},
		{name: "a 20 MB ConfigMap", files: map[string]string{"templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ repeat 20000000 "x" }}`)},
			want: "repeat would return more bytes than the limit"},
		{name: "a 20 MB ConfigMap from files", files: map[string]string{"big.txt": strings.Repeat("x", 4<<20), "templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ range until 5 }}{{ $.Files.Get "big.txt" }}{{ end }}`)},
			want: "hello/templates/cm.yaml: chart rendering is bounded: templates wrote more bytes than the limit (8388608)"},
		{name: "a 2 MB ConfigMap", files: map[string]string{"big.txt": strings.Repeat("x", 2<<20), "templates/cm.yaml": "# a comment\n" + fmt.Sprintf(cm, "a", `{{ $.Files.Get "big.txt" }}`)},
			want: "hello/templates/cm.yaml: chart rendering is bounded: the resource at line 1 is 2097227 bytes, more than the API server stores (1572864, etcd's request limit)"},
		{name: "8.4 MB in CRDs of 1.4 MB", files: map[string]string{"crds/a.yaml": longCRD("a"), "crds/b.yaml": longCRD("b"), "crds/c.yaml": longCRD("c"), "crds/d.yaml": longCRD("d"), "crds/e.yaml": longCRD("e"), "crds/f.yaml": longCRD("f")},
			want: "hello/crds/f.yaml: chart rendering is bounded: the chart renders more than 8388608 bytes"},
		{name: "writing without end", files: map[string]string{"templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ range until 1000000 }}`+strings.Repeat("x", 100000)+`{{ end }}`)},
			want: "templates wrote more bytes than the limit"},
		{name: "doubling a string", files: map[string]string{"templates/cm.yaml": `{{ $s := "xxxxxxxx" }}{{ range until 64 }}{{ $s = cat $s $s }}{{ end }}` + fmt.Sprintf(cm, "a", "b")},
			want: "cat would return more bytes than the limit"},
		{name: "keeping copies", files: map[string]string{"templates/cm.yaml": `{{ $l := list }}{{ range until 1000 }}{{ $l = append $l (repeat 1000000 "x") }}{{ end }}` + fmt.Sprintf(cm, "a", "b")},
			want: "functions returned more bytes together than the limit"},
		{name: "replace into every gap", files: map[string]string{"templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ replace "" (repeat 100000 "y") (repeat 100000 "x") }}`)},
			want: "replace would return more bytes than the limit"},
		{name: "regexReplaceAll into every gap", files: map[string]string{"templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ regexReplaceAll "" (repeat 100000 "x") (repeat 100000 "y") }}`)},
			want: "regexReplaceAll would return more bytes than the limit"},
		{name: "indent by a billion", files: map[string]string{"templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ indent 1000000000 "x" }}`)},
			want: "indent would return more bytes than the limit"},
		{name: "printf widths", files: map[string]string{"templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ printf "`+strings.Repeat("%0999999d", 20)+`" `+strings.Repeat("1 ", 20)+` }}`)},
			want: "printf would return more bytes than the limit"},
		{name: "toJson of one string many times", files: map[string]string{"templates/cm.yaml": `{{ $s := repeat 1000000 "x" }}{{ $l := list }}{{ range until 100 }}{{ $l = append $l $s }}{{ end }}` + fmt.Sprintf(cm, "a", `{{ toJson $l }}`)},
			want: "toJson would return more bytes than the limit"},
		{name: "fromYaml of an alias bomb", files: map[string]string{"templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ fromYaml .Values.bomb | toJson }}`)},
			values: fmt.Sprintf("bomb: %q\n", billionLaughs), want: "fromYaml: "},
		{name: "splitList of every character", files: map[string]string{"templates/cm.yaml": fmt.Sprintf(cm, "a", `{{ splitList "" (repeat 8000000 "x") | len }}`)},
			want: "splitList would return more bytes than the limit"},
		{name: "derivePassword in a loop, past the time", lim: chart.Limits{Timeout: 200 * time.Millisecond},
			files: map[string]string{"templates/cm.yaml": `{{ range until 1000 }}{{ $p := derivePassword 1 "long" "pw" "u" "s" }}{{ end }}` + fmt.Sprintf(cm, "a", "b")},
			want:  "rendering took longer than 200ms"},
		{name: "a 5 MB CRD", files: map[string]string{"crds/big.yaml": bigCRD(5 << 20), "templates/cm.yaml": fmt.Sprintf(cm, "a", "b")},
			want: "crds/big.yaml: line 100000: more than 200000 YAML nodes"},
		{name: "a 1 MB CRD", files: map[string]string{"crds/big.yaml": bigCRD(1 << 20), "templates/cm.yaml": fmt.Sprintf(cm, "a", "b")},
			want: "the chart renders more than 20000 YAML nodes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.lim == (chart.Limits{}) {
				tc.lim = chart.DefaultLimits
			} else {
				lim := chart.DefaultLimits
				lim.Timeout = tc.lim.Timeout
				tc.lim = lim
			}
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := render(t, tc.files, tc.values, tc.lim)
			took := time.Since(start)
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Render = %v\nwant one line containing %q", err, tc.want)
			}
			t.Logf("%s in %s, heap %d MiB at most (%v)", tc.name, took.Round(time.Millisecond), after.HeapSys>>20, err)
		})
	}
}

// manyTemplates is n templates of the same text.
func manyTemplates(n int, text string) map[string]string {
	out := map[string]string{}
	for i := range n {
		out[fmt.Sprintf("templates/t%02d.yaml", i)] = text
	}
	return out
}

// billionLaughs is a YAML alias bomb: nine aliases of nine aliases...
var billionLaughs = func() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := range 9 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}()

// longCRD is a CRD of 1.4 MB in few YAML nodes: a long description.
func longCRD(name string) string {
	return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + name + "s.example.com\nspec:\n  group: example.com\n  names:\n    kind: " + strings.ToUpper(name) + "\n    plural: " + name + "s\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        description: " + strings.Repeat("x", 1400<<10) + "\n"
}

// bigCRD is a CRD of about size bytes: a schema of many properties.
func bigCRD(size int) string {
	var b strings.Builder
	b.WriteString("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: bigs.example.com\nspec:\n  group: example.com\n  names:\n    kind: Big\n    plural: bigs\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "          field%d:\n            type: string\n            description: a field of the big resource, number %d\n", i, i)
	}
	return b.String()
}

// FuzzChartTemplate renders arbitrary template text with arbitrary values
// under small limits: an error in one line or resources, the same bytes
// twice, never a panic, never past the limits.
func FuzzChartTemplate(f *testing.F) {
	f.Add(fmt.Sprintf(cm, "a", "{{ .Values.x | quote }}"), "x: 1\n")
	f.Add(`{{ range until 10 }}{{ tpl $.Values.t $ }}{{ end }}`, "t: '{{ repeat 3 \"ab\" }}'\n")
	f.Add(`{{ define "a" }}{{ include "a" . }}{{ end }}{{ include "a" . }}`, "")
	f.Add(`{{ $d := dict }}{{ range $i := until 30 }}{{ $_ := set $d (toString $i) $i }}{{ end }}{{ keys $d | toJson }}`, "")
	f.Add(`{{ randAlphaNum 4 }}{{ now }}{{ lookup "v1" "Pod" "" "" }}`, "")
	lim := chart.Limits{Timeout: 5 * time.Second, Steps: 20_000, Written: 1 << 20, Work: 1 << 20, Value: 256 << 10, Depth: 50, Output: 1 << 20, Nodes: 5_000}
	f.Fuzz(func(t *testing.T, tmpl, values string) {
		files := map[string]string{"templates/t.yaml": tmpl}
		a, errA := render(t, files, values, lim)
		b, errB := render(t, files, values, lim)
		if (errA == nil) != (errB == nil) || a != b || errA != nil && errA.Error() != errB.Error() {
			t.Fatalf("two renderings differ: %v / %v\n%s\n%s", errA, errB, a, b)
		}
		if errA != nil && strings.Contains(errA.Error(), "\n") {
			t.Fatalf("error spans lines: %q", errA)
		}
		if int64(len(a)) > lim.Output {
			t.Fatalf("rendered %d bytes, more than %d", len(a), lim.Output)
		}
	})
}
