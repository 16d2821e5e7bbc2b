// Command depcost says what each module a binary links costs: the CPU its
// packages took to compile (from `go build -debug-actiongraph`, a build
// with an empty cache) and the time their package initialisation takes at
// every start (from GODEBUG=inittrace=1 output), side by side, the most
// costly first. `make bench deps` runs it.
//
//	depcost -graph actiongraph.json -deps deps.txt [-inittrace FILE -runs N]
//
// deps.txt holds `go list -deps -f '{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}'`
// of the binary's main package.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

type action struct {
	Mode    string
	Package string
	CmdUser time.Duration
	CmdSys  time.Duration
}

type cost struct {
	module   string
	packages int
	compile  time.Duration
	init     float64 // ms per start
}

func main() {
	graph := flag.String("graph", "", "the build's -debug-actiongraph JSON")
	deps := flag.String("deps", "", "the main package's dependencies: import path and module, one per line")
	inittrace := flag.String("inittrace", "", "GODEBUG=inittrace=1 output of -runs starts of the binary")
	runs := flag.Int("runs", 1, "how many starts -inittrace holds")
	top := flag.Int("top", 15, "modules to list")
	flag.Parse()
	if err := run(*graph, *deps, *inittrace, *runs, *top); err != nil {
		fmt.Fprintln(os.Stderr, "depcost:", err)
		os.Exit(1)
	}
}

func run(graphFile, depsFile, traceFile string, runs, top int) error {
	module := map[string]string{}
	f, err := os.Open(depsFile)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pkg, mod, _ := strings.Cut(sc.Text(), " ")
		if mod == "" {
			mod = "std"
		}
		module[pkg] = mod
	}
	data, err := os.ReadFile(graphFile)
	if err != nil {
		return err
	}
	var actions []action
	if err := json.Unmarshal(data, &actions); err != nil {
		return fmt.Errorf("reading %s: %w", graphFile, err)
	}
	costs := map[string]*cost{}
	at := func(m string) *cost {
		if costs[m] == nil {
			costs[m] = &cost{module: m}
		}
		return costs[m]
	}
	var total, link time.Duration
	for _, a := range actions {
		cpu := a.CmdUser + a.CmdSys
		switch {
		case a.Mode == "link":
			link += cpu
		case a.Mode == "build" && module[a.Package] != "":
			c := at(module[a.Package])
			c.packages++
			c.compile += cpu
		default:
			continue
		}
		total += cpu
	}
	var initTotal float64
	if traceFile != "" {
		re := regexp.MustCompile(`^init (\S+) @\S+ ms, ([\d.]+) ms clock`)
		data, err := os.ReadFile(traceFile)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(data), "\n") {
			m := re.FindStringSubmatch(line)
			if m == nil || module[m[1]] == "" {
				continue
			}
			ms, _ := strconv.ParseFloat(m[2], 64)
			at(module[m[1]]).init += ms / float64(runs)
			initTotal += ms / float64(runs)
		}
	}
	list := make([]*cost, 0, len(costs))
	for _, c := range costs {
		list = append(list, c)
	}
	slices.SortFunc(list, func(a, b *cost) int { return cmp.Compare(b.compile, a.compile) })
	fmt.Printf("the binary: %d packages of %d modules; compiling them took %.0f CPU-s (linking %.0f), package initialisation %.1f ms per start\n",
		len(module), len(costs), total.Seconds(), link.Seconds(), initTotal)
	fmt.Printf("%-52s %5s %10s %9s\n", "module", "pkgs", "compile", "init")
	for i, c := range list {
		if i == top {
			break
		}
		fmt.Printf("%-52s %5d %8.1f s %6.2f ms\n", c.module, c.packages, c.compile.Seconds(), c.init)
	}
	return nil
}
