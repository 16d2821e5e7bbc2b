package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The streams in testdata/streams were recorded from the packages of
// testdata/fakemod (a module of its own: ./... of this repository does
// not reach it) by `go test -json`; -record records them again with the
// Go in PATH and -update rewrites the .out files (what testprogress
// prints for each stream) from them. Review both diffs.
var (
	record = flag.Bool("record", false, "record testdata/streams/*.json from testdata/fakemod")
	update = flag.Bool("update", false, "rewrite testdata/streams/*.out")
)

// streams are the recorded go test invocations: the go test arguments
// after -json, run in testdata/fakemod.
var streams = []struct {
	name string
	args []string
}{
	{"pass", []string{"./pass"}},
	{"fail", []string{"./fail"}},
	{"buildfail", []string{"./buildfail"}},
	{"panic", []string{"./panic"}},
	{"skip", []string{"./skip"}},
	{"timeout", []string{"-timeout", "1s", "./timeout"}},
	{"notests", []string{"./notests"}},
	{"bench", []string{"-run", "^$", "-bench", ".", "-benchtime", "1x", "./bench"}},
	{"benchfail", []string{"-run", "^$", "-bench", ".", "-benchtime", "1x", "./benchfail"}},
	{"mixed", []string{"./pass", "./fail", "./buildfail", "./panic", "./skip", "./notests"}},
}

// TestMain runs testprogress itself when TestAgainstGoTest starts this
// binary as it.
func TestMain(m *testing.M) {
	if os.Getenv("TESTPROGRESS_AS_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

func fakemod(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "fakemod"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// goTest runs go test in testdata/fakemod and returns its stdout and exit
// code; the fake module builds without this repository's tags.
func goTest(t *testing.T, cmdline ...string) ([]byte, int) {
	t.Helper()
	cmd := exec.Command(cmdline[0], cmdline[1:]...)
	cmd.Dir = fakemod(t)
	cmd.Env = append(os.Environ(), "GOFLAGS=-count=1", "GOWORK=off", "TESTPROGRESS_AS_MAIN=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s: %v", strings.Join(cmdline, " "), err)
		}
		code = ee.ExitCode()
	}
	return stdout.Bytes(), code
}

func recordStreams(t *testing.T) {
	dir := fakemod(t)
	for _, s := range streams {
		out, code := goTest(t, append([]string{"go", "test", "-json"}, s.args...)...)
		// The fake module's path is this checkout's; keep it out of the
		// recording.
		out = bytes.ReplaceAll(out, []byte(dir), []byte("/fakemod"))
		base := filepath.Join("testdata", "streams", s.name)
		if err := os.WriteFile(base+".json", out, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(base+".exit", []byte(fmt.Sprintln(code)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// replay feeds a recorded stream to testprogress and returns what it
// printed and its exit code, given go test's recorded exit code.
func replay(t *testing.T, name string, goExit int) (string, int) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "streams", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out, log bytes.Buffer
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := newProgress(&out, &log, func() time.Time { return clock })
	if err := p.consume(f); err != nil {
		t.Fatal(err)
	}
	p.summary(3)
	var waitErr error
	if goExit != 0 {
		// An *exec.ExitError with goExit, from a real process.
		waitErr = exec.Command("sh", "-c", "exit "+strconv.Itoa(goExit)).Run()
	}
	return out.String(), p.exitCode(waitErr)
}

func recordedExit(t *testing.T, name string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "streams", name+".exit"))
	if err != nil {
		t.Fatal(err)
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return code
}

func TestStreams(t *testing.T) {
	if *record {
		recordStreams(t)
	}
	const pkg = "example.com/fakemod/"
	duration := `\d+\.\d+s`
	tests := []struct {
		stream string
		// goExit is go test's exit code in the recording.
		goExit int
		// want are regular expressions each matching a whole line of
		// the output; notWant must match none.
		want, notWant []string
	}{
		{
			stream: "pass", goExit: 0,
			want: []string{
				`ok  \t` + pkg + `pass\t` + duration + `\t4 passed`,
				`tests: 4 passed, 0 failed, 0 skipped`,
			},
			notWant: []string{`.*FAIL.*`, `.*not printed.*`, `=== RUN.*`},
		},
		{
			stream: "fail", goExit: 1,
			want: []string{
				// go test's lines, as they are.
				`    fail_test.go:11: printed: the test failed`,
				`    fail_test.go:12: got 1, want 2`,
				`--- FAIL: TestFails \(` + duration + `\)`,
				`    fail_test.go:17: the broken subtest`,
				`--- FAIL: TestSubtest/broken \(` + duration + `\)`,
				`--- FAIL: TestSubtest \(` + duration + `\)`,
				`printed on stdout by a failing test`,
				`--- FAIL: TestPrints \(` + duration + `\)`,
				`FAIL`,
				`FAIL\t` + pkg + `fail\t` + duration,
				`tests: 2 passed, 4 failed, 0 skipped`,
			},
			notWant: []string{`.*not printed.*`, `=== RUN.*`, `--- PASS.*`, `ok .*`},
		},
		{
			stream: "buildfail", goExit: 1,
			want: []string{
				`# ` + pkg + `buildfail \[` + pkg + `buildfail.test\]`,
				`buildfail/buildfail_test.go:6:14: cannot use "not a number" .*`,
				`FAIL\t` + pkg + `buildfail \[build failed\]`,
				`tests: 0 passed, 1 failed, 0 skipped`,
			},
		},
		{
			stream: "panic", goExit: 1,
			want: []string{
				`--- FAIL: TestPanics \(` + duration + `\)`,
				`panic: assignment to entry in nil map.*`,
				`\t/fakemod/panic/panic_test.go:9 .*`,
				`FAIL\t` + pkg + `panic\t` + duration,
				`tests: 1 passed, 1 failed, 0 skipped`,
			},
			notWant: []string{`--- PASS: TestBefore.*`, `.*TestNeverRuns.*`},
		},
		{
			stream: "skip", goExit: 0,
			want: []string{
				`ok  \t` + pkg + `skip\t` + duration + `\t2 passed, 2 skipped`,
				`skipped:`,
				`  ` + pkg + `skip TestSkipped: skip_test.go:7: needs podman`,
				`  ` + pkg + `skip TestSkippedSubtest/inner: skip_test.go:10: needs ../shared`,
				// TestSkippedSubtest passes; its subtest skips.
				`tests: 2 passed, 0 failed, 2 skipped`,
			},
		},
		{
			// A timeout ends no test: the hanging test's output
			// (the panic naming it) is printed.
			stream: "timeout", goExit: 1,
			want: []string{
				`panic: test timed out after 1s`,
				`\t\tTestHangs \(1s\)`,
				`FAIL\t` + pkg + `timeout\t` + duration,
				`tests: 1 passed, 1 failed, 0 skipped`,
			},
			notWant: []string{`--- PASS.*`, `=== RUN.*`},
		},
		{
			stream: "notests", goExit: 0,
			want: []string{
				`\?   \t` + pkg + `notests\t\[no test files\]`,
				`tests: 0 passed, 0 failed, 0 skipped`,
			},
		},
		{
			stream: "bench", goExit: 0,
			want: []string{
				`ok  \t` + pkg + `bench\t` + duration + `\t3 benchmarks`,
				`tests: 0 passed, 0 failed, 0 skipped, 3 benchmarks`,
			},
			notWant: []string{`.*FAIL.*`, `slowest tests:`},
		},
		{
			stream: "benchfail", goExit: 1,
			want: []string{
				`    benchfail_test.go:10: the broken benchmark`,
				`--- FAIL: BenchmarkBroken`,
				`FAIL\t` + pkg + `benchfail\t` + duration,
				`tests: 0 passed, 1 failed, 0 skipped, 2 benchmarks`,
			},
		},
		{
			stream: "mixed", goExit: 1,
			want: []string{
				`ok  \t` + pkg + `pass\t` + duration + `\t4 passed`,
				`--- FAIL: TestFails \(` + duration + `\)`,
				`FAIL\t` + pkg + `fail\t` + duration,
				`FAIL\t` + pkg + `buildfail \[build failed\]`,
				`--- FAIL: TestPanics \(` + duration + `\)`,
				`FAIL\t` + pkg + `panic\t` + duration,
				`ok  \t` + pkg + `skip\t` + duration + `\t2 passed, 2 skipped`,
				`\?   \t` + pkg + `notests\t\[no test files\]`,
				`tests: 9 passed, 6 failed, 2 skipped`,
			},
			notWant: []string{`.*not printed.*`, `=== RUN.*`},
		},
	}
	if len(tests) != len(streams) {
		t.Fatalf("%d streams, %d cases", len(streams), len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.stream, func(t *testing.T) {
			if got := recordedExit(t, tc.stream); got != tc.goExit {
				t.Fatalf("go test exited %d in the recording, want %d", got, tc.goExit)
			}
			out, code := replay(t, tc.stream, tc.goExit)
			if code != tc.goExit {
				t.Errorf("exit code %d, want go test's %d", code, tc.goExit)
			}
			if tc.goExit != 0 {
				// Even when go test exited 0, a failure does not.
				if _, code := replay(t, tc.stream, 0); code != 1 {
					t.Errorf("exit code %d after go test exited 0, want 1", code)
				}
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			for _, w := range tc.want {
				re := regexp.MustCompile("^" + w + "$")
				if !slices.ContainsFunc(lines, re.MatchString) {
					t.Errorf("no line matches %q in\n%s", w, out)
				}
			}
			for _, nw := range tc.notWant {
				re := regexp.MustCompile("^" + nw + "$")
				if i := slices.IndexFunc(lines, re.MatchString); i >= 0 {
					t.Errorf("line %q matches %q", lines[i], nw)
				}
			}
			golden := filepath.Join("testdata", "streams", tc.stream+".out")
			if *update || *record {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if out != string(want) {
				t.Errorf("output differs from %s (-update rewrites it):\n%s", golden, out)
			}
		})
	}
}

// TestLog: every package's full output, passing tests' logs too, goes to
// the log.
func TestLog(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "streams", "mixed.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var log bytes.Buffer
	p := newProgress(io.Discard, &log, time.Now)
	if err := p.consume(f); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"=== example.com/fakemod/pass: pass (",
		"fail_test.go:8: not printed: this test passed",
		"=== RUN   TestSubtest/ok",
		"=== example.com/fakemod/buildfail: fail (",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, log.String())
		}
	}
}

// TestStatus: the line printed when nothing was printed for a while names
// the running packages and their longest-running tests.
func TestStatus(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := func(offset time.Duration, action, pkg, test string) string {
		return fmt.Sprintf(`{"Time":%q,"Action":%q,"Package":%q,"Test":%q}`+"\n", start.Add(offset).Format(time.RFC3339Nano), action, pkg, test)
	}
	logged := func(offset time.Duration, pkg, test, text string) string {
		return fmt.Sprintf(`{"Time":%q,"Action":"output","Package":%q,"Test":%q,"Output":%q}`+"\n", start.Add(offset).Format(time.RFC3339Nano), pkg, test, text)
	}
	tests := []struct {
		name   string
		stream string
		want   string
		// printed is what was printed before the status line.
		printed string
	}{
		{"compiling", "", "... 1m30s: 0 packages done; compiling", ""},
		{
			"tests",
			ev(0, "start", "example.com/a", "") +
				ev(time.Second, "run", "example.com/a", "TestSlow") +
				ev(2*time.Second, "run", "example.com/a", "TestSlow/sub") +
				ev(3*time.Second, "run", "example.com/a", "TestQuick") +
				ev(4*time.Second, "pass", "example.com/a", "TestQuick") +
				ev(5*time.Second, "run", "example.com/a", "TestParallel") +
				ev(6*time.Second, "pause", "example.com/a", "TestParallel") +
				ev(10*time.Second, "start", "example.com/b", "") +
				ev(10*time.Second, "pass", "example.com/c", "") +
				ev(20*time.Second, "run", "example.com/b", "BenchmarkX") +
				ev(21*time.Second, "run", "example.com/b", "BenchmarkX/one") +
				ev(22*time.Second, "run", "example.com/b", "BenchmarkX/two"),
			"... 1m30s: 1 packages done; running example.com/a 1m30s (TestSlow 1m29s, TestSlow/sub 1m28s), example.com/b 1m20s (BenchmarkX 1m10s, BenchmarkX/two 1m8s)",
			"ok  \texample.com/c\t0.0s\t[no tests to run]\n",
		},
		{
			// A test building a pinned tool (testutil.PinnedTool logs
			// hack/tool.sh's lines) comes first and says what it
			// builds, though three tests run longer; one that finished
			// building does not.
			"tool build",
			ev(0, "start", "example.com/a", "") +
				ev(time.Second, "run", "example.com/a", "TestA") +
				ev(time.Second, "run", "example.com/a", "TestB") +
				ev(time.Second, "run", "example.com/a", "TestC") +
				ev(2*time.Second, "run", "example.com/a", "TestHelm") +
				ev(3*time.Second, "run", "example.com/a", "TestRelease") +
				logged(3*time.Second, "example.com/a", "TestHelm", "    gotool.go:170: hack/tool.sh: building helm v3.19.0 into /c/go1.26.8-linux-amd64 (once per machine)\n") +
				logged(4*time.Second, "example.com/a", "TestRelease", "    gotool.go:170: hack/tool.sh: building goreleaser v2.12.0 into /c/go1.26.8-linux-amd64 (once per machine)\n") +
				logged(34*time.Second, "example.com/a", "TestRelease", "    gotool.go:170: hack/tool.sh:   still building goreleaser v2.12.0 (30 s)\n") +
				logged(40*time.Second, "example.com/a", "TestHelm", "    gotool.go:170: hack/tool.sh: built helm v3.19.0 in 37 s\n"),
			"... 1m30s: 0 packages done; running example.com/a 1m30s (TestRelease 1m27s building goreleaser v2.12.0, TestA 1m29s, TestB 1m29s)",
			"... example.com/a TestHelm: building helm v3.19.0 (once per machine)\n" +
				"... example.com/a TestRelease: building goreleaser v2.12.0 (once per machine)\n" +
				"... example.com/a TestHelm: built helm v3.19.0 in 37 s\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			p := newProgress(&out, io.Discard, func() time.Time { return start })
			if err := p.consume(strings.NewReader(tc.stream)); err != nil {
				t.Fatal(err)
			}
			if got := p.status(start.Add(90 * time.Second)); got != tc.want {
				t.Errorf("status:\n got %q\nwant %q", got, tc.want)
			}
			if got := out.String(); got != tc.printed {
				t.Errorf("printed:\n got %q\nwant %q", got, tc.printed)
			}
		})
	}
}

// TestHeartbeat: when nothing was printed for -every, what runs is.
func TestHeartbeat(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, io.Discard, time.Now)
	started := fmt.Sprintf(`{"Time":%q,"Action":"start","Package":"example.com/slow"}`+"\n", time.Now().Format(time.RFC3339Nano))
	if err := p.consume(strings.NewReader(started)); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go p.heartbeat(20*time.Millisecond, stop)
	re := regexp.MustCompile(`(?m)^\.\.\. \d+s: 0 packages done; running example.com/slow \d+s$`)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		p.mu.Lock()
		got := out.String()
		p.mu.Unlock()
		if re.MatchString(got) {
			return
		}
	}
	t.Fatalf("no status line in 10 s:\n%s", out.String())
}

// TestAgainstGoTest runs the fake module's packages with go test and
// through testprogress (this binary as it) and compares what whoever
// reads the output for failures finds: every "--- FAIL: <test>" and
// "FAIL\t<package>" line of go test is there, and both exit non-zero.
func TestAgainstGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fake module's tests")
	}
	pkgs := []string{"./pass", "./fail", "./buildfail", "./panic", "./skip", "./notests"}
	plain, plainCode := goTest(t, append([]string{"go", "test"}, pkgs...)...)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, append([]string{"-every", "1h", "--", "go", "test", "-json"}, pkgs...)...)
	cmd.Dir = fakemod(t)
	cmd.Env = append(os.Environ(), "GOFLAGS=-count=1", "GOWORK=off", "TESTPROGRESS_AS_MAIN=1")
	var progressOut bytes.Buffer
	cmd.Stdout = &progressOut
	err = cmd.Run()
	progressCode := 0
	if ee, ok := err.(*exec.ExitError); ok {
		progressCode = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if plainCode == 0 || progressCode != plainCode {
		t.Errorf("exit codes: go test %d, testprogress %d; want the same, not 0", plainCode, progressCode)
	}
	// The durations differ between the two runs; go test indents a
	// subtest's line by its depth, go test -v (and testprogress) do not.
	failLine := regexp.MustCompile(`(?m)^\s*(--- FAIL: \S+|FAIL\t\S+(?: \[build failed\])?)`)
	matches := func(out string) []string {
		var lines []string
		for _, m := range failLine.FindAllStringSubmatch(out, -1) {
			lines = append(lines, m[1])
		}
		return lines
	}
	want := matches(string(plain))
	got := matches(progressOut.String())
	slices.Sort(want)
	slices.Sort(got)
	if len(want) < 8 {
		t.Fatalf("go test printed only %q", want)
	}
	if !slices.Equal(got, want) {
		t.Errorf("failure lines:\ntestprogress %q\n     go test %q\n\ntestprogress printed:\n%s", got, want, progressOut.String())
	}
}

// TestSkippedByReason: the summary says each skip reason once, with how
// many tests it skipped.
func TestSkippedByReason(t *testing.T) {
	var stream strings.Builder
	skip := func(pkg, test, reason string) {
		for _, e := range []map[string]string{
			{"Action": "run", "Package": pkg, "Test": test},
			{"Action": "output", "Package": pkg, "Test": test, "Output": "    x_test.go:1: missing reference/" + test + "\n"},
			{"Action": "output", "Package": pkg, "Test": test, "Output": "    x_test.go:2: " + reason + "\n"},
			{"Action": "output", "Package": pkg, "Test": test, "Output": "--- SKIP: " + test + " (0.00s)\n"},
			{"Action": "skip", "Package": pkg, "Test": test},
		} {
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			stream.Write(append(b, '\n'))
		}
	}
	const shared = "needs the upstream reference files: put ../shared beside the repository"
	skip("example.com/a", "TestOne", shared)
	skip("example.com/a", "TestTwo", shared)
	skip("example.com/b", "TestThree", "needs podman")
	skip("example.com/b", "TestFour", shared)
	skip("example.com/c", "TestFive", shared)
	var out bytes.Buffer
	p := newProgress(&out, io.Discard, time.Now)
	if err := p.consume(strings.NewReader(stream.String())); err != nil {
		t.Fatal(err)
	}
	p.summary(0)
	want := "skipped:\n" +
		"  4 tests (example.com/a TestOne, example.com/a TestTwo, example.com/b TestFour, ...): x_test.go:2: " + shared + "\n" +
		"  example.com/b TestThree: x_test.go:2: needs podman\n"
	if got := out.String(); !strings.HasPrefix(got, want) {
		t.Errorf("summary:\n%s\nwant it to start with\n%s", got, want)
	}
}
