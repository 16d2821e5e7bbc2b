package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every command starts the same binary, which initialises every package it
// links (issue 19: process start is most of a build). Our own packages do
// no work at init: regular expressions through internal/lazyregexp, data
// parsed on first use (sync.OnceValue). The budget is what is left: a few
// small tables. All packages together stay within a budget too, so that a
// library pulling a heavy initialiser into the binary is noticed
// (./hack/bench.sh build prints the breakdown by module). Bytes allocated,
// from GODEBUG=inittrace=1, not time: they do not depend on the machine.
// And no garbage collection starts while packages are initialised
// (GODEBUG=gctrace=1): internal/startgc raises the collector's first goal
// before most packages allocate, and a collection during initialisation
// would end that (a build would collect three or four times again).
func TestPackageInitialisation(t *testing.T) {
	const (
		oursBudget  = 16 << 10
		totalBudget = 7 << 20
	)
	bin := buildBinary(t)
	cmd := exec.Command(bin, "version")
	cmd.Env = append(withoutEnv(os.Environ(), "GOGC"), "GODEBUG=inittrace=1,gctrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("microshift-compose version: %v\n%s", err, out)
	}
	line := regexp.MustCompile(`(?m)^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, \d+ allocs$`)
	matches := line.FindAllStringSubmatch(string(out), -1)
	if len(matches) < 100 {
		t.Fatalf("%d init lines from GODEBUG=inittrace=1, want the binary's packages:\n%s", len(matches), out)
	}
	const module = "github.com/microshift-compose/microshift-compose/"
	var ours, total int
	var offenders []string
	for _, m := range matches {
		n, err := strconv.Atoi(m[2])
		if err != nil {
			t.Fatalf("%q: %v", m[0], err)
		}
		total += n
		if strings.HasPrefix(m[1], module) {
			ours += n
			if n > 1<<10 {
				offenders = append(offenders, fmt.Sprintf("%s %d bytes", strings.TrimPrefix(m[1], module), n))
			}
		}
	}
	sort.Strings(offenders)
	if ours > oursBudget {
		t.Errorf("our packages allocate %d bytes at init, budget %d (make the work lazy: internal/lazyregexp, sync.OnceValue); over 1 KiB: %s",
			ours, oursBudget, strings.Join(offenders, ", "))
	}
	if total > totalBudget {
		t.Errorf("package initialisation allocates %d bytes, budget %d: a newly linked package initialises heavily (./hack/bench.sh build shows the modules)", total, totalBudget)
	}
	lines := strings.Split(string(out), "\n")
	lastInit := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "init ") {
			lastInit = i
		}
	}
	for _, l := range lines[:lastInit+1] {
		if strings.HasPrefix(l, "gc ") {
			t.Errorf("a garbage collection started during package initialisation (%q): the packages initialised before internal/startgc allocate too much, or it no longer comes before them", l)
			break
		}
	}
	t.Logf("package initialisation: %d packages, %d bytes, ours %d", len(matches), total, ours)
}

// withoutEnv is env without the variable name.
func withoutEnv(env []string, name string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}

// TestStartGCCommands: the commands that read the embedded data and end
// keep the collector's raised first goal (internal/startgc); those whose
// memory is bounded (mirror, serve, release fetch, and any other) collect
// from their start as before.
func TestStartGCCommands(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	// cobra adds its completion request command when it executes.
	root.AddCommand(&cobra.Command{Use: cobra.ShellCompRequestCmd})
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"build"}, true},
		{[]string{"resolve"}, true},
		{[]string{"version"}, true},
		{[]string{"__complete"}, true},
		{[]string{"help", "build"}, true},
		{[]string{"mirror"}, false},
		{[]string{"serve"}, false},
		{[]string{"release", "fetch"}, false},
		{[]string{"release", "verify"}, false},
		{[]string{"prune"}, false},
		{[]string{"matrix"}, false},
		{[]string{"validate"}, false},
	} {
		cmd, _, err := root.Find(tc.args)
		if err != nil || len(tc.args) > 0 && cmd.Name() != tc.args[len(tc.args)-1] && cmd.Name() != tc.args[0] {
			t.Fatalf("Find(%q) = %v, %v", tc.args, cmd.CommandPath(), err)
		}
		if got := keepsStartGC(cmd); got != tc.want {
			t.Errorf("keepsStartGC(%q) = %v, want %v", cmd.CommandPath(), got, tc.want)
		}
	}
}
