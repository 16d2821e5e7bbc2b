package lockdiff_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/internal/transfer"
	"github.com/microshift-compose/microshift-compose/lockdiff"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
)

var update = flag.Bool("update", false, "rewrite golden files")

func testdata(elem ...string) string {
	return filepath.Join(append([]string{"..", "testdata"}, elem...)...)
}

func load(t *testing.T, path string) *lockdiff.Lock {
	t.Helper()
	p, err := lockfile.Load(path)
	if err != nil {
		t.Fatalf("LoadLock(%s) = %v", path, err)
	}
	return &lockdiff.Lock{Path: path, Plan: p}
}

func compare(t *testing.T, a, b *lockdiff.Lock) *lockdiff.Diff {
	t.Helper()
	d, err := lockdiff.Compare(a, b)
	if err != nil {
		t.Fatalf("Compare(%s, %s) = %v", a.Path, b.Path, err)
	}
	return d
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, testdata("lockdiff", "golden", name), got, *update, "go test ./lockdiff -update")
}

func asJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The locks `build` writes for the golden builds: profiles, arches and
// releases compared, as a pull request would show them.
func TestCompareGolden(t *testing.T) {
	for _, tc := range []struct{ name, old, new string }{
		{"minimal-to-full-5.0-x86_64", "golden/5.0/minimal-x86_64/compose.lock.json", "golden/5.0/full-x86_64/compose.lock.json"},
		{"full-4.18-to-5.0-aarch64", "golden/4.18/full-aarch64/compose.lock.json", "golden/5.0/full-aarch64/compose.lock.json"},
		// An upgrade MicroShift takes (4.17 -> 4.19, two minors) and a
		// downgrade it refuses.
		{"full-4.17-to-4.19-x86_64", "golden/4.17/full-x86_64/compose.lock.json", "golden/4.19/full-x86_64/compose.lock.json"},
		{"full-4.21-to-4.19-x86_64", "golden/4.21/full-x86_64/compose.lock.json", "golden/4.19/full-x86_64/compose.lock.json"},
		{"manifests-minimal-to-hostpath-5.0-x86_64", "golden/5.0/minimal-x86_64/compose.lock.json", "golden/manifests/5.0-x86_64/compose.lock.json"},
		{"manifests-removed", "golden/manifests/4.19-aarch64/compose.lock.json", "golden/4.19/minimal-aarch64/compose.lock.json"},
		{"footprint-minimal-to-full", "lockdiff/minimal-footprint.lock.json", "lockdiff/full-footprint.lock.json"},
		{"footprint-one-side", "golden/5.0/minimal-x86_64/compose.lock.json", "lockdiff/full-footprint.lock.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := load(t, testdata(strings.Split(tc.old, "/")...))
			b := load(t, testdata(strings.Split(tc.new, "/")...))
			d := compare(t, a, b)
			golden(t, tc.name+".md", d.Markdown())
			golden(t, tc.name+".json", asJSON(t, d))
			if d.Empty() {
				t.Errorf("Compare() is empty")
			}
		})
	}
}

func TestCompareSame(t *testing.T) {
	l := load(t, testdata("golden", "5.0", "full-x86_64", "compose.lock.json"))
	d := compare(t, l, l)
	if !d.Empty() || !strings.HasSuffix(string(d.Markdown()), "\nNo changes.\n") {
		t.Errorf("Compare(l, l):\n%s", d.Markdown())
	}
}

// The fixtures' footprint sections add up the way airgap.Footprint's do.
func TestFootprintFixtures(t *testing.T) {
	for _, name := range []string{"minimal-footprint.lock.json", "full-footprint.lock.json"} {
		fp := load(t, testdata("lockdiff", name)).Plan.Footprint
		if fp == nil {
			t.Fatalf("%s has no footprint section", name)
		}
		sum := fp.SharedBetweenComponents
		for _, c := range fp.Components {
			sum += c.Unique
		}
		if sum != fp.Total.Unique || fp.Total.Compressed < fp.Total.Unique {
			t.Errorf("%s: components' unique + shared = %d, total unique %d, total compressed %d", name, sum, fp.Total.Unique, fp.Total.Compressed)
		}
	}
}

// Locks that differ only in their footprint sections differ; the same
// footprint on both sides is no change.
func TestCompareFootprintOnly(t *testing.T) {
	a := load(t, testdata("lockdiff", "full-footprint.lock.json"))
	if d := compare(t, a, a); !d.Empty() || d.Footprint == nil {
		t.Errorf("Compare(a, a) with a footprint:\n%s", d.Markdown())
	}
	b := load(t, testdata("lockdiff", "full-footprint.lock.json"))
	b.Path = "b.json"
	b.Plan.Footprint.Components[1].Unique += 1 << 20
	b.Plan.Footprint.Total.Unique += 1 << 20
	d := compare(t, a, b)
	if d.Empty() {
		t.Fatalf("Compare() with a changed footprint is empty")
	}
	md := string(d.Markdown())
	if want := "| networking-ovnk | 155.4 MiB | 45.0 MiB → 46.0 MiB (+1.0 MiB) |"; !strings.Contains(md, want) {
		t.Errorf("Markdown() does not have %q:\n%s", want, md)
	}
}

// TestCompareRefusesFootprintSizes: a footprint section edited to sizes
// no build writes (negative, over the bound of any sum, which made the
// differences overflow) is refused naming the lock, the entry and the field.
func TestCompareRefusesFootprintSizes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(l *lockdiff.Lock)
		want   string
	}{
		{"a negative component size", func(l *lockdiff.Lock) { l.Plan.Footprint.Components[0].Compressed = -1 },
			"b.json: footprint: component core: compressed states a size of -1 bytes: size out of range (a size cannot be negative)"},
		{"an image of 2^63-1 bytes", func(l *lockdiff.Lock) { l.Plan.Footprint.Images[0].Compressed = 1<<63 - 1 },
			"states a size of 9223372036854775807 bytes: size out of range (more than the 1 PiB a total may have)"},
		{"a negative total", func(l *lockdiff.Lock) { l.Plan.Footprint.Total.Unique = -1 << 62 },
			"b.json: footprint: total: unique states a size of -4611686018427387904 bytes"},
		{"shared bytes over the bound", func(l *lockdiff.Lock) { l.Plan.Footprint.SharedBetweenComponents = 1<<50 + 1 },
			"b.json: footprint: shared_between_components states a size of 1125899906842625 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := load(t, testdata("lockdiff", "full-footprint.lock.json"))
			b := load(t, testdata("lockdiff", "full-footprint.lock.json"))
			b.Path = "b.json"
			tc.change(b)
			for _, order := range [][2]*lockdiff.Lock{{a, b}, {b, a}} {
				d, err := lockdiff.Compare(order[0], order[1])
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("Compare(%s, %s) = %v, %v\nwant %q", order[0].Path, order[1].Path, d, err, tc.want)
				}
			}
		})
	}
}

// TestMarkdownHostileValues: values of a lock that would break out of a
// code span or hide the rest of a pull request's description (a backtick,
// an HTML comment, <details>, a link) are shown as text.
func TestMarkdownHostileValues(t *testing.T) {
	a := load(t, testdata("lockdiff", "minimal-footprint.lock.json"))
	b := load(t, testdata("lockdiff", "full-footprint.lock.json"))
	hostile := "x`<!-- everything after this is hidden"
	a.Path = "old`<details>.json"
	b.Path = "[new](https://example.com).json"
	b.Plan.Profile = hostile
	b.Plan.Components[len(b.Plan.Components)-1].Name = "<details><summary>click"
	b.Plan.Components[len(b.Plan.Components)-1].Reasons[0].Profile = "``<!--"
	for i := range b.Plan.Packages {
		b.Plan.Packages[i].Version = "1.0 <!-- [link](https://example.com)"
	}
	md := string(compare(t, a, b).Markdown())
	if got := testutil.MarkupOutsideCode(md); got != "" {
		t.Errorf("the Markdown has markup outside code spans at %q:\n%s", got, md)
	}
	for _, want := range []string{"``x`<!-- everything after this is hidden``", "- added `<details><summary>click` (profile \\`\\`\\<!--)", "1.0 \\<!-- \\[link\\](https://example.com)"} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
}

// fakeContents stands in for the manifests of the golden locks' images
// (whose registries the tests cannot reach): every image of a repository
// shares that repository's base layer; its own layer and manifest follow
// from its reference. Sizes follow from the digests, so the golden files
// are stable.
func fakeContents(refs []string, arch string) (map[string]transfer.Image, error) {
	blob := func(s string, scale int64) transfer.Blob {
		sum := sha256.Sum256([]byte(arch + "\x00" + s))
		return transfer.Blob{Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: scale + int64(binary.BigEndian.Uint32(sum[:4])%uint32(scale))}
	}
	out := map[string]transfer.Image{}
	for _, ref := range refs {
		repo, _, _ := strings.Cut(ref, "@")
		repo, _, _ = strings.Cut(repo, ":")
		out[ref] = transfer.Image{
			Manifests: []transfer.Blob{blob("manifest "+ref, 1<<10)},
			Blobs:     []transfer.Blob{blob("base "+repo, 40<<20), blob("layer "+ref, 4<<20)},
		}
	}
	return out, nil
}

// What an update moves, for updates a pull request makes: a profile
// adding components (new repositories: their base layers move), and a
// release (re-digested images: only their own layers move).
func TestTransferGolden(t *testing.T) {
	for _, tc := range []struct{ name, old, new string }{
		{"transfer-minimal-to-full-5.0-x86_64", "golden/5.0/minimal-x86_64/compose.lock.json", "golden/5.0/full-x86_64/compose.lock.json"},
		{"transfer-full-4.18-to-5.0-aarch64", "golden/4.18/full-aarch64/compose.lock.json", "golden/5.0/full-aarch64/compose.lock.json"},
		{"transfer-same", "golden/5.0/full-x86_64/compose.lock.json", "golden/5.0/full-x86_64/compose.lock.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := load(t, testdata(strings.Split(tc.old, "/")...))
			b := load(t, testdata(strings.Split(tc.new, "/")...))
			d := compare(t, a, b)
			if err := d.AddTransfer(a, b, fakeContents); err != nil {
				t.Fatal(err)
			}
			if d.Transfer == nil {
				t.Fatal("AddTransfer() added nothing")
			}
			golden(t, tc.name+".md", d.Markdown())
			golden(t, tc.name+".json", asJSON(t, d.Transfer))
		})
	}
}
