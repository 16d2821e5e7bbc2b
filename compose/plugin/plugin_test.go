package plugin_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/microshift-compose/microshift-compose/compose/microshiftconfig"
	"github.com/microshift-compose/microshift-compose/compose/plugin"
)

// pluginDir copies testdata/<name> to a temporary directory, keeping file
// modes, so that plugins that write to their working directory leave
// testdata alone.
func pluginDir(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("testdata", name)
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
	return dst
}

func env() []string { return plugin.Env(microshiftconfig.Defaults(), os.Getenv("PATH")) }

// quiet is a logger that records the plugin's stderr lines.
func quiet() (*slog.Logger, *bytes.Buffer) {
	var b bytes.Buffer
	return slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})), &b
}

func TestRunSuccess(t *testing.T) {
	for _, tc := range []struct {
		name string
		// want is a substring of stdout.
		want          string
		kustomization bool
		docs          int
	}{
		{name: "ok-resources", want: "clusterCIDR: \"10.42.0.0/16\"\n", docs: 2},
		{name: "ok-kustomization", want: "- manifests/pod.yaml\n", kustomization: true, docs: 1},
		{name: "empty", want: "", docs: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, logged := quiet()
			out, err := plugin.Run(context.Background(), pluginDir(t, tc.name), env(), plugin.Options{Logger: log})
			if err != nil {
				t.Fatalf("Run(%s) = %v", tc.name, err)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("Run(%s) stdout = %q, want it to contain %q", tc.name, out, tc.want)
			}
			parsed, err := plugin.ParseOutput(out)
			if err != nil {
				t.Fatalf("ParseOutput() = %v", err)
			}
			if (parsed.Kustomization != nil) != tc.kustomization || parsed.Documents != tc.docs || parsed.Empty() != (tc.docs == 0) {
				t.Errorf("ParseOutput() = kustomization %v, %d documents; want kustomization %v, %d", parsed.Kustomization != nil, parsed.Documents, tc.kustomization, tc.docs)
			}
			if tc.name == "ok-resources" && !strings.Contains(logged.String(), `level=INFO msg="plugin stderr" command=run line=starting`) {
				t.Errorf("stderr was not logged: %q", logged.String())
			}
		})
	}
}

func TestRunFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    plugin.Options
		want    string
		kind    error
		timeout bool
	}{
		{name: "exit1", kind: plugin.ErrPrecondition,
			want: "plugin run: host precondition not met (exit 1): br-ex is missing"},
		{name: "exit2", kind: plugin.ErrConfig,
			want: "plugin run: bad configuration (exit 2): MICROSHIFT_NODEIP is empty: set node.nodeIP"},
		{name: "exit3", kind: plugin.ErrFailed,
			want: "plugin run failed (exit 3): something broke"},
		{name: "segv", kind: plugin.ErrFailed,
			want: "plugin run crashed (killed by signal SIGSEGV: segmentation fault): about to crash"},
		{name: "kill9", kind: plugin.ErrFailed,
			want: "plugin run crashed (killed by signal SIGKILL: killed)"},
		{name: "wrong-api", kind: plugin.ErrFailed,
			want: `plugin api-version printed "v2"; this microshift-compose supports v1`},
		{name: "api-fails", kind: plugin.ErrFailed,
			want: "plugin api-version failed (exit 4): unknown command api-version"},
		{name: "flood", kind: plugin.ErrFailed, opts: plugin.Options{MaxOutput: 4096},
			want: "plugin run wrote more than 4096 bytes to stdout; killed it"},
		{name: "not-executable", kind: plugin.ErrFailed,
			want: "plugin api-version could not be started: permission denied"},
		{name: "hang", kind: plugin.ErrTimeout, opts: plugin.Options{Timeout: 500 * time.Millisecond}, timeout: true,
			want: "plugin run did not finish within 500ms (raise --plugin-timeout); killed it and every process it started: waiting forever"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := pluginDir(t, tc.name)
			tc.opts.Logger, _ = quiet()
			out, err := plugin.Run(context.Background(), dir, env(), tc.opts)
			if err == nil {
				t.Fatalf("Run(%s) = %q, nil; want an error", tc.name, out)
			}
			if err.Error() != tc.want {
				t.Errorf("Run(%s) error:\n got: %s\nwant: %s", tc.name, err, tc.want)
			}
			if !errors.Is(err, tc.kind) {
				t.Errorf("Run(%s) error %v is not %v", tc.name, err, tc.kind)
			}
			var perr *plugin.Error
			if !errors.As(err, &perr) {
				t.Errorf("Run(%s) error is %T, want *plugin.Error", tc.name, err)
			}
			if tc.timeout {
				assertGroupKilled(t, dir)
			}
		})
	}
}

// assertGroupKilled checks that the hanging plugin and the child it left
// holding stdout are both gone (or zombies awaiting their reaper).
func assertGroupKilled(t *testing.T, dir string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "pids"))
	if err != nil {
		t.Fatalf("the hang plugin recorded no pids: %v", err)
	}
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pids file %q", data)
		}
		// SIGKILL is asynchronous; give the kernel a moment (bounded).
		deadline := time.Now().Add(10 * time.Second)
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("process %d of the plugin's group is still running after the timeout", pid)
		}
	}
}

func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses: Z is a zombie.
	s := string(stat)
	i := strings.LastIndex(s, ")")
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// The plugin sees PATH and the MICROSHIFT_* variables, with values from
// the config, and nothing else from the caller's environment.
func TestRunEnvironment(t *testing.T) {
	t.Setenv("MICROSHIFT_COMPOSE_LEAK_CANARY", "leaked")
	t.Setenv("HOME", "/home/leak")
	t.Setenv("MICROSHIFT_CLUSTER_CLUSTERCIDR", "192.0.2.0/24") // the caller's, not the config's
	cfg, err := microshiftconfig.Parse("c.yaml", []byte("network:\n  clusterNetwork: [10.100.0.0/16, \"fd01::/48\"]\n  serviceNetwork: [10.101.0.0/16, \"fd02::/112\"]\nnode:\n  nodeIP: 192.168.7.2\n  hostnameOverride: edge-7\napiServer:\n  subjectAltNames: [api.edge.example.org, 192.168.7.2]\ndebugging:\n  logLevel: Debug\ndns:\n  baseDomain: edge.example.org\n"))
	if err != nil {
		t.Fatal(err)
	}
	log, _ := quiet()
	out, err := plugin.Run(context.Background(), pluginDir(t, "env-dump"), plugin.Env(cfg.Params(), "/usr/local/bin:/usr/bin:/bin"), plugin.Options{Logger: log})
	if err != nil {
		t.Fatalf("Run(env-dump) = %v", err)
	}
	got := map[string]string{}
	_, data, _ := strings.Cut(string(out), "\ndata:\n")
	for _, l := range strings.Split(strings.TrimSuffix(data, "\n"), "\n") {
		k, v, _ := strings.Cut(strings.TrimPrefix(l, "  "), ": ")
		got[k] = strings.Trim(v, `"`)
	}
	want := map[string]string{
		"PATH":                                    "/usr/local/bin:/usr/bin:/bin",
		"MICROSHIFT_BASEDOMAIN":                   "edge.example.org",
		"MICROSHIFT_CLUSTER_CLUSTERCIDR":          "10.100.0.0/16,fd01::/48",
		"MICROSHIFT_CLUSTER_SERVICECIDR":          "10.101.0.0/16,fd02::/112",
		"MICROSHIFT_CLUSTER_SERVICENODEPORTRANGE": "30000-32767",
		"MICROSHIFT_CLUSTER_URL":                  "https://localhost:6443",
		"MICROSHIFT_LOGVLEVEL":                    "Debug",
		"MICROSHIFT_NODEIP":                       "192.168.7.2",
		"MICROSHIFT_NODENAME":                     "edge-7",
		"MICROSHIFT_SUBJECTALTNAMES":              "api.edge.example.org,192.168.7.2",
	}
	// The shell itself may define these; they do not come from the caller.
	shellOwn := []string{"PWD", "SHLVL", "_", "OLDPWD"}
	for k, v := range got {
		if slices.Contains(shellOwn, k) {
			continue
		}
		w, ok := want[k]
		if !ok {
			t.Errorf("plugin saw %s=%q, which is not part of the calling convention (leaked from the caller)", k, v)
		} else if v != w {
			t.Errorf("plugin saw %s=%q, want %q", k, v, w)
		}
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			t.Errorf("plugin did not see %s", k)
		}
	}
	if pwd, ok := got["PWD"]; ok && filepath.Base(pwd) != "env-dump" {
		t.Errorf("plugin ran in %s, want its own directory", pwd)
	}
}

func TestEnvDefaults(t *testing.T) {
	got := plugin.Env(microshiftconfig.Defaults(), "")
	want := []string{
		"MICROSHIFT_BASEDOMAIN=example.com",
		"MICROSHIFT_CLUSTER_CLUSTERCIDR=10.42.0.0/16",
		"MICROSHIFT_CLUSTER_SERVICECIDR=10.43.0.0/16",
		"MICROSHIFT_CLUSTER_SERVICENODEPORTRANGE=30000-32767",
		"MICROSHIFT_CLUSTER_URL=https://localhost:6443",
		"MICROSHIFT_LOGVLEVEL=Normal",
		"MICROSHIFT_NODEIP=",
		"MICROSHIFT_NODENAME=",
		"MICROSHIFT_SUBJECTALTNAMES=",
		"PATH=" + plugin.DefaultPath,
	}
	if !slices.Equal(got, want) {
		t.Errorf("Env(defaults) =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A cancelled build stops a running plugin and reports the cancellation,
// not a plugin failure.
func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	dir := pluginDir(t, "hang")
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(dir, "pids")); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	log, _ := quiet()
	_, err := plugin.Run(ctx, dir, env(), plugin.Options{Logger: log})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run() with a cancelled context = %v, want context.Canceled", err)
	}
	assertGroupKilled(t, dir)
}

func TestParseOutput(t *testing.T) {
	for _, tc := range []struct {
		name, out, want string
	}{
		{"scalar", "Deploying... done\n", "document 1: not a Kubernetes resource or kustomization: got a scalar"},
		{"list", "- a\n- b\n", "document 1: not a Kubernetes resource or kustomization: got a list"},
		{"not YAML", "Deploying kube-proxy... done: [ok\n", "output is not YAML: yaml: line 1: did not find expected ',' or ']'"},
		{"binary", "\x00\x01\x02", "output is not UTF-8 text"},
		{"no kind", "apiVersion: v1\nmetadata:\n  name: x\n", "document 1: missing kind (a resource needs apiVersion, kind and metadata.name; a kustomization needs kind: Kustomization)"},
		{"no apiVersion", "kind: ConfigMap\nmetadata:\n  name: x\n", "document 1: ConfigMap: missing apiVersion"},
		{"no name", "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n", "document 1: ConfigMap: missing metadata.name"},
		{"second document bad", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\nhello\n", "document 2: not a Kubernetes resource or kustomization: got a scalar"},
		{"list item without name", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {}\n", "document 1: ConfigMap: missing metadata.name"},
		{"kustomization among resources", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n", "document 2: a Kustomization must be the only document of the output (got 2 documents)"},
		{"kustomization of another group", "apiVersion: example.com/v1\nkind: Kustomization\n", `document 1: kind Kustomization with apiVersion "example.com/v1": want a Kustomization of kustomize.config.k8s.io/v1beta1`},
		{"kustomize component", "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n", `document 1: kind Component with apiVersion "kustomize.config.k8s.io/v1alpha1": want a Kustomization of kustomize.config.k8s.io/v1beta1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := plugin.ParseOutput([]byte(tc.out))
			if err == nil {
				t.Fatalf("ParseOutput(%q) = %+v, nil; want error", tc.out, out)
			}
			if err.Error() != tc.want {
				t.Errorf("ParseOutput(%q) error:\n got: %s\nwant: %s", tc.out, err, tc.want)
			}
		})
	}
	for _, ok := range []string{"", "---\n", "# nothing\n", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: a\n"} {
		if _, err := plugin.ParseOutput([]byte(ok)); err != nil {
			t.Errorf("ParseOutput(%q) = %v, want nil", ok, err)
		}
	}
}
