package compose_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

var updateHealthGolden = flag.Bool("update-health", false, "rewrite testdata/golden/healthcheck")

// healthWorkloads has every kind, two namespaces, and names a shell must
// not read as code.
var healthWorkloads = []compose.Workload{
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
			script, err := compose.HealthCheckScript(tc.stream, facts.HealthCheck, healthWorkloads, tc.timeout)
			if err != nil {
				t.Fatalf("HealthCheckScript(%s) = %v", tc.stream, err)
			}
			again, _ := compose.HealthCheckScript(tc.stream, facts.HealthCheck, healthWorkloads, tc.timeout)
			if !bytes.Equal(script, again) {
				t.Errorf("HealthCheckScript(%s) is not deterministic", tc.stream)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(script), w) {
					t.Errorf("script for %s lacks %q:\n%s", tc.stream, w, script)
				}
			}
			golden := filepath.Join(moduleRoot(t), "testdata", "golden", "healthcheck", tc.stream+".sh")
			if *updateHealthGolden {
				writeFile(t, golden, script)
			} else if want := mustRead(t, golden); !bytes.Equal(script, want) {
				t.Errorf("script for %s differs from %s (go test ./compose -run HealthCheckScripts -update-health)", tc.stream, golden)
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
		ws := []compose.Workload{{Component: "x", Kind: "Deployment", Namespace: "ns$(touch /tmp/pwned)", Name: "a'b;rm -rf /\nc"}}
		script, err := compose.HealthCheckScript(stream, facts.HealthCheck, ws, 0)
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
