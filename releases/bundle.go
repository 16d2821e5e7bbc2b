package releases

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
)

// A bundle is the project's own file for one embedded release: every
// MicroShift release file of that version in one reviewable document,
// each kept in MicroShift's format and key order.
//
//	{
//	  "stream": "4.18",
//	  "origin": "openshift/microshift at <commit>",
//	  "development": true,    (only for a stream of upstream's main branch)
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

// embeddedEntry is one embedded bundle as the index knows it: its file and
// the version of its core files, read without parsing its images.
type embeddedEntry struct {
	name        string
	version     *semver.Version
	development bool
}

// embeddedIndex lists the embedded bundles, newest first. Selecting a
// release needs only this; the chosen bundle alone is then parsed, so a
// command working on one release does not pay for the other nine.
var embeddedIndex = sync.OnceValues(readEmbeddedIndex)

func readEmbeddedIndex() ([]embeddedEntry, error) {
	entries, err := fs.ReadDir(embedded, "data")
	if err != nil {
		return nil, fmt.Errorf("reading embedded releases: %w", err)
	}
	var out []embeddedEntry
	for _, e := range entries {
		data, err := fs.ReadFile(embedded, "data/"+e.Name())
		if err != nil {
			return nil, fmt.Errorf("reading embedded release %s: %w", e.Name(), err)
		}
		base, development, err := coreBase(data)
		if err != nil {
			return nil, fmt.Errorf("reading embedded release %s: %w", e.Name(), err)
		}
		v, err := semver.NewVersion(base)
		if err != nil {
			return nil, fmt.Errorf("reading embedded release %s: %w", e.Name(), err)
		}
		out = append(out, embeddedEntry{name: e.Name(), version: semver.New(v.Major(), v.Minor(), v.Patch(), "", ""), development: development})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version.GreaterThan(out[j].version) })
	return out, nil
}

// coreBase returns release.base of a bundle's first core file
// (release-<arch>.json) and its development flag (which EncodeBundle writes
// before the files), decoding nothing else: all core files of a release
// have one version (ParseBundle checks when the bundle is used).
func coreBase(data []byte) (base string, development bool, err error) {
	core := map[string]bool{}
	for _, a := range Arches {
		core[FileName("", a)] = true
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	object := func(what string) error {
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return fmt.Errorf("%s: not a JSON object", what)
		}
		return nil
	}
	if err := object("bundle"); err != nil {
		return "", false, err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return "", false, err
		}
		if key == "development" {
			if err := dec.Decode(&development); err != nil {
				return "", false, err
			}
			continue
		}
		if key != "files" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return "", false, err
			}
			continue
		}
		if err := object("files"); err != nil {
			return "", false, err
		}
		for dec.More() {
			name, err := dec.Token()
			if err != nil {
				return "", false, err
			}
			if n, ok := name.(string); !ok || !core[n] {
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return "", false, err
				}
				continue
			}
			var file struct {
				Release struct {
					Base string `json:"base"`
				} `json:"release"`
			}
			if err := dec.Decode(&file); err != nil {
				return "", false, err
			}
			return file.Release.Base, development, nil
		}
	}
	return "", false, errors.New("no core release file (release-<arch>.json)")
}

var parsedBundles sync.Map // bundle file name -> func() (*Release, error)

// embeddedRelease parses one embedded bundle, once.
func embeddedRelease(name string) (*Release, error) {
	load, _ := parsedBundles.LoadOrStore(name, sync.OnceValues(func() (*Release, error) {
		data, err := fs.ReadFile(embedded, "data/"+name)
		if err != nil {
			return nil, fmt.Errorf("reading embedded release %s: %w", name, err)
		}
		return parseBundle("releases/data/"+name, data, false)
	}))
	return load.(func() (*Release, error))()
}

// SelectEmbedded returns the newest embedded release matching constraint,
// parsing only that one. Without a constraint it is the newest release
// that is not a development stream (upstream's main): the default build
// targets what a release branch ships; --release 5.1 (or any constraint
// matching it) still selects the development stream.
func SelectEmbedded(constraint string) (*Release, error) {
	index, err := embeddedIndex()
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(constraint) == "" {
		released := slices.DeleteFunc(slices.Clone(index), func(e embeddedEntry) bool { return e.development })
		if len(released) > 0 {
			index = released
		}
	}
	versions := make([]*semver.Version, len(index))
	for i, e := range index {
		versions[i] = e.version
	}
	i, err := selectVersion(versions, constraint)
	if err != nil {
		return nil, err
	}
	return embeddedRelease(index[i].name)
}

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
	Stream      string                     `json:"stream"`
	Origin      string                     `json:"origin"`
	Development bool                       `json:"development"`
	Files       map[string]json.RawMessage `json:"files"`
}

// ParseBundle parses a release bundle; display names it in errors.
func ParseBundle(display string, data []byte) (*Release, error) {
	return parseBundle(display, data, true)
}

// parseBundle is ParseBundle; checkRefs is false for a bundle compiled
// into the binary, whose image references the tests check (parseFile).
func parseBundle(display string, data []byte, checkRefs bool) (*Release, error) {
	if err := inputfile.CheckJSON(data); err != nil {
		return nil, fmt.Errorf("%s: %w", display, err)
	}
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
		f, _, err := parseFile(display+": "+escapeControl(n), n, doc.Files[n], checkRefs)
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
	r.Origin, r.Development = doc.Origin, doc.Development
	return r, nil
}

// EncodeBundle writes r as a release bundle: stable, two-space indented,
// files sorted by name, images in file order; "development" only when set.
func EncodeBundle(r *Release, origin string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"stream\": %s,\n  \"origin\": %s,\n", quote(r.Stream()), quote(origin))
	if r.Development {
		b.WriteString("  \"development\": true,\n")
	}
	b.WriteString("  \"files\": {")
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
