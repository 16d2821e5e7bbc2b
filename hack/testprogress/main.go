// Command testprogress runs `go test -json` and prints what `go test`
// prints (a line per package, the output of failed tests), and in between
// what is running: whenever nothing was printed for -every, a line naming
// the packages whose tests run, for how long, and their longest-running
// tests, or that packages are compiling. At the end it lists the skipped
// tests with their reasons and the slowest tests, and closes with
// "tests: N passed, N failed, N skipped". The full output of every
// package goes to -log. Its exit code is the command's.
//
//	testprogress -log bin/test.log -- go test -json -count=1 ./...
//
// `make test` runs the suite through it, so that a long package or a
// slow test never leaves the terminal silent for more than -every.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Time        time.Time
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string
	FailedBuild string
}

// line is one line of a package's output and the test that printed it.
type line struct {
	test, text string
}

type pkgState struct {
	name    string
	started time.Time
	running map[string]time.Time // test -> when it started or continued
	ended   map[string]bool      // tests that passed, failed or skipped
	// building is the tool a running test builds ("goreleaser
	// v2.12.0"), from hack/tool.sh's lines in its log.
	building map[string]string
	lines    []line
	failed   []string // tests that failed, in order
	skipped  []string
	passed   int
	// benchmarks counts the top-level benchmarks that ran and did not
	// fail.
	benchmarks int
}

type testResult struct {
	pkg, test string
	elapsed   float64
	reason    string
}

type progress struct {
	mu        sync.Mutex
	out       io.Writer
	log       io.Writer
	now       func() time.Time
	start     time.Time
	lastPrint time.Time
	pkgs      map[string]*pkgState
	done      int
	passed    int
	failed    int
	// benchmarks counts the top-level benchmarks that ran and did not
	// fail (go test reports no end of a benchmark that passes).
	benchmarks int
	skipped    []testResult
	durations  []testResult // top-level tests
}

func main() {
	logPath := flag.String("log", "", "write every package's full output to this `file`")
	every := flag.Duration("every", 30*time.Second, "print what is running when nothing was printed for this long")
	slowest := flag.Int("slowest", 10, "list this many of the slowest tests at the end")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: testprogress [-log FILE] [-every 30s] [-slowest 10] -- go test -json ...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	os.Exit(run(flag.Args(), *logPath, *every, *slowest))
}

// run runs the command in args, reads its `go test -json` stream and
// returns the exit code: the command's, or 1 when it exited 0 but a test
// or package failed.
func run(args []string, logPath string, every time.Duration, slowest int) int {
	p := newProgress(os.Stdout, io.Discard, time.Now)
	if logPath != "" {
		f, err := os.Create(logPath)
		if err != nil {
			fmt.Fprintf(os.Stderr, "testprogress: creating the log: %v\n", err)
			return 2
		}
		defer f.Close()
		w := bufio.NewWriter(f)
		defer w.Flush()
		p.log = w
	}

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testprogress: %v\n", err)
		return 2
	}
	// ^C reaches go test (same process group), which stops its tests and
	// reports them; keep reading until it exits.
	signal.Ignore(os.Interrupt)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "testprogress: starting %s: %v\n", args[0], err)
		return 2
	}
	stop := make(chan struct{})
	go p.heartbeat(every, stop)
	readErr := p.consume(stdout)
	close(stop)
	if readErr != nil {
		// Keep go test from blocking on a full pipe.
		io.Copy(io.Discard, stdout)
		fmt.Fprintf(os.Stderr, "testprogress: reading go test's output: %v\n", readErr)
	}
	waitErr := cmd.Wait()
	p.summary(slowest)
	code := p.exitCode(waitErr)
	if code == 0 && readErr != nil {
		code = 1
	}
	return code
}

func newProgress(out, log io.Writer, now func() time.Time) *progress {
	p := &progress{out: out, log: log, now: now, start: now(), pkgs: map[string]*pkgState{}}
	p.lastPrint = p.start
	return p
}

// consume handles every line of r, a `go test -json` stream, until its
// end.
func (p *progress) consume(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		raw, err := br.ReadBytes('\n')
		if len(raw) > 0 {
			p.handle(bytes.TrimSuffix(raw, []byte("\n")))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// exitCode is go test's exit code (waitErr is what waiting for it
// returned), or 1 when go test exited 0 although a test or a package
// failed: a failure never exits 0.
func (p *progress) exitCode(waitErr error) int {
	code := 0
	if waitErr != nil {
		code = 1
		var ee *exec.ExitError
		if errors.As(waitErr, &ee) && ee.ExitCode() > 0 {
			code = ee.ExitCode()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if code == 0 && p.failed > 0 {
		code = 1
	}
	return code
}

func (p *progress) printf(format string, args ...any) {
	fmt.Fprintf(p.out, format, args...)
	p.lastPrint = p.now()
}

func (p *progress) handle(raw []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var e event
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &e) != nil {
		// Not an event (go test prints some errors plainly).
		p.printf("%s\n", raw)
		fmt.Fprintf(p.log, "%s\n", raw)
		return
	}
	switch e.Action {
	case "build-output":
		p.printf("%s", e.Output)
		fmt.Fprintf(p.log, "%s", e.Output)
		return
	case "build-fail":
		return
	}
	if e.Package == "" {
		return
	}
	s := p.pkgs[e.Package]
	if s == nil {
		s = &pkgState{name: e.Package, started: e.Time, running: map[string]time.Time{}, ended: map[string]bool{}, building: map[string]string{}}
		p.pkgs[e.Package] = s
	}
	switch e.Action {
	case "start":
		s.started = e.Time
	case "run", "cont":
		if e.Test == "" {
			break
		}
		if isBenchmark(e.Test) {
			// A benchmark that passes has no event of its own: it
			// ends when the next one starts, or with its package.
			benchmarkDone(s, e.Test)
			if e.Action == "run" && !strings.Contains(e.Test, "/") {
				s.benchmarks++
				p.benchmarks++
			}
		}
		s.running[e.Test] = e.Time
	case "pause":
		delete(s.running, e.Test)
	case "output":
		s.lines = append(s.lines, line{e.Test, e.Output})
		p.toolBuild(s, e)
	case "pass", "fail", "skip":
		if e.Test != "" {
			p.testDone(s, e)
			return
		}
		p.packageDone(s, e)
	}
}

// benchmarkDone takes the benchmarks that are not next's parents off the
// running list.
func benchmarkDone(s *pkgState, next string) {
	for name := range s.running {
		if isBenchmark(name) && !strings.HasPrefix(next, name+"/") {
			delete(s.running, name)
		}
	}
}

func isBenchmark(test string) bool { return strings.HasPrefix(test, "Benchmark") }

// toolBuildLine matches what hack/tool.sh says while it builds a tool
// ("building goreleaser v2.12.0 into DIR (once per machine)", "still
// building goreleaser v2.12.0 (30 s)", "built goreleaser v2.12.0 in 95 s")
// as a test logs it (testutil.PinnedTool).
var toolBuildLine = regexp.MustCompile(`hack/tool\.sh: +(?:(?:still )?building (\S+ \S+) (?:into |\()|built (\S+ \S+) in (\d+ s))`)

// toolBuild notes the tool a test starts or ends building, and says so
// at once: on a fresh machine a test can build for minutes, and the
// status lines name what it builds.
func (p *progress) toolBuild(s *pkgState, e event) {
	if e.Test == "" || !strings.Contains(e.Output, "hack/tool.sh:") {
		return
	}
	m := toolBuildLine.FindStringSubmatch(e.Output)
	switch {
	case m == nil:
	case m[1] != "":
		if s.building[e.Test] == "" {
			p.printf("... %s %s: building %s (once per machine)\n", short(s.name), e.Test, m[1])
		}
		s.building[e.Test] = m[1]
	default:
		delete(s.building, e.Test)
		p.printf("... %s %s: built %s in %s\n", short(s.name), e.Test, m[2], m[3])
	}
}

func (p *progress) testDone(s *pkgState, e event) {
	delete(s.running, e.Test)
	delete(s.building, e.Test)
	s.ended[e.Test] = true
	topLevel := !strings.Contains(e.Test, "/")
	if isBenchmark(e.Test) {
		// Counted when it started; a failure is taken back.
		if e.Action == "fail" && topLevel {
			s.benchmarks--
			p.benchmarks--
		}
	}
	switch e.Action {
	case "pass":
		if !isBenchmark(e.Test) {
			s.passed++
			p.passed++
		}
	case "fail":
		s.failed = append(s.failed, e.Test)
		p.failed++
	case "skip":
		s.skipped = append(s.skipped, e.Test)
		p.skipped = append(p.skipped, testResult{pkg: s.name, test: e.Test, reason: skipReason(s.lines, e.Test)})
	}
	if topLevel && !isBenchmark(e.Test) {
		p.durations = append(p.durations, testResult{pkg: s.name, test: e.Test, elapsed: e.Elapsed})
	}
}

// skipReason is the last line a skipped test logged (its t.Skip message).
func skipReason(lines []line, test string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].test != test {
			continue
		}
		t := strings.TrimSpace(lines[i].text)
		if t == "" || strings.HasPrefix(t, "--- SKIP") || strings.HasPrefix(t, "=== ") {
			continue
		}
		return t
	}
	return ""
}

func (p *progress) packageDone(s *pkgState, e event) {
	delete(p.pkgs, s.name)
	p.done++
	fmt.Fprintf(p.log, "=== %s: %s (%.1fs)\n", s.name, e.Action, e.Elapsed)
	for _, l := range s.lines {
		fmt.Fprint(p.log, l.text)
	}
	switch {
	case e.Action == "skip":
		p.printf("?   \t%s\t[no test files]\n", s.name)
	case e.Action == "pass" && s.passed == 0 && s.benchmarks == 0 && len(s.skipped) == 0:
		p.printf("ok  \t%s\t%.1fs\t[no tests to run]\n", s.name, e.Elapsed)
	case e.Action == "pass":
		var counts []string
		if n := s.passed; n > 0 {
			counts = append(counts, fmt.Sprintf("%d passed", n))
		}
		if n := s.benchmarks; n > 0 {
			counts = append(counts, fmt.Sprintf("%d benchmarks", n))
		}
		if n := len(s.skipped); n > 0 {
			counts = append(counts, fmt.Sprintf("%d skipped", n))
		}
		p.printf("ok  \t%s\t%.1fs\t%s\n", s.name, e.Elapsed, strings.Join(counts, ", "))
	default:
		p.printFailure(s, e)
	}
}

// printFailure prints what go test prints for a package that failed: the
// output of its failed tests and of the tests that never ended (a panic,
// a timeout), what it printed outside any test, and "FAIL\t<package>".
// The lines are go test -v's, in its order, without the "=== RUN" (PAUSE,
// CONT, NAME) lines that only -v prints: "--- FAIL: TestName (0.00s)"
// and "FAIL\t<package>\t1.2s" are as go test prints them, for whoever
// reads the output for failures.
func (p *progress) printFailure(s *pkgState, e event) {
	failed := map[string]bool{}
	for _, t := range s.failed {
		failed[t] = true
	}
	for _, l := range s.lines {
		show := l.test == "" || failed[l.test] || !s.ended[l.test]
		if show && !isFraming(l.text) {
			p.printf("%s", l.text)
		}
	}
	switch {
	case strings.HasPrefix(lastText(s.lines), "FAIL\t"+s.name):
		// go test said so.
	case e.FailedBuild != "":
		p.printf("FAIL\t%s [build failed]\n", s.name)
	default:
		p.printf("FAIL\t%s\t%.3fs\n", s.name, e.Elapsed)
	}
	if len(s.failed) == 0 {
		// A package failing outside its tests (a panic in TestMain,
		// a timeout, a build failure) counts as one failure.
		p.failed++
	}
}

// isFraming reports whether text is a line test2json's verbose mode adds
// ("=== RUN   TestX") that go test without -v does not print.
func isFraming(text string) bool {
	for _, prefix := range []string{"=== RUN ", "=== PAUSE ", "=== CONT ", "=== NAME "} {
		if strings.HasPrefix(text, prefix) {
			return true
		}
	}
	return false
}

func lastText(lines []line) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1].text
}

// heartbeat prints what is running whenever nothing was printed for
// every.
func (p *progress) heartbeat(every time.Duration, stop <-chan struct{}) {
	tick := time.NewTicker(min(every/4, 5*time.Second))
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			p.mu.Lock()
			if now.Sub(p.lastPrint) >= every {
				p.printf("%s\n", p.status(now))
			}
			p.mu.Unlock()
		}
	}
}

// status says what runs at now: "... 3m10s: 21 packages done; running
// cmd/microshift-compose 2m05s (TestMirror 1m10s, TestBuild 3s); compiling".
func (p *progress) status(now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "... %s: %d packages done", round(now.Sub(p.start)), p.done)
	var running []*pkgState
	for _, s := range p.pkgs {
		running = append(running, s)
	}
	slices.SortFunc(running, func(a, b *pkgState) int { return a.started.Compare(b.started) })
	if len(running) == 0 {
		b.WriteString("; compiling")
		return b.String()
	}
	b.WriteString("; running")
	for i, s := range running {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s %s", short(s.name), round(now.Sub(s.started)))
		type run struct {
			name  string
			since time.Time
		}
		var tests []run
		for name, since := range s.running {
			tests = append(tests, run{name, since})
		}
		// Tests building a tool first: they are what a fresh machine
		// waits for.
		slices.SortFunc(tests, func(a, b run) int {
			return cmp.Or(cmp.Compare(len(s.building[b.name]), 0)-cmp.Compare(len(s.building[a.name]), 0), a.since.Compare(b.since), strings.Compare(a.name, b.name))
		})
		if len(tests) > 3 {
			tests = tests[:3]
		}
		var names []string
		for _, t := range tests {
			n := fmt.Sprintf("%s %s", t.name, round(now.Sub(t.since)))
			if tool := s.building[t.name]; tool != "" {
				n += " building " + tool
			}
			names = append(names, n)
		}
		if len(names) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(names, ", "))
		}
	}
	return b.String()
}

func (p *progress) summary(slowest int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.skipped) > 0 {
		// One line per reason: a clone without ../shared skips scores
		// of tests for one reason.
		p.printf("skipped:\n")
		var reasons []string
		byReason := map[string][]testResult{}
		for _, s := range p.skipped {
			if byReason[s.reason] == nil {
				reasons = append(reasons, s.reason)
			}
			byReason[s.reason] = append(byReason[s.reason], s)
		}
		for _, r := range reasons {
			tests := byReason[r]
			if len(tests) == 1 {
				p.printf("  %s %s: %s\n", short(tests[0].pkg), tests[0].test, r)
				continue
			}
			const named = 3
			var names []string
			for _, s := range tests[:min(named, len(tests))] {
				names = append(names, short(s.pkg)+" "+s.test)
			}
			if len(tests) > named {
				names = append(names, "...")
			}
			p.printf("  %d tests (%s): %s\n", len(tests), strings.Join(names, ", "), r)
		}
	}
	slices.SortStableFunc(p.durations, func(a, b testResult) int { return cmp.Compare(b.elapsed, a.elapsed) })
	if n := min(slowest, len(p.durations)); n > 0 {
		p.printf("slowest tests:\n")
		for _, d := range p.durations[:n] {
			p.printf("  %6.1fs %s %s\n", d.elapsed, short(d.pkg), d.test)
		}
	}
	p.printf("wall time %s\n", round(p.now().Sub(p.start)))
	total := fmt.Sprintf("tests: %d passed, %d failed, %d skipped", p.passed, p.failed, len(p.skipped))
	if p.benchmarks > 0 {
		total += fmt.Sprintf(", %d benchmarks", p.benchmarks)
	}
	p.printf("%s\n", total)
}

// module is the path of the module in the working directory ("" when
// there is none), which status lines leave out of package paths.
var module = func() string {
	data, err := os.ReadFile("go.mod")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}()

// short drops the module path from a package path.
func short(pkg string) string {
	if rest, ok := strings.CutPrefix(pkg, module+"/"); ok && module != "" {
		return rest
	}
	return pkg
}

func round(d time.Duration) time.Duration { return d.Round(time.Second) }
