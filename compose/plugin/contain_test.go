package plugin_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/microshift-compose/microshift-compose/compose/plugin"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// readPid waits (bounded) for a plugin to record a pid in dir/name.
func readPid(t *testing.T, dir, name string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && perr == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("the plugin recorded no pid in %s", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func assertGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("process %d the plugin started is still running", pid)
	}
}

// TestRunKillsEveryDescendant: a daemon the plugin starts in a session of
// its own (setsid, after a double fork) is killed when the plugin exits,
// and the run succeeds at once.
func TestRunKillsEveryDescendant(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the reaper needs Linux's child subreaper")
	}
	testutil.NeedTool(t, "setsid", "util-linux")
	dir := pluginDir(t, "setsid-daemon")
	log, logged := quiet()
	start := time.Now()
	out, err := plugin.Run(context.Background(), dir, env(), plugin.Options{Logger: log})
	if err != nil {
		t.Fatalf("Run(setsid-daemon) = %v", err)
	}
	if !strings.Contains(string(out), "name: made") {
		t.Errorf("Run(setsid-daemon) = %q, want its output", out)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("Run(setsid-daemon) took %s", d)
	}
	assertGone(t, readPid(t, dir, "daemon.pid"))
	if !strings.Contains(logged.String(), "plugin left processes running; killed them") {
		t.Errorf("no warning about the processes left: %s", logged)
	}
}

// TestRunChildHoldingStdout: a child left holding stdout is killed when
// the plugin exits, and the run succeeds at once instead of failing after
// waiting for the pipe.
func TestRunChildHoldingStdout(t *testing.T) {
	dir := pluginDir(t, "holds-stdout")
	log, _ := quiet()
	start := time.Now()
	out, err := plugin.Run(context.Background(), dir, env(), plugin.Options{Logger: log})
	if err != nil {
		t.Fatalf("Run(holds-stdout) = %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Run(holds-stdout) took %s, want it to finish once the plugin exits", d)
	}
	if !strings.Contains(string(out), "name: made") {
		t.Errorf("Run(holds-stdout) = %q", out)
	}
	assertGone(t, readPid(t, dir, "child.pid"))
}

// TestRunEscapesStderr: escape sequences a plugin writes to stderr reach
// neither the log nor the error raw.
func TestRunEscapesStderr(t *testing.T) {
	log, logged := quiet()
	_, err := plugin.Run(context.Background(), pluginDir(t, "escapes"), env(), plugin.Options{Logger: log})
	want := `plugin run failed (exit 3): clearing \x1b[2J\x1b]0;pwned\x07 and \u202ereversed`
	if err == nil || err.Error() != want {
		t.Errorf("Run(escapes) = %v\nwant %s", err, want)
	}
	for _, raw := range []string{"\x1b", "\a", "\u202e"} {
		if strings.Contains(logged.String(), raw) || (err != nil && strings.Contains(err.Error(), raw)) {
			t.Errorf("%q reached the log or the error: %q", raw, logged.String())
		}
	}
}

// helperEnv makes the test binary run the hang plugin of the directory it
// names and wait: TestRunKilledCaller kills it with SIGKILL.
const helperEnv = "PLUGIN_TEST_RUN_HANG"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		_, _ = plugin.Run(context.Background(), dir, env(), plugin.Options{Timeout: time.Hour})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRunKilledCaller: when the build itself is killed with SIGKILL while
// a plugin runs, the plugin and its children die too.
func TestRunKilledCaller(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the reaper needs Linux")
	}
	dir := pluginDir(t, "hang")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	data := ""
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(filepath.Join(dir, "pids"))
		if data = strings.TrimSpace(string(b)); len(strings.Fields(data)) == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if len(strings.Fields(data)) != 2 {
		t.Fatalf("the hang plugin recorded %q", data)
	}
	for _, f := range strings.Fields(data) {
		pid, _ := strconv.Atoi(f)
		assertGone(t, pid)
	}
}
