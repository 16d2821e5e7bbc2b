// Package healthcheck renders greenboot's required check of a plan's
// workloads: /etc/greenboot/check/required.d/50_microshift_compose_components.sh
// waits for the Deployments, DaemonSets and StatefulSets of the rendered
// manifests and the deployments OLM creates for the plan's operators,
// which MicroShift's own check does not know, by the release's
// method (release knowledge [[health_check]]: `microshift healthcheck
// --custom` from 4.19, the greenboot functions of MicroShift's RPM before).
// It is a function of the plan; the check's options were checked by
// compose.HealthCheckOptions.
package healthcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/compose/manifests"
	"github.com/microshift-compose/microshift-compose/internal/safetext"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// Path is the greenboot required check that waits for the
// workloads of the plan's rendered manifests. greenboot runs required.d in
// name order: 50_ comes after MicroShift's own 40_microshift_running_check.sh.
const Path = "/etc/greenboot/check/required.d/50_microshift_compose_components.sh"

// greenbootFunctions is the library MicroShift's greenboot RPM installs.
const greenbootFunctions = "/usr/share/microshift/functions/greenboot.sh"

// kubeconfig is the one MicroShift's own checks use.
const kubeconfig = "/var/lib/microshift/resources/kubeadmin/kubeconfig"

// Workload is a Deployment, DaemonSet or StatefulSet of the plan's
// rendered manifests.
type Workload struct {
	Component string
	Kind      string
	Namespace string
	Name      string
}

// RenderedWorkloads lists the workloads of the plan's rendered manifests
// (whatever rendered them: manifests/, a plugin, a chart), reading the
// resources each directory's kustomization.yaml lists from files, in plan
// order. A workload without a namespace runs in "default", where the
// device's kustomize apply puts it. Other files in a manifests.d directory
// (a component's own) are no rendered resource and are not read.
func RenderedWorkloads(p *plan.Plan, files []plan.File) ([]Workload, error) {
	byPath := make(map[string][]byte, len(files))
	for _, f := range files {
		byPath[f.Path] = f.Data
	}
	var out []Workload
	for _, m := range p.Manifests {
		if !slices.ContainsFunc(m.Resources, isWorkloadID) {
			continue
		}
		kustomization := m.Dir + manifests.KustomizationFile
		var k struct {
			Resources []string `json:"resources"`
		}
		if err := yaml.Unmarshal(byPath[kustomization], &k); err != nil {
			return nil, fmt.Errorf("reading rendered %s: %w", kustomization, err)
		}
		for _, name := range k.Resources {
			resource := m.Dir + name
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name      string `json:"name"`
					Namespace string `json:"namespace"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal(byPath[resource], &head); err != nil {
				return nil, fmt.Errorf("reading rendered %s: %w", resource, err)
			}
			if head.APIVersion != "apps/v1" || !slices.Contains(knowledge.WorkloadKinds, head.Kind) {
				continue
			}
			ns := head.Metadata.Namespace
			if ns == "" {
				ns = "default"
			}
			out = append(out, Workload{Component: m.Component, Kind: head.Kind, Namespace: ns, Name: head.Metadata.Name})
		}
	}
	return out, nil
}

// OperatorWorkloads are the deployments of the plan's operators that the
// greenboot check waits for (their CSVs', which OLM creates in the
// operators' namespaces), as workloads of "operator PACKAGE"; none for an
// operator whose deployments the catalog does not name or whose
// Subscription waits for a manual approval (compose decided which).
func OperatorWorkloads(p *plan.Plan) []Workload {
	if p.Operators == nil {
		return nil
	}
	var out []Workload
	for _, o := range p.Operators.Packages {
		for _, d := range o.Deployments {
			out = append(out, Workload{Component: "operator " + o.Name, Kind: "Deployment", Namespace: o.Namespace, Name: d})
		}
	}
	return out
}

func isWorkloadID(id string) bool {
	kind, _, _ := strings.Cut(id, " ")
	return slices.Contains(knowledge.WorkloadKinds, kind)
}

func workloadComponents(ws []Workload) []string {
	var out []string
	for _, w := range ws {
		if !slices.Contains(out, w.Component) {
			out = append(out, w.Component)
		}
	}
	return out
}

// MaxCustomArg bounds the JSON of one `microshift healthcheck --custom`
// argument: half of Linux's limit on one argument (MAX_ARG_STRLEN, 32
// pages: 131072 bytes with its NUL), so that the call runs whatever the
// rest of its arguments and environment.
const MaxCustomArg = 64 << 10

// customChunks splits the workloads into --custom JSON documents of at
// most max bytes each, in namespace, kind and name order, every workload
// in exactly one. A namespace may span documents: healthcheck waits for
// what each names. A single workload whose JSON exceeds max is an error.
func customChunks(byNS map[string]*namespaceWorkloads, max int) ([]string, error) {
	var chunks []string
	cur := map[string]*namespaceWorkloads{}
	size := 2 // {}
	flush := func() error {
		if len(cur) == 0 {
			return nil
		}
		data, err := json.Marshal(cur)
		if err != nil {
			return fmt.Errorf("encoding the healthcheck workloads: %w", err)
		}
		if len(data) > max {
			return fmt.Errorf("the healthcheck workloads of one namespace and name take %d bytes of JSON, more than the %d a --custom argument may", len(data), max)
		}
		chunks = append(chunks, string(data))
		cur, size = map[string]*namespaceWorkloads{}, 2
		return nil
	}
	jsonLen := func(s string) int {
		data, _ := json.Marshal(s)
		return len(data)
	}
	for _, ns := range slices.Sorted(maps.Keys(byNS)) {
		nw := byNS[ns]
		for _, kind := range []struct {
			key   string
			names []string
			list  func(*namespaceWorkloads) *[]string
		}{
			{"deployments", nw.Deployments, func(n *namespaceWorkloads) *[]string { return &n.Deployments }},
			{"daemonsets", nw.DaemonSets, func(n *namespaceWorkloads) *[]string { return &n.DaemonSets }},
			{"statefulsets", nw.StatefulSets, func(n *namespaceWorkloads) *[]string { return &n.StatefulSets }},
		} {
			for _, name := range kind.names {
				// An upper bound of what the name adds to the document:
				// itself and a comma, its kind's key and list, its
				// namespace's key and object, when they are new.
				add := jsonLen(name) + 1
				if cur[ns] == nil {
					add += jsonLen(ns) + 4
				}
				if cur[ns] == nil || len(*kind.list(cur[ns])) == 0 {
					add += len(kind.key) + 6
				}
				if size+add > max && len(cur) > 0 {
					if err := flush(); err != nil {
						return nil, err
					}
					add = jsonLen(name) + 1 + jsonLen(ns) + 4 + len(kind.key) + 6
				}
				if cur[ns] == nil {
					cur[ns] = &namespaceWorkloads{}
				}
				l := kind.list(cur[ns])
				*l = append(*l, name)
				size += add
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return chunks, nil
}

// namespaceWorkloads is one namespace of `microshift healthcheck --custom`
// (pkg/healthcheck NamespaceWorkloads).
type namespaceWorkloads struct {
	Deployments  []string `json:"deployments,omitempty"`
	DaemonSets   []string `json:"daemonsets,omitempty"`
	StatefulSets []string `json:"statefulsets,omitempty"`
}

// Script renders the greenboot check for ws: one `microshift
// healthcheck --custom JSON` call (the JSON encoded with encoding/json),
// or, before MicroShift had that command, waits with the greenboot
// functions library, a namespace_<kind>_ready function per namespace and
// kind where the library has one. Every value is quoted for the shell
// (safetext.Shell) or a comment (safetext.Comment). timeout 0 uses
// greenboot's get_wait_timeout.
func Script(stream string, hc *knowledge.HealthCheck, ws []Workload, timeout time.Duration) ([]byte, error) {
	if len(ws) == 0 {
		return nil, errors.New("no workloads to check")
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("#!/bin/bash\n")
	w("#\n# Greenboot required check of the workloads of the components microshift-compose\n")
	w("# renders into /etc/microshift/manifests.d, which MicroShift's own check does not\n")
	w("# cover: a boot where they are not ready in time is red, and greenboot rolls back.\n")
	w("# Generated by microshift-compose for MicroShift %s; do not edit.\n#\n", safetext.Comment(stream))
	for _, c := range workloadComponents(ws) {
		var names []string
		for _, wl := range ws {
			if wl.Component == c {
				names = append(names, fmt.Sprintf("%s %s/%s", wl.Kind, wl.Namespace, wl.Name))
			}
		}
		w("# %s: %s\n", safetext.Comment(c), safetext.Comment(strings.Join(names, ", ")))
	}
	w("#\nset -eu -o pipefail\n\n")
	w("SCRIPT_NAME=$(basename \"$0\")\n\n")
	w("# The MicroShift health check functions library (microshift-greenboot)\n")
	w("# shellcheck source=/dev/null\n")
	w("source %s\n\n", greenbootFunctions)
	w("# Exit if the current user is not 'root'\n")
	w("if [ \"$(id -u)\" -ne 0 ] ; then\n")
	w("    echo \"The '${SCRIPT_NAME}' script must be run with the 'root' user privileges\"\n")
	w("    exit 1\n")
	w("fi\n\n")
	fail := "exit 1"
	if hc.FailMarker {
		w("# Exit if MicroShift's own check failed\n")
		w("exit_if_fail_marker_exists\n\n")
		fail = "create_fail_marker_and_exit"
	}
	w("echo \"STARTED\"\n\n")
	w("# Print the boot variable status\n")
	w("print_boot_status\n\n")
	if hc.Method == knowledge.HealthCheckFunctions {
		w("# Exit if the MicroShift service is not enabled\n")
		w("if [ \"$(systemctl is-enabled microshift.service 2>/dev/null)\" != \"enabled\" ] ; then\n")
		w("    echo \"MicroShift service is not enabled. Exiting...\"\n")
		w("    exit 0\n")
		w("fi\n\n")
	}
	if timeout > 0 {
		w("# The wait timeout, from microshift-compose build --health-check-timeout\n")
		w("WAIT_TIMEOUT_SECS=%d\n\n", int64(timeout/time.Second))
	} else {
		w("# Set the wait timeout for the current check based on the boot counter\n")
		w("WAIT_TIMEOUT_SECS=$(get_wait_timeout)\n\n")
	}
	byNS := map[string]*namespaceWorkloads{}
	for _, wl := range ws {
		nw := byNS[wl.Namespace]
		if nw == nil {
			nw = &namespaceWorkloads{}
			byNS[wl.Namespace] = nw
		}
		switch wl.Kind {
		case "Deployment":
			nw.Deployments = append(nw.Deployments, wl.Name)
		case "DaemonSet":
			nw.DaemonSets = append(nw.DaemonSets, wl.Name)
		case "StatefulSet":
			nw.StatefulSets = append(nw.StatefulSets, wl.Name)
		}
	}
	for _, nw := range byNS {
		slices.Sort(nw.Deployments)
		slices.Sort(nw.DaemonSets)
		slices.Sort(nw.StatefulSets)
	}
	switch hc.Method {
	case knowledge.HealthCheckCommand:
		chunks, err := customChunks(byNS, MaxCustomArg)
		if err != nil {
			return nil, err
		}
		if len(chunks) == 1 {
			w("if ! microshift healthcheck -v=2 --timeout=\"${WAIT_TIMEOUT_SECS}s\" \\\n")
			w("        --custom %s ; then\n", safetext.Shell(chunks[0]))
			w("    %s\n", fail)
			w("fi\n")
			break
		}
		w("# The workloads in %d calls of at most %d bytes of --custom each: Linux refuses\n", len(chunks), MaxCustomArg)
		w("# to run a command with an argument of 128 KiB or more (MAX_ARG_STRLEN). They\n")
		w("# share the wait: each call waits for what is left of it.\n")
		w("DEADLINE=$(( $(date +%%s) + WAIT_TIMEOUT_SECS ))\n")
		w("function healthcheck_custom() {\n")
		w("    local remaining=$(( DEADLINE - $(date +%%s) ))\n")
		w("    if [ \"${remaining}\" -lt 1 ] ; then\n")
		w("        remaining=1\n")
		w("    fi\n")
		w("    microshift healthcheck -v=2 --timeout=\"${remaining}s\" --custom \"$1\"\n")
		w("}\n")
		for _, c := range chunks {
			w("\nif ! healthcheck_custom %s ; then\n", safetext.Shell(c))
			w("    %s\n", fail)
			w("fi\n")
		}
	case knowledge.HealthCheckFunctions:
		functionsScript(w, hc, byNS, fail)
	default:
		return nil, fmt.Errorf("unknown health check method %q", hc.Method)
	}
	w("\necho \"FINISHED\"\n")
	return []byte(b.String()), nil
}

// functionsScript writes the waits of a release before `microshift
// healthcheck`: per namespace and kind, wait_for with the library's
// namespace_<kind>_ready function (which reads the namespace from its
// environment variable), or with namespace_rollout_ready, the same `oc
// rollout status` call, for a kind the library has no function for.
func functionsScript(w func(string, ...any), hc *knowledge.HealthCheck, byNS map[string]*namespaceWorkloads, fail string) {
	plural := map[string]string{"Deployment": "Deployments", "DaemonSet": "DaemonSets", "StatefulSet": "StatefulSets"}
	names := func(nw *namespaceWorkloads, kind string) []string {
		switch kind {
		case "Deployment":
			return nw.Deployments
		case "DaemonSet":
			return nw.DaemonSets
		}
		return nw.StatefulSets
	}
	own := false
	for _, nw := range byNS {
		for _, kind := range knowledge.WorkloadKinds {
			if _, lib := hc.NamespaceFunctions[kind]; !lib && len(names(nw, kind)) > 0 {
				own = true
			}
		}
	}
	if own {
		w("# Check that every workload of a kind (arg1: deployment, daemonset or\n")
		w("# statefulset) in the CHECK_ROLLOUT_NS namespace has rolled out, as the\n")
		w("# library's namespace_deployment_ready does for Deployments\n")
		w("function namespace_rollout_ready() {\n")
		w("    oc rollout status --kubeconfig %s \"$1\" -n \"${CHECK_ROLLOUT_NS}\" \\\n", kubeconfig)
		w("        --watch=false --timeout=1s &>/dev/null\n")
		w("}\n\n")
	}
	for _, ns := range slices.Sorted(maps.Keys(byNS)) {
		nw := byNS[ns]
		for _, kind := range knowledge.WorkloadKinds {
			list := names(nw, kind)
			if len(list) == 0 {
				continue
			}
			what := fmt.Sprintf("%s in namespace %s (%s)", plural[kind], ns, strings.Join(list, ", "))
			w("# %s\n", safetext.Comment(what))
			var call string
			if f, lib := hc.NamespaceFunctions[kind]; lib {
				w("export %s=%s\n", f.Env, safetext.Shell(ns))
				call = f.Function
			} else {
				w("export CHECK_ROLLOUT_NS=%s\n", safetext.Shell(ns))
				call = "namespace_rollout_ready " + strings.ToLower(kind)
			}
			w("echo \"Waiting ${WAIT_TIMEOUT_SECS}s for\" %s \"to be ready\"\n", safetext.Shell(what))
			w("if ! wait_for \"${WAIT_TIMEOUT_SECS}\" %s ; then\n", call)
			w("    echo \"Error: Timed out waiting for\" %s \"to be ready\"\n", safetext.Shell(what))
			w("    %s\n", fail)
			w("fi\n\n")
		}
	}
}

// Apply adds the greenboot required check that waits for the workloads of
// p's rendered manifests, by the release's method hc, with a note; nothing
// when no rendered manifest has a workload, and only a note with
// opts.Disabled.
func Apply(p *plan.Plan, hc *knowledge.HealthCheck, opts compose.HealthCheckOptions) error {
	ws, err := RenderedWorkloads(p, p.Files)
	if err != nil {
		return err
	}
	ws = append(ws, OperatorWorkloads(p)...)
	if len(ws) == 0 {
		return nil
	}
	comps := workloadComponents(ws)
	if opts.Disabled {
		p.Notes = append(p.Notes, fmt.Sprintf("--no-health-checks: greenboot does not wait for the %d %s of %s, so a boot where they never become ready is kept",
			len(ws), text.Plural(len(ws), "workload", "workloads"), strings.Join(comps, ", ")))
		return nil
	}
	if hc == nil {
		return fmt.Errorf("release %s: microshift-compose knows no greenboot check method for it (releases/knowledge/data/releases.toml [[health_check]]); build with --no-health-checks", p.Release.Stream)
	}
	script, err := Script(p.Release.Stream, hc, ws, opts.Timeout)
	if err != nil {
		return err
	}
	how := "microshift healthcheck --custom"
	if hc.Method == knowledge.HealthCheckFunctions {
		how = "the functions of " + greenbootFunctions
	}
	p.Notes = append(p.Notes, fmt.Sprintf("greenboot: %s waits for the %d %s of %s (%s)",
		Path, len(ws), text.Plural(len(ws), "workload", "workloads"), strings.Join(comps, ", "), how))
	return p.AddFiles(plan.File{Path: Path, Mode: "0755", Data: script})
}
