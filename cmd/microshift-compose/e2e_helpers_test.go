package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// The end-to-end tests run the built binary, real registries (Debian's
// docker-registry with TLS from a test CA and htpasswd) and the real
// skopeo and podman, in a clean environment per run: their own HOME,
// XDG_RUNTIME_DIR and auth files, as a user's shell would have.

// planted is a password that must never show in any output, log, lock,
// error or file but the blueprint that carries a pull secret on purpose.
const planted = "Pl4nted-pa55w0rd-never-shown"

// needTool finds a program the test runs. Missing, it fails the test in CI
// (make test installs it) and skips it elsewhere.
func needTool(t *testing.T, name, debianPackage string) string {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil && os.Getenv("CI") == "" {
		t.Skip(name + " is not installed (Debian package " + debianPackage + "; `make test` installs it)")
	}
	return testutil.NeedTool(t, name, debianPackage)
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// e2eBinary builds the binary once for every end-to-end test.
// parallelE2E: the end-to-end tests that drive the binary, cosign, skopeo
// and podman against registries, stores and directories of their own call
// t.Parallel(). Much of their time is spent waiting on those processes,
// and, run one after the other, they were most of `make test`'s wall time
// (the package's 700 s, 410 s of it CPU); side by side they fill the
// cores. Tests that change the process's directory or environment
// (t.Chdir, t.Setenv) cannot, and run first.

func e2eBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "microshift-compose-e2e-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "microshift-compose")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false -tags="+buildTags, "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = errors.New(string(out))
		}
	})
	if binErr != nil {
		t.Fatalf("go build: %v", binErr)
	}
	return binPath
}

// userEnv is a clean environment: PATH, and a fresh HOME and
// XDG_RUNTIME_DIR (nothing from the test's own environment leaks in).
type userEnv struct {
	Home, Runtime string
	vars          map[string]string
}

func newUserEnv(t *testing.T) *userEnv {
	t.Helper()
	root := t.TempDir()
	e := &userEnv{Home: filepath.Join(root, "home"), Runtime: filepath.Join(root, "run"), vars: map[string]string{}}
	for _, d := range []string{e.Home, e.Runtime} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	e.vars["HOME"] = e.Home
	e.vars["XDG_RUNTIME_DIR"] = e.Runtime
	return e
}

func (e *userEnv) set(k, v string) { e.vars[k] = v }
func (e *userEnv) unset(k string)  { delete(e.vars, k) }

func (e *userEnv) environ() []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "LANG=C"}
	for k, v := range e.vars {
		env = append(env, k+"="+v)
	}
	return env
}

// trust puts the CA in the user's certs.d for host, where podman, skopeo
// and microshift-compose look.
func (e *userEnv) trust(t *testing.T, ca *testutil.CA, host string) {
	t.Helper()
	ca.WriteCertsD(t, filepath.Join(e.Home, ".config", "containers", "certs.d"), host)
}

type procResult struct {
	stdout, stderr string
	code           int
}

// exec runs a program in the environment.
func (e *userEnv) exec(t *testing.T, dir string, prog string, args ...string) procResult {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	cmd.Env = e.environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %s %q: %v", prog, args, err)
	}
	return procResult{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// toolRunner returns run, which runs the tool in dir in the environment and
// logs the command line and its output, and must, which also fails the
// test on a non-zero exit and returns stdout.
func (e *userEnv) toolRunner(t *testing.T, dir, bin string) (run func(args ...string) procResult, must func(args ...string) string) {
	run = func(args ...string) procResult {
		t.Helper()
		r := e.exec(t, dir, bin, args...)
		t.Logf("$ microshift-compose %s\n%s%s", strings.Join(args, " "), r.stdout, r.stderr)
		return r
	}
	must = func(args ...string) string {
		t.Helper()
		r := run(args...)
		if r.code != 0 {
			t.Fatalf("microshift-compose %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		return r.stdout
	}
	return run, must
}

// execPeakRSS runs a program under GNU time and returns its result and
// peak RSS in KiB. The kernel's ru_maxrss of a process Go starts would
// include the test process's own peak (Go starts programs with vfork, and
// exec carries the parent's high-water mark over); time forks for real.
func (e *userEnv) execPeakRSS(t *testing.T, prog string, args ...string) (procResult, int64) {
	t.Helper()
	timeBin := needTool(t, "/usr/bin/time", "time")
	out := filepath.Join(t.TempDir(), "rss")
	r := e.exec(t, "", timeBin, append([]string{"-o", out, "-f", "%M", prog}, args...)...)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	kib, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	if err != nil {
		t.Fatalf("GNU time wrote %q", data)
	}
	return r, kib
}

// must runs a program that must succeed.
func (e *userEnv) must(t *testing.T, prog string, args ...string) string {
	t.Helper()
	r := e.exec(t, "", prog, args...)
	if r.code != 0 {
		t.Fatalf("%s %s: exit %d\nstdout: %s\nstderr: %s", filepath.Base(prog), strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// authJSON is an auth file with user:password for each host.
func authJSON(user, password string, hosts ...string) []byte {
	auths := map[string]map[string]string{}
	for _, h := range hosts {
		auths[h] = map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + password))}
	}
	data, _ := json.MarshalIndent(map[string]any{"auths": auths}, "", "  ")
	return data
}

func writeFileMode(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}

// secureRegistry is a docker-registry with TLS (a CA made here) and
// htpasswd, and a synthetic release of Docker-typed images in it.
type secureRegistry struct {
	*testutil.Registry
	release string
}

func newSecureRegistry(t *testing.T, user, password string, withRelease bool) *secureRegistry {
	t.Helper()
	needTool(t, "htpasswd", "apache2-utils")
	reg := testutil.StartSecureRegistry(t, testutil.RegistryOptions{TLS: testutil.NewCA(t), User: user, Password: password})
	s := &secureRegistry{Registry: reg}
	if withRelease {
		s.release = pushRelease(t, reg.Pusher, true)
	}
	return s
}

// noSecret fails when any of the texts holds the planted password (or its
// base64 forms).
func noSecret(t *testing.T, what string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		for _, needle := range []string{planted, base64.StdEncoding.EncodeToString([]byte(planted)), base64.StdEncoding.EncodeToString([]byte("robot:" + planted))} {
			if strings.Contains(s, needle) {
				t.Errorf("%s shows the planted password", what)
				return
			}
		}
	}
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
