package distros

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osbuild/blueprint/pkg/blueprint"
	"github.com/osbuild/images/pkg/container"
	"github.com/osbuild/images/pkg/depsolvednf"
	"github.com/osbuild/images/pkg/distro"
	"github.com/osbuild/images/pkg/manifest"
	"github.com/osbuild/images/pkg/ostree"
	"github.com/osbuild/images/pkg/rpmmd"
	yaml "go.yaml.in/yaml/v3"

	"github.com/microshift-compose/microshift-compose/internal/usercache"
	"github.com/microshift-compose/microshift-compose/releases"
)

// manifestJSON generates and serializes the osbuild manifest of bp for an
// image type (with empty package sets and made-up container and commit
// specs: no network), the whole of what osbuild makes of its definitions.
func manifestJSON(t *testing.T, it distro.ImageType, bp *blueprint.Blueprint) string {
	t.Helper()
	opts := distro.ImageOptions{}
	if it.OSTreeRef() != "" {
		opts.OSTree = &ostree.ImageOptions{}
	}
	seed := int64(0)
	mf, warnings, err := it.Manifest(bp, opts, []rpmmd.RepoConfig{{Id: "r", BaseURLs: []string{"https://example.com/repo"}}}, &seed)
	if err != nil {
		t.Fatalf("Manifest() = %v", err)
	}
	chains, err := mf.GetPackageSetChains()
	if err != nil {
		t.Fatal(err)
	}
	// osbuild gathers a platform's package lists from a map: their order
	// varies from run to run, so compare them as sets.
	for _, chain := range chains {
		for i := range chain {
			slices.Sort(chain[i].Include)
			chain[i].Include = slices.Compact(chain[i].Include)
			slices.Sort(chain[i].Exclude)
		}
	}
	// Made-up depsolve results: each package a set names, and the kernel
	// and the tools the pipelines look for, as if resolved.
	repo := &rpmmd.RepoConfig{Id: "r", BaseURLs: []string{"https://example.com/repo"}}
	sets := map[string]depsolvednf.DepsolveResult{}
	for name, chain := range chains {
		var txs depsolvednf.TransactionList
		for _, set := range chain {
			var pl rpmmd.PackageList
			for _, n := range append(set.Include, "kernel", "kernel-rt", "dracut", "ostree", "rpm-ostree", "grub2-tools", "selinux-policy-targeted", "python3", "lorax-templates-generic") {
				pl = append(pl, rpmmd.Package{Name: n, Version: "1", Release: "1", Arch: "noarch", RemoteLocations: []string{"https://example.com/repo/" + n + ".rpm"},
					Checksum: rpmmd.Checksum{Type: "sha256", Value: strings.Repeat("4", 64)}, RepoID: "r", Repo: repo})
			}
			txs = append(txs, pl)
		}
		sets[name] = depsolvednf.DepsolveResult{Transactions: txs, Repos: []rpmmd.RepoConfig{*repo}}
	}
	containers := map[string][]container.Spec{}
	for name, srcs := range mf.GetContainerSourceSpecs() {
		for _, s := range srcs {
			containers[name] = append(containers[name], container.Spec{Source: s.Source, Digest: "sha256:" + strings.Repeat("1", 64),
				ImageID: "sha256:" + strings.Repeat("2", 64), LocalName: s.Name})
		}
	}
	commits := map[string][]ostree.CommitSpec{}
	for name, srcs := range mf.GetOSTreeSourceSpecs() {
		for _, s := range srcs {
			commits[name] = append(commits[name], ostree.CommitSpec{Ref: s.Ref, URL: s.URL, Checksum: strings.Repeat("3", 64)})
		}
	}
	out, err := mf.Serialize(sets, containers, commits, nil, &manifest.SerializeOptions{})
	if err != nil {
		t.Fatalf("Serialize() = %v", err)
	}
	chainsJSON, _ := json.Marshal(chains)
	return fmt.Sprintf("warnings %q\nchains %s\nmanifest %s", warnings, chainsJSON, out)
}

// The definitions reduced to one image type make osbuild generate exactly
// the manifest the full definitions do.
func TestReducedDefsSameManifest(t *testing.T) {
	t.Setenv(usercache.Env, t.TempDir())
	bp := &blueprint.Blueprint{
		Name: "t", Version: "1.0.0",
		Packages:   []blueprint.Package{{Name: "microshift", Version: "5.0.*"}, {Name: "lvm2"}},
		Containers: []blueprint.Container{{Source: "quay.io/x/y@sha256:" + strings.Repeat("a", 64)}},
		Customizations: &blueprint.Customizations{
			Services: &blueprint.ServicesCustomization{Enabled: []string{"microshift"}},
			Firewall: &blueprint.FirewallCustomization{Ports: []string{"6443:tcp"}},
			Files:    []blueprint.FileCustomization{{Path: "/etc/microshift/config.yaml", Mode: "0644", Data: "dns: {}\n"}},
		},
	}
	for _, tc := range []struct{ distro, imageType string }{
		{"rhel-9.2", "edge-commit"}, {"rhel-9.4", "edge-commit"}, {"rhel-9.6", "edge-commit"},
		{"rhel-9.8", "edge-commit"}, {"rhel-9.8", "edge-container"}, {"rhel-9.6", "image-installer"},
		// centos-9 takes anchors from the rhel-9 entry; rhel-10 is in the
		// same file as other families; rhel-96 is normalised by "match".
		{"centos-9", "edge-commit"}, {"rhel-10.0", "image-installer"}, {"rhel-96", "edge-commit"},
	} {
		for _, arch := range releases.Arches {
			t.Run(tc.distro+"/"+tc.imageType+"/"+string(arch), func(t *testing.T) {
				dir := reducedDefs(tc.distro, tc.imageType)
				if _, pinned := pinnedDigest(tc.distro, tc.imageType); !pinned && dir == "" {
					// No cache for a name the binary pins no digest
					// for; its reduction is compared all the same.
					files, err := reducedTree(tc.distro, tc.imageType)
					if err != nil {
						t.Fatal(err)
					}
					dir = filepath.Join(t.TempDir(), "defs")
					if err := writeReducedDefs(dir, tc.distro, tc.imageType, treeDigest(files)); err != nil {
						t.Fatal(err)
					}
				}
				if dir == "" {
					t.Fatal("no reduced definitions were written")
				}
				var reduced distro.Distro
				withDefs(dir, func() { reduced = factory().GetDistro(tc.distro) })
				full := factory().GetDistro(tc.distro)
				if reduced == nil || full == nil {
					t.Fatalf("GetDistro(%s) = %v (reduced), %v (full)", tc.distro, reduced, full)
				}
				ra, _ := reduced.GetArch(string(arch))
				fa, _ := full.GetArch(string(arch))
				rit, err := ra.GetImageType(tc.imageType)
				if err != nil {
					t.Fatalf("reduced GetImageType() = %v", err)
				}
				fit, err := fa.GetImageType(tc.imageType)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := manifestJSON(t, rit, bp), manifestJSON(t, fit, bp); got != want {
					i := 0
					for i < len(got) && i < len(want) && got[i] == want[i] {
						i++
					}
					t.Errorf("reduced definitions give another manifest, from byte %d:\n got …%.300s\nwant …%.300s", i, got[max(0, i-100):], want[max(0, i-100):])
				}
				if types := ra.ListImageTypes(); len(types) >= len(fa.ListImageTypes()) || !slices.Contains(types, tc.imageType) {
					t.Errorf("reduced definitions have image types %v, want %s and fewer than all", types, tc.imageType)
				}
			})
		}
	}
}

func TestReduceDistros(t *testing.T) {
	doc := `distros:
  - &first
    name: first-1
    packages: &pkgs [a, b]
    defs_path: one
  - &second
    name: "second-{{.MajorVersion}}"
    match: 'second-[0-9]+'
    defs_path: two
  - name: wanted-1
    match: 'wanted-[0-9]+'
    packages: *pkgs
    defs_path: three
  - <<: *second
    name: also-wanted-1
    match: 'wanted-1'
  - <<: *second
    name: merged-1
    match: 'merged-1'
other: &other {x: 1}
`
	names := func(out []byte) []string {
		t.Helper()
		var got struct {
			Distros []struct{ Name string }
			Other   map[string]int
		}
		if err := yaml.Unmarshal(out, &got); err != nil {
			t.Fatalf("the reduced document does not parse: %v\n%s", err, out)
		}
		if got.Other["x"] != 1 {
			t.Errorf("lost the other top-level keys:\n%s", out)
		}
		var n []string
		for _, d := range got.Distros {
			n = append(n, d.Name)
		}
		return n
	}
	for _, tc := range []struct {
		name     string
		taken    bool
		want     []string
		wantHas  bool
		defsPath string
	}{
		// the first entry whose whole name matches wins; the entry
		// defining the anchor it uses stays, the rest go; its
		// defs_path (merged in too) names its image types' directory
		{"wanted-1", false, []string{"first-1", "wanted-1"}, true, "three"},
		{"first-1", false, []string{"first-1"}, true, "one"},
		{"second-7", false, []string{"second-{{.MajorVersion}}"}, true, "two"},
		{"merged-1", false, []string{"second-{{.MajorVersion}}", "merged-1"}, true, "two"},
		{"wanted-12x", false, nil, false, ""}, // "match" is anchored
		{"absent", false, nil, false, ""},
		{"wanted-1", true, nil, false, ""}, // an earlier file had it
	} {
		out, defsPath, has, err := reduceDistros([]byte(doc), tc.name, tc.taken)
		if err != nil {
			t.Fatalf("reduceDistros(%q) = %v", tc.name, err)
		}
		if got := names(out); has != tc.wantHas || !slices.Equal(got, tc.want) || defsPath != tc.defsPath {
			t.Errorf("reduceDistros(%q, taken %v) = %v, defs_path %q, has %v; want %v, %q, %v", tc.name, tc.taken, got, defsPath, has, tc.want, tc.defsPath, tc.wantHas)
		}
	}
	for _, bad := range []string{"[]", "distros: {}", "x: 1", "distros:\n  - match: '('\n"} {
		if _, _, _, err := reduceDistros([]byte(bad), "wanted-1", false); err == nil {
			t.Errorf("reduceDistros(%q) = no error, want one (the full definitions are used then)", bad)
		}
	}
}

func TestReduceImageTypes(t *testing.T) {
	doc := `.common:
  unused: &unused {a: 1}
  shared: &shared
    x: 1
  chained: &chained
    <<: *shared
    y: 2
image_types:
  base: &base
    z: 3
  wanted:
    <<: *base
    c: *chained
  other:
    o: *unused
`
	out, has, err := reduceImageTypes([]byte(doc), "wanted")
	if err != nil || !has {
		t.Fatalf("reduceImageTypes() = %v, %v", has, err)
	}
	var got map[string]map[string]any
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatalf("the reduced document does not parse: %v\n%s", err, out)
	}
	if _, ok := got["image_types"]["other"]; ok {
		t.Errorf("kept the image type \"other\":\n%s", out)
	}
	if _, ok := got["image_types"]["base"]; !ok {
		t.Errorf("dropped \"base\", whose anchor \"wanted\" uses:\n%s", out)
	}
	if _, ok := got[".common"]["unused"]; ok {
		t.Errorf("kept .common.unused, which nothing kept uses:\n%s", out)
	}
	for _, k := range []string{"shared", "chained"} {
		if _, ok := got[".common"][k]; !ok {
			t.Errorf("dropped .common.%s:\n%s", k, out)
		}
	}
	wanted := got["image_types"]["wanted"].(map[string]any)
	if wanted["z"] != 3 || wanted["c"].(map[string]any)["x"] != 1 {
		t.Errorf("wanted = %v, want its merged and aliased values", wanted)
	}
	if _, has, _ := reduceImageTypes([]byte(doc), "absent"); has {
		t.Errorf("reduceImageTypes(absent) says it has it")
	}
}

// A broken cache directory (not writable) falls back to the full
// definitions: validation still works.
func TestReducedDefsUnwritableCache(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "osbuild-defs"), []byte("a file in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(usercache.Env, root)
	if dir := reducedDefs("rhel-9.6", "edge-commit"); dir != "" {
		t.Errorf("reducedDefs() = %q, want none", dir)
	}
	if _, err := ImageType("rhel-9.6", "edge-commit", releases.X86_64); err != nil {
		t.Errorf("ImageType() = %v", err)
	}
}

// BenchmarkDistroLookup is what a build pays osbuild/images for its image
// type, once per process: the distro with every image type defined (what
// osbuild reads by default) and from the reduced definitions.
func BenchmarkDistroLookup(b *testing.B) {
	b.Setenv(usercache.Env, b.TempDir())
	const name, imageType = DefaultDistro, DefaultImageType
	lookup := func(b *testing.B) {
		d := factory().GetDistro(name)
		if d == nil {
			b.Fatalf("GetDistro(%s) = nil", name)
		}
		a, err := d.GetArch(string(releases.X86_64))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := a.GetImageType(imageType); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			lookup(b)
		}
	})
	b.Run("reduced", func(b *testing.B) {
		dir := reducedDefs(name, imageType)
		if dir == "" {
			b.Fatal("no reduced definitions")
		}
		b.ReportAllocs()
		for b.Loop() {
			withDefs(dir, func() { lookup(b) })
		}
	})
}
