package provenance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	slsa "github.com/in-toto/attestation/go/predicates/provenance/v1"
	ita "github.com/in-toto/attestation/go/v1"

	"github.com/microshift-compose/microshift-compose/attest"
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/output"
)

// maxStatement bounds the statement file: a subject is ~150 bytes, and an
// output of every optional component holds a few hundred files and images.
const maxStatement = 64 << 20

// Sentinels wrapped by Verify's errors, for errors.Is.
var (
	// ErrUnsigned: the directory has no statement.
	ErrUnsigned = errors.New("no signed statement")
	// ErrOtherComposition: the statement is of another composition than
	// the directory's lock.
	ErrOtherComposition = errors.New("the statement is of another composition")
	// ErrDiffers: a file of the directory differs from the statement
	// (changed, missing, or added after signing). *FileError holds which.
	ErrDiffers = errors.New("differs from the signed statement")
)

// FileError names the first file of a directory that differs from its
// statement, and how.
type FileError struct {
	// Path is relative to the directory, slash-separated.
	Path string
	// Dir is the directory as the caller named it.
	Dir string
	// Why says how it differs.
	Why string
}

func (e *FileError) Error() string {
	return fmt.Sprintf("%s: %v: %s", filepath.Join(e.Dir, filepath.FromSlash(e.Path)), ErrDiffers, e.Why)
}

func (e *FileError) Unwrap() error { return ErrDiffers }

// Result is what Verify checked.
type Result struct {
	Dir           string `json:"dir"`
	CompositionID string `json:"composition_id"`
	// Key is the public key file that verified the signature.
	Key string `json:"key"`
	// Files and Images count the subjects checked: files by their sha256,
	// images by digest against the lock.
	Files  int `json:"files"`
	Images int `json:"images"`
	// Builder is the tool version that signed (runDetails.builder.version).
	Builder map[string]string `json:"builder"`
}

// Verify checks dir against its statement (output.StatementFile) offline:
// the envelope's signature with v, the statement (in-toto v1, SLSA
// provenance v1 of this tool's build type), that it is the statement of
// the composition dir's lock names, then every file: each subject present
// with its sha256, and no file the statement does not name (the images/
// layout mirror fills aside). The first file that differs, in path order,
// is named. Verify writes nothing.
func Verify(ctx context.Context, dir string, v *attest.Verifier) (*Result, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", dir, err)
	}
	if resolved, err := filepath.EvalSymlinks(root); err == nil {
		root = resolved
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		if err == nil {
			return nil, fmt.Errorf("verifying %s: not a directory", dir)
		}
		return nil, fmt.Errorf("verifying %s: %w", dir, unwrapPath(err))
	}
	stmtPath := filepath.Join(root, output.StatementFile)
	display := filepath.Join(dir, output.StatementFile)
	if _, err := os.Lstat(stmtPath); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("verifying %s: %w: it has no %s (build --sign-key writes it)", dir, ErrUnsigned, output.StatementFile)
	}
	envelope, err := inputfile.Read("statement", stmtPath, maxStatement)
	if err != nil {
		return nil, err
	}
	verified, err := v.Verify(ctx, display, envelope)
	if err != nil {
		return nil, err
	}
	st := verified.Statement
	id, builder, err := checkPredicate(display, st)
	if err != nil {
		return nil, err
	}
	res := &Result{Dir: dir, CompositionID: id, Key: v.Path, Builder: builder}

	files := map[string]string{}
	var images []string
	for _, s := range st.Subject {
		sum := s.GetDigest()["sha256"]
		switch {
		case len(sum) != sha256.Size*2:
			return nil, fmt.Errorf("%s: subject %q has no sha256 digest", display, s.GetName())
		case isImage(s.GetName()):
			images = append(images, s.GetName())
		case s.GetName() == output.StatementFile || !fs.ValidPath(s.GetName()) || s.GetName() == ".":
			return nil, fmt.Errorf("%s: subject %q is neither a file of the output nor an image", display, s.GetName())
		default:
			if _, dup := files[s.GetName()]; dup {
				return nil, fmt.Errorf("%s: subject %q is named twice", display, s.GetName())
			}
			files[s.GetName()] = sum
		}
	}
	if _, ok := files[output.LockFile]; !ok {
		return nil, fmt.Errorf("%s: the statement names no %s", display, output.LockFile)
	}
	lockID, lockRefs := readLock(filepath.Join(root, output.LockFile))
	if lockID != "" && lockID != id {
		return nil, fmt.Errorf("%s: %w: it is the statement of composition %s, and %s is composition %s",
			display, ErrOtherComposition, id, filepath.Join(dir, output.LockFile), lockID)
	}
	if err := checkFiles(ctx, root, dir, files); err != nil {
		return nil, err
	}
	// The lock verified: its pinned images are the image subjects.
	for _, ref := range lockRefs {
		if isImage(ref) && !slices.Contains(images, ref) {
			return nil, fmt.Errorf("%s: image %s of %s is not a subject of the statement", display, ref, output.LockFile)
		}
	}
	for _, ref := range images {
		if !slices.Contains(lockRefs, ref) {
			return nil, fmt.Errorf("%s: image subject %s is not an image of %s", display, ref, output.LockFile)
		}
	}
	res.Files, res.Images = len(files), len(images)
	return res, nil
}

// isImage tells an image subject (a reference pinned by digest) from a
// file subject (an output-relative path, which never holds "@sha256:").
func isImage(name string) bool { return strings.Contains(name, "@sha256:") }

// checkPredicate checks that st is SLSA provenance v1 of this tool's build
// and returns its composition ID and builder version.
func checkPredicate(display string, st *ita.Statement) (string, map[string]string, error) {
	if st.GetPredicateType() != PredicateType {
		return "", nil, fmt.Errorf("%s: predicate type %s, not SLSA provenance v1 (%s)", display, st.GetPredicateType(), PredicateType)
	}
	var pred slsa.Provenance
	if err := attest.FromStruct(st.GetPredicate(), &pred); err != nil {
		return "", nil, fmt.Errorf("%s: the predicate is not SLSA provenance v1: %v", display, err)
	}
	if err := pred.Validate(); err != nil {
		return "", nil, fmt.Errorf("%s: the predicate is not SLSA provenance v1: %w", display, err)
	}
	if bt := pred.GetBuildDefinition().GetBuildType(); bt != BuildType {
		return "", nil, fmt.Errorf("%s: build type %s, not a microshift-compose build (%s)", display, bt, BuildType)
	}
	id := pred.GetBuildDefinition().GetExternalParameters().GetFields()["composition_id"].GetStringValue()
	if len(id) != sha256.Size*2 {
		return "", nil, fmt.Errorf("%s: the predicate has no composition_id", display)
	}
	return id, pred.GetRunDetails().GetBuilder().GetVersion(), nil
}

// readLock returns the lock's composition ID and image references, or
// nothing when it does not decode (checkFiles then names it).
func readLock(path string) (string, []string) {
	data, err := inputfile.Read("lock file", path, maxStatement)
	if err != nil {
		return "", nil
	}
	var lock struct {
		ID     string `json:"id"`
		Images []struct {
			Ref string `json:"ref"`
		} `json:"images"`
	}
	if json.NewDecoder(bytes.NewReader(data)).Decode(&lock) != nil {
		return "", nil
	}
	refs := make([]string, 0, len(lock.Images))
	for _, im := range lock.Images {
		refs = append(refs, im.Ref)
	}
	return lock.ID, refs
}

// checkFiles compares the files under root with the statement's, in path
// order, and returns the first difference.
func checkFiles(ctx context.Context, root, dir string, want map[string]string) error {
	have := map[string]fs.FileMode{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
			return nil
		case rel == output.ImagesDir && d.IsDir():
			return filepath.SkipDir // mirror's layout, not build's
		case rel == output.StatementFile:
			return nil
		case d.IsDir():
			return nil
		}
		have[rel] = d.Type()
		return nil
	})
	if err != nil {
		return fmt.Errorf("verifying %s: %w", dir, unwrapPath(err))
	}
	paths := make([]string, 0, len(want)+len(have))
	for p := range want {
		paths = append(paths, p)
	}
	for p := range have {
		if _, ok := want[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return err
		}
		sum, signed := want[p]
		mode, present := have[p]
		switch {
		case !present:
			return &FileError{Dir: dir, Path: p, Why: "missing: the statement names it with sha256 " + sum}
		case !signed:
			return &FileError{Dir: dir, Path: p, Why: "not in the statement: added after signing"}
		case !mode.IsRegular():
			return &FileError{Dir: dir, Path: p, Why: "not a regular file (build writes none other)"}
		}
		got, err := fileSHA256(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			return fmt.Errorf("verifying %s: %w", filepath.Join(dir, filepath.FromSlash(p)), unwrapPath(err))
		}
		if got != sum {
			return &FileError{Dir: dir, Path: p, Why: fmt.Sprintf("changed after signing: sha256 %s, signed %s", got, sum)}
		}
	}
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return "", err
	} else if !st.Mode().IsRegular() {
		return "", inputfile.NotRegular(st.Mode())
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// unwrapPath drops the path an *fs.PathError repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
