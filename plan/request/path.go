package request

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/internal/text"
)

// Paths in a composition file are relative to the file's directory (as
// Containerfile COPY sources are to the build context, and a kustomization's
// resources to the kustomization): "pull-secret.json" beside the file,
// "../common/ca.crt" in a directory shared by a fleet's files, or absolute.
// Leaving the file's directory is allowed (a fleet repository keeps shared
// files one level up); every path must exist when the file is read, so a
// mistake is reported with the file, line and key rather than by the
// command that reads it later. Paths given by flags are relative to the
// working directory, as always. "~" is not expanded: no shell reads the
// file.
//
// The path types resolve and check themselves as the file is decoded
// (UnmarshalText, whose errors the decoder reports with the line and key);
// decoding holds decodeMu and sets decodeDir, the directory of the file
// being decoded. A command decodes one file, so the lock costs nothing.
var (
	decodeMu  sync.Mutex
	decodeDir string
)

// FilePath is a path to a file: it must exist and not be a directory.
type FilePath string

// DirPath is a path to a directory: it must exist and be one.
type DirPath string

// OutputPath is build's output directory: resolved like the other paths,
// but it need not exist (build creates it), and may hold build's {id},
// {profile}, {arch} and {release} placeholders.
type OutputPath string

// UpgradeFrom is a release ("4.16", "4.16.3") or a path to the
// compose.lock.json (or build output) of the build the device runs,
// as --upgrade-from takes it: a path is resolved like the others.
type UpgradeFrom string

// UnmarshalText resolves and checks a file path.
func (p *FilePath) UnmarshalText(b []byte) error {
	s, err := resolve(string(b), false)
	*p = FilePath(s)
	return err
}

// UnmarshalText resolves and checks a directory path.
func (p *DirPath) UnmarshalText(b []byte) error {
	s, err := resolve(string(b), true)
	*p = DirPath(s)
	return err
}

// UnmarshalText resolves the output directory.
func (p *OutputPath) UnmarshalText(b []byte) error {
	s, err := join(string(b))
	*p = OutputPath(s)
	return err
}

// UnmarshalText keeps a release as it is and resolves a path.
func (u *UpgradeFrom) UnmarshalText(b []byte) error {
	s := string(b)
	if _, err := semver.NewVersion(s); err == nil && !strings.ContainsAny(s, `/\`) {
		*u = UpgradeFrom(s)
		return nil
	}
	r, _, err := resolveAny(s)
	*u = UpgradeFrom(r)
	if err != nil {
		return fmt.Errorf("neither a release (4.16, 4.16.3) nor a lock file or build output: %w", err)
	}
	return nil
}

// ImageSource is --operator-catalog: an OCI layout or archive on this
// machine (oci:PATH[:NAME], oci-archive:PATH[:NAME]), whose path is
// resolved like the other paths, or a registry's image, kept as it is.
type ImageSource string

// UnmarshalText resolves the path of a layout or archive.
func (i *ImageSource) UnmarshalText(b []byte) error {
	s := string(b)
	for _, t := range []string{"oci-archive:", "oci:"} {
		rest, ok := strings.CutPrefix(s, t)
		if !ok {
			continue
		}
		p, name, hasName := strings.Cut(rest, ":")
		r, _, err := resolveAny(p)
		if hasName {
			r += ":" + name
		}
		*i = ImageSource(t + r)
		return err
	}
	*i = ImageSource(s)
	return nil
}

// CheckPath is the rule every path an option takes keeps, whether a flag
// or a composition file's key gives it: it is not empty, and it holds no
// control character (a newline, a tab, an escape...), line separator or
// format character, which would make it print, and be written into a lock,
// a drop-in's comment or the TOML --print-file writes, as something else
// than it is. Invalid UTF-8 is none of these: a file name may hold it.
func CheckPath(p string) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case text.HasControl(p):
		return fmt.Errorf("path %s holds a control character, which no path given to microshift-compose may hold: rename it", text.QuoteExcerpt(p))
	}
	return nil
}

// join resolves p against the directory of the file being decoded.
func join(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path: leave the key out instead")
	}
	if err := CheckPath(p); err != nil {
		return "", err
	}
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		return "", fmt.Errorf("path %q starts with ~, which no shell expands here: write it relative to the file or absolute", p)
	case filepath.IsAbs(p):
		return filepath.Clean(p), nil
	}
	return filepath.Join(decodeDir, p), nil
}

// resolve resolves p and checks that it is a directory (dir) or a file.
func resolve(p string, dir bool) (string, error) {
	r, st, err := resolveAny(p)
	switch {
	case err != nil:
		return r, err
	case dir && !st.IsDir():
		return r, fmt.Errorf("%s is not a directory", shown(p, r))
	case !dir && st.IsDir():
		return r, fmt.Errorf("%s is a directory, not a file", shown(p, r))
	}
	return r, nil
}

// resolveAny resolves p and checks that it exists.
func resolveAny(p string) (string, fs.FileInfo, error) {
	r, err := join(p)
	if err != nil {
		return r, nil, err
	}
	st, err := os.Stat(r)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return r, nil, fmt.Errorf("%s does not exist", shown(p, r))
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return r, nil, fmt.Errorf("%s: %v", shown(p, r), err)
	}
	return r, st, nil
}

// shown names a path as written and, when relative, where it resolved.
func shown(p, r string) string {
	if p == r {
		return text.QuoteExcerpt(p)
	}
	return fmt.Sprintf("%s (%s, relative to the file)", text.QuoteExcerpt(p), text.Escape(r))
}
