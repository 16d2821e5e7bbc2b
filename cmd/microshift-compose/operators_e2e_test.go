package main

import (
	"archive/tar"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/operators/operatorstest"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
)

// readmeOperatorsCommands are docs/operators.md's operators section's first block, its
// microshift-compose lines with the catalog named by the test's.
func readmeOperatorsCommands(t *testing.T, catalog string) map[string][]string {
	t.Helper()
	blocks := docBlocks(t, "docs/operators.md", "## Operators from a file-based catalog")
	if len(blocks) == 0 {
		t.Fatal("docs/operators.md's operators section has no code block")
	}
	names := strings.NewReplacer("quay.io/operatorhubio/catalog:latest", catalog)
	out := map[string][]string{}
	for _, prefix := range []string{
		"microshift-compose build --profile full --arch x86_64 --bootc --output out/ ",
		"microshift-compose mirror --lock out/compose.lock.json ",
		"microshift-compose build --profile full --arch x86_64 --bootc --output day2/ ",
		"microshift-compose diff ",
		"microshift-compose mirror --lock day2/compose.lock.json ",
	} {
		rest := docCommand(t, blocks[0], prefix, names)
		out[prefix] = append(strings.Fields(strings.TrimPrefix(prefix, "microshift-compose ")), rest...)
	}
	return out
}

// pushOLMRelease adds to pushRelease's release directory the olm
// component's release file, its images pushed with p.
func pushOLMRelease(t *testing.T, p *testutil.Pusher, dir string) {
	t.Helper()
	images := map[string]string{}
	for i, key := range []string{"operator-lifecycle-manager", "operator-registry", "kube-rbac-proxy"} {
		ref, err := p.PushImage("openshift-release-dev/ocp-v5.0-art-dev", "amd64", []testutil.Layer{testutil.NewLayer(1, 96<<10), testutil.NewLayer(uint64(700+i), 16<<10)})
		if err != nil {
			t.Fatal(err)
		}
		images[key] = ref
	}
	data, err := json.MarshalIndent(map[string]any{"release": map[string]string{"base": "5.0.0-0.test-2026-11-22"}, "images": images}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, filepath.Join(dir, "release-olm-x86_64.json"), data)
}

// archiveEntries reads the names and a file of an archive.
func archiveEntries(t *testing.T, path, want string) (names map[string]bool, data []byte) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names = map[string]bool{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names[h.Name] = true
		if h.Name == want {
			if data, err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	return names, data
}

// TestOperatorsFlow runs docs/operators.md's operators block against a local registry
// holding a catalog index (amd64 and arm64) and the bundle and related
// images it names: day 1 chooses prometheus (which requires etcd) and etcd
// 0.9.4 from the index by tag, and mirrors the plan into the bootc
// Containerfile's layout; the filtered catalog, mirrored to a registry, is
// what opm renders and validates there, with only the two packages; day 2
// reads a newer index (etcd 0.9.6) under the same tag, diff says what
// changed, and the bundle since day 1 carries only the new bundle's and
// operator's layers and the new configs layer.
func TestOperatorsFlow(t *testing.T) {
	t.Parallel() // see parallelE2E
	bin := e2eBinary(t)
	opm, skopeoBin := operatorstest.Opm(t), needTool(t, "skopeo", "skopeo")
	src := testutil.StartRegistry(t)
	p := &testutil.Pusher{Host: src.Host}
	cat1, _ := operatorstest.Pushed(t, p, "0.9.2", "0.9.4")
	idx1, amd1 := operatorstest.PushIndex(t, p, cat1, "latest")
	cmds := readmeOperatorsCommands(t, src.Host+"/example/operator-index:latest")
	// The release's images are the local registry's too.
	rel := pushRelease(t, p, false)
	pushOLMRelease(t, p, rel)
	for _, k := range []string{"microshift-compose build --profile full --arch x86_64 --bootc --output out/ ", "microshift-compose build --profile full --arch x86_64 --bootc --output day2/ "} {
		cmds[k] = append(cmds[k], "--release-dir", rel)
	}
	e := newUserEnv(t)
	work := t.TempDir()
	run, must := e.toolRunner(t, work, bin)
	lock := func(dir string) *plan.Plan {
		t.Helper()
		l, err := lockfile.Load(filepath.Join(work, dir, "compose.lock.json"))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}

	// Day 1: the catalog read from its registry, its tag resolved.
	r := run(cmds["microshift-compose build --profile full --arch x86_64 --bootc --output out/ "]...)
	if r.code != 0 {
		t.Fatalf("build: exit %d: %s", r.code, r.stderr)
	}
	day1 := lock("out")
	ops := day1.Operators
	if ops == nil {
		t.Fatal("the lock has no operators")
	}
	if want := src.Host + "/example/operator-index@" + idx1.Raw().Digest().String(); ops.Catalog.Ref != want || ops.Catalog.Manifest != amd1.Digest() {
		t.Errorf("catalog %+v, want %s (amd64 manifest %s)", ops.Catalog, want, amd1.Digest())
	}
	if !slices.ContainsFunc(day1.Notes, func(n string) bool { return strings.Contains(n, "its tag was read when the plan was made") }) {
		t.Errorf("no note that the catalog's tag was resolved: %q", day1.Notes)
	}
	var got []string
	for _, o := range ops.Packages {
		got = append(got, o.Name+" "+o.Version+" "+o.Namespace+" "+o.InstallMode+" "+o.Approval+" "+strings.Join(o.Deployments, ","))
	}
	if want := []string{"etcd 0.9.4 monitoring OwnNamespace Automatic etcd-operator", "prometheus 0.32.0 monitoring OwnNamespace Automatic prometheus-operator"}; !slices.Equal(got, want) {
		t.Errorf("operators %q\nwant %q", got, want)
	}
	images := string(mustReadFile(t, filepath.Join(work, "out", "images.txt")))
	for _, ref := range []string{ops.Filtered.Ref, ops.Packages[0].Image, ops.Packages[1].Image, ops.Packages[1].RelatedImages[0].Image} {
		if !strings.Contains(images, ref+"\n") {
			t.Errorf("images.txt lacks %s", ref)
		}
	}
	if !strings.Contains(string(mustReadFile(t, filepath.Join(work, "out", "blueprint.toml"))), `source = "`+ops.Filtered.Ref+`"`) {
		t.Error("the blueprint does not embed the filtered catalog")
	}
	check := string(mustReadFile(t, filepath.Join(work, "out", "files/etc/greenboot/check/required.d/50_microshift_compose_components.sh")))
	if !strings.Contains(check, `"monitoring":{"deployments":["etcd-operator","prometheus-operator"]}`) {
		t.Errorf("the greenboot check does not wait for the operators' deployments:\n%s", check)
	}

	// Into the Containerfile's layout: the filtered catalog from the
	// build's layout, the rest from the registry.
	must(cmds["microshift-compose mirror --lock out/compose.lock.json "]...)
	list := string(mustReadFile(t, filepath.Join(work, "out", "images", "image-list.txt")))
	if !strings.Contains(list, ops.Filtered.Ref+",") {
		t.Errorf("out/images lacks the filtered catalog:\n%s", list)
	}
	e.must(t, skopeoBin, "inspect", "--raw", "oci:"+filepath.Join(work, "out", "images")+":"+ops.Filtered.Ref)

	// What the device's OLM reads: the filtered catalog, from a registry,
	// rendered and validated by opm.
	site := testutil.StartRegistry(t)
	must("mirror", "--lock", "out/compose.lock.json", "--quiet", "--to", "docker://"+site.Host+"/mirror")
	filtered := site.Host + "/mirror/" + strings.TrimPrefix(ops.Filtered.Ref, src.Host+"/")
	stream := e.must(t, opm, "render", "--use-http", filtered, "-o", "json")
	var objs []string
	dec := json.NewDecoder(strings.NewReader(stream))
	for dec.More() {
		var o struct {
			Schema, Package, Name string
			Entries               []struct{ Name, Replaces string }
		}
		if err := dec.Decode(&o); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o.Schema+" "+o.Package+" "+o.Name)
		if o.Schema == "olm.channel" && o.Package == "etcd" && (len(o.Entries) != 1 || o.Entries[0].Replaces != "etcdoperator.v0.9.2") {
			t.Errorf("etcd's channel in the filtered catalog: %+v, want etcdoperator.v0.9.4 replacing etcdoperator.v0.9.2", o.Entries)
		}
	}
	sort.Strings(objs)
	if want := []string{"olm.bundle etcd etcdoperator.v0.9.4", "olm.bundle prometheus prometheusoperator.0.32.0", "olm.channel etcd stable", "olm.channel prometheus beta", "olm.package  etcd", "olm.package  prometheus"}; !slices.Equal(objs, want) {
		t.Errorf("opm render of the mirrored filtered catalog: %q\nwant %q", objs, want)
	}
	configs := filepath.Join(t.TempDir(), "configs")
	testutil.WriteFile(t, filepath.Join(configs, "catalog.json"), []byte(stream))
	e.must(t, opm, "validate", configs)

	// Day 2: a newer index under the same tag.
	cat2, im2 := operatorstest.Pushed(t, p, "0.9.2", "0.9.4", "0.9.6")
	operatorstest.PushIndex(t, p, cat2, "latest")
	must(cmds["microshift-compose build --profile full --arch x86_64 --bootc --output day2/ "]...)
	day2 := lock("day2")
	if v := day2.Operators.Packages[0].Version; v != "0.9.6" {
		t.Errorf("day 2's etcd is %s, want the channel's new head 0.9.6", v)
	}
	diff := must(cmds["microshift-compose diff "]...)
	for _, want := range []string{"#### Operators", "- `etcd`: `etcdoperator.v0.9.4` 0.9.4 (stable, namespace monitoring) → `etcdoperator.v0.9.6` 0.9.6 (stable, namespace monitoring)", "- filtered catalog "} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff does not say %q:\n%s", want, diff)
		}
	}
	must(cmds["microshift-compose mirror --lock day2/compose.lock.json "]...)
	names, data := archiveEntries(t, filepath.Join(work, "day2.tar"), airgap.BundleFile)
	var bundle struct {
		Omitted []struct{ Digest string }
	}
	if err := json.Unmarshal(data, &bundle); err != nil {
		t.Fatalf("the bundle's %s: %v", airgap.BundleFile, err)
	}
	omitted := map[string]bool{}
	for _, o := range bundle.Omitted {
		omitted[o.Digest] = true
	}
	blob := func(d string) string { return "blobs/sha256/" + strings.TrimPrefix(d, "sha256:") }
	// Carried: etcd 0.9.6's own layers and the new configs layer.
	layoutIndex := mustReadFile(t, filepath.Join(work, "day2", "operators", "catalog", "index.json"))
	var idx struct{ Manifests []struct{ Digest string } }
	if err := json.Unmarshal(layoutIndex, &idx); err != nil || len(idx.Manifests) != 1 {
		t.Fatalf("day 2's filtered catalog layout index: %s", layoutIndex)
	}
	var man struct{ Layers []struct{ Digest string } }
	if err := json.Unmarshal(mustReadFile(t, filepath.Join(work, "day2", "operators", "catalog", blob(idx.Manifests[0].Digest))), &man); err != nil {
		t.Fatal(err)
	}
	newConfigs := man.Layers[len(man.Layers)-1].Digest
	for _, d := range append([]string{newConfigs}, im2.Own["0.9.6"][0].Desc.Digest.String(), im2.Own["0.9.6"][1].Desc.Digest.String()) {
		if !names[blob(d)] {
			t.Errorf("the day-2 bundle lacks %s, which day 1 did not have", d)
		}
	}
	// Left out: what day 1 holds (the catalog's base layer, the
	// prometheus bundle's and the shared base layers).
	for _, d := range []string{amd1.Layers[0].Desc.Digest.String(), man.Layers[0].Digest} {
		if names[blob(d)] || !omitted[d] {
			t.Errorf("the day-2 bundle carries %s, which day 1 holds (omitted: %v)", d, omitted[d])
		}
	}
	var carried int
	for n := range names {
		if strings.HasPrefix(n, "blobs/sha256/") {
			carried++
		}
	}
	t.Logf("day 2 bundle: %d blobs in it, %d left out", carried, len(bundle.Omitted))
}

// TestMatrixOperators: matrix cells of two arches take the operators of
// one catalog index, each cell the catalog image of its arch (the index
// opened once per arch), and a file's [[operators]] are every cell's.
func TestMatrixOperators(t *testing.T) {
	dir := t.TempDir()
	x := operatorstest.Index{Arches: []string{"amd64", "arm64"}, Images: map[string]operatorstest.Built{}}
	for _, a := range x.Arches {
		x.Images[a] = operatorstest.Image(a, operatorstest.ImageOptions{Files: operatorstest.Sample().PerPackage(false), Cache: true})
	}
	layout := filepath.Join(dir, "catalog")
	operatorstest.WriteLayout(t, layout, operatorstest.SampleRepository+":v1", x.Raw(), x.Images["amd64"], x.Images["arm64"])
	testutil.WriteFile(t, filepath.Join(dir, "fleet.toml"), []byte("profiles = ['minimal']\narches = ['x86_64', 'aarch64']\nallow_red_boot = true\noperator_catalog = 'oci:catalog'\n\n[[operators]]\npackage = 'etcd'\nchannel = 'alpha'\n"))
	out := filepath.Join(dir, "out")
	stdout, stderr, code := runCLI(t, "matrix", "-f", filepath.Join(dir, "fleet.toml"), "--output", out)
	if code != exitOK {
		t.Fatalf("matrix: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for arch, goarch := range map[string]string{"x86_64": "amd64", "aarch64": "arm64"} {
		matches, _ := filepath.Glob(filepath.Join(out, "*-minimal-"+arch, "compose.lock.json"))
		if len(matches) != 1 {
			t.Fatalf("no cell for %s: %v", arch, matches)
		}
		l, err := lockfile.Load(matches[0])
		if err != nil {
			t.Fatal(err)
		}
		if l.Operators == nil || l.Operators.Catalog.Manifest != x.Images[goarch].Digest() || l.Operators.Packages[0].Bundle != "etcdoperator.v0.10.0-rc.1" {
			t.Errorf("cell %s: operators %+v, want etcd's alpha head from the %s image %s", arch, l.Operators, goarch, x.Images[goarch].Digest())
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(matches[0]), "operators", "catalog", "index.json")); err != nil {
			t.Errorf("cell %s has no filtered catalog layout: %v", arch, err)
		}
	}
}
