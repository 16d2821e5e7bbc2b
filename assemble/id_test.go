package assemble_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
	"github.com/microshift-compose/microshift-compose/compose/microshiftconfig"
	"github.com/microshift-compose/microshift-compose/internal/distros"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/render/installer"
	"github.com/microshift-compose/microshift-compose/render/registry"
)

// copyDir copies a fixture directory into a new temporary directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// releaseDir writes rel's files into a new temporary directory, with edit
// applied to each file's bytes.
func releaseDir(t *testing.T, rel *releases.Release, edit func(name string, data []byte) []byte) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range rel.Files() {
		data := f.Encode()
		if edit != nil {
			data = edit(f.Name, data)
		}
		testutil.WriteFile(t, filepath.Join(dir, f.Name), data)
	}
	return dir
}

func loadCatalog(t *testing.T, dir string) *components.Catalog {
	t.Helper()
	cat, err := components.Load(dir)
	if err != nil {
		t.Fatalf("components.Load(%s) = %v", dir, err)
	}
	return cat
}

func loadReleaseDir(t *testing.T, dir string) *releases.Release {
	t.Helper()
	rel, err := releases.LoadDir(dir)
	if err != nil {
		t.Fatalf("releases.LoadDir(%s) = %v", dir, err)
	}
	return rel
}

var hexID = regexp.MustCompile(`^[0-9a-f]{64}$`)

// buildID resolves and builds, returning the composition ID of the output.
func buildID(t *testing.T, cat *components.Catalog, rel *releases.Release, req compose.Request, dev *registry.Options, opts assemble.Options) string {
	t.Helper()
	return buildIDWith(t, cat, rel, req, dev, nil, opts)
}

// buildIDWith is buildID with the installer inputs of build's flags too.
func buildIDWith(t *testing.T, cat *components.Catalog, rel *releases.Release, req compose.Request, dev *registry.Options, inst *installer.Inputs, opts assemble.Options) string {
	t.Helper()
	p := assembletest.Plan(t, cat, rel, req)
	if dev != nil {
		if _, err := registry.Add(p, *dev); err != nil {
			t.Fatalf("AddDeviceRegistry = %v", err)
		}
	}
	if inst != nil {
		if err := installer.AddInputs(p, *inst); err != nil {
			t.Fatalf("AddInstallerInputs = %v", err)
		}
	}
	out, err := assemble.Build(context.Background(), p, opts)
	if err != nil {
		t.Fatalf("Build = %v", err)
	}
	lock, err := lockfile.Parse("lock", assembletest.File(t, out, output.LockFile))
	if err != nil {
		t.Fatal(err)
	}
	if lock.ID != out.Plan.ID || !hexID.MatchString(lock.ID) {
		t.Fatalf("lock id %q, output plan id %q: want the same sha256 hex", lock.ID, out.Plan.ID)
	}
	return lock.ID
}

// TestCompositionIDSame: what does not change the outputs does not change
// the ID: where the catalog and release files are, the order of flags,
// the embedded release or the same files in a directory, a flag naming
// the default, the pull secret's content (the ID is no fingerprint of a
// credential), and a resolve and a build of the same selection.
func TestCompositionIDSame(t *testing.T) {
	overlay := testutil.TestdataDir(t, "catalogs", "resolver-overlay")
	catA, catB := loadCatalog(t, copyDir(t, overlay)), loadCatalog(t, copyDir(t, overlay))
	emb := assembletest.Release(t, "5.0")
	relA := loadReleaseDir(t, releaseDir(t, emb, nil))
	relB := loadReleaseDir(t, releaseDir(t, emb, nil))
	base := compose.Request{Profile: "minimal", With: []string{"multus", "edge-agent"}, Arch: releases.X86_64}
	want := buildID(t, catA, relA, base, nil, assemble.Options{})

	swapped := base
	swapped.With = []string{"edge-agent", "multus", "multus"}
	if got := buildID(t, catB, relB, swapped, nil, assemble.Options{}); got != want {
		t.Errorf("same inputs in other directories, flags in another order: ID %s, want %s", got, want)
	}
	if got := buildID(t, catA, emb, base, nil, assemble.Options{}); got != want {
		t.Errorf("the embedded release instead of the same files in a directory: ID %s, want %s", got, want)
	}
	explicit := base
	explicit.Distro = "rhel-9.8" // 5.0's default
	if got := buildID(t, catA, relA, explicit, nil, assemble.Options{ImageType: "edge-commit"}); got != want {
		t.Errorf("--distro and --image-type naming the defaults: ID %s, want %s", got, want)
	}
	if p := assembletest.Plan(t, catA, relA, base); p.ID != want {
		t.Errorf("resolve's ID %s differs from build's %s", p.ID, want)
	}
	// Installer options naming what the build does anyway: the distro's
	// own ostree ref, the kickstart's default root size, a firewall port
	// the plan opens already (twice).
	ks := func(ref string, fss ...installer.Filesystem) assemble.Options {
		return assemble.Options{Installer: assemble.InstallerOptions{Kickstart: true, OSTree: &blueprints.OSTreeOptions{URL: "http://edge.example.com/repo", Ref: ref}, Filesystems: fss}}
	}
	plain := buildID(t, catA, relA, base, nil, ks(""))
	defRef, err := blueprints.CommitRef("rhel-9.8", distros.DefaultImageType, releases.X86_64)
	if err != nil {
		t.Fatal(err)
	}
	if got := buildID(t, catA, relA, base, nil, ks(defRef)); got != plain {
		t.Errorf("--ostree-ref %s (the distro's default): ID %s, want %s", defRef, got, plain)
	}
	if got := buildID(t, catA, relA, base, nil, ks("", installer.Filesystem{Mount: "/", MinSize: installer.DefaultRootSize})); got != plain {
		t.Errorf("--kickstart --filesystem /=10GiB (the kickstart's default): ID %s, want %s", got, plain)
	}
	open := assembletest.Plan(t, catA, relA, base).Firewall.Ports
	if len(open) == 0 {
		t.Fatal("the plan opens no firewall port")
	}
	if got := buildIDWith(t, catA, relA, base, nil, &installer.Inputs{FirewallPorts: []string{open[0], open[0]}}, assemble.Options{}); got != want {
		t.Errorf("--firewall-port %s (the plan opens it): ID %s, want %s", open[0], got, want)
	}
	// Two pull secrets for the same registry: the same composition.
	one := buildID(t, catA, relA, base, &registry.Options{PullSecret: assembletest.PullSecret(t, "quay.io")}, assemble.Options{})
	other := filepath.Join(t.TempDir(), "other.json")
	testutil.WriteFile(t, other, []byte(`{"auths": {"quay.io": {"auth": "b3RoZXI6c2VjcmV0"}}}`))
	if two := buildID(t, catA, relA, base, &registry.Options{PullSecret: other}, assemble.Options{}); one != two {
		t.Errorf("pull secrets differing only in their credentials: IDs %s and %s, want one", one, two)
	}
	if one == want {
		t.Errorf("a pull secret on the device left the ID at %s", want)
	}
}

// TestCompositionIDDiffers: every input that changes the outputs changes
// the ID, a catalog file edited by one byte included.
func TestCompositionIDDiffers(t *testing.T) {
	overlay := testutil.TestdataDir(t, "catalogs", "resolver-overlay")
	cat := loadCatalog(t, copyDir(t, overlay))
	emb := assembletest.Release(t, "5.0")
	rel := loadReleaseDir(t, releaseDir(t, emb, nil))
	base := compose.Request{Profile: "storage-only", With: []string{"edge-agent"}, Arch: releases.X86_64}
	want := buildID(t, cat, rel, base, nil, assemble.Options{})

	edited := copyDir(t, overlay)
	agent := filepath.Join(edited, "components", "edge-agent", "component.toml")
	data := testutil.ReadFile(t, agent)
	testutil.WriteFile(t, agent, append(data, '\n'))
	// A file no component reads is catalog content too.
	unread := copyDir(t, overlay)
	testutil.WriteFile(t, filepath.Join(unread, "NOTES"), []byte("x"))

	digestChanged := releaseDir(t, emb, func(name string, data []byte) []byte {
		if name != "release-x86_64.json" {
			return data
		}
		i := strings.Index(string(data), "@sha256:")
		if i < 0 {
			t.Fatalf("%s has no digest", name)
		}
		d := []byte(string(data))
		at := i + len("@sha256:")
		if d[at] == 'a' {
			d[at] = 'b'
		} else {
			d[at] = 'a'
		}
		return d
	})

	cfg, err := microshiftconfig.Parse("config.yaml", []byte("network:\n  clusterNetwork: [10.100.0.0/16]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg2, err := microshiftconfig.Parse("config.yaml", []byte("network:\n  clusterNetwork: [10.101.0.0/16]\n"))
	if err != nil {
		t.Fatal(err)
	}
	lvmd := func(vg string) *lvmdconfig.Config {
		l, err := lvmdconfig.Parse("lvmd.yaml", []byte("device-classes:\n  - name: default\n    volume-group: "+vg+"\n    default: true\n"))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	with := func(f func(*compose.Request)) compose.Request {
		r := base
		r.With = append([]string(nil), base.With...)
		f(&r)
		return r
	}
	ca := filepath.Join(t.TempDir(), "ca.crt")
	testutil.WriteFile(t, ca, testutil.NewCA(t).PEM)

	ostree := &blueprints.OSTreeOptions{URL: "http://edge.example.com/repo"}
	user := func(key string) *installer.User {
		return &installer.User{Name: "admin", Keys: []string{key}, KeyFile: "admin.pub"}
	}

	seen := map[string]string{want: "the base"}
	for _, tc := range []struct {
		name string
		cat  *components.Catalog
		rel  *releases.Release
		req  compose.Request
		dev  *registry.Options
		inst *installer.Inputs
		opts assemble.Options
	}{
		{name: "catalog file edited by one byte", cat: loadCatalog(t, edited)},
		{name: "a file added to the catalog", cat: loadCatalog(t, unread)},
		{name: "embedded catalog alone", cat: defaultCatalogNoOverlay(t), req: with(func(r *compose.Request) { r.With = nil })},
		{name: "release file digest changed", rel: loadReleaseDir(t, digestChanged)},
		{name: "other release", rel: assembletest.Release(t, "4.19")},
		{name: "other profile", req: with(func(r *compose.Request) { r.Profile = "full" })},
		{name: "--with", req: with(func(r *compose.Request) { r.With = append(r.With, "multus") })},
		{name: "--without", req: with(func(r *compose.Request) { r.Profile, r.Without = "full", []string{"snapshot-controller"} })},
		{name: "arch", req: with(func(r *compose.Request) { r.Arch = releases.AArch64 })},
		{name: "config", req: with(func(r *compose.Request) { r.Config = cfg })},
		{name: "other config value", req: with(func(r *compose.Request) { r.Config = cfg2 })},
		{name: "lvmd", req: with(func(r *compose.Request) { r.Lvmd = lvmd("rhel") })},
		{name: "other lvmd", req: with(func(r *compose.Request) { r.Lvmd = lvmd("data") })},
		{name: "other distro", req: with(func(r *compose.Request) { r.Distro = "rhel-10.2" }), opts: assemble.Options{Bootc: true}},
		{name: "bootc base", req: with(func(r *compose.Request) { r.BootcBase = "registry.example.com/my/bootc:1" }), opts: assemble.Options{Bootc: true}},
		{name: "--bootc", opts: assemble.Options{Bootc: true}},
		{name: "--bootc-images pull", opts: assemble.Options{Bootc: true, BootcImages: "pull"}},
		{name: "image type", opts: assemble.Options{ImageType: "edge-container"}},
		{name: "pull secret", dev: &registry.Options{PullSecret: assembletest.PullSecret(t, "quay.io")}},
		{name: "mirror registry", dev: &registry.Options{Mirror: "mirror.example.com:5000/ms"}},
		{name: "other mirror prefix", dev: &registry.Options{Mirror: "mirror.example.com:5000/other"}},
		{name: "mirror insecure", dev: &registry.Options{Mirror: "mirror.example.com:5000/ms", MirrorInsecure: true}},
		{name: "mirror CA", dev: &registry.Options{Mirror: "mirror.example.com:5000/ms", MirrorCA: ca}},
		{name: "upgrade checked", req: with(func(r *compose.Request) { r.UpgradeFrom = semver.MustParse("4.22.0") })},
		{name: "--kickstart", opts: assemble.Options{Installer: assemble.InstallerOptions{Kickstart: true, OSTree: ostree}}},
		{name: "--kickstart, other --ostree-url", opts: assemble.Options{Installer: assemble.InstallerOptions{Kickstart: true, OSTree: &blueprints.OSTreeOptions{URL: "http://other.example.com/repo"}}}},
		{name: "--kickstart --user", opts: assemble.Options{Installer: assemble.InstallerOptions{Kickstart: true, OSTree: ostree, User: user("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGVkZ2Uta2V5LW9uZS1mb3ItdGVzdHMtb25seS0xMjM0 a")}}},
		{name: "--kickstart --user, other key", opts: assemble.Options{Installer: assemble.InstallerOptions{Kickstart: true, OSTree: ostree, User: user("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGVkZ2Uta2V5LXR3by1mb3ItdGVzdHMtb25seS01Njc4OTA b")}}},
		{name: "--kickstart --filesystem", opts: assemble.Options{Installer: assemble.InstallerOptions{Kickstart: true, OSTree: ostree, Filesystems: []installer.Filesystem{{Mount: "/", MinSize: 20 << 30}}}}},
		{name: "--firewall-port", inst: &installer.Inputs{FirewallPorts: []string{"8443:tcp"}}},
		{name: "--kickstart, an --ostree-ref of its own", opts: assemble.Options{Installer: assemble.InstallerOptions{Kickstart: true, OSTree: &blueprints.OSTreeOptions{URL: "http://edge.example.com/repo", Ref: "edge/microshift"}}}},
		{name: "--bib --filesystem /=10GiB (bootc-image-builder's config carries it)", opts: assemble.Options{Bootc: true, Installer: assemble.InstallerOptions{BIB: true, Filesystems: []installer.Filesystem{{Mount: "/", MinSize: installer.DefaultRootSize}}}}},
		{name: "--ca-trust", inst: &installer.Inputs{CATrust: []string{ca}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, r, q := cat, rel, base
			if tc.cat != nil {
				c = tc.cat
			}
			if tc.rel != nil {
				r = tc.rel
			}
			if tc.req.Profile != "" {
				q = tc.req
			}
			got := buildIDWith(t, c, r, q, tc.dev, tc.inst, tc.opts)
			if prev, dup := seen[got]; dup {
				t.Errorf("ID %s is the ID of %s too", got, prev)
			}
			seen[got] = tc.name
		})
	}
}

func defaultCatalogNoOverlay(t *testing.T) *components.Catalog {
	t.Helper()
	cat, err := components.Load("")
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// TestNewerRelease: a release newer than the knowledge data builds with the
// newest known release's rules, a warning naming them and release.rules in
// the lock; StrictRelease refuses it.
func TestNewerRelease(t *testing.T) {
	emb := assembletest.Release(t, "5.1")
	dir := releaseDir(t, emb, func(_ string, data []byte) []byte {
		return []byte(regexp.MustCompile(`"base": "5\.[01]\.[^"]*"`).ReplaceAllString(string(data), `"base": "5.2.0-0.nightly-2027-01-01-000000"`))
	})
	rel := loadReleaseDir(t, dir)
	if rel.Stream() != "5.2" {
		t.Fatalf("fixture is release %s, want 5.2", rel.Stream())
	}
	req := compose.Request{Profile: "full", Arch: releases.X86_64}
	p := assembletest.Plan(t, assembletest.Catalog(t), rel, req)
	if p.Release.Rules != "5.1" || p.Release.Stream != "5.2" {
		t.Errorf("release stream %q, rules %q; want 5.2 with the rules of 5.1", p.Release.Stream, p.Release.Rules)
	}
	warned := false
	for _, w := range p.Warnings {
		warned = warned || strings.HasPrefix(w, "release 5.2 is newer than the releases microshift-compose knows (the newest is 5.1): built assuming 5.1's rules: ")
	}
	if !warned {
		t.Errorf("no warning naming the rules applied in %q", p.Warnings)
	}
	lock := string(assembletest.File(t, assembletest.Build(t, p, assemble.Options{}), output.LockFile))
	if !strings.Contains(lock, `"rules": "5.1"`) {
		t.Errorf("lock does not record the rules applied:\n%s", lock)
	}
	if known := assembletest.Plan(t, assembletest.Catalog(t), emb, req); known.Release.Rules != "5.1" || len(known.Warnings) != len(p.Warnings)-1 {
		t.Errorf("known release 5.1: rules %q, warnings %q", known.Release.Rules, known.Warnings)
	}

	req.StrictRelease = true
	_, err := assemble.Plan(context.Background(), assembletest.Catalog(t), rel, req)
	if !errors.Is(err, compose.ErrNewerRelease) || !strings.Contains(err.Error(), "the newest is 5.1") {
		t.Errorf("Resolve(StrictRelease, 5.2) = %v, want ErrNewerRelease naming 5.1", err)
	}
	if _, err := assemble.Plan(context.Background(), assembletest.Catalog(t), emb, req); err != nil {
		t.Errorf("Resolve(StrictRelease, 5.1) = %v", err)
	}
}
