package upstream_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
	"github.com/microshift-compose/microshift-compose/releases/knowledge/upstream"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// stream is one upstream branch state of the fixture repository.
type stream struct {
	version, kube string
	packages      []string // %package suffixes besides the base
	healthcheck   bool     // pkg/cmd/healthcheck.go with --custom
	lvmdEmptyErr  bool     // pkg/config/lvmd refuses an empty file
	extraKey      bool     // the OpenAPI spec has dns.extra
	rhel          []string // crel images: rhel98, rhel102
	scrape        bool     // the observability config reads scrape.d
}

// files is a MicroShift source tree as the generator reads it.
func (s stream) files() map[string]string {
	digest := func(n int) string { return strings.Repeat(fmt.Sprintf("%x", n%16), 64) }
	core := func(arch string, n int) string {
		return fmt.Sprintf(`{"release": {"base": "%s.0-0.nightly-2026-01-0%d-000000"}, "images": {"pod": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:%s"}}`+"\n", s.version, n, digest(n+len(arch)))
	}
	var pkgs, files, install strings.Builder
	for _, p := range s.packages {
		fmt.Fprintf(&pkgs, "%%package %s\nSummary: %s\n\n", p, p)
		fmt.Fprintf(&files, "%%files %s\n%%dir %%{_sysconfdir}/microshift/%s\n%%config(noreplace) %%{_sysconfdir}/microshift/%s/%s.yaml\n\n", p, p, p, p)
		fmt.Fprintf(&install, "install -p -m644 packaging/%s.yaml %%{buildroot}%%{_sysconfdir}/microshift/%s/%s.yaml\n", p, p, p)
	}
	spec := "Name: microshift\nVersion: %{version}\n\n" + pkgs.String() +
		"%package multus\nSummary: multus\n\n%prep\n%build\n%install\n" + install.String() +
		"install -p -m644 packaging/microshift/dropins/enable-multus.yaml %{buildroot}%{_sysconfdir}/microshift/config.d/00-enable-multus.yaml\n" +
		"install -p -m644 packaging/observability/otel.yaml -D %{buildroot}%{_sysconfdir}/microshift/observability/opentelemetry-collector.yaml\n\n" +
		"%files\n%config(noreplace) %{_sysconfdir}/microshift/config.yaml.default\n%{_sysconfdir}/microshift/observability/opentelemetry-collector.yaml\n%{_prefix}/bin/microshift\n\n" +
		files.String() + "%files multus\n%{_sysconfdir}/microshift/config.d/00-enable-multus.yaml\n\n%changelog\n"
	openapi := `{"type": "object", "properties": {"dns": {"type": "object", "properties": {
  "baseDomain": {"type": "string", "default": "example.com"},
  "status": {"type": "string", "enum": ["Enabled", "Disabled"], "default": "Disabled"}` +
		map[bool]string{true: `,
  "extra": {"type": "integer", "default": 3}`}[s.extraKey] + `}},
  "network": {"type": "object", "properties": {"clusterNetwork": {"type": "array", "items": {"type": "string"}, "default": ["10.42.0.0/16"]},
    "remotes": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}},
  "kubelet": {"description": "free-form"}}}` + "\n"
	functions := "function namespace_deployment_ready() {\n    local -r ns=\"${CHECK_DEPLOY_NS}\"\n}\nfunction namespace_pods_ready() {\n    local ns=${CHECK_PODS_NS}\n}\n"
	lvmd := "package lvmd\n\nconst (\n\tRuntimeLvmdConfigFile = \"/var/lib/microshift/lvms/lvmd.yaml\"\n)\n\nfunc NewLvmdConfigFromFile(p string) (*Lvmd, error) {\n"
	if s.lvmdEmptyErr {
		lvmd += "\tif l == nil {\n\t\treturn nil, fmt.Errorf(\"lvmd config file %q is empty\", p)\n\t}\n"
	}
	lvmd += "\treturn l, nil\n}\n"
	otel := "receivers:\n  kubeletstats: {}\n"
	if s.scrape {
		otel = "receivers:\n  prometheus:\n    config:\n      scrape_config_files:\n        - /etc/microshift/observability/scrape.d/*.yaml\n"
	}
	out := map[string]string{
		"assets/release/release-x86_64.json":                            core("x86_64", 1),
		"assets/release/release-aarch64.json":                           core("aarch64", 2),
		"assets/components/multus/release-multus-x86_64.json":           fmt.Sprintf(`{"release": {"base": "%s.0-0.nightly-2026-01-01-000000"}, "images": {"multus": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:%s"}}`+"\n", s.version, digest(7)),
		"assets/components/lvms/topolvm_default-storage-class.yaml":     "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: topolvm-provisioner\nparameters:\n  csi.storage.k8s.io/fstype: xfs\nprovisioner: topolvm.io\nreclaimPolicy: Delete\nvolumeBindingMode: WaitForFirstConsumer\nallowVolumeExpansion: true\n",
		"Makefile.kube_git.var":                                         "KUBE_GIT_MAJOR=1\nKUBE_GIT_MINOR=" + strings.TrimPrefix(s.kube, "1.") + "\nKUBE_GIT_VERSION=v" + s.kube + ".4\n",
		"packaging/rpm/microshift.spec":                                 spec,
		"packaging/microshift/dropins/enable-multus.yaml":               "network:\n  multus:\n    status: Enabled\n",
		"packaging/observability/otel.yaml":                             otel,
		"cmd/generate-config/config/config-openapi-spec.json":           openapi,
		"pkg/admin/prerun/version.go":                                   "package prerun\n\nconst MAX_VERSION_SKEW = 2\n\nvar lastMinorForMajor = map[int]int{\n\t4: 22,\n}\n",
		"packaging/greenboot/functions.sh":                              functions,
		"pkg/config/lvmd/lvmd.go":                                       lvmd,
		"test/image-blueprints-bootc/el9/layer1-base/group1/x.txt":      "placeholder\n",
		"test/image-blueprints/layer3-periodic/group1/rhel92-crel.toml": "# periodic only: not a distro the release is built for\n",
	}
	for _, p := range s.packages {
		out["packaging/"+p+".yaml"] = p + ": true\n"
	}
	if s.healthcheck {
		out["pkg/cmd/healthcheck.go"] = "package cmd\n\nvar custom = \"custom\"\n"
	}
	for _, rhel := range s.rhel {
		major, base := "9", "registry.redhat.io/rhel9/rhel-bootc:9.8"
		if rhel == "rhel102" {
			major, base = "10", "registry.redhat.io/rhel10/rhel-bootc:10.2"
		}
		dir := "test/image-blueprints-bootc/el" + major + "/layer1-base/"
		out[dir+"group2/"+rhel+"-bootc-crel.containerfile"] = "# {{- if env.Getenv \"X\" \"\" -}}\nFROM localhost/" + rhel + "-test-agent:latest\nRUN dnf install -y microshift\n"
		out[dir+"group1/"+rhel+"-test-agent.containerfile"] = "FROM " + base + "\n"
	}
	return out
}

// fixtureRepo makes a bare git repository of MicroShift-shaped branches
// with fixed authors and dates, so commits are the same on every machine.
func fixtureRepo(t *testing.T, branches []string, states map[string]stream) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is not installed")
		}
		t.Skip("git is not installed")
	}
	work, bare := t.TempDir(), filepath.Join(t.TempDir(), "microshift.git")
	env := append(os.Environ(), "GIT_AUTHOR_NAME=fixture", "GIT_AUTHOR_EMAIL=fixture@example.com", "GIT_COMMITTER_NAME=fixture",
		"GIT_COMMITTER_EMAIL=fixture@example.com", "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git(work, "init", "-q", "-b", "fixture-root")
	git(work, "commit", "-q", "--allow-empty", "-m", "root")
	for _, b := range branches {
		// "release-4.22=main": a branch at another's commit. Others are
		// one commit each, on top of the one before.
		name, at, alias := strings.Cut(b, "=")
		if alias {
			git(work, "branch", name, at)
			continue
		}
		git(work, "checkout", "-q", "-B", name)
		git(work, "rm", "-q", "-r", "--ignore-unmatch", ".")
		for p, content := range states[name].files() {
			path := filepath.Join(work, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		git(work, "add", "-A")
		git(work, "commit", "-q", "--allow-empty", "-m", name)
	}
	git(work, "clone", "-q", "--bare", work, bare)
	// The clone's refs/heads are the work repository's branches.
	for _, b := range branches {
		name, _, _ := strings.Cut(b, "=")
		git(bare, "fetch", "-q", work, "+refs/heads/"+name+":refs/heads/"+name)
	}
	return bare
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", "golden", name), got, *update, "go test ./releases/knowledge/upstream -update")
}

var fixtureStreams = map[string]stream{
	"release-4.20": {version: "4.20", kube: "1.33", rhel: []string{"rhel98"}},
	"release-4.21": {version: "4.21", kube: "1.34", packages: []string{"foo"}, healthcheck: true, extraKey: true, rhel: []string{"rhel102", "rhel98"}},
	// main still carries 4.21's release files; its rebase onto 4.22 does not.
	"main":        {version: "4.21", kube: "1.35", packages: []string{"foo", "observability"}, healthcheck: true, lvmdEmptyErr: true, extraKey: true, rhel: []string{"rhel102", "rhel98"}, scrape: true},
	"rebase-4.22": {version: "4.22", kube: "1.35", packages: []string{"foo", "observability"}, healthcheck: true, lvmdEmptyErr: true, extraKey: true, rhel: []string{"rhel102", "rhel98"}, scrape: true},
}

const fixtureHand = `[[config_file]]
release = ">=4.20"
path = "/etc/microshift/config.d/10-microshift-compose.yaml"
why = "config.d"

[distro_major.9]
image_type = "edge-commit"
default = true
why = "rpm-ostree"

[distro_major.10]
why = "bootc only"

[lvms_storage_classes]
name_prefix = "topolvm-provisioner-"
device_class_parameter = "topolvm.io/device-class"
other_fstypes = ["ext4"]
snapshot_deletion_policy = "Delete"
why = "docs"

[[lvmd]]
release = "<4.22"
empty_file = "it crashes"

[[key]]
path = "dns.baseDomain"
why = "validate checks it"
format = "dns-subdomain"

[[key]]
path = "dns.extra"
release = ">=4.22"
why = "4.22 bounds it"
min = 1
`

// The generator end to end over a small MicroShift-shaped repository:
// release bundles per pinned commit (main's stream from its rebase
// branch), ranges across streams, the hand-kept facts merged, each file
// recording its branches and commits.
func TestGenerateFixture(t *testing.T) {
	ctx := context.Background()
	bare := fixtureRepo(t, []string{"release-4.20", "release-4.21", "main", "rebase-4.22", "release-4.22=main"}, fixtureStreams)
	g, err := upstream.OpenGit(ctx, bare)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	heads, err := g.Branches(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pinsText := fmt.Sprintf(`[[stream]]
stream = "4.20"
branch = "release-4.20"
commit = "%s"

[[stream]]
stream = "4.21"
branch = "release-4.21"
commit = "%s"

[[stream]]
stream = "4.22"
branch = "main"
commit = "%s"
development = true
[stream.release_files]
branch = "rebase-4.22"
commit = "%s"
`, heads["release-4.20"], heads["release-4.21"], heads["main"], heads["rebase-4.22"])
	pins, err := upstream.ParsePins("pins.toml", []byte(pinsText))
	if err != nil {
		t.Fatal(err)
	}
	hand, err := upstream.ParseHand("handkept.toml", []byte(fixtureHand))
	if err != nil {
		t.Fatal(err)
	}
	out, err := upstream.Generate(ctx, g, pins, hand)
	if err != nil {
		t.Fatalf("Generate() = %v", err)
	}
	want := []string{"releases/data/4.20.json", "releases/data/4.21.json", "releases/data/4.22.json", upstream.ReleasesFile, upstream.ConfigFile}
	if len(out.Files) != len(want) {
		t.Errorf("%d files, want %v", len(out.Files), want)
	}
	for _, p := range want {
		golden(t, filepath.Base(p), out.Files[p])
	}
	again, err := upstream.Generate(ctx, g, pins, hand)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range want {
		if string(again.Files[p]) != string(out.Files[p]) {
			t.Errorf("%s differs between two runs", p)
		}
	}
}

// The generated knowledge is what microshift-compose parses.
func TestGenerateFixtureParses(t *testing.T) {
	rel, err := os.ReadFile(filepath.Join("testdata", "golden", "releases.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join("testdata", "golden", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := knowledge.Parse("releases.toml", rel, "config.toml", cfg)
	if err != nil {
		t.Fatalf("Parse(generated) = %v", err)
	}
	r, err := k.For(semver.MustParse("4.22.0"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Kubernetes != "1.35" || r.Distro != "rhel-9.8" || !r.HasPackage("microshift-observability") || r.Lvmd == nil ||
		!strings.Contains(r.Lvmd.EmptyFile, "is empty") || r.Config.Key("dns.extra") == nil || *r.Config.Key("dns.extra").Min != 1 {
		t.Errorf("4.22 facts: kubernetes %s, distro %s, packages %v, lvmd %+v", r.Kubernetes, r.Distro, r.Packages(), r.Lvmd)
	}
	if old, _ := k.For(semver.MustParse("4.21.0")); old.Config.Key("dns.extra").Min != nil || old.HasPackage("microshift-observability") {
		t.Errorf("4.21 has 4.22's bound or package")
	}
}

// make knowledge: pins move to their branches' heads, a new release-X.Y
// branch carrying X.Y becomes a stream, a pre-created branch at main's
// commit (release-4.22, still 4.21's files) is skipped with the reason,
// and main's release files move to the development stream's own once it
// carries them.
func TestRefreshFixture(t *testing.T) {
	ctx := context.Background()
	states := map[string]stream{}
	for k, v := range fixtureStreams {
		states[k] = v
	}
	states["release-4.23"] = stream{version: "4.23", kube: "1.36", healthcheck: true, lvmdEmptyErr: true, extraKey: true, rhel: []string{"rhel98"}}
	bare := fixtureRepo(t, []string{"release-4.20", "release-4.21", "main", "rebase-4.22", "release-4.22=main", "release-4.23"}, states)
	g, err := upstream.OpenGit(ctx, bare)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	heads, err := g.Branches(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stale := strings.Repeat("0", 40)
	pins, err := upstream.ParsePins("pins.toml", []byte(fmt.Sprintf(`[[stream]]
stream = "4.20"
branch = "release-4.20"
commit = "%s"

[[stream]]
stream = "4.22"
branch = "main"
commit = "%s"
development = true
[stream.release_files]
branch = "rebase-4.22"
commit = "%s"
why = "main is not rebased yet"
`, stale, heads["main"], heads["rebase-4.22"])))
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	got, err := upstream.Refresh(ctx, g, pins, &log)
	if err != nil {
		t.Fatalf("Refresh() = %v", err)
	}
	var streams []string
	for _, p := range got.Streams {
		streams = append(streams, p.Stream+" "+p.Branch+" "+p.Commit)
	}
	want := []string{"4.20 release-4.20 " + heads["release-4.20"], "4.21 release-4.21 " + heads["release-4.21"],
		"4.22 main " + heads["main"], "4.23 release-4.23 " + heads["release-4.23"]}
	if strings.Join(streams, "\n") != strings.Join(want, "\n") {
		t.Errorf("streams:\n%s\nwant\n%s", strings.Join(streams, "\n"), strings.Join(want, "\n"))
	}
	if dev := got.Pin("4.22"); !dev.Development || dev.ReleaseFiles == nil || dev.ReleaseFiles.Why != "main is not rebased yet" {
		t.Errorf("4.22 = %+v, want main, development, its release_files kept", dev)
	}
	for _, line := range []string{
		"4.20: release-4.20 000000000000 -> " + heads["release-4.20"][:12],
		"added 4.21: release-4.21 at " + heads["release-4.21"][:12],
		"skipped release-4.22: at " + heads["main"][:12] + ", the commit of main, its release files are release 4.21 (4.21.0-0.nightly-2026-01-01-000000): not a 4.22 stream",
		"added 4.23: release-4.23 at " + heads["release-4.23"][:12],
	} {
		if !strings.Contains(log.String(), line) {
			t.Errorf("log lacks %q:\n%s", line, log.String())
		}
	}
	if _, err := upstream.Generate(ctx, g, got, mustHand(t)); err != nil {
		t.Errorf("Generate(refreshed) = %v", err)
	}
}

func mustHand(t *testing.T) *upstream.Hand {
	t.Helper()
	h, err := upstream.ParseHand("handkept.toml", []byte(fixtureHand))
	if err != nil {
		t.Fatal(err)
	}
	return h
}
