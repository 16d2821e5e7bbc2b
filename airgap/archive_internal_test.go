package airgap

import (
	"archive/tar"
	"bytes"
	"strings"
	"testing"
)

// FuzzScanArchive feeds arbitrary bytes to the reader of oci-archive:
// files: it must return a table or an error, never panic, and every entry
// it lists must lie inside the input.
func FuzzScanArchive(f *testing.F) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range []struct{ name, data string }{{"oci-layout", layoutVersion}, {"index.json", `{"schemaVersion":2,"manifests":[]}`}, {"blobs/sha256/00", "x"}} {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e.name, Size: int64(len(e.data)), Mode: 0o644})
		tw.Write([]byte(e.data))
	}
	tw.Close()
	f.Add(b.Bytes())
	f.Add([]byte{})
	f.Add([]byte("not a tar"))
	f.Add(b.Bytes()[:700])
	// A header naming more than a layout path: refused at it.
	var long bytes.Buffer
	lw := tar.NewWriter(&long)
	lw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "blobs/sha256/" + strings.Repeat("a", maxArchiveName), Format: tar.FormatPAX})
	lw.Close()
	f.Add(long.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		files, err := scanArchive(bytes.NewReader(data))
		if err != nil {
			return
		}
		for name, e := range files {
			if e.offset < 0 || e.size < 0 || e.offset > int64(len(data)) {
				t.Fatalf("entry %q at %d+%d outside %d bytes", name, e.offset, e.size, len(data))
			}
			if !isLayoutPath(name) || len(name) > maxLayoutPath {
				t.Fatalf("entry %q is no layout path, and is held", name)
			}
		}
	})
}

// TestScanArchiveRefusesLongHeaders: a name, link name or PAX record
// longer than any layout path is refused at its header, naming the entry;
// a name that is no layout path is passed over, not held.
func TestScanArchiveRefusesLongHeaders(t *testing.T) {
	long := strings.Repeat("a", maxArchiveName+1)
	for _, tc := range []struct {
		name string
		hdr  tar.Header
		want string // "" for accepted
	}{
		{"a PAX name", tar.Header{Name: "blobs/sha256/" + long, Format: tar.FormatPAX}, "entry 2: not an OCI image archive: its name is"},
		{"a GNU long name", tar.Header{Name: "blobs/sha256/" + long, Format: tar.FormatGNU}, "entry 2: not an OCI image archive: its name is"},
		{"a link name", tar.Header{Name: "l", Linkname: long, Typeflag: tar.TypeSymlink, Format: tar.FormatPAX}, "its link name is"},
		{"a PAX comment", tar.Header{Name: "x", Format: tar.FormatPAX, PAXRecords: map[string]string{"comment": long}}, `its PAX record "comment" is`},
		{"a 4000-byte name that is no layout path", tar.Header{Name: "docs/" + long[:4000], Format: tar.FormatPAX}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			tw := tar.NewWriter(&b)
			tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "oci-layout", Size: int64(len(layoutVersion)), Mode: 0o644})
			tw.Write([]byte(layoutVersion))
			h := tc.hdr
			h.Mode = 0o644
			if h.Typeflag == 0 {
				h.Typeflag = tar.TypeReg
			}
			if err := tw.WriteHeader(&h); err != nil {
				t.Fatal(err)
			}
			tw.Close()
			files, err := scanArchive(bytes.NewReader(b.Bytes()))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("scanArchive = %v, want the archive read", err)
			case tc.want == "" && len(files) != 1:
				t.Errorf("scanArchive held %d names, want oci-layout alone", len(files))
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("scanArchive = %v, want %q", err, tc.want)
			}
		})
	}
}
