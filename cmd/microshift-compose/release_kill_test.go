package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/atomicfile"
)

// Helper mode of the test binary: run the CLI with the arguments in
// killArgsEnv (JSON) and kill this process with SIGKILL after
// killAfterEnv renames of a commit.
const (
	killArgsEnv  = "MICROSHIFT_COMPOSE_TEST_ARGS"
	killAfterEnv = "MICROSHIFT_COMPOSE_TEST_KILL_AFTER_RENAMES"
)

// TestMain runs the helper mode above, or the tests, then removes the
// binary the end-to-end tests built.
func TestMain(m *testing.M) {
	if args := os.Getenv(killArgsEnv); args != "" {
		var argv []string
		if err := json.Unmarshal([]byte(args), &argv); err != nil {
			os.Exit(99)
		}
		after, _ := strconv.Atoi(os.Getenv(killAfterEnv))
		atomicfile.TestHookAfterRename = func(n int) {
			if n == after {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
		os.Exit(run(context.Background(), argv, os.Stdout, os.Stderr))
	}
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// TestReleaseUpdateKilled kills `release update` with SIGKILL between the
// renames of its files: build then refuses the half-updated directory,
// `release update DIR` finishes the update, and the files are exactly
// those of an update that was never interrupted.
func TestReleaseUpdateKilled(t *testing.T) {
	h := newHostileEnv(t)
	killed := h.releaseDir("killed")
	clean := h.releaseDir("clean")
	csv := filepath.Join(root(t), "testdata", "rebase", "csvs", "lvms-operator.v4.18.4.clusterserviceversion.yaml")
	update := func(dir string) []string {
		return []string{"release", "update", dir, "--csv", csv, "--map", "lvms_operator=lvms-operator"}
	}
	mustRun(t, update(clean)...)

	argv, _ := json.Marshal(update(killed))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), killArgsEnv+"="+string(argv), killAfterEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("release update = %v (%s), want it killed by SIGKILL after its first rename", err, stderr.String())
	}

	// Half updated: refused by every reader, named with the way out.
	_, errOut, code := runCLI(t, "build", "--profile", "minimal", "--arch", "x86_64", "--release-dir", killed, "--output", filepath.Join(h.dir, "o"))
	if code != exitError || !strings.Contains(errOut, "an update was interrupted") || !strings.Contains(errOut, "release update "+killed) {
		t.Fatalf("build of the half-updated directory = exit %d, %q", code, errOut)
	}
	out := mustRun(t, "release", "update", killed)
	if want := "finished an interrupted update of " + killed + ": 1 file renamed into place\n"; out != want {
		t.Errorf("release update DIR = %q, want %q", out, want)
	}
	for _, name := range []string{"release-x86_64.json", "release-aarch64.json"} {
		got, _ := os.ReadFile(filepath.Join(killed, name))
		want, _ := os.ReadFile(filepath.Join(clean, name))
		if !bytes.Equal(got, want) {
			t.Errorf("%s after finishing differs from an uninterrupted update", name)
		}
	}
	entries, _ := os.ReadDir(killed)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left %s in the release directory", e.Name())
		}
	}
	if _, errOut, code := runCLI(t, "build", "--profile", "minimal", "--arch", "x86_64", "--release-dir", killed, "--output", filepath.Join(h.dir, "o")); code != exitOK {
		t.Errorf("build after finishing the update = exit %d: %s", code, errOut)
	}
}
