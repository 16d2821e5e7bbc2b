package airgap_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

const testPartSize = 40 << 10

// parts reads the parts of a split archive, in order.
func parts(t *testing.T, file string) [][]byte {
	t.Helper()
	set, err := airgap.ParsePartSet("list", file, mustRead(t, file+airgap.PartsSuffix))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for i := range set.Parts {
		out = append(out, mustRead(t, airgap.PartName(file, i+1)))
	}
	return out
}

// TestSplitArchive writes an archive in parts and checks that they join
// into the one archive byte for byte, read back from any of their names,
// resume writing only what is missing, re-cut and join straight from a
// layout, and carry a differential bundle.
func TestSplitArchive(t *testing.T) {
	reg := testutil.StartRegistry(t)
	f := newFixture(t, reg.Host)
	work := t.TempDir()
	one := filepath.Join(work, "one.tar")
	if _, err := airgap.Mirror(ctx, f.refs, archiveTarget(t, one), opts(releases.X86_64, nil)); err != nil {
		t.Fatal(err)
	}
	whole := mustRead(t, one)
	split := filepath.Join(work, "split.tar")
	o := opts(releases.X86_64, nil)
	o.PartSize = testPartSize
	sum, err := airgap.Mirror(ctx, f.refs, archiveTarget(t, split), o)
	if err != nil {
		t.Fatalf("Mirror(--max-size) = %v", err)
	}
	n := (len(whole) + testPartSize - 1) / testPartSize
	if n < 4 {
		t.Fatalf("the fixture makes %d parts; the test needs at least 4", n)
	}
	if sum.Parts != n || sum.PartsWritten != n || sum.ArchiveBytes != int64(len(whole)) {
		t.Errorf("Mirror(--max-size) = %+v; want %d parts, all written, %d bytes", sum, n, len(whole))
	}
	ps := parts(t, split)
	if !bytes.Equal(bytes.Join(ps, nil), whole) {
		t.Fatalf("the %d parts do not join into the one archive", len(ps))
	}
	for i, p := range ps[:n-1] {
		if len(p) != testPartSize {
			t.Errorf("part %d has %d bytes, want %d", i+1, len(p), testPartSize)
		}
	}
	if _, err := os.Stat(split); !os.IsNotExist(err) {
		t.Errorf("a split archive wrote %s itself: %v", split, err)
	}

	// Read by the set's name, its list or its first part.
	for _, name := range []string{split, split + airgap.PartsSuffix, airgap.PartName(split, 1)} {
		images, err := airgap.LayoutImages(archiveTarget(t, name), registryclient.Options{})
		if err != nil || !slices.Equal(images, f.refs) {
			t.Errorf("LayoutImages(%s) = %v, %v", filepath.Base(name), images, err)
		}
	}
	ro := opts("", nil)
	ro.From = archiveTarget(t, airgap.PartName(split, 1))
	if sum, err := airgap.Mirror(ctx, f.refs, airgap.OCI(filepath.Join(work, "copy")), ro); err != nil || sum.Images != 4 {
		t.Errorf("Mirror(--from the first part) = %+v, %v", sum, err)
	}

	// A rerun writes nothing; one with a part lost writes that part, and
	// one after a run killed before the last parts and the list writes
	// those.
	sum, err = airgap.Mirror(ctx, f.refs, archiveTarget(t, split), o)
	if err != nil || sum.PartsWritten != 0 || sum.Fetched != 0 {
		t.Errorf("rerun = %+v, %v; want no part written, nothing fetched", sum, err)
	}
	if err := os.Remove(airgap.PartName(split, 3)); err != nil {
		t.Fatal(err)
	}
	sum, err = airgap.Mirror(ctx, f.refs, archiveTarget(t, split), o)
	if err != nil || sum.PartsWritten != 1 {
		t.Errorf("rerun with part 3 missing = %+v, %v; want 1 part written", sum, err)
	}
	for i := 3; i <= n; i++ {
		os.Remove(airgap.PartName(split, i))
	}
	os.Remove(split + airgap.PartsSuffix)
	sum, err = airgap.Mirror(ctx, f.refs, archiveTarget(t, split), o)
	if err != nil || sum.PartsWritten != n-2 {
		t.Errorf("rerun with parts 3 to %d and the list missing = %+v, %v; want %d parts written", n, sum, err, n-2)
	}
	if !bytes.Equal(bytes.Join(parts(t, split), nil), whole) {
		t.Errorf("after the reruns, the parts do not join into the archive")
	}

	// Straight from a layout: re-cut the one archive, and join the parts.
	recut := filepath.Join(work, "recut.tar")
	co := opts("", nil)
	co.From = archiveTarget(t, one)
	co.PartSize = testPartSize
	if _, err := airgap.Mirror(ctx, f.refs, archiveTarget(t, recut), co); err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(parts(t, recut), ps, bytes.Equal) {
		t.Errorf("cutting the archive gives other parts than writing them")
	}
	joined := filepath.Join(work, "joined.tar")
	jo := opts("", nil)
	jo.From = archiveTarget(t, airgap.PartName(split, 1))
	if _, err := airgap.Mirror(ctx, f.refs, archiveTarget(t, joined), jo); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustRead(t, joined), whole) {
		t.Errorf("joining the parts does not give the archive back")
	}
	skopeo(t, "inspect", "oci-archive:"+joined+":"+f.byName["router"])

	// One name, one kind: parts where one file is, one file where parts are.
	o1 := opts(releases.X86_64, nil)
	if _, err := airgap.Mirror(ctx, f.refs, archiveTarget(t, split), o1); err == nil || !strings.Contains(err.Error(), "split archive") {
		t.Errorf("one archive over a split one = %v", err)
	}
	if _, err := airgap.Mirror(ctx, f.refs, archiveTarget(t, one), o); err == nil || !strings.Contains(err.Error(), "exists as one file") {
		t.Errorf("parts over one archive = %v", err)
	}

	t.Run("differential", func(t *testing.T) {
		r2 := pushRelease2(t, reg.Host)
		bo := opts(releases.X86_64, nil)
		bo.PartSize = testPartSize
		bo.Bundle = &airgap.BundleOptions{Since: []airgap.Base{{Name: "one", Layout: archiveTarget(t, one)}}}
		bundle := filepath.Join(t.TempDir(), "day2.tar")
		if _, err := airgap.Mirror(ctx, r2.refs, archiveTarget(t, bundle), bo); err != nil {
			t.Fatal(err)
		}
		site := filepath.Join(t.TempDir(), "site")
		so := opts("", nil)
		so.From = archiveTarget(t, one)
		if _, err := airgap.Mirror(ctx, f.refs, airgap.OCI(site), so); err != nil {
			t.Fatal(err)
		}
		so.From = archiveTarget(t, airgap.PartName(bundle, 1))
		sum, err := airgap.Mirror(ctx, r2.refs, airgap.OCI(site), so)
		if err != nil || sum.Bundle != airgap.BundleApplied {
			t.Fatalf("applying the split bundle = %+v, %v", sum, err)
		}
		// Joined, the bundle stays a bundle.
		jb := filepath.Join(t.TempDir(), "day2-joined.tar")
		jo := opts("", nil)
		jo.From = archiveTarget(t, bundle)
		if _, err := airgap.Mirror(ctx, r2.refs, archiveTarget(t, jb), jo); err != nil {
			t.Fatalf("joining the split bundle = %v", err)
		}
		if !bytes.Equal(mustRead(t, jb), bytes.Join(parts(t, bundle), nil)) {
			t.Errorf("the joined bundle is not its parts joined")
		}
	})
}

// TestSplitArchiveDamage: a missing, reordered, truncated or corrupt part,
// a missing list and a later part named are each refused in one line
// naming the part, before anything is read or written.
func TestSplitArchiveDamage(t *testing.T) {
	reg := testutil.StartRegistry(t)
	f := newFixture(t, reg.Host)
	src := filepath.Join(t.TempDir(), "set")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	o := opts(releases.X86_64, nil)
	o.PartSize = testPartSize
	if _, err := airgap.Mirror(ctx, f.refs, archiveTarget(t, filepath.Join(src, "images.tar")), o); err != nil {
		t.Fatal(err)
	}
	n := len(parts(t, filepath.Join(src, "images.tar")))
	part := func(dir string, i int) string { return airgap.PartName(filepath.Join(dir, "images.tar"), i) }
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		read   int // the part named (0: the set's name)
		want   string
	}{
		{"missing part", func(t *testing.T, dir string) { os.Remove(part(dir, 3)) }, 0,
			fmt.Sprintf("part 3 of %d (images.tar.003) is missing", n)},
		{"reordered parts", func(t *testing.T, dir string) {
			a, b := mustRead(t, part(dir, 2)), mustRead(t, part(dir, 3))
			os.WriteFile(part(dir, 2), b, 0o644)
			os.WriteFile(part(dir, 3), a, 0o644)
		}, 1, fmt.Sprintf("part 2 of %d (images.tar.002) holds what part 3 (images.tar.003) should: the parts are out of order", n)},
		{"truncated part", func(t *testing.T, dir string) { os.Truncate(part(dir, 2), 1000) }, 1,
			fmt.Sprintf("part 2 of %d (images.tar.002) is truncated: 1000 bytes, the list says %d", n, testPartSize)},
		{"corrupt part", func(t *testing.T, dir string) {
			b := mustRead(t, part(dir, 2))
			b[100] ^= 0xff
			os.WriteFile(part(dir, 2), b, 0o644)
		}, 0, fmt.Sprintf("part 2 of %d (images.tar.002) is corrupt", n)},
		{"list missing", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "images.tar"+airgap.PartsSuffix)) }, 1,
			"it is part 1 of a split archive whose list images.tar.parts.json is missing"},
		{"a later part named", func(t *testing.T, dir string) {}, 2, "it is part 2 of the split archive"},
		{"list for another archive", func(t *testing.T, dir string) {
			list := filepath.Join(dir, "images.tar"+airgap.PartsSuffix)
			os.WriteFile(list, bytes.Replace(mustRead(t, list), []byte(`"archive": "images.tar"`), []byte(`"archive": "other.tar"`), 1), 0o644)
		}, 0, `it lists the parts of "other.tar", not of "images.tar"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "set")
			if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			tc.damage(t, dir)
			name := filepath.Join(dir, "images.tar")
			if tc.read > 0 {
				name = part(dir, tc.read)
			}
			ro := opts("", nil)
			ro.From = archiveTarget(t, name)
			out := filepath.Join(t.TempDir(), "out")
			_, err := airgap.Mirror(ctx, f.refs, airgap.OCI(out), ro)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Mirror(--from a set with a %s) = %v; want one line with %q", tc.name, err, tc.want)
			}
			if tc.read != 2 && !errors.Is(err, airgap.ErrBadParts) {
				t.Errorf("the error does not wrap ErrBadParts: %v", err)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused set created the destination: %v", err)
			}
		})
	}
}

// FuzzParsePartSet: any list parses or is refused with an error, never a
// panic; one that parses is consistent.
func FuzzParsePartSet(f *testing.F) {
	f.Add([]byte(`{"schema":"microshift-compose/archive-parts/v1","archive":"a.tar","size":5,"part_size":3,"parts":[{"name":"a.tar.001","size":3,"sha256":"` + strings.Repeat("a", 64) + `"},{"name":"a.tar.002","size":2,"sha256":"` + strings.Repeat("b", 64) + `"}]}`))
	f.Add([]byte(`{"schema":"x"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := airgap.ParsePartSet("list", "dir/a.tar", data)
		if err != nil {
			return
		}
		var total int64
		for i, p := range s.Parts {
			if p.Name != filepath.Base(airgap.PartName("a.tar", i+1)) || p.Size <= 0 || p.Size > s.PartSize {
				t.Fatalf("accepted part %d: %+v", i, p)
			}
			total += p.Size
		}
		if total != s.Size {
			t.Fatalf("accepted a set of %d bytes whose parts add up to %d", s.Size, total)
		}
	})
}

// FuzzParseBundle: any bundle file parses or is refused, never a panic;
// one that parses is sorted and adds up.
func FuzzParseBundle(f *testing.F) {
	d := "sha256:" + strings.Repeat("a", 64)
	f.Add([]byte(`{"schema":"microshift-compose/bundle/v1","arch":"x86_64","compositions":[],"images":[{"ref":"quay.io/a/b@` + d + `","digest":"` + d + `"}],"base":[{"images":1}],"omitted":[{"digest":"` + d + `","size":3,"in":"quay.io/a/b@` + d + `"}],"omitted_bytes":3}`))
	f.Add([]byte(`{"schema":"microshift-compose/bundle/v1"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := airgap.ParseBundle("bundle", data)
		if err != nil {
			return
		}
		var total int64
		for i, o := range b.Omitted {
			if i > 0 && b.Omitted[i-1].Digest >= o.Digest {
				t.Fatalf("accepted unsorted omitted blobs")
			}
			total += o.Size
		}
		if total != b.OmittedBytes || len(b.Images) == 0 || len(b.Base) == 0 {
			t.Fatalf("accepted an inconsistent bundle: %+v", b)
		}
	})
}
