package healthcheck_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
	"github.com/microshift-compose/microshift-compose/render/healthcheck"
)

var updateHealthGolden = flag.Bool("update-health", false, "rewrite testdata/golden/healthcheck")

// healthWorkloads has every kind, two namespaces, and names a shell must
// not read as code.
var healthWorkloads = []healthcheck.Workload{
	{Component: "hello", Kind: "Deployment", Namespace: "hello", Name: "web"},
	{Component: "hello", Kind: "DaemonSet", Namespace: "hello", Name: "agent"},
	{Component: "db", Kind: "StatefulSet", Namespace: "db-system", Name: "pg"},
	{Component: "db", Kind: "Deployment", Namespace: "db-system", Name: "pg-operator"},
}

// TestHealthCheckScripts renders the greenboot check for one release of
// each era of the data (no namespace functions, Deployment only,
// Deployment and DaemonSet, the fail marker, microshift healthcheck),
// compares it with its golden file, and has bash -n and shellcheck read it.
func TestHealthCheckScripts(t *testing.T) {
	know, err := knowledge.Default()
	if err != nil {
		t.Fatal(err)
	}
	bash := testutil.NeedTool(t, "bash", "bash")
	shellcheck := testutil.NeedTool(t, "shellcheck", "shellcheck")
	for _, tc := range []struct {
		stream  string
		timeout time.Duration
		want    []string
	}{
		{"4.14", 0, []string{"get_wait_timeout", "oc rollout status", "namespace_rollout_ready statefulset"}},
		{"4.15", 0, []string{"namespace_deployment_ready", "CHECK_DEPLOY_NS"}},
		{"4.17", 0, []string{"namespace_daemonset_ready", "CHECK_DAEMONSET_NS"}},
		{"4.18", 0, []string{"exit_if_fail_marker_exists", "create_fail_marker_and_exit"}},
		{"4.19", 0, []string{`microshift healthcheck`, `--custom '{"db-system":{"deployments":["pg-operator"],"statefulsets":["pg"]},"hello":{"deployments":["web"],"daemonsets":["agent"]}}'`}},
		{"5.0", 90 * time.Second, []string{`--timeout="${WAIT_TIMEOUT_SECS}s"`, "WAIT_TIMEOUT_SECS=90"}},
	} {
		t.Run(tc.stream, func(t *testing.T) {
			facts, err := know.For(semver.MustParse(tc.stream + ".0"))
			if err != nil || facts.HealthCheck == nil {
				t.Fatalf("knowledge for %s: %v, health check %v", tc.stream, err, facts.HealthCheck)
			}
			script, err := healthcheck.Script(tc.stream, facts.HealthCheck, healthWorkloads, tc.timeout)
			if err != nil {
				t.Fatalf("HealthCheckScript(%s) = %v", tc.stream, err)
			}
			again, _ := healthcheck.Script(tc.stream, facts.HealthCheck, healthWorkloads, tc.timeout)
			if !bytes.Equal(script, again) {
				t.Errorf("HealthCheckScript(%s) is not deterministic", tc.stream)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(script), w) {
					t.Errorf("script for %s lacks %q:\n%s", tc.stream, w, script)
				}
			}
			golden := filepath.Join(testutil.Root(t), "testdata", "golden", "healthcheck", tc.stream+".sh")
			if *updateHealthGolden {
				testutil.WriteFile(t, golden, script)
			} else if want := testutil.ReadFile(t, golden); !bytes.Equal(script, want) {
				t.Errorf("script for %s differs from %s (go test ./render/healthcheck -run HealthCheckScripts -update-health)", tc.stream, golden)
			}
			file := filepath.Join(t.TempDir(), "check.sh")
			if err := os.WriteFile(file, script, 0o755); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(bash, "-n", file).CombinedOutput(); err != nil {
				t.Errorf("bash -n on the %s check: %v\n%s", tc.stream, err, out)
			}
			if out, err := exec.Command(shellcheck, "-s", "bash", file).CombinedOutput(); err != nil {
				t.Errorf("shellcheck on the %s check: %v\n%s\n%s", tc.stream, err, out, script)
			}
		})
	}
}

// TestHealthCheckHostileNames checks that names are data to the shell: a
// workload whose name carries shell syntax never reaches the script
// unquoted (the rendered manifests were validated as Kubernetes names
// before, so this is the second line of defence).
func TestHealthCheckHostileNames(t *testing.T) {
	know, err := knowledge.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, stream := range []string{"4.17", "5.0"} {
		facts, err := know.For(semver.MustParse(stream + ".0"))
		if err != nil {
			t.Fatal(err)
		}
		ws := []healthcheck.Workload{{Component: "x", Kind: "Deployment", Namespace: "ns$(touch /tmp/pwned)", Name: "a'b;rm -rf /\nc"}}
		script, err := healthcheck.Script(stream, facts.HealthCheck, ws, 0)
		if err != nil {
			continue // refusing is as good as quoting
		}
		for _, l := range strings.Split(string(script), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "#") {
				continue
			}
			if strings.Contains(l, "rm -rf /") && !strings.Contains(l, `'"'"'`) && !strings.Contains(l, `\'`) {
				t.Errorf("%s: hostile name reaches the script unquoted: %q", stream, l)
			}
		}
		if strings.Contains(string(script), "\nc\n") {
			t.Errorf("%s: a newline in a name starts a script line:\n%s", stream, script)
		}
	}
}

// manyWorkloads are n workloads with long names (63-byte namespaces and
// 253-byte names are allowed; these take 50 and 66), over a few
// namespaces and every kind: 2,000 of them take 140 KB of --custom JSON.
func manyWorkloads(n int) []healthcheck.Workload {
	kinds := []string{"Deployment", "DaemonSet", "StatefulSet"}
	ws := make([]healthcheck.Workload, n)
	for i := range ws {
		ws[i] = healthcheck.Workload{Component: "fleet", Kind: kinds[i%3], Namespace: fmt.Sprintf("tenant-%02d-%s", i%7, strings.Repeat("n", 40)),
			Name: fmt.Sprintf("workload-%06d-%s", i, strings.Repeat("w", 50))}
	}
	return ws
}

// The 4.19+ check with thousands of workloads: run by bash against a
// microshift executable (not a function: the kernel execs it, and refuses
// an argument of 128 KiB or more with E2BIG as it would on the device),
// every call's --custom decodes as upstream's healthcheck decodes it
// (map of namespace to deployments, daemonsets, statefulsets), and
// together they name every workload exactly once.
func TestHealthCheckManyWorkloads(t *testing.T) {
	bash := testutil.NeedTool(t, "bash", "bash")
	know, err := knowledge.Default()
	if err != nil {
		t.Fatal(err)
	}
	facts, err := know.For(semver.MustParse("4.19.0"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2000, 20000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ws := manyWorkloads(n)
			script, err := healthcheck.Script("4.19", facts.HealthCheck, ws, 0)
			if err != nil {
				t.Fatal(err)
			}
			if n == 2000 {
				shellcheck := testutil.NeedTool(t, "shellcheck", "shellcheck")
				file := filepath.Join(t.TempDir(), "check.sh")
				testutil.WriteFile(t, file, script)
				if out, err := exec.Command(shellcheck, "-s", "bash", file).CombinedOutput(); err != nil {
					t.Errorf("shellcheck: %v\n%s", err, text.Excerpt(string(out)))
				}
			}
			calls := runHealthCheck(t, bash, script, 0)
			want := map[string]bool{}
			for _, w := range ws {
				want[w.Namespace+"/"+strings.ToLower(w.Kind)+"s/"+w.Name] = true
			}
			seen := map[string]bool{}
			for _, c := range calls {
				if len(c) != 5 || c[0] != "healthcheck" || c[1] != "-v=2" || !strings.HasPrefix(c[2], "--timeout=") || c[3] != "--custom" {
					t.Fatalf("call %q, want healthcheck -v=2 --timeout=Ns --custom JSON", c[:min(len(c), 4)])
				}
				if len(c[4]) > healthcheck.MaxCustomArg {
					t.Errorf("a --custom argument of %d bytes", len(c[4]))
				}
				// As pkg/healthcheck CustomWorkloadHealthcheck reads it.
				var custom map[string]struct {
					Deployments  []string `json:"deployments"`
					DaemonSets   []string `json:"daemonsets"`
					StatefulSets []string `json:"statefulsets"`
				}
				if err := json.Unmarshal([]byte(c[4]), &custom); err != nil {
					t.Fatalf("--custom is not the healthcheck's JSON: %v", err)
				}
				for ns, nw := range custom {
					for kind, names := range map[string][]string{"deployments": nw.Deployments, "daemonsets": nw.DaemonSets, "statefulsets": nw.StatefulSets} {
						for _, name := range names {
							key := ns + "/" + kind + "/" + name
							if seen[key] || !want[key] {
								t.Fatalf("%s is checked twice or was never a workload", key)
							}
							seen[key] = true
						}
					}
				}
			}
			if len(seen) != len(want) {
				t.Errorf("the calls check %d of the %d workloads", len(seen), len(want))
			}
			t.Logf("%d workloads: a %d-byte script, %d microshift healthcheck calls", n, len(script), len(calls))
		})
	}
}

// A failing call fails the check: the script stops at it and marks the
// boot red.
func TestHealthCheckManyWorkloadsFailure(t *testing.T) {
	bash := testutil.NeedTool(t, "bash", "bash")
	know, _ := knowledge.Default()
	facts, _ := know.For(semver.MustParse("5.0.0"))
	script, err := healthcheck.Script("5.0", facts.HealthCheck, manyWorkloads(3000), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	calls := runHealthCheck(t, bash, script, 2)
	if len(calls) != 2 {
		t.Errorf("%d calls, want the check to stop at the failing second", len(calls))
	}
	for _, c := range calls {
		if c[2] != "--timeout=30s" && c[2] != "--timeout=29s" {
			t.Errorf("the calls do not share the 30s wait: %q", c[2])
		}
	}
}

// runHealthCheck runs a check script in bash with greenboot's library
// stubbed and a microshift executable in PATH that records its arguments
// and fails its failAt'th call (0: none). It returns the recorded calls;
// the script must exit 0 unless a call fails, and then with 1 after the
// fail marker.
func runHealthCheck(t *testing.T, bash string, script []byte, failAt int) [][]string {
	t.Helper()
	return runHealthCheckWith(t, []string{bash}, script, failAt)
}

// runHealthCheckWith runs the check with the command run before its path:
// bash, as greenboot runs its scripts, or nothing, as greenboot-rs runs a
// check: the kernel reads the file's interpreter line.
func runHealthCheckWith(t *testing.T, runner []string, script []byte, failAt int) [][]string {
	t.Helper()
	const lib = "source /usr/share/microshift/functions/greenboot.sh\n"
	stubs := "id() { echo 0; }\nprint_boot_status() { :; }\nget_wait_timeout() { echo 600; }\nexit_if_fail_marker_exists() { :; }\ncreate_fail_marker_and_exit() { echo MARKED; exit 1; }\n"
	if bytes.Count(script, []byte(lib)) != 1 {
		t.Fatalf("the script does not source the library once")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	fake := `#!/bin/bash
n=$(( $(ls "$CALLS" | wc -l) + 1 ))
printf '%s\0' "$@" > "$CALLS/$(printf %06d "$n")"
[ "$n" != "$FAIL_AT" ]
`
	testutil.WriteFile(t, filepath.Join(bin, "microshift"), []byte(fake))
	if err := os.Chmod(filepath.Join(bin, "microshift"), 0o755); err != nil {
		t.Fatal(err)
	}
	callDir := filepath.Join(dir, "calls")
	if err := os.Mkdir(callDir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "check.sh")
	testutil.WriteFile(t, file, bytes.Replace(script, []byte(lib), []byte(stubs), 1))
	if err := os.Chmod(file, 0o755); err != nil {
		t.Fatal(err)
	}
	argv := append(slices.Clone(runner), file)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "CALLS=" + callDir, "FAIL_AT=" + fmt.Sprint(failAt), "LC_ALL=C.UTF-8"}
	out, err := cmd.CombinedOutput()
	if failAt == 0 && err != nil {
		t.Fatalf("the check fails: %v\n...%s", err, out[max(0, len(out)-300):])
	}
	if failAt > 0 && (err == nil || !strings.Contains(string(out), "MARKED")) {
		t.Fatalf("a failing healthcheck call does not fail the check: %v\n%s", err, text.Excerpt(string(out)))
	}
	entries, err := os.ReadDir(callDir)
	if err != nil {
		t.Fatal(err)
	}
	var calls [][]string
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(callDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00"))
	}
	return calls
}

// TestHealthCheckUnderGreenbootRS: greenboot-rs, which replaces greenboot,
// runs a check as an executable (no bash in front), stops at the first
// failing required check, and must not be rebooted by a check: the script
// runs by its interpreter line alone, answers with its exit code under both
// runners, and reboots nothing.
func TestHealthCheckUnderGreenbootRS(t *testing.T) {
	bash := testutil.NeedTool(t, "bash", "bash")
	know, err := knowledge.Default()
	if err != nil {
		t.Fatal(err)
	}
	facts, err := know.For(semver.MustParse("5.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := healthcheck.Script("5.0", facts.HealthCheck, manyWorkloads(3), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(script, []byte("#!/bin/bash\n")) {
		t.Fatalf("the check does not start with its interpreter line: %q", script[:min(len(script), 40)])
	}
	for _, word := range []string{"reboot", "shutdown", "grub2-editenv", "boot_counter=", "red.d"} {
		if bytes.Contains(script, []byte(word)) {
			t.Errorf("the check holds %q: a check answers with its exit code and reboots nothing", word)
		}
	}
	for name, runner := range map[string][]string{"greenboot": {bash}, "greenboot-rs": nil} {
		t.Run(name, func(t *testing.T) {
			if calls := runHealthCheckWith(t, runner, script, 0); len(calls) != 1 {
				t.Errorf("%d healthcheck calls, want 1", len(calls))
			}
			runHealthCheckWith(t, runner, script, 1)
		})
	}
}
