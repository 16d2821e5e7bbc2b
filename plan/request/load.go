package request

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/stricttoml"
	"github.com/microshift-compose/microshift-compose/internal/text"
)

// MaxFileSize bounds a composition file; real ones are a few hundred
// bytes.
const MaxFileSize = 1 << 20

// Source is the composition file a request was read from, as the lock
// records it: its path as given and the sha256 of its content.
type Source struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	// keys are the keys the file writes (dotted), whatever their values.
	keys map[string]bool
}

// Writes reports whether the file writes key (dotted, as the schema
// names it: "health_checks.timeout"), whatever its value: a key written
// with its zero value ("", "0s", false, []) is given, and its flag takes
// it (and checks it) as from the command line. A key a matrix spans and
// its list (profile and profiles, arch and arches...) count as one, as
// Single and Lists move a value between them.
func (s Source) Writes(key string) bool {
	if s.keys[key] {
		return true
	}
	other, ok := pairedKeys()[key]
	return ok && s.keys[other]
}

// pairedKeys maps each single key a matrix spans to its list key and the
// reverse (the fields whose list tag names a single key).
var pairedKeys = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	t := reflect.TypeFor[Request]()
	for i := range t.NumField() {
		if single := t.Field(i).Tag.Get("list"); single != "" {
			list := tomlKey(t.Field(i))
			out[single], out[list] = list, single
		}
	}
	return out
})

// Load reads the composition file at path: strict TOML (an unknown key is
// refused with the closest known one, a value of the wrong type with the
// line and key), every path resolved against the file's directory and
// checked to exist.
func Load(path string) (Request, Source, error) {
	data, err := inputfile.Read("composition file", path, MaxFileSize)
	if err != nil {
		return Request{}, Source{}, err
	}
	r, keys, err := parse(path, filepath.Dir(path), data)
	if err != nil {
		return Request{}, Source{}, err
	}
	sum := sha256.Sum256(data)
	return r, Source{Path: path, SHA256: hex.EncodeToString(sum[:]), keys: keys}, nil
}

// Parse decodes a composition file's content; path names it in errors
// and its directory is what relative paths are relative to.
func Parse(path string, data []byte) (Request, error) {
	r, _, err := parse(path, filepath.Dir(path), data)
	return r, err
}

// ParseIn decodes a composition file's content as if it were a file in
// dir (relative paths are relative to dir), named display in errors:
// build --print-file checks with it that -f takes what it prints.
func ParseIn(display, dir string, data []byte) (Request, error) {
	r, _, err := parse(display, dir, data)
	return r, err
}

// parse decodes data and returns the request and the keys it writes.
func parse(display, dir string, data []byte) (Request, map[string]bool, error) {
	var r Request
	// A byte-order mark is no key: TOML files from some editors start
	// with one.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	decodeMu.Lock()
	decodeDir = dir
	md, err := stricttoml.Decode(display, data, &r)
	decodeDir = ""
	decodeMu.Unlock()
	if err != nil {
		return Request{}, nil, err
	}
	keys := map[string]bool{}
	for _, k := range md.Keys() {
		keys[k.String()] = true
	}
	if err := r.checkLists(keys); err != nil {
		return Request{}, nil, fmt.Errorf("%s: %w", display, err)
	}
	if err := r.checkTables(); err != nil {
		return Request{}, nil, fmt.Errorf("%s: %w", display, err)
	}
	return r, keys, nil
}

// checkTables refuses a table of a list without its required keys, or
// with a value its flag could not hold: the tables reach the command as
// --storage-class CLASS=NAME,fstype=FS and --filesystem MOUNT=SIZE values,
// so a ',' or '=' in a storage class's values, or '=' in a mount point,
// would be read back as another table.
func (r *Request) checkTables() error {
	for i, c := range r.MicroShift.StorageClasses {
		if c.DeviceClass == "" {
			return fmt.Errorf("microshift.storage_classes[%d]: device_class is required (the lvmd.yaml device class the StorageClass is for)", i)
		}
		for _, f := range []struct{ key, value string }{{"device_class", c.DeviceClass}, {"name", c.Name}, {"fstype", c.FSType}} {
			if strings.ContainsAny(f.value, ",=") {
				return fmt.Errorf("microshift.storage_classes[%d]: %s %s holds ',' or '=', which no device class, StorageClass name or filesystem has", i, f.key, text.QuoteExcerpt(f.value))
			}
		}
	}
	for i, o := range r.Operators {
		if o.Package == "" {
			return fmt.Errorf("operators[%d]: package is required (the catalog's name of the operator)", i)
		}
	}
	for i, f := range r.Installer.Filesystems {
		if f.Mountpoint == "" || f.MinSize == "" {
			return fmt.Errorf("installer.filesystems[%d]: mountpoint and minsize are required", i)
		}
		if strings.Contains(f.Mountpoint, "=") {
			return fmt.Errorf("installer.filesystems[%d]: mountpoint %s holds '=', which --filesystem MOUNT=SIZE cannot take", i, text.QuoteExcerpt(f.Mountpoint))
		}
	}
	return nil
}

// listPair is a single key and the list key a matrix spans instead.
type listPair struct {
	single, list reflect.Value
	singleKey    string
	listKey      string
	// flag is the flag of both.
	flag string
}

// listPairs are the request's single keys with their lists (the fields
// whose list tag names a single key).
func (r *Request) listPairs() []listPair {
	v := reflect.ValueOf(r).Elem()
	t := v.Type()
	var out []listPair
	for i := range t.NumField() {
		single := t.Field(i).Tag.Get("list")
		if single == "" {
			continue
		}
		for j := range t.NumField() {
			if tomlKey(t.Field(j)) == single {
				out = append(out, listPair{single: v.Field(j), list: v.Field(i), singleKey: single, listKey: tomlKey(t.Field(i)), flag: t.Field(j).Tag.Get("flag")})
			}
		}
	}
	return out
}

// checkLists refuses a single key written together with its list: which
// one the commands would take is no obvious choice.
func (r *Request) checkLists(written map[string]bool) error {
	for _, p := range r.listPairs() {
		if written[p.singleKey] && written[p.listKey] {
			return fmt.Errorf("%s and %s both given: give %s for one value, %s for a matrix", p.singleKey, p.listKey, p.singleKey, p.listKey)
		}
	}
	return nil
}

// Single is the request of one composition (build, resolve, images,
// mirror): a list of one value is taken as its single key; longer lists
// are refused, every one of them named in one message with the flags that
// choose one value, unless given(flag) says the command line chooses the
// value (the list is then dropped).
func (r Request) Single(given func(flag string) bool) (Request, error) {
	var lists, counts, flags []string
	for _, p := range r.listPairs() {
		if given != nil && given(p.flag) {
			p.list.Set(reflect.Zero(p.list.Type()))
			continue
		}
		switch n := p.list.Len(); {
		case n == 1:
			p.single.Set(p.list.Index(0).Convert(p.single.Type()))
			p.list.Set(reflect.Zero(p.list.Type()))
		case n > 1:
			lists = append(lists, p.listKey)
			counts = append(counts, strconv.Itoa(n))
			flags = append(flags, "--"+p.flag)
		}
	}
	switch len(lists) {
	case 0:
		return r, nil
	case 1:
		return r, fmt.Errorf("%s lists %s values, which is a matrix: run 'microshift-compose matrix' with it, or choose one with %s", lists[0], counts[0], flags[0])
	}
	said := make([]string, len(lists))
	for i := range lists {
		said[i] = fmt.Sprintf("%s (%s values)", lists[i], counts[i])
	}
	return r, fmt.Errorf("%s each list several values, which is a matrix: run 'microshift-compose matrix' with it, or choose one of each with %s", text.And(said), text.And(flags))
}

// Lists is the request of a matrix: each single key given is taken as a
// list of one.
func (r Request) Lists() Request {
	for _, p := range r.listPairs() {
		if !p.single.IsZero() {
			l := reflect.MakeSlice(p.list.Type(), 1, 1)
			l.Index(0).Set(p.single.Convert(p.list.Type().Elem()))
			p.list.Set(l)
			p.single.Set(reflect.Zero(p.single.Type()))
		}
	}
	return r
}

func tomlKey(f reflect.StructField) string {
	return strings.Split(f.Tag.Get("toml"), ",")[0]
}
