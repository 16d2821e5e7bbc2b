package testutil

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// Primary says how WritePrimary lists a primary metadata file in a
// repository's repomd.xml.
type Primary struct {
	// Name is the file's name in repodata/; its suffix is its
	// compression: .xml.gz, .xml.zst or .xml.
	Name string
	// Href, when set, is the location's href instead of
	// repodata/<Name>; Base its xml:base.
	Href, Base string
	// OpenSize, when positive, is the uncompressed size repomd.xml
	// declares instead of the true one; NoOpenSize declares none.
	OpenSize   int64
	NoOpenSize bool
}

// WritePrimary writes what write produces as the primary metadata of the
// repository at repoDir (uncompressed XML; compressed here, streamed, so a
// test can write a gigabyte without holding it) and lists it in
// repodata/repomd.xml with its true checksums and compressed size: in
// place of the primary entry createrepo_c wrote, or in a new repomd.xml
// holding only it.
func WritePrimary(t testing.TB, repoDir string, p Primary, write func(io.Writer) error) {
	t.Helper()
	dir := filepath.Join(repoDir, "repodata")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, p.Name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	packed, open := sha256.New(), sha256.New()
	var packedSize, openSize counter
	file := io.MultiWriter(f, packed, &packedSize)
	var w io.WriteCloser
	switch {
	case strings.HasSuffix(p.Name, ".xml.gz"):
		w, err = gzip.NewWriterLevel(file, gzip.BestCompression)
	case strings.HasSuffix(p.Name, ".xml.zst"):
		w, err = zstd.NewWriter(file, zstd.WithEncoderConcurrency(1))
	case strings.HasSuffix(p.Name, ".xml"):
		w = nopCloser{file}
	default:
		t.Fatalf("WritePrimary: %s: unknown compression", p.Name)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := write(io.MultiWriter(w, open, &openSize)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	href := p.Href
	if href == "" {
		href = "repodata/" + p.Name
	}
	base := ""
	if p.Base != "" {
		base = fmt.Sprintf(` xml:base="%s"`, p.Base)
	}
	declared := ""
	switch {
	case p.NoOpenSize:
	case p.OpenSize > 0:
		declared = fmt.Sprintf("\n    <open-size>%d</open-size>", p.OpenSize)
	default:
		declared = fmt.Sprintf("\n    <open-size>%d</open-size>", openSize)
	}
	entry := fmt.Sprintf(`<data type="primary">
    <checksum type="sha256">%s</checksum>
    <open-checksum type="sha256">%s</open-checksum>
    <location href="%s"%s/>
    <timestamp>1700000000</timestamp>
    <size>%d</size>%s
  </data>`, hex.EncodeToString(packed.Sum(nil)), hex.EncodeToString(open.Sum(nil)), href, base, packedSize, declared)
	EditRepomd(t, repoDir, func(doc string) string {
		if doc == "" {
			return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<repomd xmlns=\"http://linux.duke.edu/metadata/repo\" xmlns:rpm=\"http://linux.duke.edu/metadata/rpm\">\n  <revision>1</revision>\n  " + entry + "\n</repomd>\n"
		}
		if !primaryEntry.MatchString(doc) {
			t.Fatalf("WritePrimary: %s/repodata/repomd.xml has no primary entry", repoDir)
		}
		return primaryEntry.ReplaceAllLiteralString(doc, entry)
	})
}

var primaryEntry = regexp.MustCompile(`(?s)<data type="primary">.*?</data>`)

// EditRepomd rewrites the repository's repodata/repomd.xml through edit
// ("" when there is none yet).
func EditRepomd(t testing.TB, repoDir string, edit func(doc string) string) {
	t.Helper()
	p := filepath.Join(repoDir, "repodata", "repomd.xml")
	data, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(edit(string(data))), 0o644); err != nil {
		t.Fatal(err)
	}
}

// EditPrimary rewrites the primary metadata createrepo_c wrote (gz)
// through edit, as a new file listed with its checksums in repomd.xml;
// p says how (Name defaults to primary.xml.gz).
func EditPrimary(t testing.TB, repoDir string, p Primary, edit func(doc string) string) {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(repoDir, "repodata", "*-primary.xml.gz"))
	if err != nil || len(matches) != 1 {
		t.Fatalf("EditPrimary: %s: primary metadata %v (%v)", repoDir, matches, err)
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name == "" {
		p.Name = "primary.xml.gz"
	}
	WritePrimary(t, repoDir, p, func(w io.Writer) error {
		_, err := io.WriteString(w, edit(string(doc)))
		return err
	})
}

// PrimaryPackage is the entry of a package in primary metadata: a
// release-info package as createrepo_c lists it, its checksum and size
// whatever the test says (a test that never downloads it needs no RPM).
func PrimaryPackage(name, version, href, base string) string {
	if base != "" {
		base = fmt.Sprintf(` xml:base="%s"`, base)
	}
	return fmt.Sprintf(`<package type="rpm">
  <name>%s</name>
  <arch>noarch</arch>
  <version epoch="0" ver="%s" rel="1.el9"/>
  <checksum type="sha256" pkgid="YES">%s</checksum>
  <size package="7000" installed="20000" archive="20500"/>
  <location%s href="%s"/>
</package>
`, name, version, strings.Repeat("ab", 32), base, href)
}

// PrimaryDoc wraps package entries in primary metadata's root element.
func PrimaryDoc(packages ...string) string {
	return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<metadata xmlns="http://linux.duke.edu/metadata/common" xmlns:rpm="http://linux.duke.edu/metadata/rpm" packages="%d">
%s</metadata>
`, len(packages), strings.Join(packages, ""))
}

type counter int64

func (c *counter) Write(p []byte) (int, error) { *c += counter(len(p)); return len(p), nil }

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
