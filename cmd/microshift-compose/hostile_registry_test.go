package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
)

// writeRefsLock writes a lock file naming refs (pinned, x86_64), what
// mirror --lock reads, and returns its path.
func writeRefsLock(t *testing.T, dir string, refs ...string) string {
	t.Helper()
	lock := plan.Plan{Schema: plan.Schema, Arch: "x86_64", Profile: "test"}
	for _, r := range refs {
		lock.Images = append(lock.Images, plan.Image{Ref: r, Pinned: !strings.Contains(r[strings.LastIndex(r, "/")+1:], ":") || strings.Contains(r, "@")})
	}
	data, err := lockfile.Encode(&lock)
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

// registryHostileCases: registry names and ports nothing could reach,
// image layouts whose index names images badly, and certificate files
// that are not regular files (issues 15 and 17, registry side).
func registryHostileCases() []hostileCase {
	lockOf := func(h *hostileEnv) string { return filepath.Join(h.out, "compose.lock.json") }
	toLayout := func(h *hostileEnv) string { return "oci:" + h.path("copy") }
	var cases []hostileCase
	for _, port := range []string{"99999", "0", "65536", "-1", "1x"} {
		cases = append(cases,
			hostileCase{class: "registry/name", name: "build --mirror-registry port " + port,
				setup: func(h *hostileEnv) ([]string, string) {
					return build(h, "--mirror-registry", "host:"+port+"/edge"), "--mirror-registry"
				}, want: "host:" + port},
			hostileCase{class: "registry/name", name: "mirror --to docker:// port " + port,
				setup: func(h *hostileEnv) ([]string, string) {
					return []string{"mirror", "--lock", lockOf(h), "--to", "docker://host:" + port + "/edge"}, "--to"
				}, want: "host:" + port, code: exitUsage},
		)
	}
	cases = append(cases,
		hostileCase{class: "registry/name", name: "mirror --insecure-registry port 99999",
			setup: func(h *hostileEnv) ([]string, string) {
				return []string{"mirror", "--lock", lockOf(h), "--insecure-registry", "host:99999", "--to", toLayout(h)}, "--insecure-registry"
			}, want: "port 99999 is not a TCP port (1-65535)", code: exitUsage},
		hostileCase{class: "registry/name", name: "mirror --insecure-registry with a path",
			setup: func(h *hostileEnv) ([]string, string) {
				return []string{"mirror", "--lock", lockOf(h), "--insecure-registry", "host:5000/x\ny", "--to", toLayout(h)}, "--insecure-registry"
			}, code: exitUsage},
	)

	// Layouts for mirror --from: index.json entries that name nothing, a
	// bad reference, or the same image twice.
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	entry := func(name string) string {
		annotations := ""
		if name != "-" {
			annotations = `,"annotations":{"org.opencontainers.image.ref.name":` + strconvQuote(name) + `}`
		}
		return `{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"` + digest + `","size":100` + annotations + `}`
	}
	good := "quay.io/edge/app@" + digest
	for _, tc := range []struct {
		name    string
		entries []string
		want    string
	}{
		{"a name with a newline and ../", []string{entry(good), entry("quay.io/edge/app\n../../etc@" + digest)}, `entry 2 (` + digest + `): org.opencontainers.image.ref.name "quay.io/edge/app\n../../etc@`},
		{"a name with ../", []string{entry("quay.io/../../etc/app@" + digest)}, "is not a full image reference"},
		{"a short name", []string{entry("latest")}, `org.opencontainers.image.ref.name "latest" is not a full image reference`},
		{"a duplicated name", []string{entry(good), entry("quay.io/edge/other@" + digest), entry(good)}, "entries 1 and 3 both name " + good},
		{"a second, empty entry", []string{entry(good), entry("-")}, "entry 2 (" + digest + ") has no org.opencontainers.image.ref.name annotation"},
		{"an empty name", []string{entry("")}, "entry 1 (" + digest + ") has no org.opencontainers.image.ref.name annotation"},
		{"no entries", nil, "names no images (its index.json is empty)"},
	} {
		index := `{"schemaVersion":2,"manifests":[` + strings.Join(tc.entries, ",") + `]}`
		cases = append(cases,
			hostileCase{class: "registry/layout-index", name: "oci: " + tc.name,
				setup: func(h *hostileEnv) ([]string, string) {
					dir := h.mkdir("layout")
					h.write("layout/oci-layout", `{"imageLayoutVersion":"1.0.0"}`)
					h.write("layout/index.json", index)
					return []string{"mirror", "--from", "oci:" + dir, "--to", toLayout(h)}, "oci:" + dir
				}, want: tc.want},
			hostileCase{class: "registry/layout-index", name: "oci-archive: " + tc.name,
				setup: func(h *hostileEnv) ([]string, string) {
					file := h.path("images.tar")
					writeTar(h.t, file, map[string]string{"oci-layout": `{"imageLayoutVersion":"1.0.0"}`, "index.json": index})
					return []string{"mirror", "--from", "oci-archive:" + file, "--to", toLayout(h)}, "oci-archive:" + file
				}, want: tc.want},
		)
	}

	// --cert-dir files the containers libraries would read for ever or
	// whole: refused before any registry is asked.
	for _, f := range []struct {
		name  string
		plant func(h *hostileEnv, p string)
		want  string
	}{
		{"ca.crt a named pipe", func(h *hostileEnv, p string) { h.fifo(p) }, "is not a regular file"},
		{"ca.crt -> /dev/zero", func(h *hostileEnv, p string) { h.symlink("/dev/zero", p) }, "is not a regular file"},
		{"ca.crt oversized", func(h *hostileEnv, p string) { h.sparse(p, 64<<20) }, "bytes"},
		{"client.key a named pipe", func(h *hostileEnv, p string) { h.fifo(p) }, "is not a regular file"},
	} {
		file := strings.Fields(f.name)[0]
		for _, command := range []string{"mirror", "release verify"} {
			cases = append(cases, hostileCase{class: "registry/cert-dir", name: command + " " + f.name,
				setup: func(h *hostileEnv) ([]string, string) {
					dir := h.mkdir("certs")
					f.plant(h, filepath.Join(dir, file))
					if command == "mirror" {
						return []string{"mirror", "--lock", lockOf(h), "--cert-dir", dir, "--to", toLayout(h)}, filepath.Join(dir, file)
					}
					return []string{"release", "verify", "--cert-dir", dir}, filepath.Join(dir, file)
				}, want: f.want})
		}
	}
	return cases
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// writeTar writes files (name -> content) into a tar file.
func writeTar(t *testing.T, file string, files map[string]string) {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTrickledManifestEndsMirror: a registry trickling a manifest a byte
// every 2 s (never idle for the 5 s timeout) makes mirror --timeout 5s
// fail that image at the timeout, with one line naming it; the other
// image of the same registry is mirrored.
func TestTrickledManifestEndsMirror(t *testing.T) {
	reg := testutil.NewFaultyRegistry(t)
	p := &testutil.Pusher{Host: reg.Host}
	slow, err := p.PushImage("app/slow", "amd64", []testutil.Layer{testutil.NewLayer(9, 4096)})
	if err != nil {
		t.Fatal(err)
	}
	good, err := p.PushImage("app/good", "amd64", []testutil.Layer{testutil.NewLayer(10, 4096)})
	if err != nil {
		t.Fatal(err)
	}
	manifest := "/v2/app/slow/manifests/" + slow[strings.Index(slow, "@")+1:]
	reg.SetFault(func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.URL.Path != manifest {
			return false
		}
		w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusOK)
		for range 1000 {
			if _, err := w.Write([]byte{' '}); err != nil {
				return true
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return true
			case <-time.After(2 * time.Second):
			}
		}
		return true
	})
	dir := t.TempDir()
	lock := writeRefsLock(t, dir, slow, good)
	stdout, stderr, code := runGuarded(t, 90*time.Second, "mirror", "--lock", lock, "--quiet", "--timeout", "5s", "--retries", "1", "--to", "oci:"+filepath.Join(dir, "images"))
	lines := nonEmptyLines(stderr)
	if code != exitError || len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") || !strings.Contains(lines[0], slow+": ") ||
		!strings.Contains(lines[0], "registry did not answer in time: no complete answer within --timeout 5s (headers and body)") {
		t.Fatalf("mirror of a trickled manifest = exit %d, stderr %q", code, stderr)
	}
	_ = stdout
	index, err := os.ReadFile(filepath.Join(dir, "images", "index.json"))
	if err != nil || !strings.Contains(string(index), good) || strings.Contains(string(index), slow) {
		t.Errorf("the layout's index = %s, %v; want the good image only", index, err)
	}
}
