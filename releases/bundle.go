package releases

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"sync"
)

// A bundle is the project's own file for one embedded release: every
// MicroShift release file of that version in one reviewable document,
// each kept in MicroShift's format and key order.
//
//	{
//	  "stream": "4.18",
//	  "origin": "openshift/microshift at <commit>",
//	  "files": { "release-x86_64.json": { "release": {...}, "images": {...} }, ... }
//	}

//go:embed data/*.json
var embedded embed.FS

// MaxBundleSize bounds an embedded release bundle read from disk (release
// import): real ones are tens of kilobytes.
const MaxBundleSize = 32 << 20

// EmbeddedSource is the Source of releases compiled into the binary.
const EmbeddedSource = "embedded"

var loadEmbedded = sync.OnceValues(func() ([]*Release, error) {
	return loadBundles(embedded, "data")
})

// Embedded returns the releases compiled into the binary, newest first.
func Embedded() ([]*Release, error) { return loadEmbedded() }

func loadBundles(fsys fs.FS, dir string) ([]*Release, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("reading embedded releases: %w", err)
	}
	var out []*Release
	for _, e := range entries {
		data, err := fs.ReadFile(fsys, dir+"/"+e.Name())
		if err != nil {
			return nil, fmt.Errorf("reading embedded release %s: %w", e.Name(), err)
		}
		r, err := ParseBundle("releases/"+dir+"/"+e.Name(), data)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version.GreaterThan(out[j].Version) })
	return out, nil
}

type bundleDoc struct {
	Stream string                     `json:"stream"`
	Origin string                     `json:"origin"`
	Files  map[string]json.RawMessage `json:"files"`
}

// ParseBundle parses a release bundle; display names it in errors.
func ParseBundle(display string, data []byte) (*Release, error) {
	var doc bundleDoc
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: invalid release bundle: %v", display, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: invalid release bundle: unexpected data after the JSON document", display)
	}
	names := make([]string, 0, len(doc.Files))
	for n := range doc.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	var files []*File
	for _, n := range names {
		f, err := ParseFile(display+": "+escapeControl(n), n, doc.Files[n])
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	r, err := New(EmbeddedSource, files)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", display, err)
	}
	if r.Stream() != doc.Stream {
		return nil, fmt.Errorf("%s: stream %q does not match the core files' version %s", display, doc.Stream, r.Version)
	}
	r.Origin = doc.Origin
	return r, nil
}

// EncodeBundle writes r as a release bundle: stable, two-space indented,
// files sorted by name, images in file order.
func EncodeBundle(r *Release, origin string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"stream\": %s,\n  \"origin\": %s,\n  \"files\": {", quote(r.Stream()), quote(origin))
	for i, f := range r.Files() {
		if i > 0 {
			b.WriteByte(',')
		}
		body := strings.TrimSuffix(string(f.Encode()), "\n")
		body = strings.ReplaceAll(body, "\n", "\n    ")
		fmt.Fprintf(&b, "\n    %s: %s", quote(f.Name), body)
	}
	b.WriteString("\n  }\n}\n")
	return b.Bytes()
}
