package compose_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// On microshift-io's build the four profiles keep their meaning and take
// the build's own providers: a CNI is kindnet, a CSI TopoLVM. Its RPMs are
// pinned to the recorded build's version-release, its distro is CentOS
// Stream 9 (osbuild's centos-9), its dependencies repository is enabled,
// and the TopoLVM tag resolved at fetch is embedded by digest and named by
// its tag.
func TestResolveMicroShiftIO(t *testing.T) {
	cat := assembletest.Catalog(t)
	rel := assembletest.MicroShiftIO(t, "release-4.21")
	version := strings.TrimPrefix(rel.RPMs[0].NEVRA, "microshift-release-info-")
	version = strings.TrimSuffix(version, ".noarch")
	for _, tc := range []struct {
		profile string
		want    []string
	}{
		{"minimal", []string{"core"}},
		{"networking-only", []string{"core", "kindnet"}},
		{"storage-only", []string{"core", "topolvm"}},
		{"full", []string{"core", "kindnet", "topolvm", "snapshot-controller"}},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			p := resolveOK(t, cat, rel, compose.Request{Profile: tc.profile, Arch: releases.X86_64})
			if got := p.ComponentNames(); !slices.Equal(got, tc.want) {
				t.Errorf("components %v, want %v", got, tc.want)
			}
			b := p.Release.Build
			if b == nil || b.Name != "microshift-io" || b.Version != version || b.PullSecret || b.OKD != "4.21.0-okd-scos.6" || p.Release.Pin != plan.PinExact {
				t.Fatalf("release build %+v, pin %s; want microshift-io's %s", b, p.Release.Pin, version)
			}
			if p.Target.Distro != "centos-stream-9" || p.Target.OSBuildDistro() != "centos-9" || p.Target.BootcBase != "quay.io/centos-bootc/centos-bootc:stream9" {
				t.Errorf("target %+v", p.Target)
			}
			for _, pkg := range p.Packages {
				if strings.HasPrefix(pkg.Name, "microshift") && pkg.Version != version {
					t.Errorf("package %s pinned to %q, want %s", pkg.Name, pkg.Version, version)
				}
			}
			if len(p.Repositories) != 1 || p.Repositories[0].ID != "openshift-mirror-beta" || !p.Repositories[0].Enable {
				t.Errorf("repositories %+v, want the dependencies mirror, enabled", p.Repositories)
			}
			for _, im := range p.Images {
				if strings.HasPrefix(im.Ref, "registry.redhat.io/") || strings.HasPrefix(im.Ref, "quay.io/openshift-release-dev/") {
					t.Errorf("a Red Hat image in the plan: %s", im.Ref)
				}
				if !im.Pinned {
					t.Errorf("image %s is not pinned", im.Ref)
				}
			}
			if slices.Contains(tc.want, "topolvm") {
				i := slices.IndexFunc(p.Images, func(im plan.Image) bool { return im.Tag != "" })
				if i < 0 || p.Images[i].Tag != "ghcr.io/topolvm/topolvm-with-sidecar:0.36.2" || p.Images[i].Ref != "ghcr.io/topolvm/topolvm-with-sidecar@"+assembletest.MicroShiftIOTopoLVMDigest {
					t.Errorf("no TopoLVM image pinned by the resolved digest and named by its tag: %+v", p.Images)
				}
			}
		})
	}
}

// What microshift-io's build cannot honour is refused in one line naming
// the component and why; and the build's components are refused on Red
// Hat's build.
func TestResolveMicroShiftIORefusals(t *testing.T) {
	cat := assembletest.Catalog(t)
	io := assembletest.MicroShiftIO(t, "release-4.21")
	rh := assembletest.Release(t, "4.21")
	for _, tc := range []struct {
		name    string
		rel     *releases.Release
		req     compose.Request
		want    string
		cannot  bool
		notWant string
	}{
		{"kindnet with OVN-K", io, compose.Request{Profile: "networking-only", With: []string{"networking-ovnk"}},
			`kindnet conflicts with networking-ovnk (kindnet: profile networking-only; networking-ovnk: --with); leave one out with --without`, false, ""},
		{"TopoLVM with LVMS", io, compose.Request{Profile: "storage-only", With: []string{"storage-lvms"}},
			`component "storage-lvms" is not available for release 4.21 (fetched): microshift-io's build lacks image lvms_operator: the LVMS operator is no part of OKD`, true, ""},
		{"LVMS's TopoLVM conflict on Red Hat's", rh, compose.Request{Profile: "storage-only", With: []string{"topolvm"}},
			`component "topolvm" is not available for release 4.21 (embedded): it is for microshift-io's build of MicroShift, and release 4.21 (embedded) is Red Hat's build`, true, ""},
		{"kindnet on Red Hat's", rh, compose.Request{Profile: "minimal", With: []string{"kindnet"}},
			`component "kindnet" is not available for release 4.21 (embedded): it is for microshift-io's build of MicroShift`, true, ""},
		{"a Red Hat RPM", io, compose.Request{Profile: "minimal", With: []string{"gateway-api"}},
			`component "gateway-api" is not available for release 4.21 (fetched): microshift-io's build lacks RPM microshift-gateway-api: microshift-io removes it from MicroShift's spec`, true, ""},
		{"a Red Hat repository", io, compose.Request{Profile: "minimal", With: []string{"gitops"}},
			`microshift-io's build lacks the repository at cdn.redhat.com: Red Hat's CDN serves subscribed hosts only`, true, ""},
		{"a distro it is not built for", io, compose.Request{Profile: "minimal", Distro: "rhel-9.6"},
			`release 4.21 (fetched) is not built for distro "rhel-9.6": microshift-io's build of MicroShift 4.21 is built and tested for centos-stream-9, centos-stream-10`, true, ""},
		{"an el9 build for CentOS Stream 10", io, compose.Request{Profile: "minimal", Distro: "centos-stream-10"},
			`release 4.21 (fetched) is not built for distro "centos-stream-10": its RPMs are el9 builds (microshift-release-info-` + testutil.MicroShiftIOVersion("4.21.0") + `-1.el9.noarch), and centos-stream-10 takes el10 ones`, true, ""},
		{"--with a capability lists the build's providers", io, compose.Request{Profile: "minimal", With: []string{"csi"}},
			`--with csi: "csi" is a capability; name a component that provides it (storage-hostpath, storage-lvms, topolvm)`, false, ""},
		{"--with a capability on Red Hat's", rh, compose.Request{Profile: "minimal", With: []string{"cni"}},
			`name a component that provides it (networking-ovnk)`, false, "kindnet"},
		{"--without the build's CSI", io, compose.Request{Profile: "full", Without: []string{"topolvm"}},
			`--without topolvm: snapshot-controller requires a csi provider and topolvm is its default (snapshot-controller: profile full); select another provider with --with storage-hostpath or --with storage-lvms`, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Arch = releases.X86_64
			_, err := compose.Resolve(context.Background(), cat, tc.rel, tc.req)
			var cannot *compose.CannotHonourError
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.ContainsAny(err.Error(), "\n\r") || errors.As(err, &cannot) != tc.cannot ||
				tc.notWant != "" && strings.Contains(err.Error(), tc.notWant) {
				t.Errorf("Resolve() = %v\nwant one line with %q (cannot honour: %v)", err, tc.want, tc.cannot)
			}
		})
	}
}

// Red Hat's releases keep their composition IDs: a plan of Red Hat's
// build records no build, and the catalog digest of its ID is the catalog
// without microshift-io's components.
func TestMicroShiftIOLeavesRedHatIDs(t *testing.T) {
	cat := assembletest.Catalog(t)
	rh := resolveOK(t, cat, assembletest.Release(t, "5.0"), compose.Request{Profile: "full", Arch: releases.X86_64})
	if rh.Release.Build != nil || rh.Inputs.Catalog != cat.Digest || rh.Inputs.Options["build"] != nil {
		t.Errorf("Red Hat's plan: build %+v, catalog %s (want %s), build input %v", rh.Release.Build, rh.Inputs.Catalog, cat.Digest, rh.Inputs.Options["build"])
	}
	io := resolveOK(t, cat, assembletest.MicroShiftIO(t, "release-4.21"), compose.Request{Profile: "full", Arch: releases.X86_64})
	if io.Inputs.Catalog != cat.DigestFor("microshift-io") || io.Inputs.Options["build"] == nil {
		t.Errorf("microshift-io's plan: catalog %s, build input %v", io.Inputs.Catalog, io.Inputs.Options["build"])
	}
}

// --repo-file's enabled repositories are the plan's, enabled by the
// Containerfile, $basearch and $releasever the plan's; what an image build
// cannot use or must not carry is refused naming the file and section.
func TestRepoFiles(t *testing.T) {
	cat := assembletest.Catalog(t)
	io := assembletest.MicroShiftIO(t, "release-4.21")
	const good = "[microshift-io]\nname=microshift-io $releasever\nbaseurl=https://rpms.example.com/microshift/$basearch/\ngpgcheck=1\ngpgkey=https://rpms.example.com/key.asc\n[off]\nbaseurl=https://x.example/\nenabled=0\n"
	p := resolveOK(t, cat, io, compose.Request{Profile: "minimal", Arch: releases.AArch64, RepoFiles: []compose.RepoFile{{Source: "io.repo", Data: []byte(good)}}})
	if len(p.Repositories) != 2 {
		t.Fatalf("repositories %+v, want the dependencies mirror and microshift-io", p.Repositories)
	}
	r := p.Repositories[1]
	if r.ID != "microshift-io" || r.Name != "microshift-io 9" || r.BaseURL != "https://rpms.example.com/microshift/aarch64/" || !r.Enable || r.GPGCheck == nil || !*r.GPGCheck ||
		!slices.Equal(r.GPGKey, []string{"https://rpms.example.com/key.asc"}) || r.Source != "--repo-file io.repo" {
		t.Errorf("repository %+v", r)
	}
	without := resolveOK(t, cat, io, compose.Request{Profile: "minimal", Arch: releases.AArch64})
	if p.ID == without.ID {
		t.Error("--repo-file does not change the composition ID")
	}
	for _, tc := range []struct{ name, data, want string }{
		{"a local directory", "[a]\nbaseurl=file:///srv/rpms/\n", "--repo-file bad.repo [a]: baseurl file:///srv/rpms/ is on this host's filesystem"},
		{"credentials in the URL", "[a]\nbaseurl=https://u:p@rpms.example.com/\n", "--repo-file bad.repo [a]: baseurl https://u:xxxxx@rpms.example.com/ holds credentials"},
		{"a password", "[a]\nbaseurl=https://rpms.example.com/\nusername=u\npassword=secret\n", "needs credentials"},
		{"a client key", "[a]\nbaseurl=https://rpms.example.com/\nsslclientkey=/etc/pki/key.pem\n", "needs credentials"},
		{"a proxy", "[a]\nbaseurl=https://rpms.example.com/\nproxy=http://proxy:3128\n", "sslcacert and proxy"},
		{"nothing enabled", "[a]\nbaseurl=https://rpms.example.com/\nenabled=0\n", "--repo-file bad.repo: no enabled repository"},
		{"the dependencies mirror's ID", "[openshift-mirror-beta]\nbaseurl=https://rpms.example.com/\n", "repository openshift-mirror-beta is named by microshift-io's build (release knowledge) too"},
		{"not INI", "baseurl=https://rpms.example.com/\n", `--repo-file bad.repo: "baseurl" is outside any [repository] section`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compose.Resolve(context.Background(), cat, io, compose.Request{Profile: "minimal", Arch: releases.X86_64, RepoFiles: []compose.RepoFile{{Source: "bad.repo", Data: []byte(tc.data)}}})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secret") || strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("Resolve() = %v\nwant one line with %q", err, tc.want)
			}
		})
	}
}

// resolveOK resolves req, failing the test on error.
func resolveOK(t testing.TB, cat *components.Catalog, rel *releases.Release, req compose.Request) *plan.Plan {
	t.Helper()
	p, err := compose.Resolve(context.Background(), cat, rel, req)
	if err != nil {
		t.Fatalf("Resolve(%s %s %+v) = %v", rel.Stream(), req.Arch, req, err)
	}
	return p
}

// microshift-io's release files without its recorded RPMs (a release
// directory of its files): its build by its images, its RPMs pinned to the
// stream with a warning saying how to record them.
func TestMicroShiftIOWithoutRecordedRPMs(t *testing.T) {
	dir := t.TempDir()
	testutil.MicroShiftIORelease(t, testutil.ReleaseDir(t, "release-4.21"), dir)
	rel, err := releases.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := resolveOK(t, assembletest.Catalog(t), rel, compose.Request{Profile: "full", Arch: releases.X86_64, AllowUnpinned: true})
	if p.Release.Build == nil || p.Release.Build.Version != "" || p.Release.Pin != plan.PinStream || p.Target.Distro != "centos-stream-9" {
		t.Errorf("release %+v, target %+v", p.Release, p.Target)
	}
	if len(p.Warnings) == 0 || !strings.Contains(p.Warnings[0], "the release-info RPMs of microshift-io's build were not recorded with its files") || !strings.Contains(p.Warnings[0], "release fetch") {
		t.Errorf("warnings %q", p.Warnings)
	}
}
