package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
	"time"

	storagedriver "github.com/distribution/distribution/v3/registry/storage/driver"
	"github.com/distribution/distribution/v3/registry/storage/driver/factory"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/microshift-compose/microshift-compose/airgap"
)

// driverName is the storage driver's name in the registry's configuration.
const driverName = "microshift-compose-layout"

// treeParameter is the configuration parameter that hands the driver its
// tree (the registry is configured in process, so a parameter can be a Go
// value).
const treeParameter = "tree"

func init() {
	factory.Register(driverName, driverFactory{})
}

type driverFactory struct{}

func (driverFactory) Create(_ context.Context, parameters map[string]any) (storagedriver.StorageDriver, error) {
	t, ok := parameters[treeParameter].(*tree)
	if !ok {
		return nil, fmt.Errorf("the %s storage driver is configured by serve only", driverName)
	}
	return &layoutDriver{tree: t}, nil
}

// storageRoot is where distribution keeps everything in its storage
// (registry/storage/paths.go: "/docker/registry/" + "v2").
const storageRoot = "/docker/registry/v2"

// tree is the registry's storage as distribution lays it out, made of the
// layout's content: small files (the links that name manifests in a
// repository, tags, the manifests themselves) held in memory, and the
// layout's blobs, read in place when asked for.
type tree struct {
	nodes   map[string]*node
	content *airgap.LayoutContent
	modTime time.Time
}

type node struct {
	// children are the names in a directory, sorted when listed.
	children map[string]bool
	// data is a small file's content.
	data []byte
	// blob, when set, is a layout blob of size bytes.
	blob *v1.Hash
	size int64
}

func (n *node) isDir() bool { return n.children != nil }

func newTree(content *airgap.LayoutContent, modTime time.Time) *tree {
	t := &tree{nodes: map[string]*node{"/": {children: map[string]bool{}}}, content: content, modTime: modTime}
	return t
}

// put adds a file and the directories above it. A file already there is
// kept: links and blobs are named by their digests, so the same path is
// always the same content.
func (t *tree) put(p string, n *node) {
	if _, ok := t.nodes[p]; ok {
		return
	}
	t.nodes[p] = n
	for {
		parent, name := path.Dir(p), path.Base(p)
		pn, ok := t.nodes[parent]
		if !ok {
			pn = &node{children: map[string]bool{}}
			t.nodes[parent] = pn
		}
		pn.children[name] = true
		if ok || parent == "/" {
			return
		}
		p = parent
	}
}

func (t *tree) putFile(p string, data []byte) { t.put(p, &node{data: data}) }

func blobDataPath(d v1.Hash) string {
	return path.Join(storageRoot, "blobs", d.Algorithm, d.Hex[:2], d.Hex, "data")
}

// putManifest stores a manifest and links it into repo by digest.
func (t *tree) putManifest(repo string, m airgap.LayoutManifest) {
	t.putFile(blobDataPath(m.Digest), m.Data)
	t.putFile(path.Join(storageRoot, "repositories", repo, "_manifests", "revisions", m.Digest.Algorithm, m.Digest.Hex, "link"), []byte(m.Digest.String()))
}

// putTag points repo:tag at a manifest.
func (t *tree) putTag(repo, tag string, d v1.Hash) {
	dir := path.Join(storageRoot, "repositories", repo, "_manifests", "tags", tag)
	t.putFile(path.Join(dir, "current", "link"), []byte(d.String()))
	t.putFile(path.Join(dir, "index", d.Algorithm, d.Hex, "link"), []byte(d.String()))
}

// putBlob links a config or layer blob into repo and, when the layout
// holds it, stores it. A blob the layout lacks (a differential bundle's
// base holds it) is linked but has no data: the registry answers 404
// BLOB_UNKNOWN for it.
func (t *tree) putBlob(repo string, d v1.Descriptor) {
	t.putFile(path.Join(storageRoot, "repositories", repo, "_layers", d.Digest.Algorithm, d.Digest.Hex, "link"), []byte(d.Digest.String()))
	if size, ok := t.content.Blobs[d.Digest]; ok {
		digest := d.Digest
		t.put(blobDataPath(digest), &node{blob: &digest, size: size})
	}
}

// tagOf returns the tag a repository link names, for conflict messages.
func (t *tree) tagOf(repo, tag string) (string, bool) {
	n, ok := t.nodes[path.Join(storageRoot, "repositories", repo, "_manifests", "tags", tag, "current", "link")]
	if !ok {
		return "", false
	}
	return string(n.data), true
}

// layoutDriver is a read-only distribution storage driver over a tree.
type layoutDriver struct{ tree *tree }

var _ storagedriver.StorageDriver = (*layoutDriver)(nil)

func (d *layoutDriver) Name() string { return driverName }

func (d *layoutDriver) lookup(p string) (*node, error) {
	n, ok := d.tree.nodes[path.Clean("/"+p)]
	if !ok {
		return nil, storagedriver.PathNotFoundError{Path: p, DriverName: driverName}
	}
	return n, nil
}

func (d *layoutDriver) GetContent(ctx context.Context, p string) ([]byte, error) {
	n, err := d.lookup(p)
	if err != nil {
		return nil, err
	}
	if n.isDir() {
		return nil, storagedriver.PathNotFoundError{Path: p, DriverName: driverName}
	}
	if n.blob == nil {
		return bytes.Clone(n.data), nil
	}
	rc, err := d.Reader(ctx, p, 0)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

func (d *layoutDriver) Reader(_ context.Context, p string, offset int64) (io.ReadCloser, error) {
	n, err := d.lookup(p)
	if err != nil {
		return nil, err
	}
	if n.isDir() {
		return nil, storagedriver.PathNotFoundError{Path: p, DriverName: driverName}
	}
	size := int64(len(n.data))
	if n.blob != nil {
		size = n.size
	}
	if offset < 0 || offset > size {
		return nil, storagedriver.InvalidOffsetError{Path: p, Offset: offset, DriverName: driverName}
	}
	if n.blob == nil {
		return io.NopCloser(bytes.NewReader(n.data[offset:])), nil
	}
	rc, err := d.tree.content.OpenBlob(*n.blob, offset)
	if errors.Is(err, airgap.ErrBlobNotInLayout) {
		return nil, storagedriver.PathNotFoundError{Path: p, DriverName: driverName}
	}
	return rc, err
}

func (d *layoutDriver) Stat(_ context.Context, p string) (storagedriver.FileInfo, error) {
	n, err := d.lookup(p)
	if err != nil {
		return nil, err
	}
	fi := storagedriver.FileInfoFields{Path: p, ModTime: d.tree.modTime, IsDir: n.isDir(), Size: int64(len(n.data))}
	if n.blob != nil {
		fi.Size = n.size
	}
	return storagedriver.FileInfoInternal{FileInfoFields: fi}, nil
}

func (d *layoutDriver) List(_ context.Context, p string) ([]string, error) {
	n, err := d.lookup(p)
	if err != nil {
		return nil, err
	}
	if !n.isDir() {
		return nil, storagedriver.PathNotFoundError{Path: p, DriverName: driverName}
	}
	dir := path.Clean("/" + p)
	out := make([]string, 0, len(n.children))
	for c := range n.children {
		out = append(out, path.Join(dir, c))
	}
	slices.Sort(out)
	return out, nil
}

func (d *layoutDriver) Walk(ctx context.Context, p string, f storagedriver.WalkFn, options ...func(*storagedriver.WalkOptions)) error {
	return storagedriver.WalkFallback(ctx, d, p, f, options...)
}

// The layout is served read-only: the registry runs in its read-only
// maintenance mode and refuses pushes and deletes before they reach the
// driver; these are the backstop.

func (d *layoutDriver) PutContent(context.Context, string, []byte) error {
	return storagedriver.ErrUnsupportedMethod{DriverName: driverName}
}

func (d *layoutDriver) Writer(context.Context, string, bool) (storagedriver.FileWriter, error) {
	return nil, storagedriver.ErrUnsupportedMethod{DriverName: driverName}
}

func (d *layoutDriver) Move(context.Context, string, string) error {
	return storagedriver.ErrUnsupportedMethod{DriverName: driverName}
}

func (d *layoutDriver) Delete(context.Context, string) error {
	return storagedriver.ErrUnsupportedMethod{DriverName: driverName}
}

// RedirectURL is empty: the registry serves blobs itself.
func (d *layoutDriver) RedirectURL(*http.Request, string) (string, error) { return "", nil }
