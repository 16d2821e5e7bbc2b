package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Every command starts the same binary, which initialises every package it
// links (issue 19: process start is most of a build). Our own packages do
// no work at init: regular expressions through internal/lazyregexp, data
// parsed on first use (sync.OnceValue). The budget is what is left: a few
// small tables. All packages together stay within a budget too, so that a
// library pulling a heavy initialiser into the binary is noticed
// (./hack/bench.sh build prints the breakdown by module). Bytes allocated,
// from GODEBUG=inittrace=1, not time: they do not depend on the machine.
func TestPackageInitialisation(t *testing.T) {
	const (
		oursBudget  = 16 << 10
		totalBudget = 7 << 20
	)
	bin := buildBinary(t)
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
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
	t.Logf("package initialisation: %d packages, %d bytes, ours %d", len(matches), total, ours)
}
