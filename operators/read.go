package operators

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/internal/text"
)

// Limits bound what reading a catalog's files takes, whatever the image
// holds: a configs directory of many files, a huge file, a huge or deeply
// nested object (encoding/json and the YAML parser stop at a depth of
// 10,000). Memory is bounded by ObjectBytes: objects are streamed one at
// a time.
type Limits struct {
	// Files bounds the files under the configs directory.
	Files int
	// FileBytes bounds one file, uncompressed.
	FileBytes int64
	// TotalBytes bounds the files together, uncompressed.
	TotalBytes int64
	// ObjectBytes bounds one object: a bundle with its CSV and CRDs
	// (olm.bundle.object) is the largest there is.
	ObjectBytes int64
	// LayerBytes bounds each layer of the catalog image, uncompressed:
	// the layers are read through for the configs directory.
	LayerBytes int64
}

// DefaultLimits hold every catalog in use with room to spare: Red Hat's
// operator index has a few hundred files and well under a GiB of FBC, its
// largest bundle object a few MiB.
var DefaultLimits = Limits{
	Files:       50_000,
	FileBytes:   1 << 30,
	TotalBytes:  4 << 30,
	ObjectBytes: 32 << 20,
	LayerBytes:  8 << 30,
}

// ErrLimit is wrapped by the errors of a catalog beyond Limits.
var ErrLimit = errors.New("beyond the catalog reader's bounds")

// Object is one object of a catalog file.
type Object struct {
	Schema  string
	Package string
	Name    string
	// Path is the file it is in, Where FILE:LINE of its first line.
	Path, Where string
	// Raw is the object as JSON (a YAML document converted).
	Raw json.RawMessage
	// Value is the object decoded into the walk's value (see walk).
	Value decoded
}

// head is what every object has.
type head struct {
	Schema  string `json:"schema"`
	Package string `json:"package"`
	Name    string `json:"name"`
}

// decoded is what a walk decodes each object into: a struct holding a
// head and the fields the walk reads, decoded in one pass.
type decoded interface{ objectHead() *head }

func (h *head) objectHead() *head { return h }

// walk is how a pass over a catalog's files reads them: each object is
// decoded into a new value (the head alone by default), only the files
// want takes are read (all with want nil), and raw keeps each object's
// JSON (Object.Raw) for a pass that writes objects out again.
type walk struct {
	value func() decoded
	want  func(path string) bool
	raw   bool
}

// File is one file of a catalog's configs directory: its path below the
// directory, slash-separated, and its content.
type File struct {
	Path string
	R    io.Reader
}

// Files yields a catalog's files in a stable order; yield's error ends the
// walk and is returned.
type Files func(yield func(File) error) error

// budget counts what a walk over a catalog's files has read.
type budget struct {
	lim   Limits
	files int
	total int64
}

// walkObjects calls fn with every object of files, in file order and then
// in order within each file, within lim.
func walkObjects(ctx context.Context, files Files, lim Limits, w walk, fn func(Object) error) error {
	b := &budget{lim: lim}
	if w.value == nil {
		w.value = func() decoded { return &head{} }
	}
	return files(func(f File) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.files++
		if b.files > lim.Files {
			return fmt.Errorf("%w: more than %d files in the configs directory", ErrLimit, lim.Files)
		}
		if w.want != nil && !w.want(f.Path) {
			return nil
		}
		return readObjects(f.Path, f.R, b, &emitter{path: f.Path, w: w, fn: fn})
	})
}

// emitter hands a file's objects on as Objects.
type emitter struct {
	path string
	w    walk
	fn   func(Object) error
}

// emit decodes raw into a new value of the walk and hands it on (with
// raw when the walk keeps it).
func (e *emitter) emit(where string, raw json.RawMessage) error {
	v := e.w.value()
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: not a catalog object: %s", where, text.OneLine(err.Error()))
	}
	if !e.w.raw {
		raw = nil
	}
	return e.decoded(where, raw, v)
}

// decoded hands on an object decoded into v (raw is nil unless the walk
// keeps it).
func (e *emitter) decoded(where string, raw json.RawMessage, v decoded) error {
	h := v.objectHead()
	if h.Schema == "" {
		return fmt.Errorf("%s: an object without a schema (every catalog object has one: olm.package, olm.channel, olm.bundle...)", where)
	}
	return e.fn(Object{Schema: h.Schema, Package: h.Package, Name: h.Name, Path: e.path, Where: where, Raw: raw, Value: v})
}

// readObjects streams the objects of one file: a JSON stream of objects
// when its first character is '{' (as opm decides), else YAML documents.
func readObjects(name string, r io.Reader, b *budget, e *emitter) error {
	lr := &limitedFile{r: r, name: name, b: b}
	br := bufio.NewReaderSize(lr, 64<<10)
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			return nil // empty, or whitespace only
		}
		if err != nil {
			return readError(name, err)
		}
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			continue
		}
		if err := br.UnreadByte(); err != nil {
			return err
		}
		if c == '{' {
			return readJSON(name, br, b.lim, e)
		}
		return readYAML(name, br, b.lim, e)
	}
}

func readError(name string, err error) error {
	if errors.Is(err, ErrLimit) {
		return err
	}
	return fmt.Errorf("reading %s: %w", name, err)
}

// limitedFile counts a file's bytes against the file and total bounds.
type limitedFile struct {
	r    io.Reader
	name string
	b    *budget
	n    int64
}

func (l *limitedFile) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.n += int64(n)
	l.b.total += int64(n)
	switch {
	case l.n > l.b.lim.FileBytes:
		return n, fmt.Errorf("%s: %w: larger than %d bytes", l.name, ErrLimit, l.b.lim.FileBytes)
	case l.b.total > l.b.lim.TotalBytes:
		return n, fmt.Errorf("%s: %w: the configs directory holds more than %d bytes", l.name, ErrLimit, l.b.lim.TotalBytes)
	}
	return n, err
}

// lineTracker keeps the bytes a JSON decoder has read since the start of
// the object it decodes, to name the line an object starts on and to bound
// one object's size.
type lineTracker struct {
	r     io.Reader
	name  string
	limit int64
	hist  []byte
	start int64 // offset of hist[0]
	line  int   // line of hist[0]
}

func (t *lineTracker) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.hist = append(t.hist, p[:n]...)
	if int64(len(t.hist)) > t.limit+64<<10 {
		return n, fmt.Errorf("%s:%d: %w: an object of more than %d bytes", t.name, t.line, ErrLimit, t.limit)
	}
	return n, err
}

// lineAt is the line of offset off (at or after start, within what was read).
func (t *lineTracker) lineAt(off int64) int {
	i := min(max(off-t.start, 0), int64(len(t.hist)))
	return t.line + bytes.Count(t.hist[:i], []byte("\n"))
}

// advance drops what precedes off.
func (t *lineTracker) advance(off int64) {
	i := min(max(off-t.start, 0), int64(len(t.hist)))
	t.line += bytes.Count(t.hist[:i], []byte("\n"))
	t.hist = append(t.hist[:0], t.hist[i:]...)
	t.start += i
}

// startAt is the offset of the first byte after off that is not JSON
// whitespace, within what was read.
func (t *lineTracker) startAt(off int64) int64 {
	i := min(max(off-t.start, 0), int64(len(t.hist)))
	for i < int64(len(t.hist)) {
		switch t.hist[i] {
		case ' ', '\t', '\r', '\n':
			i++
			continue
		}
		break
	}
	return t.start + i
}

// readJSON streams a file of JSON objects. A walk that keeps no raw JSON
// decodes each object straight into its value: one pass over its bytes
// fewer.
func readJSON(name string, r io.Reader, lim Limits, e *emitter) error {
	t := &lineTracker{r: r, name: name, limit: lim.ObjectBytes, line: 1}
	dec := json.NewDecoder(t)
	for {
		prev := dec.InputOffset()
		var raw json.RawMessage
		var v decoded
		var err error
		if e.w.raw {
			err = dec.Decode(&raw)
		} else {
			v = e.w.value()
			err = dec.Decode(v)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var serr *json.SyntaxError
			var terr *json.UnmarshalTypeError
			switch {
			case errors.As(err, &serr):
				return fmt.Errorf("%s:%d: invalid JSON: %v", name, t.lineAt(serr.Offset), err)
			case errors.Is(err, ErrLimit):
				return err
			case errors.As(err, &terr):
				return fmt.Errorf("%s:%d: not a catalog object: %s", name, t.lineAt(t.startAt(prev)), text.OneLine(err.Error()))
			}
			return fmt.Errorf("%s:%d: %w", name, t.lineAt(dec.InputOffset()), err)
		}
		end := dec.InputOffset()
		start := t.startAt(prev)
		where := fmt.Sprintf("%s:%d", name, t.lineAt(start))
		t.advance(end)
		if end-start > lim.ObjectBytes {
			return fmt.Errorf("%s: %w: an object of more than %d bytes", where, ErrLimit, lim.ObjectBytes)
		}
		if raw != nil {
			err = e.emit(where, raw)
		} else {
			err = e.decoded(where, nil, v)
		}
		if err != nil {
			return err
		}
	}
}

// readYAML splits a YAML stream into documents at "---" lines and reads
// each as one object.
func readYAML(name string, r *bufio.Reader, lim Limits, e *emitter) error {
	var doc []byte
	line, docLine := 0, 1
	flush := func() error {
		defer func() { doc = doc[:0] }()
		if len(bytes.TrimSpace(doc)) == 0 {
			return nil
		}
		where := fmt.Sprintf("%s:%d", name, docLine)
		js, err := sigsyaml.YAMLToJSON(doc)
		if err != nil {
			return fmt.Errorf("%s: invalid YAML: %s", where, text.OneLine(err.Error()))
		}
		if bytes.Equal(js, []byte("null")) {
			return nil // comments only
		}
		return e.emit(where, js)
	}
	for {
		l, err := readLine(r, lim.ObjectBytes-int64(len(doc)))
		if err != nil && err != io.EOF {
			if errors.Is(err, ErrLimit) {
				return fmt.Errorf("%s:%d: %w: a document of more than %d bytes", name, docLine, ErrLimit, lim.ObjectBytes)
			}
			return readError(name, err)
		}
		if len(l) > 0 {
			line++
			if sep, rest := separator(l); sep {
				if ferr := flush(); ferr != nil {
					return ferr
				}
				docLine = line + 1
				if len(rest) > 0 {
					// "--- {...}": the document starts on this line.
					doc, docLine = append(doc, rest...), line
				}
			} else {
				doc = append(doc, l...)
			}
		}
		if err == io.EOF {
			return flush()
		}
	}
}

// readLine reads one line (with its newline) of at most max bytes.
func readLine(r *bufio.Reader, max int64) ([]byte, error) {
	var out []byte
	for {
		chunk, err := r.ReadSlice('\n')
		out = append(out, chunk...)
		if int64(len(out)) > max {
			return nil, ErrLimit
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return out, err
	}
}

// separator reports whether a line starts a YAML document ("---", perhaps
// followed by a comment or by the document's first content) or ends one
// ("..."), and what of the line belongs to the next document.
func separator(l []byte) (bool, []byte) {
	trimmed := bytes.TrimRight(l, " \t\r\n")
	if bytes.Equal(trimmed, []byte("...")) {
		return true, nil
	}
	rest, ok := bytes.CutPrefix(trimmed, []byte("---"))
	if !ok || (len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t') {
		return false, nil
	}
	rest = bytes.TrimSpace(rest)
	if len(rest) == 0 || rest[0] == '#' {
		return true, nil
	}
	return true, append(rest, '\n')
}
