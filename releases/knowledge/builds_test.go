package knowledge_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/internal/distros"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

func defaultKnowledge(t *testing.T) *knowledge.Knowledge {
	t.Helper()
	k, err := knowledge.Default()
	if err != nil {
		t.Fatalf("Default() = %v", err)
	}
	return k
}

// The builds' facts as microshift-io's sources state them: its distros per
// release (CentOS Stream 9 with rpm-ostree image types from 4.19, CentOS
// Stream 10 image mode only from 4.21), the RPMs its spec adds and removes,
// its dependencies repository per stream (5.0 takes 4.22's), and Red Hat's
// build unchanged by it.
func TestForBuild(t *testing.T) {
	k := defaultKnowledge(t)
	if b := k.DefaultBuild(); b == nil || b.Name != "redhat" || !b.PullSecret {
		t.Fatalf("DefaultBuild() = %+v, want redhat, with a pull secret", b)
	}
	for _, tc := range []struct {
		version     string
		distros     []string
		bootcBases  []string
		depsBaseURL string
	}{
		{"4.19.0", []string{"centos-stream-9"}, []string{"quay.io/centos-bootc/centos-bootc:stream9"}, "4.19-el9-beta/"},
		{"4.21.3", []string{"centos-stream-9", "centos-stream-10"}, []string{"quay.io/centos-bootc/centos-bootc:stream9", "quay.io/centos-bootc/centos-bootc:stream10"}, "4.21-el9-beta/"},
		{"5.0.0", []string{"centos-stream-9", "centos-stream-10"}, []string{"quay.io/centos-bootc/centos-bootc:stream9", "quay.io/centos-bootc/centos-bootc:stream10"}, "4.22-el9-beta/"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			r, err := k.ForBuild(semver.MustParse(tc.version), "microshift-io")
			if err != nil {
				t.Fatalf("ForBuild(%s, microshift-io) = %v", tc.version, err)
			}
			var names, bases []string
			for _, d := range r.Distros {
				names, bases = append(names, d.Name), append(bases, d.BootcBase)
			}
			if !slices.Equal(names, tc.distros) || !slices.Equal(bases, tc.bootcBases) || r.Distro != tc.distros[0] {
				t.Errorf("distros %q (default %s), bases %q; want %q, %q", names, r.Distro, bases, tc.distros, tc.bootcBases)
			}
			for _, d := range r.Distros {
				types := distros.ImageTypes(d.OSBuildName(), "x86_64")
				if types == nil {
					t.Errorf("osbuild knows no distro %q (%s)", d.OSBuildName(), d.Name)
				}
				if has := slices.Contains(types, "edge-commit"); has == d.BootcOnly() || (d.ImageType != "" && !slices.Contains(types, d.ImageType)) {
					t.Errorf("%s: osbuild's %s has edge-commit %v, but the knowledge says image type %q", d.Name, d.OSBuildName(), has, d.ImageType)
				}
			}
			for _, pkg := range []string{"microshift", "microshift-kindnet", "microshift-kindnet-release-info", "microshift-topolvm", "microshift-topolvm-release-info", "microshift-olm", "microshift-multus"} {
				if !r.HasPackage(pkg) {
					t.Errorf("microshift-io's build of %s has no %s", tc.version, pkg)
				}
			}
			for _, pkg := range []string{"microshift-gateway-api", "microshift-low-latency", "microshift-sriov"} {
				if r.HasPackage(pkg) {
					t.Errorf("microshift-io's build of %s has %s, which modify-spec.py removes", tc.version, pkg)
				}
			}
			if len(r.Repositories) != 1 || !strings.HasSuffix(r.Repositories[0].BaseURL, tc.depsBaseURL) {
				t.Errorf("repositories %+v, want the dependencies mirror %s", r.Repositories, tc.depsBaseURL)
			}
			if what, why := r.Lacking(knowledge.Needs{ImageKeys: []string{"lvms_operator"}}); what != "image lvms_operator" || !strings.Contains(why, "OKD") {
				t.Errorf("Lacking(lvms_operator) = %q, %q", what, why)
			}
			if what, _ := r.Lacking(knowledge.Needs{ImageFile: "olm", ImageKeys: []string{"lvms_operator"}}); what != "" {
				t.Errorf("Lacking(lvms_operator of the OLM file) = %q", what)
			}
			if what, _ := r.Lacking(knowledge.Needs{ImageFile: "metrics-server", ImageKeys: []string{"metrics_server"}}); what != "the images of release-metrics-server-<arch>.json" {
				t.Errorf("Lacking(metrics-server) = %q", what)
			}
			if what, _ := r.Lacking(knowledge.Needs{Packages: []string{"microshift-olm"}, ImageKeys: []string{"pod"}, Repositories: []string{"https://mirror.openshift.com/x"}}); what != "" {
				t.Errorf("Lacking(what the build has) = %q", what)
			}
			if what, _ := r.Lacking(knowledge.Needs{Repositories: []string{"https://cdn.redhat.com/content/dist/layered/rhel9/x86_64/gitops/1.16/os"}}); what != "the repository at cdn.redhat.com" {
				t.Errorf("Lacking(cdn.redhat.com) = %q", what)
			}
			rh, err := k.ForBuild(semver.MustParse(tc.version), "")
			if err != nil {
				t.Fatal(err)
			}
			plain, _ := k.For(semver.MustParse(tc.version))
			if rh.Distro != plain.Distro || len(rh.Repositories) != 0 || !slices.Equal(rh.Packages(), plain.Packages()) || rh.Build.Name != "redhat" {
				t.Errorf("ForBuild(%s, default) differs from For", tc.version)
			}
			if what, _ := rh.Lacking(knowledge.Needs{Packages: []string{"microshift-gateway-api"}, ImageKeys: []string{"lvms_operator"}}); what != "" {
				t.Errorf("Red Hat's build lacks %s", what)
			}
		})
	}
	if _, err := k.ForBuild(semver.MustParse("4.18.3"), "microshift-io"); !errors.Is(err, knowledge.ErrUnsupported) || !strings.Contains(err.Error(), ">=4.19") {
		t.Errorf("ForBuild(4.18, microshift-io) = %v, want unsupported naming >=4.19", err)
	}
	if _, err := k.ForBuild(semver.MustParse("4.21.0"), "fedora"); err == nil || !strings.Contains(err.Error(), "redhat, microshift-io") {
		t.Errorf("ForBuild(unknown build) = %v", err)
	}
}

// Images belong to the build whose registries hold them.
func TestOwnsImage(t *testing.T) {
	k := defaultKnowledge(t)
	rh, io := k.Build("redhat"), k.Build("microshift-io")
	for _, tc := range []struct {
		ref    string
		rh, io bool
	}{
		{"quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + strings.Repeat("a", 64), true, false},
		{"registry.redhat.io/lvms4/lvms-rhel9-operator@sha256:" + strings.Repeat("b", 64), true, false},
		{"quay.io/okd/scos-content@sha256:" + strings.Repeat("c", 64), false, true},
		{"ghcr.io/microshift-io/okd/ovn-kubernetes-microshift:4.21", false, true},
		{"quay.io/okdx/scos-content:1", false, false},
		{"ghcr.io/topolvm/topolvm-with-sidecar:0.36.2", false, false},
		{"not a reference", false, false},
	} {
		if rh.OwnsImage(tc.ref) != tc.rh || io.OwnsImage(tc.ref) != tc.io {
			t.Errorf("%s: redhat %v, microshift-io %v; want %v, %v", tc.ref, rh.OwnsImage(tc.ref), io.OwnsImage(tc.ref), tc.rh, tc.io)
		}
	}
	if rh.Digest == io.Digest || len(io.Digest) != 64 {
		t.Errorf("build digests %q, %q: want one per build", rh.Digest, io.Digest)
	}
}

// Bad builds data is refused with the file, the build and what is wrong.
func TestParseBuildsErrors(t *testing.T) {
	const good = `[[build]]
name = "redhat"
default = true
title = "t"
description = "d"
registries = ["registry.redhat.io/"]
`
	for _, tc := range []struct{ name, data, want string }{
		{"two defaults", good + strings.Replace(good, `"redhat"`, `"other"`, 1), "2 default builds"},
		{"no default", strings.Replace(good, "default = true\n", "rpm_source = \"s\"\n", 1), "0 default builds"},
		{"name twice", good + strings.Replace(good, "default = true\n", "rpm_source = \"x\"\n", 1), `name "redhat"`},
		{"bad name", strings.Replace(good, `"redhat"`, `"Red Hat"`, 1), `name "Red Hat"`},
		{"registry without slash", strings.Replace(good, `"registry.redhat.io/"`, `"registry.redhat.io"`, 1), "ending in /"},
		{"unknown key", good + "colour = \"red\"\n", "colour"},
		{"default with distros", good + "[[build.distro]]\nrelease = \">=4.19\"\nname = \"x\"\n", "the default build is releases.toml's"},
		{"lack without why", good + `[[build]]
name = "b"
title = "t"
description = "d"
rpm_source = "s"
registries = ["quay.io/b/"]
[[build.lacks]]
packages = ["microshift-olm"]
`, "lacks[0]"},
		{"no default distro", good + `[[build]]
name = "b"
title = "t"
description = "d"
rpm_source = "s"
release = ">=4.19"
registries = ["quay.io/b/"]
[[build.distro]]
release = ">=4.19"
name = "centos-stream-9"
`, "0 default distros"},
		{"repository over http", good + `[[build]]
name = "b"
title = "t"
description = "d"
rpm_source = "s"
registries = ["quay.io/b/"]
[[build.repository]]
release = ">=4.19"
id = "x"
baseurl = "http://mirror.example/x/"
`, "https baseurl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := defaultKnowledge(t)
			cp := *k
			err := cp.ParseBuilds("builds.toml", []byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "builds.toml") || strings.Contains(err.Error(), "\n") {
				t.Errorf("ParseBuilds() = %v, want one line naming builds.toml and %q", err, tc.want)
			}
		})
	}
}
