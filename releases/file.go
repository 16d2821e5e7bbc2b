package releases

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/microshift-compose/microshift-compose/internal/imageref"
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/text"
)

// MaxFileSize bounds how much of a release file is read: real files are a few
// kilobytes, so anything near this is a mistake or hostile input.
const MaxFileSize = 4 << 20

// Image is one entry of a release file's "images" object.
type Image struct {
	Key string `json:"key"`
	Ref string `json:"ref"`
}

// File is one MicroShift release file, with its images in file order so that
// rewriting it (rebase tooling) changes only what changed.
type File struct {
	// Name is the base file name, e.g. release-olm-x86_64.json.
	Name string
	// Component is the <component> part of the file name, "" for the core
	// release-<arch>.json file.
	Component string
	Arch      Arch
	// Base is the file's release.base version string, as written; "" for
	// a component's file that names no release.
	Base   string
	Images []Image
}

// Lookup returns the reference stored under key.
func (f *File) Lookup(key string) (string, bool) {
	for _, im := range f.Images {
		if im.Key == key {
			return im.Ref, true
		}
	}
	return "", false
}

// FileName returns the MicroShift file name for a component ("" = core) and arch.
func FileName(component string, arch Arch) string {
	if component == "" {
		return "release-" + string(arch) + ".json"
	}
	return "release-" + component + "-" + string(arch) + ".json"
}

// ParseFileName splits a MicroShift release file name into its component
// ("" for the core file) and arch. ok is false when the name is not a release
// file name at all (it does not start with "release-" and end with ".json").
func ParseFileName(base string) (component string, arch Arch, ok bool, err error) {
	if !strings.HasPrefix(base, "release-") || !strings.HasSuffix(base, ".json") {
		return "", "", false, nil
	}
	stem := strings.TrimSuffix(strings.TrimPrefix(base, "release-"), ".json")
	for _, a := range Arches {
		if stem == string(a) {
			return "", a, true, nil
		}
		if c, found := strings.CutSuffix(stem, "-"+string(a)); found && c != "" {
			return c, a, true, nil
		}
	}
	return "", "", true, fmt.Errorf("%s: %s", base, badArchSuffix)
}

const badArchSuffix = "file name does not end in -x86_64.json or -aarch64.json"

// ParseFile parses one release file strictly: only the "release" and
// "images" keys, a non-empty release.base (a component's file may have no
// "release"), string image references that parse as fully qualified image
// references, no duplicate keys, nothing after the document. fileName is the MicroShift file name (it carries the component
// and arch); display names the file in errors (a path, or bundle: file).
func ParseFile(display, fileName string, data []byte) (*File, error) {
	f, _, err := parseFile(display, fileName, data, true)
	return f, err
}

// span is where a string value sits in a file's bytes: [start, end).
type span struct{ start, end int64 }

// fileSpans records where ParseFile found release.base and each image
// reference (parallel to File.Images), for Patch.
type fileSpans struct {
	base   span
	images []span
}

// parseFile is ParseFile, recording where the values are. Without
// checkRefs it skips the check of each image reference (refProblem), most
// of a release's parsing: for the bundles the binary embeds, which the
// tests parse with it (TestEmbeddedReleasesChecked).
func parseFile(display, fileName string, data []byte, checkRefs bool) (*File, *fileSpans, error) {
	component, arch, ok, err := ParseFileName(fileName)
	if err != nil {
		// display names the file (a path or bundle: name); the bare
		// ParseFileName error would lose the bundle it came from.
		return nil, nil, fmt.Errorf("%s: %s", display, badArchSuffix)
	}
	if !ok {
		return nil, nil, fmt.Errorf("%s: not a release file name (want release-<arch>.json or release-<component>-<arch>.json)", display)
	}
	f := &File{Name: fileName, Component: component, Arch: arch}
	if len(data) > MaxFileSize {
		return nil, nil, fmt.Errorf("%s: file is larger than %d bytes", display, MaxFileSize)
	}
	if err := inputfile.CheckJSON(data); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", display, err)
	}
	spans := &fileSpans{}
	p := &jsonParser{display: display, data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	sawRelease, sawImages := false, false
	err = p.object("top level", func(key string) error {
		switch key {
		case "release":
			sawRelease = true
			return p.object(`"release"`, func(k string) error {
				if k != "base" {
					return p.errorf("unknown key %q in \"release\" (want \"base\")", k)
				}
				s, err := p.str(`release.base`)
				if err != nil {
					return err
				}
				if strings.TrimSpace(s) == "" {
					return p.errorf("release.base is empty")
				}
				if other := BaseArch(s); other != "" && other != string(arch) && other != "multi" {
					return p.errorf("release.base %q is a build for %s, but the file is for %s; it belongs in %s", s, other, arch, FileName(component, Arch(other)))
				}
				f.Base = s
				spans.base = p.lastSpan()
				return nil
			})
		case "images":
			sawImages = true
			return p.object(`"images"`, func(k string) error {
				if strings.TrimSpace(k) == "" {
					return p.errorf("empty image key")
				}
				if text.HasUnsafe(k) {
					return p.errorf("image key %q holds a control character", k)
				}
				ref, err := p.str(fmt.Sprintf("image %q", k))
				if err != nil {
					return err
				}
				if checkRefs {
					if problem := refProblem(ref); problem != "" {
						return p.errorf("image %q: invalid image reference %q: %s", k, ref, escapeControl(problem))
					}
				}
				f.Images = append(f.Images, Image{Key: k, Ref: ref})
				spans.images = append(spans.images, p.lastSpan())
				return nil
			})
		default:
			return p.errorf("unknown key %q (want \"release\" and \"images\")", key)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	if _, err := p.next(); err != io.EOF {
		return nil, nil, p.errorf("unexpected data after the JSON document")
	}
	// A component's file may name no release: microshift-io's kindnet,
	// kube-proxy and TopoLVM files hold their images only.
	if !sawRelease && component == "" {
		return nil, nil, fmt.Errorf("%s: missing \"release\" object with \"base\"", display)
	}
	if sawRelease && f.Base == "" {
		return nil, nil, fmt.Errorf("%s: missing release.base", display)
	}
	if !sawImages {
		return nil, nil, fmt.Errorf("%s: missing \"images\" object", display)
	}
	return f, spans, nil
}

// jsonParser walks a JSON document token by token, which keeps key order and
// catches duplicate keys that encoding/json would silently collapse.
type jsonParser struct {
	display string
	data    []byte
	dec     *json.Decoder
	// tokStart is the offset of the first byte of the last token read, so
	// that errors point at the offending key or value, not just past it.
	tokStart int64
}

// next reads a token and records where it starts: the decoder's offset is
// the end of the previous token, before any whitespace, ':' or ','.
func (p *jsonParser) next() (json.Token, error) {
	off := p.dec.InputOffset()
	for off < int64(len(p.data)) && strings.IndexByte(" \t\r\n:,", p.data[off]) >= 0 {
		off++
	}
	p.tokStart = off
	return p.dec.Token()
}

// lastSpan is where the last token read sits in the data.
func (p *jsonParser) lastSpan() span { return span{p.tokStart, p.dec.InputOffset()} }

func (p *jsonParser) errorf(format string, args ...any) error {
	line, col := text.Position(p.data, p.tokStart)
	return fmt.Errorf("%s: line %d, column %d: %s", p.display, line, col, fmt.Sprintf(format, args...))
}

// wrap turns a decoder error into a one-line error naming the file and line.
func (p *jsonParser) wrap(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := text.Position(p.data, se.Offset)
		return fmt.Errorf("%s: line %d, column %d: invalid JSON: %v", p.display, line, col, se)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s: unexpected end of file", p.display)
	}
	return fmt.Errorf("%s: invalid JSON: %v", p.display, err)
}

// object reads a JSON object, calling fn for each key with the decoder placed
// on the value. Duplicate keys are errors.
func (p *jsonParser) object(what string, fn func(key string) error) error {
	tok, err := p.next()
	if err != nil {
		return p.wrap(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return p.errorf("%s must be a JSON object, got %s", what, describe(tok))
	}
	seen := map[string]bool{}
	for p.dec.More() {
		tok, err := p.next()
		if err != nil {
			return p.wrap(err)
		}
		key, _ := tok.(string)
		if seen[key] {
			return p.errorf("duplicate key %q in %s", key, what)
		}
		seen[key] = true
		if err := fn(key); err != nil {
			return err
		}
	}
	if _, err := p.next(); err != nil { // closing brace
		return p.wrap(err)
	}
	return nil
}

func (p *jsonParser) str(what string) (string, error) {
	tok, err := p.next()
	if err != nil {
		return "", p.wrap(err)
	}
	s, ok := tok.(string)
	if !ok {
		return "", p.errorf("%s must be a string, got %s", what, describe(tok))
	}
	return s, nil
}

func describe(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			return "an object"
		case '[':
			return "an array"
		}
		return fmt.Sprintf("%q", string(v))
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", tok)
}

// escapeControl escapes control characters (go-containerregistry repeats
// the reference unquoted), keeping errors on one line.
func escapeControl(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			b.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Encode writes f in MicroShift's own layout: two-space indentation, keys in
// file order, a trailing newline. Parsing the output gives f back.
func (f *File) Encode() []byte {
	var b bytes.Buffer
	b.WriteString("{\n")
	if f.Base != "" {
		b.WriteString("  \"release\": {\n    \"base\": ")
		b.Write(quote(f.Base))
		b.WriteString("\n  },\n")
	}
	b.WriteString("  \"images\": {")
	for i, im := range f.Images {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    ")
		b.Write(quote(im.Key))
		b.WriteString(": ")
		b.Write(quote(im.Ref))
	}
	if len(f.Images) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("}\n}\n")
	return b.Bytes()
}

func quote(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// refProblem says what is wrong with an image reference, or "" when it is a
// fully qualified reference (registry, repository, and tag or digest).
// go-containerregistry's own message for a bad reference only repeats it,
// so the tag and digest forms are tried separately for the specific reason.
func refProblem(ref string) string {
	if _, err := imageref.ParseReference(ref, name.StrictValidation); err == nil {
		// go-containerregistry takes "..", "." and empty path segments;
		// the distribution grammar (and a registry's URL) does not.
		if err := imageref.Check(ref); err != nil {
			return err.Error()
		}
		return ""
	}
	if _, err := imageref.ParseReference(ref); err == nil {
		return "it must name the registry and a tag or digest, e.g. quay.io/org/image@sha256:<64 hex>"
	}
	var err error
	if strings.Contains(ref, "@") {
		_, err = imageref.NewDigest(ref, name.StrictValidation)
	} else {
		_, err = imageref.NewTag(ref, name.StrictValidation)
	}
	if err == nil {
		return "not a valid reference"
	}
	msg := err.Error()
	// Drop the reference the library repeats at the end.
	msg = strings.TrimSuffix(strings.TrimSuffix(msg, ref), ": ")
	return msg
}

// BaseArch reads the architecture a release.base names, as the nightly and
// CI builds of every arch but x86_64 do (5.0.0-0.nightly-arm64-...,
// 4.18.0-0.nightly-multi-...), in uname style ("aarch64"; "multi" for a
// multi-arch payload); "" when it names none, as GA versions and x86_64
// nightlies do.
func BaseArch(base string) string {
	for _, tok := range strings.FieldsFunc(base, func(r rune) bool { return r == '-' || r == '.' || r == '+' }) {
		switch tok {
		case "amd64", "x86_64":
			return string(X86_64)
		case "arm64", "aarch64":
			return string(AArch64)
		case "ppc64le", "s390x", "multi":
			return tok
		}
	}
	return ""
}
