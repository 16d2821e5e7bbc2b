package distros

import (
	"bytes"
	"crypto/sha256"
	_ "embed" // the pinned digests of the reduced definitions
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/osbuild/images/data/distrodefs"
	yaml "go.yaml.in/yaml/v3"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/internal/usercache"
)

// osbuild/images decodes the definitions of every image type of a distro
// (115 KB of YAML for RHEL 9) each time a distro is looked up, while a
// build validates one image type: that decoding was most of a build's CPU.
// So the definitions are written once, per osbuild/images version, distro
// and image type, to the user's cache directory with every other distro
// and image type left out, and osbuild reads them from there (its
// "yamldir" override).
// What osbuild does with the one image type is unchanged: the tests compare
// the manifests it generates from both. The cache is keyed by a digest of
// the definitions built in, so a new osbuild/images gets its own.

// defsKey names the definitions built in: osbuild/images' module version
// and go.sum hash from the binary's build info, or, where that is missing
// or not a release (test binaries, a replace directive), a digest of the
// embedded definitions themselves, so that a cache never outlives them.
var defsKey = sync.OnceValue(func() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == osbuildImagesModule && dep.Replace == nil && dep.Sum != "" && dep.Version != "(devel)" {
				sum := sha256.Sum256([]byte(dep.Path + "@" + dep.Version + " " + dep.Sum))
				return hex.EncodeToString(sum[:])[:16]
			}
		}
	}
	return defsDigest()
})

const osbuildImagesModule = "github.com/osbuild/images"

// defsDigest is a digest of osbuild/images' embedded distro definitions.
func defsDigest() string {
	h := sha256.New()
	err := fs.WalkDir(distrodefs.Data, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(distrodefs.Data, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

var safeName = lazyregexp.New(`^[a-z0-9][a-z0-9._-]*$`)

// reducedDefs returns a directory holding osbuild's definitions of
// distroName with only imageType, creating it on first use; "" when that is
// not possible (no cache directory, an unknown version, a distro or type no
// definition has, no pinned digest for them), and then the full
// definitions are used.
//
// The cache is verified, not trusted: what osbuild would read there (every
// file, through the input gate: regular files only, no symlinks, bounded)
// must hash to the digest pinned in the binary for this distro and image
// type (defs.sha256, checked against the embedded definitions by
// TestReducedDefsPinned). A cache that does not (edited, a file added, a
// named pipe put in) is written again, or, when it cannot be, not used.
func reducedDefs(distroName, imageType string) string {
	version := defsKey()
	if version == "" || !safeName.MatchString(distroName) || !safeName.MatchString(imageType) {
		return ""
	}
	want, ok := pinnedDigest(distroName, imageType)
	if !ok {
		return ""
	}
	root, err := usercache.Dir("osbuild-defs")
	if err != nil {
		return ""
	}
	dir := filepath.Join(root, version, distroName, imageType)
	if got, err := cachedDigest(dir); err == nil && got == want {
		return dir
	}
	if _, err := os.Lstat(dir); err == nil {
		// Not what this binary writes: written again below.
		if err := os.RemoveAll(dir); err != nil {
			return ""
		}
	}
	if err := writeReducedDefs(dir, distroName, imageType, want); err != nil {
		return ""
	}
	if got, err := cachedDigest(dir); err != nil || got != want {
		return ""
	}
	return dir
}

// completeMarker is written last: a directory without it is not used.
const completeMarker = ".complete"

// maxDefsFile bounds a cached definitions file (the largest osbuild ships
// is ~120 KB).
const maxDefsFile = 4 << 20

// cachedDigest hashes what osbuild would read in a cache directory as
// treeDigest does, through the input gate; a symlink, a named pipe or any
// other non-regular file, or a directory without its completeMarker, is an
// error.
func cachedDigest(dir string) (string, error) {
	fsys, err := inputfile.Dir(dir)
	if err != nil {
		return "", err
	}
	if _, err := inputfile.ReadFS(fsys, completeMarker, 1<<10); err != nil {
		return "", err
	}
	files := map[string][]byte{}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || p == completeMarker {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: %w", p, inputfile.NotRegular(d.Type()))
		}
		data, err := inputfile.ReadFS(fsys, p, maxDefsFile)
		if err != nil {
			return err
		}
		files[p] = data
		return nil
	})
	if err != nil {
		return "", err
	}
	return treeDigest(files), nil
}

// treeDigest is the sha256 of a tree of files: each path, its length and
// its content, in path order.
func treeDigest(files map[string][]byte) string {
	h := sha256.New()
	for _, p := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(files[p]))
		h.Write(files[p])
	}
	return hex.EncodeToString(h.Sum(nil))
}

//go:embed defs.sha256
var pinnedDefs string

// pinnedDigest is the digest of the reduced definitions of distroName and
// imageType this binary pins. The first line of defs.sha256 is defsDigest
// of the definitions the table was made from; TestReducedDefsPinned checks
// that they are the ones built in, so it is not hashed again at each start
// (a stale table would only leave the cache unused: what is written and
// what is read must hash to the pinned digests).
func pinnedDigest(distroName, imageType string) (string, bool) {
	sum, ok := pinnedTable()[distroName+"/"+imageType]
	return sum, ok
}

var pinnedTable = sync.OnceValue(func() map[string]string {
	lines := strings.Split(strings.TrimSpace(pinnedDefs), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "defs ") {
		return nil
	}
	table := map[string]string{}
	for _, l := range lines[1:] {
		if sum, key, ok := strings.Cut(l, "  "); ok {
			table[key] = sum
		}
	}
	return table
})

// reducedTree is osbuild's definitions with distroName and imageType only,
// by path: what writeReducedDefs writes. Of the image type directories only
// the distro's own (its defs_path) is kept: osbuild reads no other for it.
func reducedTree(distroName, imageType string) (map[string][]byte, error) {
	files := map[string][]byte{}
	var typeFiles []string
	found, distroFound := false, false
	defsPath := ""
	// WalkDir visits the top-level files in name order, the order osbuild
	// reads them in (fs.Glob), so the first file listing the distro is the
	// one osbuild takes it from.
	err := fs.WalkDir(distrodefs.Data, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		// Image types live in <family>/*.yaml, read once the distro
		// says which family; the top-level files list the distros.
		if path.Dir(p) != "." {
			typeFiles = append(typeFiles, p)
			return nil
		}
		data, err := fs.ReadFile(distrodefs.Data, p)
		if err != nil {
			return err
		}
		if path.Ext(p) == ".yaml" {
			reduced, dp, has, err := reduceDistros(data, distroName, distroFound)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if has {
				distroFound, defsPath = true, dp
			}
			data = reduced
		}
		files[p] = data
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, p := range typeFiles {
		if defsPath != "" && path.Dir(p) != defsPath {
			continue
		}
		data, err := fs.ReadFile(distrodefs.Data, p)
		if err != nil {
			return nil, err
		}
		if path.Ext(p) == ".yaml" && path.Base(p)[0] != '_' {
			reduced, has, err := reduceImageTypes(data, imageType)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			found = found || has
			data = reduced
		}
		files[p] = data
	}
	if !found || !distroFound {
		return nil, errors.New("no definition has the distro and image type")
	}
	return files, nil
}

// writeReducedDefs writes the reduced definitions, when they hash to want,
// into a temporary directory beside dir and renames it into place; a
// concurrent writer that got there first wins.
func writeReducedDefs(dir, distroName, imageType, want string) error {
	files, err := reducedTree(distroName, imageType)
	if err != nil {
		return err
	}
	if got := treeDigest(files); got != want {
		return fmt.Errorf("the reduced definitions hash to %s, the binary pins %s", got, want)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, p := range slices.Sorted(maps.Keys(files)) {
		target := filepath.Join(tmp, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, files[p], 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, completeMarker), []byte(defsKey()+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, completeMarker)); serr == nil {
			return nil // another process wrote it
		}
		return err
	}
	return nil
}

// reduceImageTypes keeps, of an image type definitions file, the image
// type keep and the ones that define anchors it uses (transitively); the
// rest of the document, with its shared anchors, is kept as it is. has
// reports whether the file defines keep at all.
func reduceImageTypes(data []byte, keep string) (out []byte, has bool, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, false, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return data, false, nil
	}
	top := doc.Content[0]
	var types *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "image_types" && top.Content[i+1].Kind == yaml.MappingNode {
			types = top.Content[i+1]
		}
	}
	if types == nil {
		return data, false, nil
	}
	definedBy := map[string]string{} // anchor -> image type defining it
	uses := map[string][]string{}    // image type -> anchors it refers to
	for i := 0; i+1 < len(types.Content); i += 2 {
		name := types.Content[i].Value
		walkNodes(types.Content[i+1], func(n *yaml.Node) {
			if n.Anchor != "" {
				definedBy[n.Anchor] = name
			}
			if n.Kind == yaml.AliasNode {
				uses[name] = append(uses[name], n.Value)
			}
		})
		has = has || name == keep
	}
	if !has {
		return data, false, nil
	}
	kept := map[string]bool{keep: true}
	queue := []string{keep}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		for _, a := range uses[name] {
			if t, ok := definedBy[a]; ok && !kept[t] {
				kept[t] = true
				queue = append(queue, t)
			}
		}
	}
	var content []*yaml.Node
	for i := 0; i+1 < len(types.Content); i += 2 {
		if kept[types.Content[i].Value] {
			content = append(content, types.Content[i], types.Content[i+1])
		}
	}
	types.Content = content
	pruneCommon(top, types)
	out, err = encodeYAML(&doc)
	return out, true, err
}

// reduceDistros keeps, of a file listing distros, the first entry osbuild
// would take for name (its name, or its "match" pattern, matching) and the
// entries defining anchors that one uses; when an earlier file already had
// the distro (taken), none. Entries osbuild would have passed over are the
// only others kept, so it takes the same one. has reports whether this
// file has the distro, and defsPath is then the directory of its image
// types ("" when the entry does not say).
func reduceDistros(data []byte, name string, taken bool) (out []byte, defsPath string, has bool, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, "", false, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, "", false, errors.New("not a mapping")
	}
	top := doc.Content[0]
	var list *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "distros" && top.Content[i+1].Kind == yaml.SequenceNode {
			list = top.Content[i+1]
		}
	}
	if list == nil {
		return nil, "", false, errors.New("no distros list")
	}
	winner := -1
	if !taken {
		for i, entry := range list.Content {
			var id struct {
				Name     string `yaml:"name"`
				Match    string `yaml:"match"`
				DefsPath string `yaml:"defs_path"`
			}
			if err := entry.Decode(&id); err != nil {
				return nil, "", false, err
			}
			if id.Name == name {
				winner, defsPath = i, id.DefsPath
				break
			}
			if id.Match != "" {
				// osbuild matches the whole name (pkg/distro/defs).
				re, err := regexp.Compile("^" + id.Match + "$")
				if err != nil {
					return nil, "", false, err
				}
				if re.MatchString(name) {
					winner, defsPath = i, id.DefsPath
					break
				}
			}
		}
	}
	var kept []*yaml.Node
	if winner >= 0 {
		definedBy := map[string]int{}
		for i, entry := range list.Content[:winner] {
			walkNodes(entry, func(n *yaml.Node) {
				if n.Anchor != "" {
					definedBy[n.Anchor] = i
				}
			})
		}
		keep := map[int]bool{winner: true}
		queue := []int{winner}
		for len(queue) > 0 {
			i := queue[0]
			queue = queue[1:]
			walkNodes(list.Content[i], func(n *yaml.Node) {
				if n.Kind != yaml.AliasNode {
					return
				}
				if j, ok := definedBy[n.Value]; ok && !keep[j] {
					keep[j] = true
					queue = append(queue, j)
				}
			})
		}
		for i, entry := range list.Content {
			if keep[i] {
				kept = append(kept, entry)
			}
		}
	}
	list.Content = kept
	out, err = encodeYAML(&doc)
	return out, defsPath, winner >= 0, err
}

// encodeYAML writes a document back in osbuild's indentation.
func encodeYAML(doc *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// pruneCommon drops the entries of the file's ".common" mapping (a holding
// place for shared anchors, which osbuild does not read otherwise) that
// define no anchor the kept image types use, directly or through other
// anchors.
func pruneCommon(top, types *yaml.Node) {
	var common *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == ".common" && top.Content[i+1].Kind == yaml.MappingNode {
			common = top.Content[i+1]
		}
	}
	if common == nil {
		return
	}
	anchors := map[string]*yaml.Node{}
	walkNodes(top, func(n *yaml.Node) {
		if n.Anchor != "" {
			anchors[n.Anchor] = n
		}
	})
	needed := map[string]bool{}
	var need func(n *yaml.Node)
	need = func(n *yaml.Node) {
		walkNodes(n, func(c *yaml.Node) {
			if c.Kind == yaml.AliasNode && !needed[c.Value] {
				needed[c.Value] = true
				if def := anchors[c.Value]; def != nil {
					need(def)
				}
			}
		})
	}
	need(types)
	var content []*yaml.Node
	for i := 0; i+1 < len(common.Content); i += 2 {
		keep := false
		walkNodes(common.Content[i+1], func(n *yaml.Node) { keep = keep || needed[n.Anchor] })
		if keep {
			content = append(content, common.Content[i], common.Content[i+1])
		}
	}
	common.Content = content
}

func walkNodes(n *yaml.Node, fn func(*yaml.Node)) {
	fn(n)
	for _, c := range n.Content {
		walkNodes(c, fn)
	}
}

// imageBuilderExperimental is the environment variable osbuild/images
// reads its experimental flags from (pkg/experimentalflags).
const imageBuilderExperimental = "IMAGE_BUILDER_EXPERIMENTAL"

// envMu serialises the environment change withDefs makes.
var envMu sync.Mutex

// withDefs runs fn with osbuild reading its definitions from dir. (Its
// warning about the override goes to its logger, which discards by
// default.)
func withDefs(dir string, fn func()) {
	envMu.Lock()
	defer envMu.Unlock()
	prev, had := os.LookupEnv(imageBuilderExperimental)
	os.Setenv(imageBuilderExperimental, "yamldir="+dir)
	defer func() {
		if had {
			os.Setenv(imageBuilderExperimental, prev)
		} else {
			os.Unsetenv(imageBuilderExperimental)
		}
	}()
	fn()
}
