package components

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
)

// digestFS hashes every regular file under fsys by its slash-separated
// path inside fsys and its bytes, in lexical order: the content of a
// catalog directory, not where it is. Symlinks count as what they point
// to (the input gate keeps them inside the directory); other special files
// are left out (the loader refuses those it would read), and so are the
// directories skip names (the components of other builds of MicroShift).
func digestFS(fsys fs.FS, skip map[string]bool) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skip[name] {
				return fs.SkipDir
			}
			return nil
		}
		st, err := fs.Stat(fsys, name)
		if err != nil || !st.Mode().IsRegular() {
			return nil // a dangling link is the loader's to report
		}
		f, err := fsys.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		// The path and size frame the content, so that no two
		// directories hash alike by moving bytes between files.
		fmt.Fprintf(h, "%s\x00%d\x00", name, st.Size())
		if n, err := io.Copy(h, f); err != nil {
			return err
		} else if n != st.Size() {
			return fmt.Errorf("%s changed while it was read", name)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hashing catalog: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
