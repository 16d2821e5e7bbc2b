package releases

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/microshift-compose/microshift-compose/internal/imageref"
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/internal/usercache"
)

// Releases taken from microshift-release-info RPMs (release fetch, release
// import FILE.rpm) are kept as release directories: the release files as
// the RPMs hold them, and beside them RPMRecordFile naming the RPMs. The
// per-user store holds one such directory per version, for --release
// X.Y.Z to find.

// FetchedSource is the Source of a release from the per-user store.
const FetchedSource = "fetched"

// RPMRecordFile names the RPMs a release directory's files came from.
const RPMRecordFile = ".microshift-compose-rpms.json"

// maxRecordSize bounds RPMRecordFile.
const maxRecordSize = 1 << 20

// RPM is a release-info RPM a release's files came from.
type RPM struct {
	// NEVRA is name-[epoch:]version-release.arch.
	NEVRA string `json:"nevra"`
	// SHA256 is the hex sha256 of the .rpm file.
	SHA256 string `json:"sha256"`
	// From is the URL or file it was read from (kept in the record, not
	// in locks: it differs between machines).
	From string `json:"from,omitempty"`
}

// rpmRecord is RPMRecordFile.
type rpmRecord struct {
	Version string `json:"version"`
	RPMs    []RPM  `json:"rpms"`
	// Files are the sha256 of each release file as written: a file
	// changed since (release update) unties the directory from its RPMs.
	Files map[string]string `json:"files"`
	// Resolved maps the tag references of the files to the digest
	// references a registry resolved them to when they were fetched.
	Resolved map[string]string `json:"resolved,omitempty"`
}

// Record is what a release directory records beside its files: the RPMs
// they came from, and the tags resolved to digests when they were fetched
// (tag reference -> repository@digest).
type Record struct {
	RPMs     []RPM
	Resolved map[string]string
}

// StoreDir is the per-user store of fetched releases: the releases
// directory of the cache (usercache.Root).
func StoreDir() (string, error) { return usercache.Dir("releases") }

// ErrStored is wrapped when a release directory exists and may not be
// replaced.
var ErrStored = errors.New("release already stored")

// WriteResult says what WriteDir did.
type WriteResult struct {
	Dir string
	// Unchanged is set when dir already held exactly these files and
	// RPMs; Replaced when another release directory was replaced.
	Unchanged, Replaced bool
}

// WriteDir writes a release directory: the release files (name -> bytes,
// as the RPMs hold them; they must form a release) and RPMRecordFile
// naming rpms. The directory is assembled beside dir and renamed into
// place; an existing one is replaced only with force (or when it already
// holds the same), and never through a symlink.
func WriteDir(dir string, files map[string][]byte, rpms []RPM, force bool) (*WriteResult, error) {
	return WriteRecorded(dir, files, Record{RPMs: rpms}, force)
}

// WriteRecorded is WriteDir with the whole record: the RPMs and the tags
// resolved to digests, each a tag reference of the files resolved to a
// digest of the same repository.
func WriteRecorded(dir string, files map[string][]byte, r Record, force bool) (*WriteResult, error) {
	rel, err := parseRaw(dir, files)
	if err != nil {
		return nil, err
	}
	if err := checkResolved(dir, rel, r.Resolved); err != nil {
		return nil, err
	}
	rec := rpmRecord{Version: rel.Version.String(), RPMs: r.RPMs, Files: map[string]string{}, Resolved: r.Resolved}
	for n, data := range files {
		rec.Files[n] = fileDigest(data)
	}
	recData, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return nil, err
	}
	recData = append(recData, '\n')
	res := &WriteResult{Dir: dir}
	st, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("checking %s: %w", dir, err)
	case !st.IsDir():
		return nil, fmt.Errorf("%s exists and is not a directory (a symlink is not followed)", dir)
	default:
		if sameDir(dir, files, recData) {
			res.Unchanged = true
			return res, nil
		}
		if !force {
			desc := ""
			if old, err := LoadDir(dir); err == nil {
				desc = fmt.Sprintf(" (release %s%s)", old.Version, describeRPMs(old.RPMs))
			} else if entries, _ := os.ReadDir(dir); len(entries) == 0 {
				desc = "empty"
			}
			if desc != "empty" {
				return nil, fmt.Errorf("%s%s: %w; pass --force to replace it", dir, desc, ErrStored)
			}
		}
		res.Replaced = true
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", parent, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := writeSynced(filepath.Join(tmp, n), files[n]); err != nil {
			return nil, err
		}
	}
	if err := writeSynced(filepath.Join(tmp, RPMRecordFile), recData); err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	if res.Replaced {
		old := tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return nil, fmt.Errorf("replacing %s: %w", dir, err)
		}
		if err := os.Rename(tmp, dir); err != nil {
			_ = os.Rename(old, dir)
			return nil, fmt.Errorf("replacing %s: %w", dir, err)
		}
		return res, os.RemoveAll(old)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("writing %s: %w", dir, err)
	}
	return res, nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sameDir reports whether dir holds exactly these release files and record.
func sameDir(dir string, files map[string][]byte, record []byte) bool {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != len(files)+1 {
		return false
	}
	for _, e := range entries {
		want, ok := files[e.Name()]
		if e.Name() == RPMRecordFile {
			want, ok = record, true
		}
		if !ok || !e.Type().IsRegular() {
			return false
		}
		got, err := inputfile.Read("release file", filepath.Join(dir, e.Name()), MaxFileSize)
		if err != nil || !bytes.Equal(got, want) {
			return false
		}
	}
	return true
}

// parseRaw parses release files given by name and checks they form a
// release.
func parseRaw(source string, files map[string][]byte) (*Release, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var parsed []*File
	for _, n := range names {
		if filepath.Base(n) != n {
			return nil, fmt.Errorf("%s: release file name %q is not a plain file name", source, n)
		}
		f, err := ParseFile(filepath.Join(source, n), n, files[n])
		if err != nil {
			return nil, err
		}
		parsed = append(parsed, f)
	}
	return New(source, parsed)
}

func fileDigest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// describeRPMs is ", from microshift-release-info-4.18.7-1.el9.noarch" for
// messages, "" without RPMs.
func describeRPMs(rpms []RPM) string {
	if len(rpms) == 0 {
		return ""
	}
	return ", from " + rpms[0].NEVRA
}

// readRecord reads dir's RPMRecordFile and returns it when every release
// file of rel is as recorded; nil when there is no record or the files
// changed since.
func readRecord(fsys fs.FS, dir string, raw map[string][]byte) (*rpmRecord, error) {
	data, err := inputfile.ReadFS(fsys, RPMRecordFile, maxRecordSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	display := filepath.Join(dir, RPMRecordFile)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %w", display, err)
	}
	if err := inputfile.CheckJSON(data); err != nil {
		return nil, fmt.Errorf("%s: %w", display, err)
	}
	var rec rpmRecord
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return nil, fmt.Errorf("%s: invalid record of the release's RPMs: %v", display, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: invalid record of the release's RPMs: unexpected data after the JSON document", display)
	}
	for _, r := range rec.RPMs {
		if r.NEVRA == "" || strings.ContainsFunc(r.NEVRA+r.SHA256, func(c rune) bool { return c < ' ' || c == 0x7f }) {
			return nil, fmt.Errorf("%s: invalid record of the release's RPMs: an RPM without a NEVRA, or with control characters", display)
		}
	}
	if len(rec.Files) != len(raw) {
		return nil, nil
	}
	for n, data := range raw {
		if rec.Files[n] != fileDigest(data) {
			return nil, nil
		}
	}
	if len(rec.Resolved) > 0 {
		rel, err := parseRaw(dir, raw)
		if err != nil {
			return nil, err
		}
		if err := checkResolved(display, rel, rec.Resolved); err != nil {
			return nil, err
		}
	}
	return &rec, nil
}

// checkResolved checks each resolved tag: a tag reference the release
// names, resolved to a digest of the same repository.
func checkResolved(where string, rel *Release, resolved map[string]string) error {
	tags := map[string]bool{}
	for _, f := range rel.Files() {
		for _, im := range f.Images {
			if !IsDigestPinned(im.Ref) {
				tags[im.Ref] = true
			}
		}
	}
	for _, tag := range slices.Sorted(maps.Keys(resolved)) {
		ref := resolved[tag]
		t, err1 := imageref.NewTag(tag, name.StrictValidation)
		d, err2 := imageref.NewDigest(ref, name.StrictValidation)
		if !tags[tag] || err1 != nil || err2 != nil || t.Context().Name() != d.Context().Name() || d.Name() != d.Context().Name()+"@"+d.DigestStr() {
			return fmt.Errorf("%s: invalid resolved tag %q -> %q: want a tag reference of the release files and REPOSITORY@DIGEST of the same repository", where, text.Escape(tag), text.Escape(ref))
		}
	}
	return nil
}

// exactVersion returns the version a --release constraint names exactly
// ("4.18.7"), for the per-user store; ok is false for a range ("4.18",
// ">=4.18").
func exactVersion(constraint string) (string, bool) {
	c := strings.TrimSpace(constraint)
	v, err := semver.StrictNewVersion(c)
	if err != nil || v.Prerelease() != "" || v.Metadata() != "" {
		return "", false
	}
	return v.String(), true
}

// loadFetched loads version from the per-user store; nil, nil when it is
// not there.
func loadFetched(version string) (*Release, error) {
	root, err := StoreDir()
	if err != nil {
		return nil, nil // no cache directory: nothing was stored either
	}
	dir := filepath.Join(root, version)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	r, err := LoadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("stored release %s: %w", version, err)
	}
	if r.Version.String() != version {
		return nil, fmt.Errorf("stored release %s: %s holds release %s", version, dir, r.Version)
	}
	r.Source = FetchedSource
	return r, nil
}

// Fetched returns the releases in the per-user store, newest first.
func Fetched() ([]*Release, error) {
	root, err := StoreDir()
	if err != nil {
		return nil, nil
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the release store: %w", err)
	}
	var out []*Release
	for _, e := range entries {
		v, ok := exactVersion(e.Name())
		if !ok || v != e.Name() || !e.IsDir() {
			continue // a temporary directory, or not the store's
		}
		r, err := loadFetched(v)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *Release) int { return b.Version.Compare(a.Version) })
	return out, nil
}

// StoredDir is where version is kept in the per-user store.
func StoredDir(version string) (string, error) {
	root, err := StoreDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, version), nil
}
