package healthcheck_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
	"github.com/microshift-compose/microshift-compose/render/healthcheck"
)

// healthStubs replace the greenboot functions library and the commands the
// check calls: each records its arguments, NUL-separated, in $CALLS.
const healthStubs = `id() { echo 0; }
systemctl() { echo enabled; }
print_boot_status() { :; }
get_wait_timeout() { echo 1; }
exit_if_fail_marker_exists() { :; }
create_fail_marker_and_exit() { exit 1; }
wait_for() { shift; "$@"; }
rec() { printf '%s\0' "$@" >>"${CALLS}"; }
microshift() { rec microshift "$@"; }
oc() { rec oc "$@"; }
namespace_deployment_ready() { rec deploy "${CHECK_DEPLOY_NS}"; }
namespace_daemonset_ready() { rec daemonset "${CHECK_DAEMONSET_NS}"; }
`

// FuzzHealthCheckScript renders the greenboot check for a Deployment and a
// StatefulSet of any namespace and names, on a release of each era, and
// runs it in bash with the library and commands stubbed: every name reaches
// the commands as exactly one argument, the --custom JSON decodes to the
// workloads, and nothing else runs.
func FuzzHealthCheckScript(f *testing.F) {
	f.Add(uint8(0), "hello", "web", "pg")
	f.Add(uint8(1), "ns$(touch /tmp/pwned)", "a'b;rm -rf /\nc", "`id`")
	f.Add(uint8(2), "db-system", "x\"y", "z\\w")
	f.Add(uint8(3), "n\u200bs", "\x85", "'")
	bash := testutil.NeedTool(f, "bash", "bash")
	know, err := knowledge.Default()
	if err != nil {
		f.Fatal(err)
	}
	streams := []string{"4.14", "4.17", "4.18", "5.0"}
	checks := map[string]*knowledge.HealthCheck{}
	for _, s := range streams {
		facts, err := know.For(semver.MustParse(s + ".0"))
		if err != nil || facts.HealthCheck == nil {
			f.Fatalf("knowledge for %s: %v", s, err)
		}
		checks[s] = facts.HealthCheck
	}
	f.Fuzz(func(t *testing.T, era uint8, ns, deploy, sts string) {
		if strings.ContainsRune(ns+deploy+sts, 0) {
			t.Skip("a shell argument cannot hold NUL")
		}
		stream := streams[int(era)%len(streams)]
		hc := checks[stream]
		ws := []healthcheck.Workload{
			{Component: "c", Kind: "Deployment", Namespace: ns, Name: deploy},
			{Component: "c", Kind: "StatefulSet", Namespace: ns, Name: sts},
		}
		script, err := healthcheck.Script(stream, hc, ws, time.Second)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		lib := "source /usr/share/microshift/functions/greenboot.sh\n"
		if bytes.Count(script, []byte(lib)) != 1 {
			t.Fatalf("the script does not source the library once:\n%s", script)
		}
		dir := t.TempDir()
		file := filepath.Join(dir, "check.sh")
		calls := filepath.Join(dir, "calls")
		if err := os.WriteFile(file, bytes.Replace(script, []byte(lib), []byte(healthStubs), 1), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bash, file)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "CALLS=" + calls, "LC_ALL=C.UTF-8"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the %s check fails with the stubs: %v\n%s\n%s", stream, err, out, script)
		}
		got, err := os.ReadFile(calls)
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Split(strings.TrimSuffix(string(got), "\x00"), "\x00")
		switch hc.Method {
		case knowledge.HealthCheckCommand:
			if len(args) != 6 || args[0] != "microshift" || args[1] != "healthcheck" || args[4] != "--custom" {
				t.Fatalf("%s: calls %q, want one microshift healthcheck --custom", stream, args)
			}
			var custom, want any
			if err := json.Unmarshal([]byte(args[5]), &custom); err != nil {
				t.Fatalf("%s: --custom is no JSON: %v: %q", stream, err, args[5])
			}
			wantJSON, _ := json.Marshal(map[string]map[string][]string{ns: {"deployments": {deploy}, "statefulsets": {sts}}})
			_ = json.Unmarshal(wantJSON, &want)
			if !reflect.DeepEqual(custom, want) {
				t.Fatalf("%s: --custom %s, want %s", stream, args[5], wantJSON)
			}
		default:
			// Names that are no Kubernetes names are written escaped
			// (text.Escape), so the shell sees the escaped form.
			ens := text.Escape(ns)
			var want []string
			if _, ok := hc.NamespaceFunctions["Deployment"]; ok {
				want = append(want, "deploy", ens)
			} else {
				want = append(want, "oc", "rollout", "status", "--kubeconfig", "/var/lib/microshift/resources/kubeadmin/kubeconfig", "deployment", "-n", ens, "--watch=false", "--timeout=1s")
			}
			want = append(want, "oc", "rollout", "status", "--kubeconfig", "/var/lib/microshift/resources/kubeadmin/kubeconfig", "statefulset", "-n", ens, "--watch=false", "--timeout=1s")
			if !reflect.DeepEqual(args, want) {
				t.Fatalf("%s: calls %q, want %q\n%s", stream, args, want, script)
			}
		}
	})
}
