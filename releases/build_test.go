package releases_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

// A release knows its build from its images: Red Hat's reference files are
// Red Hat's, microshift-io's (OKD images, lvms_operator left as Red Hat's,
// the 5.0 metrics files untouched) are microshift-io's, and component files
// that name no release load.
func TestBuildOfImages(t *testing.T) {
	for _, branch := range []string{"release-4.21", "main"} {
		t.Run(branch, func(t *testing.T) {
			rh, err := releases.LoadDir(refDir(t, branch))
			if err != nil || rh.Build != "redhat" || rh.MicroShiftIO != nil {
				t.Fatalf("LoadDir(reference %s) = build %q, %v; want redhat", branch, rh.Build, err)
			}
			dir := t.TempDir()
			testutil.MicroShiftIORelease(t, refDir(t, branch), dir)
			io, err := releases.LoadDir(dir)
			if err != nil {
				t.Fatalf("LoadDir(microshift-io's %s) = %v", branch, err)
			}
			if io.Build != "microshift-io" || !io.Version.Equal(rh.Version) {
				t.Errorf("microshift-io's %s: build %q, version %s", branch, io.Build, io.Version)
			}
			kindnet := io.File("kindnet", releases.X86_64)
			if kindnet == nil || kindnet.Base != "" || len(kindnet.Images) != 1 {
				t.Fatalf("release-kindnet-x86_64.json = %+v, want its one image and no release", kindnet)
			}
			back, err := releases.ParseFile("again", kindnet.Name, kindnet.Encode())
			if err != nil || back.Base != "" || strings.Contains(string(kindnet.Encode()), "release") {
				t.Errorf("Encode() of a file without a release = %s (%v)", kindnet.Encode(), err)
			}
		})
	}
}

// Release files that mix two builds' images are refused in one line naming
// both images; a build's known leftovers are not a mix.
func TestBuildMix(t *testing.T) {
	const redHatImage = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:1111111111111111111111111111111111111111111111111111111111111111"
	for _, tc := range []struct {
		name, file, from, to, want string
	}{
		{"a Red Hat image in microshift-io's core file", "release-x86_64.json", "", redHatImage,
			`release files mix images of microshift-io's build and of Red Hat's build: `},
		{"a Red Hat image in microshift-io's OLM file", "release-olm-aarch64.json", "", redHatImage,
			`release-olm-aarch64.json`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := testutil.MicroShiftIORelease(t, refDir(t, "release-4.21"), dir)
			data := string(files[tc.file])
			i := strings.Index(data, "quay.io/okd/scos-content@")
			if tc.file == "release-olm-aarch64.json" {
				i = strings.Index(data, "ghcr.io/microshift-io/okd/")
			}
			j := i + strings.IndexByte(data[i:], '"')
			data = data[:i] + tc.to + data[j:]
			if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := releases.LoadDir(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.file+` "`) || !strings.Contains(err.Error(), redHatImage) || strings.Contains(err.Error(), "\n") {
				t.Errorf("LoadDir() = %v, want one line with %q and the Red Hat image", err, tc.want)
			}
		})
	}
	// An OKD image in Red Hat's release: no build has both.
	dir := t.TempDir()
	_, data := refFiles(t, "release-4.21")
	for n, b := range data {
		if n == "release-olm-x86_64.json" {
			b = []byte(strings.Replace(string(b), "quay.io/openshift-release-dev/ocp-v4.0-art-dev@", "quay.io/okd/scos-content@", 1))
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := releases.LoadDir(dir); err == nil || !strings.Contains(err.Error(), "release files mix images of Red Hat's build and of microshift-io's build") {
		t.Errorf("LoadDir(Red Hat's with an OKD image) = %v", err)
	}
}

// The build of RPMs is their version's: X.Y.Z is Red Hat's, microshift-io's
// form is microshift-io's; the images must agree.
func TestSetBuild(t *testing.T) {
	for _, tc := range []struct{ version, build, err string }{
		{"4.18.7", "redhat", ""},
		{testutil.MicroShiftIOVersion("4.21.0"), "microshift-io", ""},
		{"4.21.0_202511200000_gxyz_4.21.0_okd_scos.6", "", "not a microshift-io version"},
	} {
		build, v, err := releases.BuildOfVersion(tc.version)
		if build != tc.build || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) || (v != nil) != (build == "microshift-io") {
			t.Errorf("BuildOfVersion(%q) = %q, %v, %v", tc.version, build, v, err)
		}
	}
	io := t.TempDir()
	testutil.MicroShiftIORelease(t, refDir(t, "release-4.21"), io)
	rel, err := releases.LoadDir(io)
	if err != nil {
		t.Fatal(err)
	}
	if err := rel.SetBuild("redhat", nil); err == nil || !strings.Contains(err.Error(), "the release-info RPMs are Red Hat's build, but release-") {
		t.Errorf("SetBuild(redhat) of microshift-io's files = %v", err)
	}
	rh, err := releases.LoadDir(refDir(t, "release-4.21"))
	if err != nil {
		t.Fatal(err)
	}
	if err := rh.SetBuild("microshift-io", nil); err == nil || !strings.Contains(err.Error(), "an image of Red Hat's build") {
		t.Errorf("SetBuild(microshift-io) of Red Hat's files = %v", err)
	}
}

// A stored microshift-io release: its build and OKD tag from the recorded
// RPMs' version, its resolved tags applied only while the files are as
// recorded, and a record that resolves a tag to another repository refused.
func TestRecordedMicroShiftIO(t *testing.T) {
	src := t.TempDir()
	files := testutil.MicroShiftIORelease(t, refDir(t, "release-4.21"), src)
	version := testutil.MicroShiftIOVersion("4.21.0")
	rpms := []releases.RPM{{NEVRA: "microshift-release-info-" + version + "-1.el9.noarch", SHA256: strings.Repeat("a", 64)}}
	tag := "ghcr.io/topolvm/topolvm-with-sidecar:" + testutil.MicroShiftIOTopoLVMTag
	pinned := "ghcr.io/topolvm/topolvm-with-sidecar@sha256:" + strings.Repeat("c", 64)
	dir := filepath.Join(t.TempDir(), "4.21.0")
	if _, err := releases.WriteRecorded(dir, files, releases.Record{RPMs: rpms, Resolved: map[string]string{tag: pinned}}, false); err != nil {
		t.Fatalf("WriteRecorded() = %v", err)
	}
	rel, err := releases.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Build != "microshift-io" || rel.MicroShiftIO == nil || rel.MicroShiftIO.OKD != testutil.MicroShiftIOOKDTag || rel.RPMVersion() != version+"-1.el9" || rel.Resolved[tag] != pinned {
		t.Errorf("stored release: build %q, %+v, RPM version %q, resolved %v", rel.Build, rel.MicroShiftIO, rel.RPMVersion(), rel.Resolved)
	}
	for _, bad := range []map[string]string{
		{tag: "ghcr.io/other/topolvm@sha256:" + strings.Repeat("c", 64)},
		{"ghcr.io/topolvm/topolvm-with-sidecar:9.9": pinned},
		{tag: "ghcr.io/topolvm/topolvm-with-sidecar:0.36.3"},
	} {
		if _, err := releases.WriteRecorded(filepath.Join(t.TempDir(), "x"), files, releases.Record{RPMs: rpms, Resolved: bad}, false); err == nil || !strings.Contains(err.Error(), "invalid resolved tag") {
			t.Errorf("WriteRecorded(resolved %v) = %v", bad, err)
		}
	}
	// RPMs of Red Hat's version with microshift-io's files: refused when
	// the directory is read.
	rh := []releases.RPM{{NEVRA: "microshift-release-info-4.21.0-1.el9.noarch", SHA256: strings.Repeat("a", 64)}}
	y := filepath.Join(t.TempDir(), "y")
	if _, err := releases.WriteRecorded(y, files, releases.Record{RPMs: rh}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := releases.LoadDir(y); err == nil || !strings.Contains(err.Error(), "the release-info RPMs are Red Hat's build") {
		t.Errorf("LoadDir(Red Hat's RPMs, microshift-io's files) = %v", err)
	}
}
