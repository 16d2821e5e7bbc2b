package distros

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/internal/usercache"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

var update = flag.Bool("update", false, "rewrite defs.sha256")

// pinnedDistros are the distros a build can target (every distro of every
// embedded release) and the ones --distro suggests.
func pinnedDistros(t *testing.T) []string {
	t.Helper()
	know, err := knowledge.Default()
	if err != nil {
		t.Fatal(err)
	}
	rels, err := releases.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	names := slices.Clone(knownDistros)
	for _, r := range rels {
		facts, err := know.For(r.Version)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range facts.Distros {
			names = append(names, d.Name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// TestReducedDefsPinned: defs.sha256 pins the digest of the reduced
// definitions of every distro a build can target and each of its image
// types, for the definitions this binary embeds (go test ./internal/distros
// -run TestReducedDefsPinned -update after a new osbuild/images).
func TestReducedDefsPinned(t *testing.T) {
	var b strings.Builder
	fmt.Fprintf(&b, "defs %s\n", defsDigest())
	for _, d := range pinnedDistros(t) {
		var types []string
		for _, a := range []releases.Arch{releases.X86_64, releases.AArch64} {
			types = append(types, ImageTypes(d, a)...)
		}
		slices.Sort(types)
		for _, it := range slices.Compact(types) {
			files, err := reducedTree(d, it)
			if err != nil {
				continue // a type osbuild lists but no definition file has
			}
			fmt.Fprintf(&b, "%s  %s/%s\n", treeDigest(files), d, it)
		}
	}
	testutil.Golden(t, "defs.sha256", []byte(b.String()), *update, "go test ./internal/distros -run TestReducedDefsPinned -update")
	if _, ok := pinnedDigest(DefaultDistro, DefaultImageType); !ok {
		t.Errorf("%s/%s is not pinned", DefaultDistro, DefaultImageType)
	}
}

// TestReducedDefsVerified: a cache that is not what the binary pins (a
// definitions file edited, a file added that osbuild would read, a named
// pipe or a symlink in place of a file) is not read: it is written again,
// and osbuild gets the definitions the binary embeds.
func TestReducedDefsVerified(t *testing.T) {
	const distro, it = DefaultDistro, DefaultImageType
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, dir string)
	}{
		{"a definitions file edited", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "rhel-9", "imagetypes.yaml")
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, append(data, "\n# edited\n"...), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"a file added", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "rhel-9", "zz-extra.yaml"), []byte("image_types: {}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"a named pipe in place of the distros file", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "rhel.yaml")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"a symlink in place of the distros file", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "rhel.yaml")
			other := filepath.Join(t.TempDir(), "rhel.yaml")
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(other, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, p); err != nil {
				t.Fatal(err)
			}
		}},
		{"the marker alone", func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, "rhel-9")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(usercache.Env, t.TempDir())
			dir := reducedDefs(distro, it)
			if dir == "" {
				t.Fatal("no reduced definitions")
			}
			want, _ := pinnedDigest(distro, it)
			tc.tamper(t, dir)
			if got, err := cachedDigest(dir); err == nil && got == want {
				t.Fatal("the tampered cache still verifies")
			}
			again := reducedDefs(distro, it)
			if again != dir {
				t.Fatalf("reducedDefs = %q after tampering, want %q written again", again, dir)
			}
			if got, err := cachedDigest(dir); err != nil || got != want {
				t.Errorf("the cache is not the pinned definitions again: %s, %v", got, err)
			}
		})
	}
}
