package atomicfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
)

// ErrInterrupted is wrapped by errors about a journal left by a commit that
// did not finish.
var ErrInterrupted = errors.New("an update was interrupted")

// TestHookAfterRename, when set (by tests only), runs after each rename of
// a commit: the kill -9 tests stop the process there.
var TestHookAfterRename func(n int)

// maxJournal bounds a journal file: one line per file of a release
// directory.
const maxJournal = 1 << 20

// journalDoc is what a journal holds: every file of the commit, where its
// new content waits, and that content's digest.
type journalDoc struct {
	Version int            `json:"version"`
	Files   []journalEntry `json:"files"`
}

type journalEntry struct {
	// Target and Temp are relative to the journal's directory when inside
	// it, else absolute.
	Target string `json:"target"`
	Temp   string `json:"temp"`
	SHA256 string `json:"sha256"`
}

// Commit replaces every file all or none, even across a crash or kill -9:
// the new contents are written to temporary files and synced, then a
// journal naming them is written atomically (the commit point), then the
// files are renamed into place and the journal removed. A process killed
// before the journal exists leaves every target as it was (and hidden
// temporary files, which Recover removes); killed after, it leaves the
// journal, and Recover finishes the renames. Readers of the files refuse
// them while the journal exists (Pending).
func Commit(journal string, files []File) (err error) {
	if _, err := os.Lstat(journal); err == nil {
		return fmt.Errorf("%s: %w (the journal is still there); finish it first", journal, ErrInterrupted)
	}
	jdir := filepath.Dir(journal)
	done, err := stage(files, func(f File, target string) error {
		if !sameDir(jdir, target) {
			return fmt.Errorf("%s: a journaled commit writes only files beside its journal (%s)", f.Path, jdir)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			for _, p := range done {
				os.Remove(p.tmp)
			}
		}
	}()
	doc := journalDoc{Version: 1}
	for i, p := range done {
		sum := sha256.Sum256(files[i].Data)
		doc.Files = append(doc.Files, journalEntry{
			Target: relTo(journal, p.target), Temp: relTo(journal, p.tmp), SHA256: hex.EncodeToString(sum[:]),
		})
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding journal %s: %w", journal, err)
	}
	jtmp, err := writeTemp(journal, journal, append(data, '\n'), 0o644, -1, -1, false)
	if err != nil {
		return err
	}
	if err := os.Rename(jtmp, journal); err != nil {
		os.Remove(jtmp)
		return fmt.Errorf("writing journal %s: %w", journal, cause(err))
	}
	syncDir(filepath.Dir(journal))
	// The commit point is passed: from here on the files are replaced,
	// now or by Recover.
	done = nil
	if _, err := Recover(journal); err != nil {
		return err
	}
	return nil
}

// Pending reports whether journal exists: a commit was interrupted and the
// files it names are a mix of old and new until Recover runs.
func Pending(journal string) bool {
	_, err := os.Lstat(journal)
	return err == nil
}

// Recover finishes the commit journal records, if there is one: every
// temporary file still there is renamed over its target (a target already
// renamed must hold the journal's content), then the journal is removed.
// It returns how many files it renamed. Without a journal it removes the
// hidden temporary files a commit killed before its journal left beside
// the files of journal's directory, and returns 0.
func Recover(journal string) (int, error) {
	data, err := inputfile.Read("journal", journal, maxJournal)
	if errors.Is(err, fs.ErrNotExist) {
		removeStrayTemps(filepath.Dir(journal))
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if err := inputfile.CheckJSON(data); err != nil {
		return 0, fmt.Errorf("%s: %w and its journal is damaged (%v); restore the files from version control and remove the journal", journal, ErrInterrupted, err)
	}
	var doc journalDoc
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil || doc.Version != 1 {
		return 0, fmt.Errorf("%s: %w and its journal is damaged; restore the files from version control and remove the journal", journal, ErrInterrupted)
	}
	// A journal is data in a directory others may have written (a release
	// directory from a pull request): it may name only files beside it,
	// temporary files as Commit names them, and regular files, so that
	// finishing it can never rename anything elsewhere.
	for _, e := range doc.Files {
		if !plainName(e.Target) || !plainName(e.Temp) || !strings.HasPrefix(e.Temp, "."+e.Target+".tmp-") {
			return 0, fmt.Errorf("%s: %w and its journal names %q and %q, which are not a file and its temporary file beside it; restore the files from version control and remove the journal", journal, ErrInterrupted, e.Target, e.Temp)
		}
		if st, err := os.Lstat(absTo(journal, e.Target)); err == nil && !st.Mode().IsRegular() {
			return 0, fmt.Errorf("%s: %w and %s is not a regular file; restore the files from version control and remove the journal", journal, ErrInterrupted, e.Target)
		}
	}
	renamed := 0
	dirs := map[string]bool{}
	for _, e := range doc.Files {
		target, tmp := absTo(journal, e.Target), absTo(journal, e.Temp)
		dirs[filepath.Dir(target)] = true
		// Only a regular file is renamed into place: a temporary file
		// that is a symlink (a hostile journal's) would put the link
		// where the release file was.
		if st, err := os.Lstat(tmp); err == nil && !st.Mode().IsRegular() {
			return renamed, fmt.Errorf("%s: %w and its temporary file %s is %v; restore the files from version control and remove the journal", journal, ErrInterrupted, tmp, inputfile.NotRegular(st.Mode()))
		}
		if got, err := digest(tmp); err == nil {
			if got != e.SHA256 {
				return renamed, fmt.Errorf("%s: %w: %s does not hold what the journal says; restore the files from version control and remove the journal", journal, ErrInterrupted, tmp)
			}
			if err := os.Rename(tmp, target); err != nil {
				return renamed, fmt.Errorf("finishing the interrupted update of %s: %w", target, cause(err))
			}
			renamed++
			if TestHookAfterRename != nil {
				TestHookAfterRename(renamed)
			}
			continue
		}
		if got, err := digest(target); err != nil || got != e.SHA256 {
			return renamed, fmt.Errorf("%s: %w: %s is neither its new version nor has its temporary file; restore the files from version control and remove the journal", journal, ErrInterrupted, target)
		}
	}
	for d := range dirs {
		syncDir(d)
	}
	if err := os.Remove(journal); err != nil {
		return renamed, fmt.Errorf("removing journal %s: %w", journal, cause(err))
	}
	syncDir(filepath.Dir(journal))
	return renamed, nil
}

// removeStrayTemps removes the hidden temporary files (".<name>.tmp-*")
// writeTemp creates, left in dir by a process killed before it renamed or
// removed them.
func removeStrayTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), ".tmp-") && e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

func digest(path string) (string, error) {
	data, err := inputfile.Read("file", path, 1<<30)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// plainName reports whether s names a file directly in a directory.
func plainName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`) && filepath.IsLocal(s)
}

// sameDir reports whether file is directly in dir.
func sameDir(dir, file string) bool {
	a, err1 := filepath.Abs(dir)
	b, err2 := filepath.Abs(filepath.Dir(file))
	return err1 == nil && err2 == nil && a == b
}

// relTo writes p relative to the journal's directory when it is inside it.
func relTo(journal, p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	jdir, err := filepath.Abs(filepath.Dir(journal))
	if err != nil {
		return abs
	}
	if rel, err := filepath.Rel(jdir, abs); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return abs
}

func absTo(journal, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(journal), p)
}

// syncDir makes renames in dir durable; best effort.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
