package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// TestAuthMatrix logs in the way podman and skopeo users do, each auth file
// location in turn, and runs every registry command against a registry
// with TLS (its CA in the user's certs.d) and htpasswd auth, and skopeo as
// the reference. `go test -v -run AuthMatrix` prints the matrix.
func TestAuthMatrix(t *testing.T) {
	t.Parallel() // see parallelE2E
	bin := e2eBinary(t)
	skopeoBin := needTool(t, "skopeo", "skopeo")
	const user, password = "robot", "s3cret-for-the-matrix"
	reg := newSecureRegistry(t, user, password, true)
	host := reg.Host
	// A tag for release update --resolve-tags.
	layers := []testutil.Layer{testutil.NewLayer(900, 4096)}
	ref, err := reg.Pusher.PushDockerImage("edge/agent", "amd64", layers)
	if err != nil {
		t.Fatal(err)
	}
	_, m := testutil.DockerImage("amd64", layers)
	if _, err := reg.Pusher.Manifest("edge/agent", m, "v1"); err != nil {
		t.Fatal(err)
	}
	good := authJSON(user, password, host)
	wrong := authJSON(user, planted, host)

	type setup func(t *testing.T, e *userEnv) (extra []string)
	file := func(path func(e *userEnv) string, data []byte) setup {
		return func(t *testing.T, e *userEnv) []string {
			writeFileMode(t, path(e), data, 0o600)
			return nil
		}
	}
	both := func(a, b setup) setup {
		return func(t *testing.T, e *userEnv) []string { return append(a(t, e), b(t, e)...) }
	}
	home := func(rel string) func(e *userEnv) string {
		return func(e *userEnv) string { return filepath.Join(e.Home, rel) }
	}
	runtime := func(e *userEnv) string { return filepath.Join(e.Runtime, "containers", "auth.json") }
	perUID := fmt.Sprintf("/run/containers/%d/auth.json", os.Getuid())

	rows := []struct {
		name  string
		setup setup
		ok    bool
	}{
		{"--authfile FILE", func(t *testing.T, e *userEnv) []string {
			p := filepath.Join(e.Home, "given.json")
			writeFileMode(t, p, good, 0o600)
			return []string{"--authfile", p}
		}, true},
		{"$REGISTRY_AUTH_FILE", func(t *testing.T, e *userEnv) []string {
			p := filepath.Join(e.Home, "env.json")
			writeFileMode(t, p, good, 0o600)
			e.set("REGISTRY_AUTH_FILE", p)
			return nil
		}, true},
		{"$XDG_RUNTIME_DIR/containers/auth.json", file(runtime, good), true},
		{perUID + " (no XDG_RUNTIME_DIR)", func(t *testing.T, e *userEnv) []string {
			e.unset("XDG_RUNTIME_DIR")
			plantSystemAuth(t, perUID, good)
			return nil
		}, true},
		{"~/.config/containers/auth.json", file(home(".config/containers/auth.json"), good), true},
		{"~/.docker/config.json", file(home(".docker/config.json"), good), true},
		{"$DOCKER_CONFIG/config.json", func(t *testing.T, e *userEnv) []string {
			dir := filepath.Join(e.Home, "dockercfg")
			writeFileMode(t, filepath.Join(dir, "config.json"), good, 0o600)
			e.set("DOCKER_CONFIG", dir)
			return nil
		}, true},
		// The bug: REGISTRY_AUTH_FILE must win over an existing
		// ~/.docker/config.json, whose credentials are wrong here.
		{"$REGISTRY_AUTH_FILE over ~/.docker/config.json", both(file(home(".docker/config.json"), wrong), func(t *testing.T, e *userEnv) []string {
			p := filepath.Join(e.Home, "env.json")
			writeFileMode(t, p, good, 0o600)
			e.set("REGISTRY_AUTH_FILE", p)
			return nil
		}), true},
		{"$XDG_RUNTIME_DIR over ~/.docker/config.json", both(file(home(".docker/config.json"), wrong), file(runtime, good)), true},
		{"no credentials", func(*testing.T, *userEnv) []string { return nil }, false},
		{"wrong password", file(home(".docker/config.json"), wrong), false},
	}
	type column struct {
		name string
		args func(work string) []string
		prog string
	}
	updateDir := func(work string) string {
		dir := filepath.Join(work, "update")
		os.MkdirAll(dir, 0o755)
		writeReleaseFile(t, dir, "release-x86_64.json", "agent="+host+"/edge/agent:v1")
		return dir
	}
	sel := []string{"--profile", "minimal", "--arch", "x86_64", "--release-dir", reg.release}
	cols := []column{
		{"mirror", func(w string) []string {
			return append([]string{"-v", "mirror", "--quiet", "--to", "oci:" + filepath.Join(w, "images")}, sel...)
		}, bin},
		{"footprint", func(string) []string { return append([]string{"footprint", "-o", "json"}, sel...) }, bin},
		{"build --resolve-sizes", func(w string) []string {
			return append([]string{"build", "--resolve-sizes", "--output", filepath.Join(w, "out")}, sel...)
		}, bin},
		{"release verify", func(string) []string { return []string{"release", "verify", reg.release} }, bin},
		{"release update --resolve-tags", func(w string) []string { return []string{"release", "update", updateDir(w), "--resolve-tags"} }, bin},
		{"skopeo inspect", func(string) []string { return []string{"inspect", "--raw", "docker://" + ref} }, skopeoBin},
	}

	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	header := "auth file"
	for _, c := range cols {
		header += "\t" + c.name
	}
	fmt.Fprintln(tw, header)
	for _, row := range rows {
		line := row.name
		for _, col := range cols {
			if row.name == perUID+" (no XDG_RUNTIME_DIR)" && !canPlantSystemAuth(perUID) {
				line += "\tn/a (not root)"
				continue
			}
			e := newUserEnv(t)
			e.trust(t, reg.CA, host)
			extra := row.setup(t, e)
			args := col.args(t.TempDir())
			if col.prog == skopeoBin {
				args = append([]string{args[0]}, append(extra, args[1:]...)...)
			} else {
				args = append(args, extra...)
			}
			r := e.exec(t, "", col.prog, args...)
			cell := "ok"
			switch {
			case r.code == 0 && row.ok:
			case r.code != 0 && !row.ok && strings.Contains(strings.ToLower(r.stderr+r.stdout), "unauthorized"):
				cell = "401 (expected)"
			default:
				cell = fmt.Sprintf("FAIL (exit %d)", r.code)
				t.Errorf("%s with %s: exit %d, want success %t\nstdout: %s\nstderr: %s", col.name, row.name, r.code, row.ok, r.stdout, r.stderr)
			}
			if col.prog == bin {
				noSecret(t, col.name+" with "+row.name, r.stdout, r.stderr)
				if !row.ok && r.code != 0 && col.name == "mirror" && !strings.Contains(r.stderr, "log in with 'podman login "+host+"' or pass --authfile") {
					t.Errorf("mirror without valid credentials does not say what to do: %s", r.stderr)
				}
			}
			line += "\t" + cell
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	t.Logf("auth matrix against docker-registry (TLS, htpasswd):\n%s", table.String())
}

// canPlantSystemAuth reports whether the test may write path (root).
func canPlantSystemAuth(path string) bool {
	return os.MkdirAll(filepath.Dir(path), 0o700) == nil && unixWritable(filepath.Dir(path))
}

func unixWritable(dir string) bool {
	f, err := os.CreateTemp(dir, ".probe-")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}

// plantSystemAuth writes podman's per-UID auth file, keeping whatever a
// real login put there and putting it back after the test.
func plantSystemAuth(t *testing.T, path string, data []byte) {
	t.Helper()
	old, err := os.ReadFile(path)
	had := err == nil
	// Replaced by rename, never rewritten in place: the tests of other
	// packages, running at the same time, read this file too (it is in
	// the containers lookup order) and must see a whole one.
	replace := func(data []byte) error {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		tmp := path + ".microshift-compose-test"
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			return err
		}
		return os.Rename(tmp, path)
	}
	if err := replace(data); err != nil {
		t.Fatalf("planting %s: %v", path, err)
	}
	t.Cleanup(func() {
		if had {
			replace(old)
		} else {
			os.Remove(path)
		}
	})
}
