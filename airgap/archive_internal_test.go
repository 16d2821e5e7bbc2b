package airgap

import (
	"archive/tar"
	"bytes"
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
	f.Fuzz(func(t *testing.T, data []byte) {
		files, err := scanArchive(bytes.NewReader(data))
		if err != nil {
			return
		}
		for name, e := range files {
			if e.offset < 0 || e.size < 0 || e.offset > int64(len(data)) {
				t.Fatalf("entry %q at %d+%d outside %d bytes", name, e.offset, e.size, len(data))
			}
		}
	})
}
