package rpmrepo_test

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

var (
	fixtureOnce sync.Once
	fixtureDir  string
	fixtureErr  string
	fixtureTmp  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureTmp != "" {
		os.RemoveAll(fixtureTmp)
	}
	os.Exit(code)
}

// fixtureRPMs builds, once per test binary, the release-info RPMs of
// 4.18.7 (from the 4.18 reference files), the way MicroShift's spec splits
// them, and the core ones of 4.18.6 and 4.19.2 (4.19's), into one
// directory. The first
// test to ask builds them (a failure fails it, and the others after it).
func fixtureRPMs(t *testing.T) string {
	t.Helper()
	// Each test needs the reference files (skipped without them outside
	// CI): asked here, not inside the Once, where a skip would end the
	// Once with nothing built and fail every later test.
	for _, branch := range []string{"release-4.18", "release-4.19"} {
		testutil.ReleaseDir(t, branch)
	}
	fixtureOnce.Do(func() {
		tmp, err := os.MkdirTemp("", "rpmrepo-fixture-")
		if err != nil {
			fixtureErr = err.Error()
			return
		}
		fixtureTmp = tmp
		dir := filepath.Join(tmp, "Packages")
		for _, v := range []struct {
			branch, version string
			only            []string
		}{
			{"release-4.18", "4.18.6", []string{"microshift-release-info"}},
			{"release-4.18", "4.18.7", nil},
			{"release-4.19", "4.19.2", []string{"microshift-release-info"}},
		} {
			testutil.ReleaseInfoRPMs(t, dir, testutil.ReleaseDir(t, v.branch), v.version, "1.el9", v.only...)
		}
		fixtureDir = dir
	})
	if fixtureErr != "" || fixtureDir == "" {
		t.Fatalf("building the fixture RPMs: %s", fixtureErr)
	}
	return fixtureDir
}

// newRepo copies the fixture RPMs into a new directory and makes it a
// repository with createrepo_c (extra arguments passed on).
func newRepo(t *testing.T, args ...string) string {
	t.Helper()
	src := fixtureRPMs(t)
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "Packages"), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	testutil.CreateRepo(t, dir, args...)
	return dir
}

// serveHTTPS serves dir over HTTPS with a certificate of ca; with
// clientCA, only to clients presenting a certificate it issued.
func serveHTTPS(t *testing.T, dir string, ca *testutil.CA, clientCA *testutil.CA) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.FileServer(http.Dir(dir)))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.ServerCert(t)}}
	if clientCA != nil {
		srv.TLS.ClientAuth = tls.RequireAndVerifyClientCert
		srv.TLS.ClientCAs = clientCA.Pool()
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}
