package main

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/internal/usercache"
)

// communityRPMs builds microshift-io's release-info RPMs of the 4.21
// reference release (testutil.MicroShiftIORelease) into a directory and
// returns their paths; edit, when set, changes the release files first.
// TopoLVM's image is pinned by digest here: these tests stay offline.
func communityRPMs(t *testing.T, edit func(files map[string][]byte)) []string {
	t.Helper()
	src := t.TempDir()
	files := testutil.MicroShiftIORelease(t, referenceDir(t, "release-4.21"), "")
	for n, data := range files {
		files[n] = []byte(strings.ReplaceAll(string(data), "topolvm-with-sidecar:"+testutil.MicroShiftIOTopoLVMTag, "topolvm-with-sidecar@sha256:"+strings.Repeat("7", 64)))
	}
	if edit != nil {
		edit(files)
	}
	for n, data := range files {
		writeFileMode(t, filepath.Join(src, n), data, 0o644)
	}
	return testutil.MicroShiftIORPMs(t, t.TempDir(), src, testutil.MicroShiftIOVersion("4.21.0"), "1.el9")
}

// What microshift-io's build cannot honour, and a build that mixes Red
// Hat's images with OKD's, are refused with one line naming the problem:
// a non-zero exit, nothing written, nothing stored.
func TestCommunityBadInput(t *testing.T) {
	t.Setenv(usercache.Env, t.TempDir())
	rpms := communityRPMs(t, nil)
	out := mustRun(t, append([]string{"release", "import"}, rpms...)...)
	if !strings.HasPrefix(out, "stored release 4.21.0 (stream 4.21, nightly, microshift-io's build, OKD "+testutil.MicroShiftIOOKDTag+") in ") {
		t.Fatalf("release import printed %q", out)
	}
	list := mustRun(t, "release", "list", "--release", "4.21.0")
	if !strings.Contains(list, "4.21    4.21.0   microshift-io (OKD "+testutil.MicroShiftIOOKDTag+")  nightly  1.34        centos-stream-9,centos-stream-10 (bootc)") {
		t.Errorf("release list:\n%s", list)
	}
	comps := mustRun(t, "components", "--release", "4.21.0")
	for _, want := range []string{
		"storage-lvms: not available: microshift-io's build lacks image lvms_operator: ",
		"gateway-api: not available: microshift-io's build lacks RPM microshift-gateway-api: ",
		"gitops: not available: microshift-io's build lacks the repository at cdn.redhat.com: ",
	} {
		if !strings.Contains(comps, "\n"+want) {
			t.Errorf("components --release 4.21.0 does not say %q:\n%s", want, comps)
		}
	}
	if strings.Contains(comps, "kindnet: not available") || strings.Contains(comps, "topolvm: not available") {
		t.Errorf("components --release 4.21.0 says kindnet or TopoLVM is not available:\n%s", comps)
	}

	mixed := communityRPMs(t, func(files map[string][]byte) {
		files["release-x86_64.json"] = []byte(strings.Replace(string(files["release-x86_64.json"]), "quay.io/okd/scos-content@", "quay.io/openshift-release-dev/ocp-v4.0-art-dev@", 1))
	})
	work := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"kindnet with OVN-K", []string{"build", "--release", "4.21.0", "--profile", "networking-only", "--with", "networking-ovnk", "--arch", "x86_64", "--output", "out"},
			"error: kindnet conflicts with networking-ovnk (kindnet: profile networking-only; networking-ovnk: --with); leave one out with --without"},
		{"TopoLVM with LVMS", []string{"build", "--release", "4.21.0", "--profile", "storage-only", "--with", "storage-lvms", "--arch", "x86_64", "--output", "out"},
			`error: component "storage-lvms" is not available for release 4.21 (fetched): microshift-io's build lacks image lvms_operator: `},
		{"a distro the release is not built for", []string{"build", "--release", "4.21.0", "--profile", "minimal", "--distro", "rhel-9.6", "--arch", "x86_64", "--output", "out"},
			`error: release 4.21 (fetched) is not built for distro "rhel-9.6": microshift-io's build of MicroShift 4.21 is built and tested for centos-stream-9, centos-stream-10`},
		{"kindnet on Red Hat's build", []string{"build", "--release", "5.0", "--profile", "minimal", "--with", "kindnet", "--arch", "x86_64", "--output", "out"},
			`error: component "kindnet" is not available for release 5.0 (embedded): it is for microshift-io's build of MicroShift, and release 5.0 (embedded) is Red Hat's build`},
		{"a bootc image without its RPMs' repository", []string{"build", "--release", "4.21.0", "--profile", "minimal", "--arch", "x86_64", "--bootc", "--output", "out"},
			"error: --bootc: release 4.21 (fetched) is microshift-io's build, whose MicroShift RPMs are in no repository its bootc base quay.io/centos-bootc/centos-bootc:stream9 enables: name their repository with --repo-file FILE"},
		{"a repository on this host", []string{"build", "--release", "4.21.0", "--profile", "minimal", "--arch", "x86_64", "--bootc", "--repo-file", writeRepo(t, "[io]\nbaseurl=file:///srv/io/\n"), "--output", "out"},
			"is on this host's filesystem, which an image build does not see"},
		{"release files that mix builds' images", append([]string{"release", "import", "--force"}, mixed...),
			"error: microshift-release-info-" + testutil.MicroShiftIOVersion("4.21.0") + "-1.el9.noarch: release files mix images of microshift-io's build and of Red Hat's build: "},
		{"microshift-io's build as an embedded bundle", append([]string{"release", "import", "--data-dir", filepath.Join(work, "data")}, rpms...),
			"error: --data-dir: microshift-release-info-" + testutil.MicroShiftIOVersion("4.21.0") + "-1.el9.noarch is microshift-io's build; the embedded release data is Red Hat's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The release store alone: a first build also caches
			// osbuild's definitions beside it, which is no change of it.
			store := filepath.Join(os.Getenv(usercache.Env), "releases")
			before := snapshot(t, store)
			t.Chdir(work)
			stdout, stderr, code := runCLI(t, tc.args...)
			if code == exitOK || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("%q = exit %d, stdout %q, stderr %q; want one line with %q", tc.args, code, stdout, stderr, tc.want)
			}
			if entries, _ := os.ReadDir(work); len(entries) > 0 {
				t.Errorf("%q wrote %d entries in the working directory", tc.args, len(entries))
			}
			if after := snapshot(t, store); !maps.Equal(after, before) {
				t.Errorf("%q changed the release store", tc.args)
			}
		})
	}
}

// writeRepo writes a .repo file outside the working directory.
func writeRepo(t *testing.T, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "io.repo")
	writeFileMode(t, p, []byte(data), 0o644)
	return p
}
