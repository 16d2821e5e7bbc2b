package rpmrepo_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases/rpmrepo"
)

// repeat writes s n times.
func repeat(w io.Writer, s string, n int) error {
	chunk := []byte(strings.Repeat(s, max(1, (64<<10)/len(s))))
	per := len(chunk) / len(s)
	for n > 0 {
		k := min(n, per)
		if _, err := w.Write(chunk[:k*len(s)]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// TestPrimaryBounds: primary metadata is streamed through its bounds: no
// element (or run of text between two) over MaxPrimaryElement, which is
// what the XML decoder would hold whole; no more than repomd.xml's
// open-size uncompressed; no more than MaxPrimaryPackages release-info
// packages. Each is one error naming the file and the bound, before much
// of the document is read.
func TestPrimaryBounds(t *testing.T) {
	core := testutil.PrimaryPackage("microshift-release-info", "4.18.7", "Packages/m.rpm", "")
	head, tail, _ := strings.Cut(testutil.PrimaryDoc("\x00"), "\x00")
	elementBound := fmt.Sprintf("an XML element or the text between two is larger than %d bytes uncompressed: file too large (refused as a decompression bomb or damaged metadata; a package's entry takes a few kilobytes)", rpmrepo.MaxPrimaryElement)
	for _, tc := range []struct {
		name string
		p    testutil.Primary
		body func(w io.Writer) error
		want string
	}{
		{"64 MiB of whitespace between two packages (gz, no open-size)", testutil.Primary{Name: "ws-primary.xml.gz", NoOpenSize: true},
			func(w io.Writer) error {
				io.WriteString(w, head+core)
				return repeat(w, " ", 64<<20)
			}, elementBound},
		{"64 MiB of whitespace before the root (gz, open-size declared)", testutil.Primary{Name: "lead-primary.xml.gz"},
			func(w io.Writer) error {
				if err := repeat(w, "\n", 64<<20); err != nil {
					return err
				}
				_, err := io.WriteString(w, head+core+tail)
				return err
			}, elementBound},
		{"a 64 MiB description (zst)", testutil.Primary{Name: "desc-primary.xml.zst"},
			func(w io.Writer) error {
				io.WriteString(w, head+`<package type="rpm"><name>bash</name><description>`)
				return repeat(w, "a", 64<<20)
			}, elementBound},
		{"a 64 MiB attribute value", testutil.Primary{Name: "attr-primary.xml.gz"},
			func(w io.Writer) error {
				io.WriteString(w, head+`<package type="rpm" x="`)
				return repeat(w, "b", 64<<20)
			}, elementBound},
		{"a 64 MiB comment with < in it every kilobyte", testutil.Primary{Name: "comment-primary.xml.gz"},
			func(w io.Writer) error {
				io.WriteString(w, head+`<!--`)
				return repeat(w, strings.Repeat(" ", 1023)+"<", 64<<10)
			}, elementBound},
		{"more uncompressed than repomd.xml's open-size", testutil.Primary{Name: "open-primary.xml.gz", OpenSize: 10000},
			func(w io.Writer) error {
				io.WriteString(w, head)
				return repeat(w, testutil.PrimaryPackage("bash", "5.1", "Packages/b.rpm", ""), 1000)
			}, "larger than 10000 bytes uncompressed, the open-size repomd.xml lists: file too large"},
		{"more release-info packages than any repository holds", testutil.Primary{Name: "many-primary.xml.zst"},
			func(w io.Writer) error {
				io.WriteString(w, head)
				if err := repeat(w, core, rpmrepo.MaxPrimaryPackages+1); err != nil {
					return err
				}
				_, err := io.WriteString(w, tail)
				return err
			}, fmt.Sprintf("more than %d release-info packages: file too large", rpmrepo.MaxPrimaryPackages)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			testutil.WritePrimary(t, dir, tc.p, tc.body)
			repo, err := rpmrepo.URLRepo("file://" + dir)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = (&rpmrepo.Client{}).Fetch(context.Background(), []*rpmrepo.Repo{repo}, "4.18.7", "x86_64", nil)
			want := repo.ID + "repodata/" + tc.p.Name + ": " + tc.want
			if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Fetch = %v\nwant one line with %q", err, want)
			}
			t.Logf("refused in %s", time.Since(start))
		})
	}
}

// TestPrimaryWithinBounds: a package element just under the element
// bound, and metadata whose padding between packages adds up to far more
// than the bound, are read.
func TestPrimaryWithinBounds(t *testing.T) {
	head, tail, _ := strings.Cut(testutil.PrimaryDoc("\x00"), "\x00")
	dir := t.TempDir()
	testutil.WritePrimary(t, dir, testutil.Primary{Name: "ok-primary.xml.gz"}, func(w io.Writer) error {
		io.WriteString(w, head)
		big := testutil.PrimaryPackage("microshift-release-info", "4.18.6", "Packages/a.rpm", "")
		big = strings.Replace(big, "<arch>", "<description>"+strings.Repeat("d", rpmrepo.MaxPrimaryElement-2000)+"</description><arch>", 1)
		io.WriteString(w, big)
		for i := range 40 {
			io.WriteString(w, testutil.PrimaryPackage("microshift-release-info", fmt.Sprintf("4.18.%d", 100+i), "Packages/b.rpm", ""))
			repeat(w, " ", 1<<20)
		}
		_, err := io.WriteString(w, tail)
		return err
	})
	repo, err := rpmrepo.URLRepo("file://" + dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&rpmrepo.Client{}).Fetch(context.Background(), []*rpmrepo.Repo{repo}, "4.18.99", "x86_64", nil)
	// Read whole: the version is missing, and the error lists those it has.
	if !errors.Is(err, rpmrepo.ErrVersionNotFound) || !strings.Contains(err.Error(), "(41 versions, 4.18.6 to 4.18.139)") {
		t.Errorf("Fetch = %v", err)
	}
}
