package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/render/registry"
)

// TestServeE2E is the far side without a registry: build for a mirror at
// HOST:PORT/microshift, mirror the images into one archive, and with the
// source gone, `serve` the archive there (the binary, TLS from a test CA,
// htpasswd). podman and skopeo, configured as the device is (the
// registries.conf.d drop-in build wrote, its pull secret and CA), pull the
// images by their source references; a push is refused; SIGINT stops serve
// cleanly (exit 0, the port released).
func TestServeE2E(t *testing.T) {
	// Not parallel (see parallelE2E): the build names the port serve
	// listens on long before serve starts, and the registries of the
	// tests running beside it could take it in between.
	bin := e2eBinary(t)
	skopeoBin := needTool(t, "skopeo", "skopeo")
	podmanBin := needTool(t, "podman", "podman")
	htpasswdBin := needTool(t, "htpasswd", "apache2-utils")
	src := newSecureRegistry(t, "robot", "source-pass", true)
	host := freeHost(t)
	mirrorLoc := host + "/microshift"

	work := t.TempDir()
	e := newUserEnv(t)
	e.trust(t, src.CA, src.Host)
	out := filepath.Join(work, "out")
	srcAuth := filepath.Join(work, "source-auth.json")
	writeFileMode(t, srcAuth, authJSON("robot", "source-pass", src.Host), 0o600)
	pullSecret := filepath.Join(work, "pull-secret.json")
	writeFileMode(t, pullSecret, authJSON("edge", "edge-pass", host), 0o600)
	ca := testutil.NewCA(t)
	caFile := filepath.Join(work, "mirror-ca.crt")
	writeFileMode(t, caFile, ca.PEM, 0o644)
	e.must(t, bin, "build", "--profile", "full", "--arch", "x86_64", "--release-dir", src.release,
		"--pull-secret", pullSecret, "--mirror-registry", mirrorLoc, "--mirror-ca", caFile, "--output", out)
	refs := nonEmptyLines(string(mustReadFile(t, filepath.Join(out, "images.txt"))))
	bundle := filepath.Join(work, "microshift-images.tar")
	e.must(t, bin, "mirror", "--lock", filepath.Join(out, "compose.lock.json"), "--authfile", srcAuth, "--quiet", "--to", "oci-archive:"+bundle)
	src.Stop()

	// The far side: serve the archive as it came.
	cert, key := ca.WriteServerFiles(t, work)
	hp, err := exec.Command(htpasswdBin, "-Bbn", "edge", "edge-pass").Output()
	if err != nil {
		t.Fatal(err)
	}
	htpasswd := filepath.Join(work, "htpasswd")
	writeFileMode(t, htpasswd, hp, 0o600)
	before, _ := os.Stat(bundle)
	srv := startServe(t, bin, "oci-archive:"+bundle, "--listen", host, "--prefix", "microshift",
		"--tls-cert", cert, "--tls-key", key, "--htpasswd", htpasswd, "--log-level", "warn")
	head := regexp.MustCompile(`^serving 9 images from oci-archive:` + regexp.QuoteMeta(bundle) + ` at https://` + regexp.QuoteMeta(host) + `, read-only, htpasswd authentication$`)
	if !head.MatchString(srv.lines[0]) {
		t.Errorf("serve printed %q", srv.lines[0])
	}
	for _, ref := range refs {
		want := "  " + mirrorLoc + strings.TrimPrefix(ref, src.Host)
		if !containsLine(srv.lines, want) {
			t.Errorf("serve does not list %s:\n%s", want, strings.Join(srv.lines, "\n"))
		}
	}

	// The device: the drop-in as its registries.conf, the pull secret, the
	// CA build wrote for certs.d; images named by their source references.
	conf := filepath.Join(out, "files", "etc", "containers", "registries.conf.d", filepath.Base(registry.MirrorConfPath))
	certDir := filepath.Join(out, "files", "etc", "containers", "certs.d", host)
	device := newUserEnv(t)
	for _, ref := range refs {
		raw := device.must(t, skopeoBin, "--registries-conf", conf, "inspect", "--raw", "--authfile", pullSecret, "--cert-dir", certDir, "docker://"+ref)
		if !strings.HasSuffix(ref, "@sha256:"+sha256Hex([]byte(raw))) {
			t.Errorf("skopeo through the drop-in read %s with another digest", ref)
		}
	}
	device.set("CONTAINERS_REGISTRIES_CONF", conf)
	store, err := os.MkdirTemp("", "serve-e2e-") // podman: --runroot under 50 characters
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(store)
	t.Logf("serve stdout:\n%s", strings.Join(srv.lines, "\n"))
	for _, ref := range refs[:2] {
		args := []string{"--root", filepath.Join(store, "root"), "--runroot", filepath.Join(store, "run"), "--storage-driver", "vfs",
			"pull", "--authfile", pullSecret, "--cert-dir", certDir, ref}
		r := device.exec(t, "", podmanBin, args...)
		if r.code != 0 {
			t.Fatalf("podman %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		t.Logf("$ podman pull %s\n%s%s", ref, r.stderr, r.stdout)
	}
	// A push, with valid credentials, is refused: serve is read-only.
	push := device.exec(t, "", skopeoBin, "copy", "--dest-authfile", pullSecret, "--dest-cert-dir", certDir,
		"oci-archive:"+bundle+":"+refs[0], "docker://"+mirrorLoc+"/pushed:1")
	if push.code == 0 {
		t.Errorf("skopeo copy to serve succeeded: %s", push.stdout)
	}

	srv.interrupt(t)
	if !strings.HasSuffix(srv.stderr.String(), "stopped\n") {
		t.Errorf("serve's stderr after SIGINT: %q", srv.stderr.String())
	}
	if after, _ := os.Stat(bundle); after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("serving changed the archive")
	}

	// A port in use: one line, exit 1.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	r := e.exec(t, "", bin, "serve", "oci-archive:"+bundle, "--listen", busy.Addr().String())
	if want := fmt.Sprintf("error: listening on %s: address already in use\n", busy.Addr()); r.code != 1 || r.stderr != want || r.stdout != "" {
		t.Errorf("serve on a port in use: exit %d, stdout %q, stderr %q; want %q", r.code, r.stdout, r.stderr, want)
	}
}

// freeHost is 127.0.0.1 and a port nothing listens on.
func freeHost(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// serveProc is a running `microshift-compose serve`.
type serveProc struct {
	cmd    *exec.Cmd
	lines  []string // stdout up to the first image list
	stderr *bytes.Buffer
	exited chan error
}

// startServe starts serve and waits for its listing on stdout.
func startServe(t *testing.T, bin string, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	cmd.Env = newUserEnv(t).environ()
	p := &serveProc{cmd: cmd, stderr: &bytes.Buffer{}, exited: make(chan error, 1)}
	cmd.Stderr = p.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		p.exited <- cmd.Wait()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	deadline := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve exited before listing its images: %s", p.stderr)
			}
			p.lines = append(p.lines, l)
			// The listing ends with the last image line; the images are
			// counted in the first line.
			var n int
			if _, err := fmt.Sscanf(p.lines[0], "serving %d images", &n); err == nil && len(p.lines) > n && strings.HasPrefix(l, "  ") {
				go func() {
					for range lines {
					}
				}()
				return p
			}
		case <-deadline:
			t.Fatalf("serve did not list its images in 60s; stderr: %s", p.stderr)
		}
	}
}

// interrupt sends SIGINT and waits for a clean exit.
func (p *serveProc) interrupt(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			t.Errorf("serve after SIGINT: %v; stderr: %s", err, p.stderr)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("serve did not stop within 15s of SIGINT")
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}
