package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Round two of the hostile suite (issue 17): structure bounded before any
// decoder (nesting and counts of TOML, JSON and YAML in every input that
// holds them), multi-document YAML where one document is read, writes
// never through a link, and the rough edges.

func nested(open, inner, close string, n int) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

// deepBlocks is YAML nested n levels by indentation.
func deepBlocks(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat(" ", i) + "a:\n")
	}
	return b.String()
}

// tomlShapes are TOML documents whose decoding cost grows with their
// nesting: each is refused before the decoder, in one line quoting at
// most an excerpt.
var tomlShapes = []struct{ name, data, want string }{
	{"40 KB of nested inline tables", "x = " + nested("{a = ", "1", "}", 40<<10/6) + "\n", "nesting deeper than 32 levels"},
	{"nested arrays", "x = " + nested("[", "", "]", 20<<10) + "\n", "nesting deeper than 32 levels"},
	{"a 20 KB deep dotted key", "a" + strings.Repeat(".a", 10<<10) + " = 1\n", "nesting deeper than 32 levels"},
	{"a deep table header", "[a" + strings.Repeat(".a", 10<<10) + "]\n", "nesting deeper than 32 levels"},
	{"a deep array-of-tables header", "[[a" + strings.Repeat(".a", 100) + "]]\n", "nesting deeper than 32 levels"},
	{"more than 100,000 values", "x = [" + strings.Repeat("1,", 100_001) + "1]\n", "more than 100000 keys and values"},
}

// jsonShapes are JSON documents nested or counted beyond the gate.
var jsonShapes = []struct{ name, data, want string }{
	{"arrays nested 10,000 deep", nested("[", "", "]", 10_000), "nested deeper than 64 levels"},
	{"objects nested 10,000 deep", nested(`{"a":`, "1", "}", 10_000), "nested deeper than 64 levels"},
}

// yamlShapes are YAML documents nested or counted beyond the gate.
var yamlShapes = []struct{ name, data, want string }{
	{"flow sequences nested 10,000 deep", "a: " + nested("[", "", "]", 10_000) + "\n", "YAML nested deeper than 100 levels"},
	{"flow mappings nested 10,000 deep", "a: " + nested("{a: ", "1", "}", 10_000) + "\n", "YAML nested deeper than 100 levels"},
	{"block mappings nested 200 deep", deepBlocks(200), "YAML nested deeper than 100 levels"},
	{"sequence entries nested 200 deep on one line", "a:\n" + strings.Repeat("- ", 200) + "x\n", "YAML nested deeper than 100 levels"},
	{"200,001 nodes in a flow list", "a: [" + strings.Repeat("0,", 200_000) + "0]\n", "more than 200000 YAML nodes"},
}

func structureCases() []hostileCase {
	var cases []hostileCase
	// TOML: the catalog's files, and registries.conf (decoded by
	// containers/image).
	tomlInputs := []struct {
		name  string
		setup func(h *hostileEnv, data string) ([]string, string)
	}{
		{"catalog.toml", func(h *hostileEnv, data string) ([]string, string) {
			h.component("edge", "")
			return withEdge(h), h.write("catalog/catalog.toml", data)
		}},
		{"component.toml", func(h *hostileEnv, data string) ([]string, string) {
			p := h.component("edge", data)
			return withEdge(h), p
		}},
		{"mirror --registries-conf", func(h *hostileEnv, data string) ([]string, string) {
			p := h.write("registries.conf", data)
			return []string{"mirror", "--lock", filepath.Join(h.out, "compose.lock.json"), "--to", "oci:" + filepath.Join(h.dir, "layout"), "--registries-conf", p}, p
		}},
	}
	for _, in := range tomlInputs {
		for _, sh := range tomlShapes {
			cases = append(cases, hostileCase{class: "structure/toml", name: in.name + ": " + sh.name,
				setup: func(h *hostileEnv) ([]string, string) { return in.setup(h, sh.data) }, want: sh.want})
		}
	}
	// JSON: every JSON a flag or directory names.
	jsonInputs := []struct {
		name  string
		setup func(h *hostileEnv, data string) ([]string, string)
	}{
		{"mirror --lock", func(h *hostileEnv, data string) ([]string, string) {
			p := h.write("lock.json", data)
			return []string{"mirror", "--lock", p, "--to", "oci:" + filepath.Join(h.dir, "layout")}, p
		}},
		{"footprint --lock", func(h *hostileEnv, data string) ([]string, string) {
			p := h.write("lock.json", data)
			return []string{"footprint", "--lock", p}, p
		}},
		{"diff NEW", func(h *hostileEnv, data string) ([]string, string) {
			p := h.write("lock.json", data)
			return []string{"diff", filepath.Join(h.out, "compose.lock.json"), p}, p
		}},
		{"release update --payload", func(h *hostileEnv, data string) ([]string, string) {
			p := h.write("payload.json", data)
			return []string{"release", "update", h.releaseDir("rel"), "--payload", "x86_64=" + p, "--dry-run"}, p
		}},
		{"release update --csv (JSON)", func(h *hostileEnv, data string) ([]string, string) {
			p := h.write("csv.json", data)
			return []string{"release", "update", h.releaseDir("rel"), "--csv", p, "--dry-run"}, p
		}},
		{"--pull-secret", func(h *hostileEnv, data string) ([]string, string) {
			p := h.write("pull-secret.json", data)
			return build(h, "--pull-secret", p), p
		}},
		{"--release-dir file", func(h *hostileEnv, data string) ([]string, string) {
			d := h.releaseDir("rel")
			h.write(filepath.Join(d, "release-x86_64.json"), data)
			return build(h, "--release-dir", d), "release-x86_64.json"
		}},
		{"a component's release/ file", func(h *hostileEnv, data string) ([]string, string) {
			h.component("edge", "")
			h.write("catalog/components/edge/release/release-edge-x86_64.json", data)
			return withEdge(h), "release-edge-x86_64.json"
		}},
		{"an update journal", func(h *hostileEnv, data string) ([]string, string) {
			d := h.releaseDir("rel")
			p := h.write(filepath.Join(d, ".microshift-compose-update.journal"), data)
			return []string{"release", "update", d, "--resolve-tags"}, p
		}},
	}
	for _, in := range jsonInputs {
		for _, sh := range jsonShapes {
			cases = append(cases, hostileCase{class: "structure/json", name: in.name + ": " + sh.name,
				setup: func(h *hostileEnv) ([]string, string) { return in.setup(h, sh.data) }, want: sh.want})
		}
	}
	million := "[" + strings.Repeat("0,", 1_000_000) + "0]"
	for _, in := range jsonInputs[:5] {
		cases = append(cases, hostileCase{class: "structure/json", name: in.name + ": more than 1,000,000 values",
			setup: func(h *hostileEnv) ([]string, string) { return in.setup(h, million) }, want: "more than 1000000 values"})
	}
	// YAML: every YAML a flag, a component or a plugin hands in.
	yamlInputs := []struct {
		name  string
		setup func(h *hostileEnv, data string) ([]string, string)
	}{
		{"--config", func(h *hostileEnv, data string) ([]string, string) {
			p := h.write("config.yaml", data)
			return build(h, "--config", p), p
		}},
		{"--lvmd", func(h *hostileEnv, data string) ([]string, string) {
			p := h.write("lvmd.yaml", data)
			return build(h, "--with", "storage-lvms", "--lvmd", p), p
		}},
		{"release update --csv", func(h *hostileEnv, data string) ([]string, string) {
			p := h.write("csv.yaml", data)
			return []string{"release", "update", h.releaseDir("rel"), "--csv", p, "--dry-run"}, p
		}},
		{"a catalog manifest", func(h *hostileEnv, data string) ([]string, string) {
			h.manifests("edge", map[string]string{"cm.yaml": data})
			return withEdge(h), "manifests/cm.yaml"
		}},
		{"plugin output", func(h *hostileEnv, data string) ([]string, string) {
			h.pluginOutput("edge", data)
			return withEdge(h), "plugin run printed bad output"
		}},
	}
	for _, in := range yamlInputs {
		for _, sh := range yamlShapes {
			cases = append(cases, hostileCase{class: "structure/yaml", name: in.name + ": " + sh.name,
				setup: func(h *hostileEnv) ([]string, string) { return in.setup(h, sh.data) }, want: sh.want})
		}
	}
	var cms strings.Builder
	for i := range 60_000 {
		fmt.Fprintf(&cms, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\n", i)
	}
	cases = append(cases,
		hostileCase{class: "structure/yaml", name: "60,000 ConfigMaps in manifests/ (872 MB before)",
			setup: func(h *hostileEnv) ([]string, string) {
				h.manifests("edge", map[string]string{"cms.yaml": cms.String()})
				return withEdge(h), "manifests/cms.yaml"
			}, want: "more than 200000 YAML nodes"},
		hostileCase{class: "structure/yaml", name: "manifests/ over the component's node budget across files",
			setup: func(h *hostileEnv) ([]string, string) {
				files := map[string]string{}
				for i := range 3 {
					files[fmt.Sprintf("cm%d.yaml", i)] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n" + strings.Repeat("  k: v\n", 4000)
				}
				h.manifests("edge", files)
				return withEdge(h), "manifests/cm2.yaml"
			}, want: "the component directory holds more than 20000 YAML nodes"},
		hostileCase{class: "structure/yaml", name: "plugin output over the component's node budget",
			setup: func(h *hostileEnv) ([]string, string) {
				h.pluginOutput("edge", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n"+strings.Repeat("  k: v\n", 12_000))
				return withEdge(h), "plugin run printed bad output"
			}, want: "more than 20000 YAML nodes"},
		hostileCase{class: "structure/toml", name: "component.toml: a 20 KB unknown key is quoted as an excerpt",
			setup: func(h *hostileEnv) ([]string, string) {
				return withEdge(h), h.component("edge", strings.Repeat("k", 20<<10)+" = 1\n")
			}, want: `unknown key "kkkk`},
	)
	return cases
}

func documentCases() []hostileCase {
	two := "debugging:\n  logLevel: Debug\n---\ndebugging:\n  logLevel: Trace\n"
	lvmd := "device-classes:\n- name: default\n  volume-group: rhel\n  default: true\n---\ndevice-classes: []\n"
	return []hostileCase{
		{class: "documents", name: "--config with two YAML documents",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.write("config.yaml", two)
				return build(h, "--config", p), p
			}, want: "line 3: a second YAML document; only the first would be read"},
		{class: "documents", name: "--config with a second document after a leading ---",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.write("config.yaml", "---\n"+two)
				return build(h, "--config", p), p
			}, want: "line 4: a second YAML document"},
		{class: "documents", name: "--lvmd with two YAML documents",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.write("lvmd.yaml", lvmd)
				return build(h, "--with", "storage-lvms", "--lvmd", p), p
			}, want: "line 5: a second YAML document"},
		{class: "documents", name: "--lvmd with a second flow document",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.write("lvmd.yaml", "device-classes: []\n--- {}\n")
				return build(h, "--with", "storage-lvms", "--lvmd", p), p
			}, want: "line 2: a second YAML document"},
	}
}

func linkCases() []hostileCase {
	return []hostileCase{
		{class: "links", name: "release import --force into a symlinked releases/data/5.0.json",
			setup: func(h *hostileEnv) ([]string, string) {
				rel := h.releaseDir("rel")
				outside := h.write("elsewhere/5.0.json", "{}\n")
				link := h.symlink(outside, "data/5.0.json")
				return []string{"release", "import", rel, "--data-dir", h.path("data"), "--origin", "test", "--force"}, link
			}, want: "is a symlink (to "},
		{class: "links", name: "a journal whose temporary file is a symlink",
			setup: func(h *hostileEnv) ([]string, string) {
				d := h.releaseDir("rel")
				data, _ := os.ReadFile(h.secret)
				sum := sha256.Sum256(data)
				tmp := h.symlink(h.secret, filepath.Join(d, ".release-x86_64.json.tmp-1"))
				h.write(filepath.Join(d, ".microshift-compose-update.journal"), fmt.Sprintf(
					`{"version": 1, "files": [{"target": "release-x86_64.json", "temp": ".release-x86_64.json.tmp-1", "sha256": %q}]}`, hex.EncodeToString(sum[:])))
				return []string{"release", "update", d}, tmp
			}, want: "is not a regular file (a symlink)"},
	}
}

func roughEdgeCases() []hostileCase {
	mode := func(m string) func(h *hostileEnv) ([]string, string) {
		return func(h *hostileEnv) ([]string, string) {
			h.component("edge", fmt.Sprintf("[[files]]\npath = \"/etc/x\"\nmode = %q\ncontent = \"x\"\n", m))
			return withEdge(h), "mode"
		}
	}
	return []hostileCase{
		{class: "rough-edges", name: "mode 7777", setup: mode("7777"),
			want: `mode "7777" sets setuid, setgid or sticky bits, which component files may not have: want 0000 to 0777`},
		{class: "rough-edges", name: "mode 4755", setup: mode("4755"), want: "sets setuid, setgid or sticky bits"},
		{class: "rough-edges", name: "mode 0999", setup: mode("0999"), want: "is not an octal permission mode from 0000 to 0777"},
		{class: "rough-edges", name: "a kustomize error is one line naming the component's file",
			setup: func(h *hostileEnv) ([]string, string) {
				h.manifests("edge", map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata: [x\n"})
				return withEdge(h), `component "edge": rendering manifests: manifests/cm.yaml: kustomize: yaml: line 4`
			}, want: "did not find expected"},
		{class: "rough-edges", name: "a kustomization patch matching nothing names the kustomization",
			setup: func(h *hostileEnv) ([]string, string) {
				h.manifests("edge", map[string]string{
					"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
					"p.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: zz\ndata: {a: b}\n",
					"kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- path: p.yaml\n",
				})
				return withEdge(h), "manifests (its kustomization): kustomize: no resource matches"
			}},
	}
}

// TestReleaseUpdateFinishesJournalAlone: the command the pending-journal
// error names ends in success, also when every file was renamed before
// the kill (the journal alone is left).
func TestReleaseUpdateFinishesJournalAlone(t *testing.T) {
	h := newHostileEnv(t)
	d := h.releaseDir("rel")
	h.write(filepath.Join(d, ".microshift-compose-update.journal"), `{"version": 1, "files": []}`)
	_, stderr, code := runGuarded(t, 30*time.Second, "build", "--profile", "minimal", "--arch", "x86_64", "--release-dir", d, "--output", filepath.Join(h.dir, "o"))
	if code == exitOK || !strings.Contains(stderr, "run 'microshift-compose release update "+d+"' to finish it") {
		t.Fatalf("build = exit %d, %q; want the journal refused, naming release update", code, stderr)
	}
	stdout, stderr, code := runGuarded(t, 30*time.Second, "release", "update", d)
	if code != exitOK || !strings.Contains(stdout, "finished an interrupted update of "+d+": 0 files renamed into place") {
		t.Fatalf("release update = exit %d, stdout %q, stderr %q; want success", code, stdout, stderr)
	}
	if _, err := os.Lstat(filepath.Join(d, ".microshift-compose-update.journal")); !os.IsNotExist(err) {
		t.Errorf("the journal is still there: %v", err)
	}
}

// TestStaleImagesWithLinkNotAdopted: a stale .OUT.tmp-*/images/ holding a
// symlink (to the planted secret) is not recovered into the new output;
// it is left where it is, with a warning naming it.
func TestStaleImagesWithLinkNotAdopted(t *testing.T) {
	h := newHostileEnv(t)
	stale := filepath.Join(filepath.Dir(h.out), ".out.tmp-123", "images")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(h.secret, filepath.Join(stale, "shadow")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(h.out, "images")); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runGuarded(t, 60*time.Second, "build", "--profile", "minimal", "--arch", "x86_64", "--output", h.out)
	if code != exitOK {
		t.Fatalf("build = exit %d: %s", code, stderr)
	}
	if _, err := os.Lstat(filepath.Join(h.out, "images")); !os.IsNotExist(err) {
		t.Errorf("the stale images/ was adopted into the output: %v", err)
	}
	if !strings.Contains(stderr, "warning: the temporary directory of an interrupted build") || !strings.Contains(stderr, "images/shadow, which is not a regular file (a symlink)") {
		t.Errorf("no warning naming the link: %q", stderr)
	}
	if _, err := os.Lstat(filepath.Join(stale, "shadow")); err != nil {
		t.Errorf("the stale directory was not left in place: %v", err)
	}
}

// memoryLimit is the data segment (heap) the real binary runs with in
// TestHostileMemoryBounded: what the gate accepts must fit, what it
// refuses must be refused before it could take more. The binary as it
// was before these bounds died of "out of memory" under it on the TOML
// cases (it took 1.4 to 4 GB).
const memoryLimit = 256 << 20

// TestHostileMemoryBounded runs the real binary under a hard memory
// limit (prlimit --data) on the large and hostile inputs of issue 17,
// and expects a clean exit: success, or one "error: " line, never an
// out-of-memory death.
func TestHostileMemoryBounded(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("prlimit (util-linux) is missing")
		}
		t.Skip("prlimit (util-linux) is missing")
	}
	bin := buildBinary(t)
	var cms, keys strings.Builder
	for i := range 60_000 {
		fmt.Fprintf(&cms, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\n", i)
	}
	keys.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n")
	for i := range 9_900 {
		fmt.Fprintf(&keys, "  k%d: v\n", i)
	}
	payload := `{"kind": "ImageStream", "x": [` + strings.Repeat("0,", 999_000) + "0]}"
	for _, tc := range []struct {
		name  string
		setup func(h *hostileEnv) []string
		// want is in the error line; "" expects success.
		want string
	}{
		{"catalog.toml: 40 KB of nested inline tables (4 GB before)", func(h *hostileEnv) []string {
			h.component("edge", "")
			h.write("catalog/catalog.toml", tomlShapes[0].data)
			return withEdge(h)
		}, "nesting deeper than 32 levels"},
		{"component.toml: a 20 KB dotted key (1.4 GB before)", func(h *hostileEnv) []string {
			h.component("edge", tomlShapes[2].data)
			return withEdge(h)
		}, "nesting deeper than 32 levels"},
		{"manifests/: 60,000 ConfigMaps (872 MB before)", func(h *hostileEnv) []string {
			h.manifests("edge", map[string]string{"cms.yaml": cms.String()})
			return withEdge(h)
		}, "more than 200000 YAML nodes"},
		{"manifests/: a ConfigMap of 9,900 keys, just within the budget", func(h *hostileEnv) []string {
			h.manifests("edge", map[string]string{"cm.yaml": keys.String()})
			return withEdge(h)
		}, ""},
		{"--config: 190,000 nodes, just within the limit", func(h *hostileEnv) []string {
			return build(h, "--config", h.write("config.yaml", "x: ["+strings.Repeat("0,", 190_000)+"0]\n"))
		}, `unknown section "x"`},
		{"release update --payload: 999,000 values (a 22 MB payload took 450 MB)", func(h *hostileEnv) []string {
			return []string{"release", "update", h.releaseDir("rel"), "--payload", "x86_64=" + h.write("payload.json", payload), "--dry-run"}
		}, "payload.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHostileEnv(t)
			args := tc.setup(h)
			for i, a := range args {
				if a == h.out {
					args[i] = filepath.Join(h.dir, "built")
				}
			}
			cmd := exec.Command(prlimit, append([]string{fmt.Sprintf("--data=%d", memoryLimit), bin}, args...)...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			_ = cmd.Run()
			code := cmd.ProcessState.ExitCode()
			if strings.Contains(stderr.String(), "out of memory") || code > exitUsage || code < 0 {
				t.Fatalf("%q under %d MiB: exit %d, %.300s", args, memoryLimit>>20, code, stderr.String())
			}
			if tc.want == "" {
				if code != exitOK {
					t.Fatalf("%q = exit %d: %s", args, code, stderr.String())
				}
				return
			}
			checkOneLineError(t, stderr.String())
			if code != exitError || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("%q = exit %d, %q; want one error line saying %q", args, code, stderr.String(), tc.want)
			}
		})
	}
}
