package main

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/compose/plan"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// writeRefsLock writes a lock file naming refs (pinned, x86_64), what
// mirror --lock reads, and returns its path.
func writeRefsLock(t *testing.T, dir string, refs ...string) string {
	t.Helper()
	lock := plan.Plan{Schema: plan.Schema, Arch: "x86_64", Profile: "test"}
	for _, r := range refs {
		lock.Images = append(lock.Images, plan.Image{Ref: r, Pinned: !strings.Contains(r[strings.LastIndex(r, "/")+1:], ":") || strings.Contains(r, "@")})
	}
	data, err := compose.EncodeLock(&lock)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "compose.lock.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRegistriesConfFromEnvironment: $CONTAINERS_REGISTRIES_CONF is the
// registries.conf every registry command reads (by containers/image's own
// environment handling, as for podman): a file that blocks the registry
// makes mirror refuse it; --registries-conf wins over the variable.
func TestRegistriesConfFromEnvironment(t *testing.T) {
	reg := testutil.NewFaultyRegistry(t)
	ref, err := (&testutil.Pusher{Host: reg.Host}).PushImage("app/one", "amd64", []testutil.Layer{testutil.NewLayer(7, 4096)})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	lock := writeRefsLock(t, dir, ref)
	blocking := filepath.Join(dir, "blocking.conf")
	open := filepath.Join(dir, "open.conf")
	if err := os.WriteFile(blocking, []byte("[[registry]]\nlocation = \""+reg.Host+"\"\nblocked = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(open, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CONTAINERS_REGISTRIES_CONF", blocking)

	_, stderr, code := runCLI(t, "mirror", "--lock", lock, "--quiet", "--to", "oci:"+filepath.Join(dir, "blocked"))
	if code != exitError || !strings.Contains(stderr, "blocked in registries.conf") || !strings.Contains(stderr, ref) {
		t.Errorf("mirror with $CONTAINERS_REGISTRIES_CONF blocking %s = exit %d: %q, want the image refused as blocked", reg.Host, code, stderr)
	}
	if n := reg.Requests("GET", "/v2/app/one/manifests/"+ref[strings.Index(ref, "@")+1:]); n != 0 {
		t.Errorf("the blocked registry was asked for the manifest %d times", n)
	}

	stdout, stderr, code := runCLI(t, "mirror", "--lock", lock, "--quiet", "--registries-conf", open, "--to", "oci:"+filepath.Join(dir, "open"))
	if code != exitOK || !strings.Contains(stdout, "mirrored 1 images") {
		t.Errorf("mirror --registries-conf (not blocking) with $CONTAINERS_REGISTRIES_CONF blocking = exit %d: %q %q", code, stdout, stderr)
	}

	t.Setenv("CONTAINERS_REGISTRIES_CONF", filepath.Join(dir, "missing.conf"))
	_, stderr, code = runCLI(t, "mirror", "--lock", lock, "--quiet", "--to", "oci:"+filepath.Join(dir, "missing"))
	if code != exitError || !strings.Contains(stderr, "$CONTAINERS_REGISTRIES_CONF "+filepath.Join(dir, "missing.conf")+" does not exist") {
		t.Errorf("mirror with $CONTAINERS_REGISTRIES_CONF missing = exit %d: %q", code, stderr)
	}
}

// TestSignalStopsStalledMirror sends SIGTERM to the real binary while a
// registry holds its manifest request open (with a --timeout far longer
// than the test): the first signal ends the process, with one clean
// error line, not "context canceled".
func TestSignalStopsStalledMirror(t *testing.T) {
	reg := testutil.NewFaultyRegistry(t)
	ref, err := (&testutil.Pusher{Host: reg.Host}).PushImage("app/stalled", "amd64", []testutil.Layer{testutil.NewLayer(8, 4096)})
	if err != nil {
		t.Fatal(err)
	}
	manifest := "/v2/app/stalled/manifests/" + ref[strings.Index(ref, "@")+1:]
	reg.SetFault(func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.URL.Path == manifest {
			reg.Hang(r)
			return true
		}
		return false
	})
	dir := t.TempDir()
	lock := writeRefsLock(t, dir, ref)
	cmd := exec.Command(buildBinary(t), "mirror", "--lock", lock, "--quiet", "--timeout", "10m", "--to", "oci:"+filepath.Join(dir, "images"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for reg.Requests("GET", manifest) == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the mirror never asked for the manifest: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitError {
			t.Errorf("mirror after SIGTERM: %v, want exit %d", err, exitError)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("mirror did not stop on SIGTERM: %s", stderr.String())
	}
	lines := nonEmptyLines(stderr.String())
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "error: interrupted (") || strings.Contains(lines[0], "context canceled") {
		t.Errorf("stderr after SIGTERM = %q, want one 'error: interrupted (...)' line", stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q", stdout.String())
	}
}
