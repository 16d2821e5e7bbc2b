package airgap

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCheckLayoutVersion: whatever an oci-layout file holds, the check
// accepts exactly a JSON object whose imageLayoutVersion is "1.0.0", and
// never panics.
func FuzzCheckLayoutVersion(f *testing.F) {
	for _, s := range []string{layoutVersion, `{"imageLayoutVersion":"2.0.0"}`, `{}`, `[]`, `null`, `{"imageLayoutVersion":1}`, "", `{"imageLayoutVersion":"1.0.0","x":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := checkLayoutVersion(data)
		if err != nil && !errors.Is(err, ErrLayoutVersion) {
			t.Fatalf("checkLayoutVersion(%q) = %v, not ErrLayoutVersion", data, err)
		}
		if err == nil && !strings.Contains(string(data), "1.0.0") {
			t.Fatalf("checkLayoutVersion(%q) accepted a file without 1.0.0", data)
		}
	})
}

func TestCheckLayoutVersion(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{layoutVersion, ""},
		{`{"imageLayoutVersion":"1.0.0","annotations":{}}`, ""},
		{`{"imageLayoutVersion":"1.1.0"}`, `imageLayoutVersion "1.1.0", which this version does not read`},
		{`{"imageLayoutVersion":null}`, "has no imageLayoutVersion"},
		{`{}`, "has no imageLayoutVersion"},
		{`"1.0.0"`, "is not a JSON object"},
		{strings.Repeat(" ", maxLayoutFile+1), "larger than 4096 bytes"},
	} {
		err := checkLayoutVersion([]byte(tc.data))
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("checkLayoutVersion(%.40q) = %v, want %q", tc.data, err, tc.want)
		}
	}
}

// FuzzAttachmentSubject: a tag names a subject only as sha256-<64 hex>
// with cosign's suffixes or none, and the subject is that digest.
func FuzzAttachmentSubject(f *testing.F) {
	hex := strings.Repeat("ab", 32)
	for _, s := range []string{"sha256-" + hex, "sha256-" + hex + ".sig", "sha256-" + hex + ".att", "sha256-" + hex + ".sbom", "sha256-" + hex + ".x", "latest", "sha256-" + hex[:63], "sha256-" + strings.ToUpper(hex)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tag string) {
		d, ok := attachmentSubject(tag)
		if !ok {
			return
		}
		rest := strings.TrimPrefix(tag, "sha256-")
		if d != "sha256:"+rest[:64] || !compositionID.MatchString(rest[:64]) {
			t.Fatalf("attachmentSubject(%q) = %q", tag, d)
		}
		switch rest[64:] {
		case "", ".sig", ".att", ".sbom":
		default:
			t.Fatalf("attachmentSubject(%q) took the suffix %q", tag, rest[64:])
		}
	})
}

// TestReplaces: what a destination replaces is told by where it is, not
// how it is written.
func TestReplaces(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "b.tar")
	layoutDir := filepath.Join(dir, "site")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(archive, []byte("x"), 0o644))
	must(os.MkdirAll(layoutDir, 0o755))
	must(os.Symlink(archive, filepath.Join(dir, "link.tar")))
	must(os.Link(archive, filepath.Join(dir, "hard.tar")))
	must(os.WriteFile(filepath.Join(dir, "b.tar.lock.json"), nil, 0o644))
	toArchive := Target{Transport: TransportArchive, Path: archive}
	toLayout := Target{Transport: TransportOCI, Path: layoutDir}
	for _, tc := range []struct {
		to   Target
		path string
		want bool
	}{
		{toArchive, archive, true},
		{toArchive, dir + "/./x/../b.tar", true},
		{toArchive, filepath.Join(dir, "link.tar"), true},
		{toArchive, filepath.Join(dir, "hard.tar"), true},
		{toArchive, archive + ".sig", true},
		{toArchive, archive + ".parts.json", true},
		{toArchive, archive + ".parts.json.sig", true},
		{toArchive, archive + ".002", true},
		{toArchive, filepath.Join(dir, ".b.tar.partial", "index.json"), true},
		{toArchive, filepath.Join(dir, "b.tar.lock.json"), false},
		{toArchive, filepath.Join(dir, "other.tar"), false},
		{toLayout, layoutDir, true},
		{toLayout, filepath.Join(layoutDir, "index.json"), true},
		{toLayout, layoutDir + "-old", false},
		{toLayout, filepath.Join(layoutDir, "blobs", "sha256", "ab"), true},
		{toLayout, filepath.Join(layoutDir, "day1.lock.json"), false},
		{toLayout, filepath.Join(layoutDir, strings.Repeat("a", 64), "manifest.json"), true},
		{Target{Transport: TransportOCI, Path: archive}, filepath.Join(dir, "link.tar"), true},
		{Target{Transport: TransportDocker, Registry: "localhost:5000"}, archive, false},
	} {
		if got := tc.to.Replaces(tc.path); got != tc.want {
			t.Errorf("%s.Replaces(%s) = %t, want %t", tc.to, tc.path, got, tc.want)
		}
	}
}
