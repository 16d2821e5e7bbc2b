package rebase

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/microshift-compose/microshift-compose/internal/atomicfile"
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/releases"
)

// ErrBundleExists is wrapped when the bundle for a stream exists and may
// not be replaced.
var ErrBundleExists = errors.New("release bundle already exists")

// ImportResult says what Import wrote.
type ImportResult struct {
	Path    string                   `json:"path"`
	Stream  string                   `json:"stream"`
	Version string                   `json:"version"`
	Origin  string                   `json:"origin"`
	Bases   map[releases.Arch]string `json:"bases"`
	Files   int                      `json:"files"`
	Images  int                      `json:"images"`
	// Unpinned counts tag-only references (upstream AI model serving
	// ships some); builds refuse them without --allow-unpinned.
	Unpinned int `json:"unpinned"`
	// Replaced is set when an existing bundle was overwritten, Unchanged
	// when it already held exactly this content (nothing was written).
	Replaced  bool `json:"replaced"`
	Unchanged bool `json:"unchanged"`
	// Diff is the change from the replaced bundle.
	Diff *ReleaseDiff `json:"diff,omitempty"`
}

// Import turns the MicroShift release directory dir (the layout of the
// microshift-release-info RPMs) into the project's embedded release data:
// dataDir/<stream>.json, a bundle recording origin (where the files came
// from, e.g. "openshift/microshift at <commit>"). An existing bundle is
// replaced only with force. The bundle is written atomically and parsed
// back before it is.
func Import(dir, dataDir, origin string, force bool) (*ImportResult, error) {
	origin = strings.TrimSpace(origin)
	if origin == "" {
		return nil, errors.New(`an origin is required: say where the files come from, e.g. "openshift/microshift at <commit>"`)
	}
	if strings.IndexFunc(origin, unicode.IsControl) >= 0 {
		return nil, fmt.Errorf("origin %q must be one line of text", origin)
	}
	st, err := os.Stat(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("release data directory %s does not exist (run in the microshift-compose source tree, or pass --data-dir)", dataDir)
	}
	if err != nil {
		return nil, fmt.Errorf("checking release data directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("release data directory %s is not a directory", dataDir)
	}
	rel, err := releases.LoadDir(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dataDir, rel.Stream()+".json")
	data := releases.EncodeBundle(rel, origin)
	back, err := releases.ParseBundle(path, data)
	if err != nil {
		return nil, fmt.Errorf("the encoded bundle does not parse (a bug): %w", err)
	}
	res := &ImportResult{Path: path, Stream: rel.Stream(), Version: rel.Version.String(), Origin: origin, Bases: map[releases.Arch]string{}}
	for _, a := range back.Arches() {
		res.Bases[a] = back.Base(a)
	}
	for _, f := range back.Files() {
		res.Files++
		for _, im := range f.Images {
			res.Images++
			if !releases.IsDigestPinned(im.Ref) {
				res.Unpinned++
			}
		}
	}
	old, err := inputfile.Read("release bundle", path, releases.MaxBundleSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case bytes.Equal(old, data):
		res.Unchanged = true
		return res, nil
	default:
		prev, perr := releases.ParseBundle(path, old)
		if !force {
			desc := ""
			if perr == nil {
				desc = fmt.Sprintf(" (release %s, origin %q)", prev.Version, prev.Origin)
			}
			return nil, fmt.Errorf("%s%s: %w; pass --force to replace it", path, desc, ErrBundleExists)
		}
		res.Replaced = true
		if perr == nil {
			res.Diff = DiffReleases(prev, back, path+" (before)", dir)
		}
	}
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return nil, err
	}
	return res, nil
}
