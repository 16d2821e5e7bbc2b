package assemble_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// gitopsFile is a release-gitops-<arch>.json as the
// microshift-gitops-release-info RPM ships it (test digests).
func gitopsFile(t *testing.T, arch releases.Arch) *releases.File {
	t.Helper()
	name := releases.FileName("gitops", arch)
	d := archDigit[arch]
	data := fmt.Sprintf(`{"release": {"base": "1.19.2"}, "images": {
  "openshift-gitops-argocd": "registry.redhat.io/openshift-gitops-1/argocd-rhel9@sha256:%s",
  "redis": "registry.redhat.io/rhel9/redis-7@sha256:%s"}}`, strings.Repeat("1"+d, 32), strings.Repeat("2"+d, 32))
	f, err := releases.ParseFile(name, name, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

var archDigit = map[releases.Arch]string{releases.X86_64: "a", releases.AArch64: "b"}

// microshift-gitops is a catalog component installed as upstream CI does:
// the RPM from the OpenShift GitOps repository of the release's GitOps
// version (recorded in the plan, the notes and the Containerfile; never
// pinned to MicroShift's version nor checked against its RPM list), its
// images from the release-gitops file its release-info RPM ships.
func TestGitOps(t *testing.T) {
	cat := assembletest.Catalog(t)
	for _, tc := range []struct {
		stream string
		arch   releases.Arch
		repo   plan.Repository
	}{
		{"5.0", releases.X86_64, plan.Repository{ID: "gitops-1.19-for-rhel-9-x86_64-rpms", Name: "Red Hat OpenShift GitOps 1.19 for RHEL 9 x86_64 (RPMs)",
			BaseURL: "https://cdn.redhat.com/content/dist/layered/rhel9/x86_64/gitops/1.19/os", Packages: []string{"microshift-gitops"}, Components: []string{"gitops"}}},
		{"5.1", releases.AArch64, plan.Repository{ID: "gitops-1.19-for-rhel-9-aarch64-rpms", Name: "Red Hat OpenShift GitOps 1.19 for RHEL 9 aarch64 (RPMs)",
			BaseURL: "https://cdn.redhat.com/content/dist/layered/rhel9/aarch64/gitops/1.19/os", Packages: []string{"microshift-gitops"}, Components: []string{"gitops"}}},
		{"4.21", releases.X86_64, plan.Repository{ID: "gitops-1.16-for-rhel-9-x86_64-rpms", Name: "Red Hat OpenShift GitOps 1.16 for RHEL 9 x86_64 (RPMs)",
			BaseURL: "https://cdn.redhat.com/content/dist/layered/rhel9/x86_64/gitops/1.16/os", Packages: []string{"microshift-gitops"}, Components: []string{"gitops"}}},
	} {
		t.Run(tc.stream+"-"+string(tc.arch), func(t *testing.T) {
			rel, _ := assembletest.Release(t, tc.stream).WithFiles([]*releases.File{gitopsFile(t, releases.X86_64), gitopsFile(t, releases.AArch64)})
			p := assembletest.Plan(t, cat, rel, compose.Request{Profile: "full", Arch: tc.arch, With: []string{"gitops"}})
			if len(p.Repositories) != 1 || fmt.Sprint(p.Repositories[0]) != fmt.Sprint(tc.repo) {
				t.Errorf("repositories %+v, want %+v", p.Repositories, tc.repo)
			}
			k := slices.IndexFunc(p.Packages, func(pkg plan.Package) bool { return pkg.Name == "microshift-gitops" })
			if k < 0 || p.Packages[k].Version != "" {
				t.Errorf("packages %+v: want microshift-gitops unpinned", p.Packages)
			}
			var images []string
			for _, im := range p.Images {
				for _, u := range im.Uses {
					if u.Component == "gitops" {
						images = append(images, u.Key+" "+im.Ref)
					}
				}
			}
			if len(images) != 2 || !strings.Contains(images[0], "argocd-rhel9@sha256:1"+archDigit[tc.arch]) {
				t.Errorf("gitops images %q, want argocd and redis of release-gitops-%s.json", images, tc.arch)
			}
			note := fmt.Sprintf("gitops: microshift-gitops comes from the RPM repository %s (%s): add it to osbuild's sources (composer-cli sources add), and enable it on a bootc build host", tc.repo.ID, tc.repo.BaseURL)
			if !slices.Contains(p.Notes, note) {
				t.Errorf("notes %q lack %q", p.Notes, note)
			}
			out, err := assemble.Build(context.Background(), p, assemble.Options{Bootc: true})
			if err != nil {
				t.Fatal(err)
			}
			cf := string(assembletest.File(t, out, output.Containerfile))
			if want := fmt.Sprintf("# The build host needs the MicroShift RPM repositories (rhocp, fast-datapath) enabled,\n# and %s (%s) for microshift-gitops.\n", tc.repo.ID, tc.repo.BaseURL); !strings.Contains(cf, want) {
				t.Errorf("Containerfile lacks %q:\n%s", want, cf)
			}
			if !strings.Contains(cf, "        microshift-gitops \\\n") {
				t.Errorf("Containerfile does not install microshift-gitops unpinned:\n%s", cf)
			}
		})
	}
	// Without the gitops release file: the error says where it comes from.
	_, err := assemble.Plan(context.Background(), cat, assembletest.Release(t, "5.0"), compose.Request{Profile: "full", Arch: releases.X86_64, With: []string{"gitops"}})
	want := `release 5.0 (embedded) has no release-gitops-x86_64.json, which component "gitops" takes its images from; it comes with the microshift-gitops-release-info RPM of the GitOps repository (/usr/share/microshift/release/release-gitops-<arch>.json): add it to the release directory (--release-dir) or the component's release/ directory (--catalog)`
	if err == nil || err.Error() != want {
		t.Errorf("Resolve(gitops without its release file) = %v\nwant %s", err, want)
	}
	// Before 4.21 upstream does not test it.
	_, err = assemble.Plan(context.Background(), cat, assembletest.Release(t, "4.20"), compose.Request{Profile: "full", Arch: releases.X86_64, With: []string{"gitops"}})
	if err == nil || !strings.Contains(err.Error(), `component "gitops" is not available for release 4.20: it needs release >=4.21`) {
		t.Errorf("Resolve(gitops, 4.20) = %v", err)
	}
}
