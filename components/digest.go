package components

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/microshift-compose/microshift-compose/releases/knowledge"
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

// A catalog's digest is a plan's for the build of MicroShift the plan's
// release is: the components of other builds (builds = [...] without it)
// are left out, so that a component added for one build does not change
// the composition IDs of another's plans.

// buildDigests hashes fsys for every build of MicroShift, leaving out the
// directories of p's components that are not for it.
func (p *parts) buildDigests(fsys fs.FS) (map[string]string, error) {
	k, err := knowledge.Default()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, b := range k.Builds {
		skip := map[string]bool{}
		for n, c := range p.components {
			if !c.ForBuild(b.Name) {
				skip[path.Join(componentsDir, n)] = true
			}
		}
		if out[b.Name], err = digestFS(fsys, skip); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// embeddedDigests are the embedded catalog's digests by build, computed
// once.
var embeddedDigests = sync.OnceValues(func() (map[string]string, error) {
	sub, err := fs.Sub(embedded, "data")
	if err != nil {
		return nil, err
	}
	p, err := loadParts(sub, "embedded catalog", "")
	if err != nil {
		return nil, err
	}
	return p.buildDigests(sub)
})

// overlayDigests are the digests of the embedded catalog with an overlay
// whose own digests are over, by build.
func overlayDigests(over map[string]string) (map[string]string, error) {
	base, err := embeddedDigests()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for b, d := range base {
		sum := sha256.Sum256([]byte(strings.Join([]string{"embedded", d, "overlay", over[b]}, "\x00")))
		out[b] = hex.EncodeToString(sum[:])
	}
	return out, nil
}
