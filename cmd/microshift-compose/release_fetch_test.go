package main

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/internal/usercache"
	"github.com/microshift-compose/microshift-compose/plan"
)

// releaseInfoRepo makes a dnf repository of the release-info RPMs of
// 4.18.7 (all of them, from the 4.18 reference files) and of the core one
// of 4.18.6, and returns its directory and the RPMs of 4.18.7.
func releaseInfoRepo(t *testing.T) (dir string, rpms []string) {
	t.Helper()
	dir = t.TempDir()
	pkgs := filepath.Join(dir, "Packages")
	ref := referenceDir(t, "release-4.18")
	rpms = testutil.ReleaseInfoRPMs(t, pkgs, ref, "4.18.7", "1.el9")
	testutil.ReleaseInfoRPMs(t, pkgs, ref, "4.18.6", "1.el9", "microshift-release-info")
	testutil.CreateRepo(t, dir)
	return dir, rpms
}

// TestReleaseFetch: a shipped version fetched over HTTPS with a client
// certificate, as from RHEL's CDN through redhat.repo, builds in one step
// pinned exactly, with its RPMs named in the lock.
func TestReleaseFetch(t *testing.T) {
	t.Setenv(usercache.Env, t.TempDir())
	repoDir, _ := releaseInfoRepo(t)
	ca := testutil.NewCA(t)
	srv := httptest.NewUnstartedServer(http.FileServer(http.Dir(repoDir)))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.ServerCert(t)}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool()}
	srv.StartTLS()
	defer srv.Close()
	creds := t.TempDir()
	cert, key := ca.WriteClientFiles(t, creds)
	caFile := filepath.Join(creds, "ca.pem")
	if err := os.WriteFile(caFile, ca.PEM, 0o644); err != nil {
		t.Fatal(err)
	}
	repoFile := filepath.Join(creds, "redhat.repo")
	if err := os.WriteFile(repoFile, []byte(fmt.Sprintf(`[rhocp-4.18-for-rhel-9-$basearch-rpms]
name = Red Hat OpenShift Container Platform 4.18 for RHEL 9 $basearch (RPMs)
baseurl = %s/
enabled = 0
sslcacert = %s
sslclientcert = %s
sslclientkey = %s
`, srv.URL, caFile, cert, key)), 0o644); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, code := runCLI(t, "release", "fetch", "4.18.7", "--repo-file", repoFile, "--repo", "rhocp-4.18-*", "--arch", "x86_64")
	if code != exitOK {
		t.Fatalf("release fetch = exit %d, stderr %q", code, stderr)
	}
	store := filepath.Join(os.Getenv(usercache.Env), "releases", "4.18.7")
	if !strings.HasPrefix(stdout, "stored release 4.18.7 (stream 4.18, shipped) in "+store+": 8 files, ") ||
		!strings.Contains(stdout, "\n  microshift-release-info-4.18.7-1.el9.noarch  sha256:") ||
		!strings.Contains(stdout, "\n  microshift-olm-release-info-4.18.7-1.el9.noarch  sha256:") ||
		!strings.HasSuffix(stdout, "build it with: microshift-compose build --release 4.18.7 --profile PROFILE --output DIR\n") {
		t.Errorf("release fetch stdout:\n%s", stdout)
	}
	if !strings.HasPrefix(stderr, "reading the metadata of rhocp-4.18-for-rhel-9-x86_64-rpms\ndownloading microshift-release-info-4.18.7-1.el9.noarch from rhocp-4.18-for-rhel-9-x86_64-rpms\n") {
		t.Errorf("release fetch progress:\n%s", stderr)
	}
	if stdout, stderr, code := runCLI(t, "release", "fetch", "4.18.7", "--quiet", "--repo-file", repoFile, "--repo", "rhocp-4.18-*", "--arch", "x86_64"); code != exitOK || !strings.HasPrefix(stdout, "already stored release 4.18.7") || stderr != "" {
		t.Errorf("second fetch --quiet = exit %d, stderr %q:\n%s", code, stderr, stdout)
	}

	// The build: no stream pin warning, MicroShift's RPMs at 4.18.7, the
	// RPMs in the lock.
	out := filepath.Join(t.TempDir(), "out")
	_, stderr, code = runCLI(t, "build", "--release", "4.18.7", "--profile", "full", "--arch", "x86_64", "--output", out)
	if code != exitOK || stderr != "" {
		t.Fatalf("build --release 4.18.7 = exit %d, stderr %q; want no warning", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "compose.lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	var lock plan.Plan
	if err := json.Unmarshal(data, &lock); err != nil {
		t.Fatal(err)
	}
	rel := lock.Release
	if rel.Version != "4.18.7" || rel.Base != "4.18.7" || rel.Pin != plan.PinExact || rel.Source != "fetched" || rel.Origin != "microshift-release-info-4.18.7-1.el9.noarch" {
		t.Errorf("lock release = %+v", rel)
	}
	if len(rel.RPMs) != 4 || rel.RPMs[0].NEVRA != "microshift-release-info-4.18.7-1.el9.noarch" || len(rel.RPMs[0].SHA256) != 64 {
		t.Errorf("lock rpms = %+v", rel.RPMs)
	}
	bp, _ := os.ReadFile(filepath.Join(out, "blueprint.toml"))
	if !strings.Contains(string(bp), "name = \"microshift\"\nversion = \"4.18.7\"") {
		t.Errorf("blueprint does not pin microshift to 4.18.7:\n%s", bp)
	}

	// release list shows it beside the embedded releases.
	var list []releaseJSON
	if err := json.Unmarshal([]byte(mustRun(t, "release", "list", "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	var fetched *releaseJSON
	for i := range list {
		if list[i].Source == "fetched" {
			fetched = &list[i]
		}
	}
	if fetched == nil || fetched.Version != "4.18.7" || fetched.Kind != "shipped" || len(fetched.RPMs) != 4 || fetched.RPMs[0].From != srv.URL+"/Packages/microshift-release-info-4.18.7-1.el9.noarch.rpm" {
		t.Errorf("release list: fetched = %+v", fetched)
	}

	// --output writes a release directory that carries its RPMs into the
	// lock of a --release-dir build too.
	dir := filepath.Join(t.TempDir(), "release")
	if _, stderr, code := runCLI(t, "release", "fetch", "4.18.7", "--repo-file", repoFile, "--repo", "rhocp-4.18-*", "--arch", "x86_64", "--output", dir); code != exitOK {
		t.Fatalf("fetch --output = exit %d: %s", code, stderr)
	}
	mustRun(t, "build", "--release-dir", dir, "--profile", "networking-only", "--arch", "aarch64", "--output", out)
	data, _ = os.ReadFile(filepath.Join(out, "compose.lock.json"))
	if !strings.Contains(string(data), `"nevra": "microshift-release-info-4.18.7-1.el9.noarch"`) {
		t.Errorf("--release-dir lock does not name the RPMs")
	}
}

func TestReleaseFetchErrors(t *testing.T) {
	t.Setenv(usercache.Env, t.TempDir())
	repoDir, _ := releaseInfoRepo(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(repoDir)))
	defer srv.Close()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"version the repository lacks", []string{"4.18.9", "--repo", srv.URL}, exitError,
			"error: fetching release 4.18.9: " + srv.URL + "/ has no microshift-release-info 4.18.9; nearest: 4.18.6, 4.18.7 (2 versions, 4.18.6 to 4.18.7)\n"},
		{"not a version", []string{"4.18", "--repo", srv.URL}, exitUsage, `error: VERSION "4.18": want a shipped version, X.Y.Z (e.g. 4.18.7), or a microshift-io build of one (X.Y.Z_<time>_g<commit>_<OKD tag>)` + "\n"},
		{"no repositories", []string{"4.18.7", "--reposdir", filepath.Join(repoDir, "none")}, exitError,
			"error: repository directory " + filepath.Join(repoDir, "none") + " does not exist: pass --repo URL or --repo-file FILE\n"},
		{"bad scheme", []string{"4.18.7", "--repo", "ftp://h/"}, exitUsage, `error: --repo ftp://h/: unsupported scheme "ftp" (want https, http or file)` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, append([]string{"release", "fetch"}, tc.args...)...)
			// Progress lines come first; the error is the last line.
			lines := strings.SplitAfter(stderr, "\n")
			last := ""
			if len(lines) >= 2 {
				last = lines[len(lines)-2]
			}
			if code != tc.code || last != tc.want || stdout != "" {
				t.Errorf("release fetch %v = exit %d, stdout %q, stderr %q\nwant exit %d, %q", tc.args, code, stdout, stderr, tc.code, tc.want)
			}
		})
	}
	if entries, _ := os.ReadDir(os.Getenv(usercache.Env)); len(entries) != 0 {
		t.Errorf("failed fetches left %v in the cache", entries)
	}
}

// TestReleaseImportRPM: the RPMs dnf download fetched, imported in one
// step; a package that is not release-info, a truncated one and a mix of
// arguments refused.
func TestReleaseImportRPM(t *testing.T) {
	t.Setenv(usercache.Env, t.TempDir())
	_, rpms := releaseInfoRepo(t)
	stdout, stderr, code := runCLI(t, append([]string{"release", "import"}, rpms...)...)
	if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, "stored release 4.18.7 (stream 4.18, shipped)") || !strings.Contains(stdout, "  "+rpms[0]+"\n") {
		t.Fatalf("release import RPMs = exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	mustRun(t, "resolve", "--release", "4.18.7", "--profile", "networking-only", "--arch", "x86_64")

	dir := t.TempDir()
	other := testutil.BuildRPM(t, dir, testutil.RPM{Name: "microshift", Version: "4.18.7", Files: map[string][]byte{"/usr/bin/microshift": []byte("#!/bin/sh\n")}})
	data, _ := os.ReadFile(rpms[0])
	truncated := filepath.Join(dir, "truncated.rpm")
	os.WriteFile(truncated, data[:len(data)-200], 0o644)
	// A text file, by a name that says nothing or says .rpm; the RPM by a
	// name without .rpm is still read as one.
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("hello\n"), 0o644)
	fake := filepath.Join(dir, "fake.rpm")
	os.WriteFile(fake, []byte("hello\n"), 0o644)
	unnamed := filepath.Join(dir, "olm-package")
	olm, _ := os.ReadFile(rpms[len(rpms)-1])
	os.WriteFile(unnamed, olm, 0o644)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"not release-info", []string{other}, exitError, "error: " + other + ": microshift-4.18.7-1.el9.noarch is not a MicroShift release-info package (microshift-release-info or microshift-<component>-release-info)\n"},
		{"truncated", []string{truncated}, exitError, "error: " + truncated + ": damaged or truncated RPM: payload SHA-256 digest mismatch\n"},
		{"components only", rpms[1:2], exitError, "error: no microshift-release-info package among "},
		{"directory and RPMs", []string{dir, rpms[0]}, exitUsage, "error: give one release directory, or only .rpm files\n"},
		{"a text file", []string{text}, exitError, "error: " + text + ": not an RPM file (it does not begin with the RPM lead, magic ed ab ee db) and not a directory: release import takes one release directory (as /usr/share/microshift/release) or release-info .rpm files\n"},
		{"a .rpm that is text", []string{fake}, exitError, "error: " + fake + ": not an RPM file: it does not begin with the RPM lead (magic ed ab ee db); want a release-info .rpm, as dnf download fetches it\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, append([]string{"release", "import"}, tc.args...)...)
			if code != tc.code || !strings.HasPrefix(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
				t.Errorf("release import %v = exit %d, stderr %q\nwant exit %d, %q", tc.args, code, stderr, tc.code, tc.want)
			}
		})
	}
	args := append([]string{"release", "import", "--output", filepath.Join(t.TempDir(), "release"), unnamed}, rpms[:len(rpms)-1]...)
	if stdout, stderr, code := runCLI(t, args...); code != exitOK || !strings.Contains(stdout, "  "+unnamed+"\n") {
		t.Errorf("release import of an RPM named without .rpm = exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
}
