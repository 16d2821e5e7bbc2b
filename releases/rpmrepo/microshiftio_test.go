package rpmrepo_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases/rpmrepo"
)

// release fetch X.Y.Z finds microshift-io's release-info RPMs of X.Y.Z: the
// newest build of the version (X.Y.Z_<time>_g<commit>_<OKD tag>), never a
// build of another version nor a candidate's, and Red Hat's X.Y.Z itself
// when a repository has both. The release they hold is microshift-io's
// build, its OKD tag from the version.
func TestFetchMicroShiftIO(t *testing.T) {
	src := t.TempDir()
	testutil.MicroShiftIORelease(t, testutil.ReleaseDir(t, "release-4.21"), src)
	repo := t.TempDir()
	pkgs := filepath.Join(repo, "Packages")
	older := "4.21.0_202511100000_g0123456_4.21.0_okd_scos.5"
	newest := testutil.MicroShiftIOVersion("4.21.0")
	candidate := "4.21.0_rc.1_202512010000.p0_gabcdef0_4.21.0_okd_scos.7"
	other := "4.21.1_202512010000_gabcdef0_4.21.0_okd_scos.7"
	testutil.MicroShiftIORPMs(t, pkgs, src, older, "1.el9")
	testutil.MicroShiftIORPMs(t, pkgs, src, newest, "1.el9")
	testutil.BuildRPM(t, pkgs, testutil.RPM{Name: "microshift-release-info", Version: candidate, Release: "1.el9", Files: map[string][]byte{"/usr/share/microshift/release/x": []byte("x")}})
	testutil.BuildRPM(t, pkgs, testutil.RPM{Name: "microshift-release-info", Version: other, Release: "1.el9", Files: map[string][]byte{"/usr/share/microshift/release/x": []byte("x")}})
	testutil.CreateRepo(t, repo)
	srv := httptest.NewServer(http.FileServer(http.Dir(repo)))
	defer srv.Close()
	r, err := rpmrepo.URLRepo(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := &rpmrepo.Client{Timeout: 5 * time.Second}
	got, err := c.Fetch(context.Background(), []*rpmrepo.Repo{r}, "4.21.0", "x86_64", nil)
	if err != nil {
		t.Fatalf("Fetch(4.21.0) = %v", err)
	}
	if want := "microshift-release-info-" + newest + "-1.el9.noarch microshift-kindnet-release-info-" + newest + "-1.el9.noarch microshift-multus-release-info-" + newest +
		"-1.el9.noarch microshift-olm-release-info-" + newest + "-1.el9.noarch microshift-topolvm-release-info-" + newest + "-1.el9.noarch"; names(got) != want {
		t.Fatalf("Fetch(4.21.0) = %s\nwant %s", names(got), want)
	}
	for _, d := range got {
		if d.NEVRA.EVR() != newest+"-1.el9" {
			t.Errorf("%s is not of the picked build", d.NEVRA)
		}
	}
	rel, err := rpmrepo.FromDownloads(got)
	if err != nil {
		t.Fatalf("FromDownloads() = %v", err)
	}
	if rel.Release.Build != "microshift-io" || rel.Release.MicroShiftIO.OKD != testutil.MicroShiftIOOKDTag || rel.Release.Version.String() != "4.21.0" {
		t.Errorf("release %s: build %q, %+v", rel.Release.Version, rel.Release.Build, rel.Release.MicroShiftIO)
	}
	for _, want := range []string{"release-kindnet-x86_64.json", "release-kube-proxy-aarch64.json", "release-topolvm-x86_64.json", "release-olm-x86_64.json"} {
		if rel.Files[want] == nil {
			t.Errorf("the release has no %s", want)
		}
	}
	// A full version picks that build.
	got, err = c.Fetch(context.Background(), []*rpmrepo.Repo{r}, older, "x86_64", nil)
	if err != nil || got[0].NEVRA.Version != older {
		t.Errorf("Fetch(%s) = %v, %v", older, names(got), err)
	}
	// Red Hat's 4.21.0 beside them wins for 4.21.0.
	testutil.ReleaseInfoRPMs(t, pkgs, testutil.ReleaseDir(t, "release-4.21"), "4.21.0", "1.el9", "microshift-release-info")
	testutil.CreateRepo(t, repo)
	got, err = c.Fetch(context.Background(), []*rpmrepo.Repo{r}, "4.21.0", "x86_64", nil)
	if err != nil || got[0].NEVRA.Version != "4.21.0" {
		t.Errorf("Fetch(4.21.0) beside Red Hat's 4.21.0 = %v, %v", names(got), err)
	}
}

// Reading microshift-io RPMs whose files name Red Hat's images where
// microshift-io has OKD's is refused: one build's RPMs hold one build's
// files.
func TestMicroShiftIORPMsMixingBuilds(t *testing.T) {
	src := t.TempDir()
	testutil.MicroShiftIORelease(t, testutil.ReleaseDir(t, "release-4.21"), src)
	core := filepath.Join(src, "release-x86_64.json")
	data, err := os.ReadFile(core)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(data), "quay.io/okd/scos-content@")
	mixed := string(data[:i]) + "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + strings.Repeat("1", 64) + string(data[i+len("quay.io/okd/scos-content@sha256:")+64:])
	if err := os.WriteFile(core, []byte(mixed), 0o644); err != nil {
		t.Fatal(err)
	}
	rpms := testutil.MicroShiftIORPMs(t, t.TempDir(), src, testutil.MicroShiftIOVersion("4.21.0"), "1.el9")
	_, err = rpmrepo.ReadFiles(rpms)
	if err == nil || !strings.Contains(err.Error(), "release files mix images of") || strings.Contains(err.Error(), "\n") {
		t.Errorf("ReadFiles(mixed) = %v, want one line saying the files mix builds' images", err)
	}
}
