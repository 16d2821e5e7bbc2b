package chart_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/microshift-compose/microshift-compose/compose/chart"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// helmCase is a chart (files relative to its directory, subcharts under
// charts/) rendered with a values file, by us and by the pinned `helm
// template`.
type helmCase struct {
	name   string
	files  map[string]string
	values string
	// fails says that both must refuse the chart; the end of Helm's
	// message is then compared with ours.
	fails bool
	// ownWords says that our refusal is worded our own way, and want is
	// then what it says.
	ownWords bool
	want     string
}

// renderBoth renders c with chart.Render and with `helm template`, for
// release web in namespace edge on Kubernetes 1.31. Helm's output loses
// its "# Source:" lines; ours is the stream chart.Render returns.
func renderBoth(t *testing.T, helm string, c helmCase) (ours, theirs string, ourErr, theirErr error) {
	t.Helper()
	fsys := fstest.MapFS{"values.yaml": {Data: []byte(c.values)}}
	dir := filepath.Join(t.TempDir(), "c")
	for name, data := range c.files {
		fsys["c/"+name] = &fstest.MapFile{Data: []byte(data)}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := chart.Load(fsys, chart.Spec{Path: "c", Namespace: "edge", Values: "values.yaml"})
	if err == nil {
		var out []byte
		out, _, err = chart.Render(t.Context(), l, chart.Options{Release: "web", Namespace: "edge", KubeVersion: "1.31"})
		ours = string(out)
	}
	ourErr = err
	vf := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(vf, []byte(c.values), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(helm, "template", "web", dir, "--namespace", "edge", "--kube-version", "1.31.0", "--values", vf, "--include-crds")
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("helm template: %v", err)
		}
		theirErr = &helmError{strings.TrimSpace(stderr.String())}
	}
	var kept []string
	for _, line := range strings.SplitAfter(string(out), "\n") {
		if !strings.HasPrefix(line, "# Source: ") {
			kept = append(kept, line)
		}
	}
	return ours, strings.Join(kept, ""), ourErr, theirErr
}

// documents are the documents of a stream, each trimmed, without those
// that hold nothing but comments: what chart.Render leaves out or trims
// of what helm template prints (its stream is of objects).
func documents(stream string) string {
	var out []string
	for _, d := range regexp.MustCompile(`(?m)^---[ \t]*$`).Split(stream, -1) {
		d = strings.TrimSpace(d)
		empty := true
		for _, line := range strings.Split(d, "\n") {
			empty = empty && (line == "" || strings.HasPrefix(line, "#"))
		}
		if !empty {
			out = append(out, d)
		}
	}
	return strings.Join(out, "\n---\n")
}

type helmError struct{ msg string }

func (e *helmError) Error() string { return e.msg }

// checkSameAsHelm renders each case both ways and compares: the same
// bytes, or both refusing with the same message.
func checkSameAsHelm(t *testing.T, cases []helmCase) {
	helm := testutil.PinnedTool(t, "helm")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ours, theirs, ourErr, theirErr := renderBoth(t, helm, c)
			switch {
			case c.fails:
				if ourErr == nil || theirErr == nil {
					t.Fatalf("want both to refuse: ours %v, helm %v", ourErr, theirErr)
				}
				// Helm's message ends with the engine's: ours must
				// say the same.
				msg := theirErr.Error()
				if i := strings.Index(msg, "Error: "); i >= 0 {
					msg = msg[i+len("Error: "):]
				}
				msg, _, _ = strings.Cut(msg, "\n")
				if c.ownWords {
					if !strings.Contains(ourErr.Error(), c.want) {
						t.Errorf("we refuse for another reason than %q: %v (helm: %s)", c.want, ourErr, msg)
					}
				} else if !strings.HasSuffix(ourErr.Error(), msg) && !strings.Contains(ourErr.Error(), msg) {
					t.Errorf("messages differ:\nours: %v\nhelm: %s", ourErr, msg)
				}
			case ourErr != nil || theirErr != nil:
				t.Fatalf("ours %v, helm %v", ourErr, theirErr)
			case documents(ours) != documents(theirs):
				t.Errorf("rendered differently from helm template:\n%s\nours:\n%s\nhelm:\n%s", testutil.FirstDiff([]byte(documents(theirs)), []byte(documents(ours))), ours, theirs)
			case len(ours) < 20:
				t.Errorf("rendered almost nothing: %q", ours)
			}
		})
	}
}

const (
	parentChart = "apiVersion: v2\nname: parent\nversion: 1.0.0\n"
	// show prints a value as YAML in a ConfigMap of the release
	// namespace, so that we keep it as rendered.
	show = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: {{ .Release.Namespace }}\ndata:\n  v: |\n{{ %s | toYaml | indent 4 }}\n"
)

func cmShow(name, expr string) string {
	return strings.Replace(strings.Replace(show, "%s", name, 1), "%s", expr, 1)
}

func subChart(name, version string) string {
	return "apiVersion: v2\nname: " + name + "\nversion: " + version + "\n"
}

// TestValuesMatchHelm: the values a chart and its subcharts render with,
// as helm install computes them: defaults, overrides, nulls deleting
// defaults, tables merging and lists replaced, subchart tables, globals
// both ways, conditions, tags, aliases and import-values.
func TestValuesMatchHelm(t *testing.T) {
	withSub := func(parentYAML, parentValues, subValues string, extra map[string]string) map[string]string {
		files := map[string]string{
			"Chart.yaml":                     parentYAML,
			"values.yaml":                    parentValues,
			"templates/values.yaml":          cmShow("parent", ".Values"),
			"charts/sub/Chart.yaml":          subChart("sub", "0.2.0"),
			"charts/sub/values.yaml":         subValues,
			"charts/sub/templates/vals.yaml": cmShow("sub-{{ .Chart.Name }}", ".Values"),
		}
		for k, v := range extra {
			files[k] = v
		}
		return files
	}
	deps := parentChart + "dependencies:\n- name: sub\n  version: 0.2.x\n"
	checkSameAsHelm(t, []helmCase{
		{name: "defaults and overrides", files: map[string]string{
			"Chart.yaml":            parentChart,
			"values.yaml":           "a: 1\nb: {c: 2, d: [1, 2], e: x}\nf: gone\ng: {h: 1}\nlist: [a, b]\n",
			"templates/values.yaml": cmShow("v", ".Values"),
		}, values: "b: {c: 3, d: [9]}\nf: null\ng: null\nlist: [z]\nnew: {deep: {er: true}}\n"},
		{name: "a scalar over a table and a table over a scalar", files: map[string]string{
			"Chart.yaml":            parentChart,
			"values.yaml":           "a: {b: 1}\nc: 2\n",
			"templates/values.yaml": cmShow("v", ".Values"),
		}, values: "a: 5\nc: {d: 1}\n"},
		{name: "subchart defaults and overrides and nulls", files: withSub(deps,
			"sub: {x: parent, drop: null}\n",
			"x: sub\ny: {z: 1}\ndrop: me\nkeep: 1\n", nil),
			values: "sub: {y: {w: 2}, keep: null}\n"},
		{name: "globals", files: withSub(deps,
			"global: {region: eu, tbl: {a: 1, b: 1}, s: parent}\n",
			"global: {tbl: {b: 2, c: 2}, s: {not: scalar}, own: 1}\n", nil),
			values: "global: {tbl: {a: 9}, user: true}\n"},
		{name: "a subchart with no table of its own", files: withSub(parentChart, "a: 1\n", "b: 2\n", nil)},
		{name: "conditions", files: withSub(parentChart+"dependencies:\n- name: sub\n  version: 0.2.0\n  condition: missing.enabled, sub.enabled,other.enabled\n- name: other\n  version: 1.x\n  condition: notbool,other.enabled\n",
			"sub: {enabled: false}\nother: {enabled: true}\nnotbool: yes-string\n", "a: 1\n", map[string]string{
				"charts/other/Chart.yaml":          subChart("other", "1.2.3"),
				"charts/other/templates/vals.yaml": cmShow("other", ".Values"),
			}), values: "other: {enabled: false}\n"},
		{name: "conditions on", files: withSub(parentChart+"dependencies:\n- name: sub\n  version: 0.2.0\n  condition: sub.enabled\n",
			"sub: {enabled: false}\n", "a: 1\n", nil), values: "sub: {enabled: true}\n"},
		{name: "tags", files: withSub(parentChart+"dependencies:\n- name: sub\n  version: 0.2.0\n  tags: [front, back]\n- name: other\n  version: 1.2.3\n  tags: [back]\n",
			"tags: {back: false}\n", "a: 1\n", map[string]string{
				"charts/other/Chart.yaml":          subChart("other", "1.2.3"),
				"charts/other/templates/vals.yaml": cmShow("other", ".Values"),
			}), values: "tags: {front: true}\n"},
		{name: "aliases", files: withSub(parentChart+"dependencies:\n- name: sub\n  version: 0.2.0\n  alias: one\n- name: sub\n  version: 0.2.0\n  alias: two\n  condition: two.on\n",
			"one: {x: 1}\ntwo: {x: 2, on: true}\n", "x: 0\n", nil), values: "two: {y: 3}\n"},
		{name: "a dependency in another version", files: withSub(parentChart+"dependencies:\n- name: sub\n  version: 9.x\n", "a: 1\n", "x: 0\n", nil)},
		{name: "import-values", files: withSub(parentChart+"dependencies:\n- name: sub\n  version: 0.2.0\n  import-values:\n  - data\n  - child: deep.inner\n    parent: imported.here\n  - child: missing\n    parent: nowhere\n",
			"imported: {here: {mine: 1}}\nown: 1\n",
			"exports:\n  data: {exported: 1, own: 2}\ndeep: {inner: {a: 1, b: null}}\n", nil),
			values: "imported: {here: {user: 2}}\n"},
		{name: "sub-subchart", files: withSub(deps, "sub: {deeper: {x: parent}}\nglobal: {g: 1}\n", "deeper: {y: sub}\n", map[string]string{
			"charts/sub/charts/deeper/Chart.yaml":          subChart("deeper", "0.0.1"),
			"charts/sub/charts/deeper/values.yaml":         "x: own\ny: own\nz: own\n",
			"charts/sub/charts/deeper/templates/vals.yaml": cmShow("deeper", ".Values"),
		}), values: "sub: {deeper: {z: user}}\n"},
		{name: "a values type mismatch", files: withSub(deps, "a: 1\n", "x: 0\n", nil), values: "sub: 5\n", fails: true},
	})
}

// TestTemplateDataMatchesHelm: .Chart, .Release, .Capabilities,
// .Template, .Subcharts and .Files as templates see them.
func TestTemplateDataMatchesHelm(t *testing.T) {
	files := map[string]string{
		"Chart.yaml":                   parentChart + "appVersion: \"2.0\"\ndescription: a chart\nkeywords: [a, b]\nannotations: {x: y}\ndependencies:\n- name: sub\n  version: 0.2.0\n  import-values: [data]\n",
		"templates/chart.yaml":         cmShow("chart", ".Chart"),
		"templates/release.yaml":       cmShow("release", ".Release"),
		"templates/capabilities.yaml":  cmShow("capabilities", "(dict \"kube\" .Capabilities.KubeVersion \"str\" (print .Capabilities.KubeVersion) \"git\" .Capabilities.KubeVersion.GitVersion \"apis\" (len .Capabilities.APIVersions) \"has\" (.Capabilities.APIVersions.Has \"apps/v1\") \"hasnt\" (.Capabilities.APIVersions.Has \"apps/v1/Deployment\") \"helm\" .Capabilities.HelmVersion.Version)"),
		"templates/sub/template.yaml":  cmShow("template", ".Template"),
		"templates/subcharts.yaml":     cmShow("subcharts", "(dict \"v\" .Subcharts.sub.Values \"c\" .Subcharts.sub.Chart.Name \"root\" .Subcharts.sub.Chart.IsRoot)"),
		"templates/files.yaml":         cmShow("files", "(dict \"get\" (.Files.Get \"conf/a.txt\") \"bytes\" (.Files.GetBytes \"conf/b.txt\" | toString) \"none\" (.Files.Get \"nope\") \"glob\" (include \"names\" (.Files.Glob \"conf/*.txt\")) \"deep\" (include \"names\" (.Files.Glob \"**.json\")) \"bad\" (include \"names\" (.Files.Glob \"[\")) \"lines\" (.Files.Lines \"conf/b.txt\") \"nolines\" (.Files.Lines \"nope\") \"nl\" (.Files.Lines \"conf/nl.txt\"))"),
		"templates/config.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\n  namespace: {{ .Release.Namespace }}\ndata:\n{{ (.Files.Glob \"conf/*.txt\").AsConfig | indent 2 }}\n",
		"templates/secret.yaml":        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: secret\n  namespace: {{ .Release.Namespace }}\ndata:\n{{ (.Files.Glob \"conf/**\").AsSecrets | indent 2 }}\n",
		"templates/range.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: range\n  namespace: {{ .Release.Namespace }}\ndata:\n{{- range $path, $_ := .Files.Glob \"conf/*\" }}\n  {{ base $path }}: {{ $.Files.Get $path | quote }}\n{{- end }}\n",
		"templates/NOTES.txt":          "notes are not rendered into the stream {{ .Release.Name }}",
		"templates/_partial.tpl":       "{{ define \"nothing\" }}x{{ end }}{{ define \"names\" }}{{ range $k, $_ := . }}{{ $k }},{{ end }}{{ end }}",
		"conf/a.txt":                   "alpha",
		"conf/b.txt":                   "line 1\nline 2\n",
		"conf/nl.txt":                  "\n",
		"conf/deep/c.json":             "{}",
		"charts/sub/Chart.yaml":        subChart("sub", "0.2.0"),
		"charts/sub/values.yaml":       "exports: {data: {x: 1}}\ns: 1\n",
		"charts/sub/templates/c.yaml":  cmShow("sub-chart", "(dict \"chart\" .Chart \"template\" .Template \"files\" (include \"names\" (.Files.Glob \"**\")))"),
		"charts/sub/files/f.txt":       "sub file",
		"charts/lib/Chart.yaml":        "apiVersion: v2\nname: lib\nversion: 0.1.0\ntype: library\n",
		"charts/lib/templates/_l.tpl":  "{{ define \"lib.hello\" }}hello from lib {{ .Chart.Name }}{{ end }}",
		"charts/lib/templates/no.yaml": "a library's non-partial template does not render",
		"templates/lib.yaml":           cmShow("lib", "(include \"lib.hello\" .)"),
	}
	checkSameAsHelm(t, []helmCase{{name: "template data", files: files, values: "user: 1\n"}})
}

// TestFunctionsMatchHelm: include, tpl, required and fail as Helm
// defines them, the encoders and decoders Helm adds to Sprig's, and
// missing values printing nothing.
func TestFunctionsMatchHelm(t *testing.T) {
	one := func(tpl string) map[string]string {
		return map[string]string{"Chart.yaml": parentChart, "templates/t.yaml": tpl}
	}
	checkSameAsHelm(t, []helmCase{
		{name: "include and define", files: map[string]string{
			"Chart.yaml":                   parentChart + "dependencies:\n- name: sub\n  version: 0.2.0\n",
			"templates/_helpers.tpl":       "{{ define \"name\" }}{{ .Chart.Name }}-{{ .Release.Name }}{{ end }}{{ define \"shared\" }}parent wins{{ end }}{{ define \"nested\" }}[{{ include \"name\" . }}]{{ end }}",
			"templates/t.yaml":             cmShow("inc", "(list (include \"name\" .) (include \"nested\" .) (include \"shared\" .) (include \"sub.only\" .))"),
			"charts/sub/Chart.yaml":        subChart("sub", "0.2.0"),
			"charts/sub/templates/_h.tpl":  "{{ define \"shared\" }}sub loses{{ end }}{{ define \"sub.only\" }}from sub {{ .Chart.Name }}{{ end }}",
			"charts/sub/templates/s.yaml":  cmShow("sub-inc", "(include \"shared\" .)"),
			"charts/sub/templates/t2.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: t2\n  namespace: edge\ndata:\n  v: {{ template \"sub.only\" . }}\n",
		}},
		{name: "tpl", files: map[string]string{
			"Chart.yaml":             parentChart,
			"templates/_helpers.tpl": "{{ define \"h\" }}helper {{ .Values.name }}{{ end }}",
			"templates/t.yaml":       cmShow("tpl", "(list (tpl .Values.text .) (tpl .Values.defines .) (tpl \"{{ tpl .Values.nested . }}\" .) (tpl \"{{ .missing }}|{{ .Values.missing }}\" .) (tpl \"{{ define \\\"x\\\" }}no output{{ end }}\" .))"),
		}, values: "name: n\ntext: '{{ .Values.name }} {{ include \"h\" . }} {{ .Release.Namespace }}'\ndefines: '{{ define \"t\" }}in tpl{{ end }}{{ include \"t\" . }}'\nnested: '{{ tpl \"{{ .Values.name }}\" . }}'\n"},
		{name: "required given", files: one(cmShow("r", "(list (required \"x\" .Values.a) (required \"y\" 0) (required \"z\" false))")), values: "a: set\n"},
		{name: "missing values print nothing", files: one("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m\n  namespace: {{ .Release.Namespace }}\ndata:\n  a: \"{{ .Values.nope }}\"\n  b: \"{{ .Values.t.nope }}\"\n  c: \"{{ index .Values \"nope\" }}\"\n"), values: "t: {}\n"},
		{name: "encoders", files: one(cmShow("enc", "(dict \"toml\" (toToml .Values) \"badtoml\" (toToml 5) \"json\" (toJson .Values) \"yaml\" (toYaml .Values.list) \"pretty\" (toYamlPretty .Values) \"fy\" (fromYaml \"a: [1, {b: c}]\") \"fyerr\" (fromYaml \"a: [\") \"fya\" (fromYamlArray \"- 1\\n- x\") \"fyaerr\" (fromYamlArray \"a: 1\") \"fj\" (fromJson \"{\\\"a\\\": 1.5}\") \"fjerr\" (fromJson \"{\") \"fja\" (fromJsonArray \"[1, \\\"x\\\"]\") \"fjaerr\" (fromJsonArray \"{}\") \"ft\" (fromToml \"a = 1\\n[b]\\nc = \\\"d\\\"\") \"fterr\" (fromToml \"a = \") \"host\" (getHostByName \"localhost\"))")),
			values: "list: [1, two, {three: 3}]\nmap: {k: v, n: 1.5, b: true}\n"},
		{name: "required missing", files: one("a: {{ required \"give a, please\" .Values.a }}\n"), fails: true},
		{name: "required empty", files: one("a: {{ .Values.a | required \"a is empty\" }}\n"), values: "a: \"\"\n", fails: true},
		{name: "fail", files: one("{{ if not .Values.ok }}{{ fail \"not ok\" }}{{ end }}\n"), fails: true},
		{name: "required in include", files: map[string]string{"Chart.yaml": parentChart, "templates/_h.tpl": "{{ define \"r\" }}{{ required \"deep\" .Values.x }}{{ end }}", "templates/t.yaml": "{{ include \"r\" . }}\n"}, fails: true},
		{name: "parse error", files: one("{{ if }}\n"), fails: true},
		{name: "an undefined function", files: one("{{ env \"HOME\" }}\n"), fails: true},
	})
}

// TestInstallOrderMatchesHelm: the rendered documents split and sorted as
// Helm installs them: kinds in Helm's order, unknown kinds after by name,
// files by name, documents in file order, empty documents dropped.
func TestInstallOrderMatchesHelm(t *testing.T) {
	obj := func(kind, name string) string {
		return "apiVersion: example.com/v1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n  namespace: {{ .Release.Namespace }}\n"
	}
	checkSameAsHelm(t, []helmCase{{name: "install order", files: map[string]string{
		"Chart.yaml":       parentChart,
		"templates/a.yaml": obj("Zebra", "z1") + "---\n" + obj("Deployment", "d1") + "\n---\n\n---\n" + obj("ConfigMap", "c1") + "---   \n" + obj("Alpha", "a1"),
		"templates/b.yaml": "\n\n" + obj("Deployment", "d0") + "---\n# only a comment\n---\n" + obj("Namespace", "n0") + "---\n" + obj("Zebra", "z0"),
		"templates/c.yaml": "   \n",
		"crds/crd.yaml":    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: zebras.example.com\nspec:\n  group: example.com\n  names: {kind: Zebra, plural: zebras}\n  scope: Namespaced\n  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n",
	}}})
}

// TestSchemaMatchesHelm: values.schema.json accepts and refuses the
// values Helm's validator does, draft by draft: format asserted up to
// draft-07 and not in 2020-12 (nor without $schema), each draft's own
// keywords, subcharts' schemas, a schema that is no schema.
func TestSchemaMatchesHelm(t *testing.T) {
	const d4, d6, d7, d2020 = `"$schema": "http://json-schema.org/draft-04/schema#", `, `"$schema": "http://json-schema.org/draft-06/schema#", `, `"$schema": "http://json-schema.org/draft-07/schema#", `, `"$schema": "https://json-schema.org/draft/2020-12/schema", `
	var cases []helmCase
	add := func(name, schema, values string, refused bool) {
		want := ""
		if refused {
			want = "the values do not meet its values.schema.json"
			if strings.HasPrefix(name, "no schema") {
				want = "chart parent: values.schema.json: "
			}
		}
		cases = append(cases, helmCase{name: name, want: want, files: map[string]string{
			"Chart.yaml":         parentChart,
			"values.schema.json": schema,
			"templates/v.yaml":   cmShow("v", ".Values"),
		}, values: values, fails: refused, ownWords: true})
	}
	add("draft-07 type", `{`+d7+`"properties": {"num": {"type": "integer"}}}`, "num: many\n", true)
	add("draft-07 type met", `{`+d7+`"properties": {"num": {"type": "integer"}}}`, "num: 3\n", false)
	add("draft-07 format refused", `{`+d7+`"properties": {"mail": {"type": "string", "format": "email"}}}`, "mail: not-an-address\n", true)
	add("draft-07 format met", `{`+d7+`"properties": {"mail": {"type": "string", "format": "email"}}}`, "mail: a@example.com\n", false)
	add("draft-07 without #", `{"$schema": "http://json-schema.org/draft-07/schema", "properties": {"ip": {"format": "ipv4"}}}`, "ip: 300.1.1.1\n", true)
	add("draft-07 if then", `{`+d7+`"if": {"properties": {"tls": {"const": true}}}, "then": {"required": ["cert"]}}`, "tls: true\n", true)
	add("draft-07 definitions", `{`+d7+`"definitions": {"port": {"type": "integer", "maximum": 65535}}, "properties": {"p": {"$ref": "#/definitions/port"}}}`, "p: 70000\n", true)
	add("draft-06 const", `{`+d6+`"properties": {"mode": {"const": "a"}}}`, "mode: b\n", true)
	add("draft-04 exclusive maximum", `{`+d4+`"properties": {"num": {"type": "number", "maximum": 5, "exclusiveMaximum": true}}}`, "num: 5\n", true)
	add("draft-04 met", `{`+d4+`"properties": {"num": {"type": "number", "maximum": 5, "exclusiveMaximum": true}}}`, "num: 4\n", false)
	add("2020-12 format ignored", `{`+d2020+`"properties": {"mail": {"format": "email"}}}`, "mail: not-an-address\n", false)
	add("no $schema format ignored", `{"properties": {"mail": {"format": "email"}}}`, "mail: not-an-address\n", false)
	add("2020-12 prefixItems", `{`+d2020+`"properties": {"l": {"prefixItems": [{"type": "string"}, {"type": "integer"}]}}}`, "l: [a, b]\n", true)
	add("2020-12 defs", `{"$defs": {"name": {"type": "string", "pattern": "^[a-z]+$"}}, "properties": {"num": {"$ref": "#/$defs/name"}}}`, "num: Upper\n", true)
	add("latest", `{"$schema": "http://json-schema.org/schema#", "properties": {"num": {"minimum": 3}}}`, "num: 2\n", true)
	add("required", `{"required": ["image"], "properties": {"image": {"type": "string"}}}`, "other: 1\n", true)
	add("additional properties", `{`+d7+`"additionalProperties": false, "properties": {"a": {}}}`, "a: 1\nb: 2\n", true)
	add("enum and nested", `{"properties": {"svc": {"type": "object", "properties": {"type": {"enum": ["ClusterIP", "NodePort"]}}}}}`, "svc: {type: LoadBalancer}\n", true)
	add("all met", `{`+d7+`"type": "object", "required": ["a"], "properties": {"a": {"type": "array", "items": {"type": "string"}, "minItems": 1}, "b": {"anyOf": [{"type": "null"}, {"type": "boolean"}]}}}`, "a: [x]\nb: null\n", false)
	add("no schema: a type that is none", `{`+d7+`"properties": {"a": {"type": "objekt"}}}`, "a: 1\n", true)
	add("no schema: 2020-12 type that is none", `{"properties": {"a": {"type": "objekt"}}}`, "a: 1\n", true)
	add("no schema: a required that is no list", `{`+d7+`"required": "a"}`, "a: 1\n", true)
	add("no schema: 2020-12 minimum that is no number", `{"properties": {"a": {"minimum": "3"}}}`, "b: 1\n", true)
	add("no schema: a pattern that is no expression", `{"properties": {"a": {"pattern": "(["}}}`, "b: 1\n", true)
	cases = append(cases, helmCase{name: "a subchart's schema sees its globals", files: map[string]string{
		"Chart.yaml":                    parentChart,
		"templates/v.yaml":              cmShow("v", ".Values"),
		"charts/sub/Chart.yaml":         subChart("sub", "0.2.0"),
		"charts/sub/values.yaml":        "a: 1\n",
		"charts/sub/values.schema.json": `{` + d7 + `"additionalProperties": false, "properties": {"a": {"type": "integer"}}}`,
		"charts/sub/templates/v.yaml":   cmShow("sub", ".Values"),
	}, fails: true, ownWords: true, want: "chart parent/charts/sub: the values do not meet its values.schema.json"})
	checkSameAsHelm(t, cases)
}
