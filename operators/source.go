package operators

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/microshift-compose/microshift-compose/internal/imageref"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/releases"
)

// Transports a catalog image is read with.
const (
	TransportOCI     = "oci"
	TransportArchive = "oci-archive"
	TransportDocker  = "docker"
)

// ConfigsLabel is the catalog image label naming its configs directory.
const ConfigsLabel = "operators.operatorframework.io.index.configs.v1"

// Ref is where a catalog image is read from: an OCI layout directory
// (oci:DIR[:NAME]) or archive (oci-archive:FILE[:NAME]), read on this
// machine, or a registry (docker://REFERENCE, or a reference alone).
type Ref struct {
	Transport string
	// Path is the layout's directory or archive.
	Path string
	// Name picks the layout's image by its org.opencontainers.image.ref.name
	// (optional when the layout holds one image); for a registry, the
	// image reference.
	Name string
}

func (r Ref) String() string {
	switch r.Transport {
	case TransportDocker:
		return "docker://" + r.Name
	case "":
		return ""
	}
	s := r.Transport + ":" + r.Path
	if r.Name != "" {
		s += ":" + r.Name
	}
	return s
}

// Local reports whether the catalog is read from this machine's disk.
func (r Ref) Local() bool { return r.Transport == TransportOCI || r.Transport == TransportArchive }

// CatalogFlag is the flag naming the catalog image.
const CatalogFlag = "--operator-catalog"

// ParseRef parses --operator-catalog.
func ParseRef(s string) (Ref, error) {
	if text.HasUnsafe(s) {
		return Ref{}, fmt.Errorf("%s %s holds a control character", CatalogFlag, text.QuoteExcerpt(s))
	}
	for _, t := range []string{TransportArchive, TransportOCI} {
		rest, ok := strings.CutPrefix(s, t+":")
		if !ok {
			continue
		}
		path, nm, _ := strings.Cut(rest, ":")
		if path == "" {
			return Ref{}, fmt.Errorf("%s %s: no path (want %s:PATH[:NAME])", CatalogFlag, text.QuoteExcerpt(s), t)
		}
		return Ref{Transport: t, Path: path, Name: nm}, nil
	}
	nm := strings.TrimPrefix(s, "docker://")
	if nm == "" {
		return Ref{}, fmt.Errorf("%s: empty (want oci:DIR, oci-archive:FILE or docker://REFERENCE)", CatalogFlag)
	}
	if strings.Contains(nm, "://") {
		return Ref{}, fmt.Errorf("%s %s: unknown transport (want oci:DIR, oci-archive:FILE or docker://REFERENCE)", CatalogFlag, text.QuoteExcerpt(s))
	}
	if err := releases.ValidateRef(nm); err != nil {
		return Ref{}, fmt.Errorf("%s %s: %w", CatalogFlag, text.QuoteExcerpt(s), err)
	}
	return Ref{Transport: TransportDocker, Name: nm}, nil
}

// CatalogImage is a catalog image opened for one arch: its manifest and config,
// and its blobs where they are read from.
type CatalogImage struct {
	From Ref
	// Repository is the image's repository (registry/path): the filtered
	// catalog is named in it.
	Repository string
	// Digest is what the reference pins: the index of a multi-arch
	// image, or the image manifest.
	Digest v1.Hash
	// Resolved reports that the reference named a tag, resolved to
	// Digest when the image was opened.
	Resolved bool
	// Manifest is the arch's image manifest.
	Manifest     *v1.Manifest
	ManifestData []byte
	ManifestHash v1.Hash
	ConfigFile   *v1.ConfigFile
	ConfigData   []byte
	// ConfigsDir is the configs directory its label names, without the
	// leading slash.
	ConfigsDir string
	blobs      blobStore
}

// Ref is the catalog by digest.
func (im *CatalogImage) Ref() string { return im.Repository + "@" + im.Digest.String() }

// Close releases the blobs read from a registry.
func (im *CatalogImage) Close() error {
	if im.blobs == nil {
		return nil
	}
	return im.blobs.close()
}

// OpenBlob streams a blob of the image.
func (im *CatalogImage) OpenBlob(d v1.Hash) (io.ReadCloser, error) { return im.blobs.open(d) }

// blobStore holds an image's blobs.
type blobStore interface {
	open(d v1.Hash) (io.ReadCloser, error)
	close() error
}

// OpenOptions tune Open.
type OpenOptions struct {
	// Registry is how a registry is reached (docker://).
	Registry registryclient.Options
	// Limits bound the layers.
	Limits Limits
}

// maxManifest bounds a manifest, index or config: as podman and skopeo
// bound them.
const maxManifest = 4 << 20

// Open reads the catalog image at r for arch: its manifest for
// linux/<arch> (picked from an index), its config and its configs label.
// A registry's image is read with opts.Registry, and its layers are
// fetched into a temporary directory (removed by Close), verified.
func Open(ctx context.Context, r Ref, arch releases.Arch, opts OpenOptions) (*CatalogImage, error) {
	var im *CatalogImage
	var err error
	switch r.Transport {
	case TransportOCI, TransportArchive:
		im, err = openLayout(r, arch)
	case TransportDocker:
		im, err = openRegistry(ctx, r, arch, opts)
	default:
		return nil, fmt.Errorf("%s: unknown transport %q", CatalogFlag, r.Transport)
	}
	if err != nil {
		return nil, fmt.Errorf("reading operator catalog %s: %w", r, err)
	}
	if err := im.readConfig(opts.Limits); err != nil {
		im.Close()
		return nil, fmt.Errorf("reading operator catalog %s: %w", r, err)
	}
	return im, nil
}

// readConfig reads the config and the configs label.
func (im *CatalogImage) readConfig(lim Limits) error {
	m := im.Manifest
	if m.Config.Size > maxManifest {
		return fmt.Errorf("image config of %d bytes, more than %d", m.Config.Size, maxManifest)
	}
	data, err := readBlob(im.blobs, m.Config)
	if err != nil {
		return fmt.Errorf("image config: %w", err)
	}
	cf, err := v1.ParseConfigFile(strings.NewReader(string(data)))
	if err != nil {
		return fmt.Errorf("image config: %w", err)
	}
	if len(cf.RootFS.DiffIDs) != len(m.Layers) {
		return fmt.Errorf("image config lists %d layers and the manifest %d", len(cf.RootFS.DiffIDs), len(m.Layers))
	}
	dir := cf.Config.Labels[ConfigsLabel]
	if dir == "" {
		return fmt.Errorf("not a file-based catalog: the image has no %s label naming its configs directory (an SQLite index image is not supported: migrate it with opm migrate)", ConfigsLabel)
	}
	clean := filepath.ToSlash(filepath.Clean("/" + dir))
	if clean == "/" || text.HasUnsafe(dir) {
		return fmt.Errorf("label %s is %s, not a directory of the image", ConfigsLabel, text.QuoteExcerpt(dir))
	}
	for _, l := range m.Layers {
		if l.Size > lim.LayerBytes {
			return fmt.Errorf("%w: layer %s of %d bytes, more than %d", ErrLimit, l.Digest, l.Size, lim.LayerBytes)
		}
	}
	im.ConfigFile, im.ConfigData, im.ConfigsDir = cf, data, strings.TrimPrefix(clean, "/")
	return nil
}

// readBlob reads a small blob (a manifest, an index, a config) and checks
// it against its descriptor.
func readBlob(s blobStore, d v1.Descriptor) ([]byte, error) {
	rc, err := s.open(d.Digest)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxManifest+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxManifest {
		return nil, fmt.Errorf("%s: more than %d bytes", d.Digest, maxManifest)
	}
	if err := checkDigest(data, d.Digest); err != nil {
		return nil, err
	}
	if d.Size != 0 && int64(len(data)) != d.Size {
		return nil, fmt.Errorf("%s: %d bytes, its descriptor says %d", d.Digest, len(data), d.Size)
	}
	return data, nil
}

func checkDigest(data []byte, want v1.Hash) error {
	if want.Algorithm != "sha256" {
		return fmt.Errorf("digest %s: only sha256 is supported", want)
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != want.Hex {
		return fmt.Errorf("%s: the content does not match its digest", want)
	}
	return nil
}

// pickManifest reads the image manifest of top for arch: top itself, or
// the linux/<arch> manifest an index lists.
func pickManifest(s blobStore, top []byte, mt types.MediaType, topHash v1.Hash, arch releases.Arch) (*v1.Manifest, []byte, v1.Hash, error) {
	if mt.IsIndex() {
		idx, err := v1.ParseIndexManifest(strings.NewReader(string(top)))
		if err != nil {
			return nil, nil, v1.Hash{}, fmt.Errorf("index %s: %w", topHash, err)
		}
		var found *v1.Descriptor
		var have []string
		for i, d := range idx.Manifests {
			if d.Platform == nil {
				continue
			}
			have = append(have, d.Platform.OS+"/"+d.Platform.Architecture)
			if d.Platform.OS == "linux" && d.Platform.Architecture == arch.GOARCH() && found == nil {
				found = &idx.Manifests[i]
			}
		}
		if found == nil {
			return nil, nil, v1.Hash{}, fmt.Errorf("index %s has no linux/%s image (it has %s): a catalog image for the device's arch is needed", topHash, arch.GOARCH(), listSome(have, 6))
		}
		data, err := readBlob(s, *found)
		if err != nil {
			return nil, nil, v1.Hash{}, fmt.Errorf("linux/%s manifest: %w", arch.GOARCH(), err)
		}
		top, topHash, mt = data, found.Digest, found.MediaType
	}
	if !mt.IsImage() {
		return nil, nil, v1.Hash{}, fmt.Errorf("%s is a %s, not an image", topHash, mt)
	}
	m, err := v1.ParseManifest(strings.NewReader(string(top)))
	if err != nil {
		return nil, nil, v1.Hash{}, fmt.Errorf("manifest %s: %w", topHash, err)
	}
	return m, top, topHash, nil
}

// ociIndex is an OCI layout's index.json.
type ociIndex struct {
	Manifests []v1.Descriptor `json:"manifests"`
}

const refNameAnnotation = "org.opencontainers.image.ref.name"

// openLayout opens an image of an OCI layout directory or archive.
func openLayout(r Ref, arch releases.Arch) (*CatalogImage, error) {
	var s blobStore
	var err error
	if r.Transport == TransportOCI {
		s, err = openDirStore(r.Path)
	} else {
		s, err = openArchiveStore(r.Path)
	}
	if err != nil {
		return nil, err
	}
	im, err := layoutImage(s, r, arch)
	if err != nil {
		s.close()
		return nil, err
	}
	return im, nil
}

func layoutImage(s blobStore, r Ref, arch releases.Arch) (*CatalogImage, error) {
	data, err := readIndexJSON(s)
	if err != nil {
		return nil, err
	}
	var idx ociIndex
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("index.json: %v", err)
	}
	var found *v1.Descriptor
	var names []string
	for i, d := range idx.Manifests {
		n := d.Annotations[refNameAnnotation]
		names = append(names, cmpOr(n, d.Digest.String()))
		if r.Name == "" || n == r.Name || d.Digest.String() == r.Name {
			if found != nil && r.Name == "" {
				return nil, fmt.Errorf("the layout holds %d images (%s): name one (%s:%s:NAME)", len(idx.Manifests), listSome(names, 4), r.Transport, r.Path)
			}
			if found == nil {
				found = &idx.Manifests[i]
			}
		}
	}
	if found == nil {
		if r.Name != "" {
			return nil, fmt.Errorf("the layout has no image named %s (it has %s)", text.QuoteExcerpt(r.Name), listSome(names, 4))
		}
		return nil, errors.New("the layout holds no image")
	}
	refName := found.Annotations[refNameAnnotation]
	repo, err := imageref.ParseReference(refName, name.StrictValidation)
	if err == nil {
		err = releases.ValidateRef(refName)
	}
	if err != nil {
		return nil, fmt.Errorf("the layout names its image %s, not a full reference (registry/repository:tag): the filtered catalog is named in the catalog's repository; copy it with 'skopeo copy docker://REF %s:%s:REF' (mirror --to oci: names images so too)", text.QuoteExcerpt(cmpOr(refName, "nothing")), r.Transport, r.Path)
	}
	top, err := readBlob(s, *found)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", refName, err)
	}
	m, mdata, mh, err := pickManifest(s, top, found.MediaType, found.Digest, arch)
	if err != nil {
		return nil, err
	}
	return &CatalogImage{From: r, Repository: repo.Context().Name(), Digest: found.Digest, Manifest: m, ManifestData: mdata, ManifestHash: mh, blobs: s}, nil
}

func readIndexJSON(s blobStore) ([]byte, error) {
	var rc io.ReadCloser
	var err error
	switch st := s.(type) {
	case *dirStore:
		rc, err = os.Open(filepath.Join(st.dir, "index.json"))
	case *archiveStore:
		rc, err = st.openEntry("index.json")
	}
	if err != nil {
		return nil, fmt.Errorf("not an OCI layout: %w", err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxManifest+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxManifest {
		return nil, fmt.Errorf("index.json of more than %d bytes", maxManifest)
	}
	return data, nil
}

// dirStore is an OCI layout directory.
type dirStore struct{ dir string }

func openDirStore(dir string) (*dirStore, error) {
	st, err := os.Stat(filepath.Join(dir, "oci-layout"))
	if err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not an OCI layout (no oci-layout file)", dir)
	}
	return &dirStore{dir: dir}, nil
}

func (d *dirStore) open(h v1.Hash) (io.ReadCloser, error) {
	if err := checkHash(h); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(d.dir, "blobs", h.Algorithm, h.Hex))
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", h, errors.Unwrap(err))
	}
	return f, nil
}

func (d *dirStore) close() error { return nil }

// checkHash refuses a digest that is no sha256 in hex: it becomes a path.
func checkHash(h v1.Hash) error {
	if h.Algorithm != "sha256" || len(h.Hex) != 64 || strings.Trim(h.Hex, "0123456789abcdef") != "" {
		return fmt.Errorf("digest %s is not a sha256", h)
	}
	return nil
}

// archiveStore is an OCI layout in a tar file (oci-archive:), read in
// place: its entries are found with one pass over the tar headers.
type archiveStore struct {
	f       *os.File
	entries map[string][2]int64 // name -> offset, size
}

func openArchiveStore(path string) (*archiveStore, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.Unwrap(err)
	}
	s := &archiveStore{f: f, entries: map[string][2]int64{}}
	cr := &countingReader{r: f}
	tr := tar.NewReader(cr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s is not a tar archive: %w", path, err)
		}
		if len(h.Name) > 4096 {
			f.Close()
			return nil, fmt.Errorf("%s: an entry name of more than 4096 bytes", path)
		}
		if h.Typeflag == tar.TypeReg {
			s.entries[strings.TrimPrefix(filepath.ToSlash(filepath.Clean(h.Name)), "/")] = [2]int64{cr.n, h.Size}
		}
	}
	if _, ok := s.entries["oci-layout"]; !ok {
		f.Close()
		return nil, fmt.Errorf("%s is not an OCI layout archive (no oci-layout entry)", path)
	}
	return s, nil
}

// countingReader counts what tar has read: after Next, the offset of the
// entry's data.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (a *archiveStore) openEntry(n string) (io.ReadCloser, error) {
	e, ok := a.entries[n]
	if !ok {
		return nil, fmt.Errorf("no %s in the archive", n)
	}
	return io.NopCloser(io.NewSectionReader(a.f, e[0], e[1])), nil
}

func (a *archiveStore) open(h v1.Hash) (io.ReadCloser, error) {
	if err := checkHash(h); err != nil {
		return nil, err
	}
	return a.openEntry("blobs/" + h.Algorithm + "/" + h.Hex)
}

func (a *archiveStore) close() error { return a.f.Close() }

// spoolStore holds blobs fetched from a registry in a temporary directory.
type spoolStore struct {
	dir   string
	small map[v1.Hash][]byte
}

func (s *spoolStore) open(h v1.Hash) (io.ReadCloser, error) {
	if data, ok := s.small[h]; ok {
		return io.NopCloser(strings.NewReader(string(data))), nil
	}
	if err := checkHash(h); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(s.dir, h.Hex))
	if err != nil {
		return nil, fmt.Errorf("blob %s was not fetched", h)
	}
	return f, nil
}

func (s *spoolStore) close() error { return os.RemoveAll(s.dir) }

// openRegistry reads the image from its registry (its registries.conf
// mirrors first) and fetches its layers, verified, into a spool.
func openRegistry(ctx context.Context, r Ref, arch releases.Arch, opts OpenOptions) (*CatalogImage, error) {
	reg := opts.Registry
	ref, err := reg.ParseReference(r.Name)
	if err != nil {
		return nil, err
	}
	sources, err := reg.PullSources(r.Name)
	if err != nil {
		return nil, err
	}
	var desc *remote.Descriptor
	var from name.Reference
	var errs []string
	for _, src := range sources {
		desc, err = remote.Get(src.Ref, reg.Remote(ctx)...)
		if err == nil {
			from = src.Ref
			break
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		errs = append(errs, registryclient.Describe(src.Ref.String(), err).Error())
	}
	if desc == nil {
		return nil, errors.New(strings.Join(errs, "; "))
	}
	if len(desc.Manifest) > maxManifest {
		return nil, fmt.Errorf("manifest of more than %d bytes", maxManifest)
	}
	if d, ok := ref.(name.Digest); ok && d.DigestStr() != desc.Digest.String() {
		return nil, fmt.Errorf("the registry serves %s for %s", desc.Digest, d.DigestStr())
	}
	if err := checkDigest(desc.Manifest, desc.Digest); err != nil {
		return nil, err
	}
	spool, err := os.MkdirTemp("", "microshift-compose-catalog-")
	if err != nil {
		return nil, err
	}
	s := &spoolStore{dir: spool, small: map[v1.Hash][]byte{desc.Digest: desc.Manifest}}
	repo := from.Context()
	fetchSmall := func(d v1.Descriptor) error {
		if d.Size > maxManifest {
			return fmt.Errorf("%s of %d bytes, more than %d", d.Digest, d.Size, maxManifest)
		}
		var data []byte
		err := reg.Retry(ctx, func() error {
			var err error
			if d.MediaType.IsIndex() || d.MediaType.IsImage() {
				var md *remote.Descriptor
				if md, err = remote.Get(repo.Digest(d.Digest.String()), reg.Remote(ctx)...); err == nil {
					data = md.Manifest
				}
				return err
			}
			var l v1.Layer
			if l, err = remote.Layer(repo.Digest(d.Digest.String()), reg.Remote(ctx)...); err != nil {
				return err
			}
			rc, err := l.Compressed()
			if err != nil {
				return err
			}
			defer rc.Close()
			data, err = io.ReadAll(io.LimitReader(rc, maxManifest+1))
			return err
		})
		if err != nil {
			return registryclient.Describe(repo.Digest(d.Digest.String()).String(), err)
		}
		if err := checkDigest(data, d.Digest); err != nil {
			return err
		}
		s.small[d.Digest] = data
		return nil
	}
	im, err := func() (*CatalogImage, error) {
		top := desc.Manifest
		if desc.MediaType.IsIndex() {
			idx, err := v1.ParseIndexManifest(strings.NewReader(string(top)))
			if err != nil {
				return nil, fmt.Errorf("index %s: %w", desc.Digest, err)
			}
			for _, d := range idx.Manifests {
				if d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == arch.GOARCH() {
					if err := fetchSmall(d); err != nil {
						return nil, err
					}
					break
				}
			}
		}
		m, mdata, mh, err := pickManifest(s, top, desc.MediaType, desc.Digest, arch)
		if err != nil {
			return nil, err
		}
		if err := fetchSmall(m.Config); err != nil {
			return nil, fmt.Errorf("image config: %w", err)
		}
		for _, l := range m.Layers {
			if l.Size > opts.Limits.LayerBytes {
				return nil, fmt.Errorf("%w: layer %s of %d bytes, more than %d", ErrLimit, l.Digest, l.Size, opts.Limits.LayerBytes)
			}
			if err := fetchLayer(ctx, reg, repo, l, spool); err != nil {
				return nil, err
			}
		}
		_, tagged := ref.(name.Tag)
		return &CatalogImage{From: r, Repository: ref.Context().Name(), Digest: desc.Digest, Resolved: tagged, Manifest: m, ManifestData: mdata, ManifestHash: mh, blobs: s}, nil
	}()
	if err != nil {
		s.close()
		return nil, err
	}
	return im, nil
}

// fetchLayer copies a layer into the spool, checking its digest and size.
func fetchLayer(ctx context.Context, reg registryclient.Options, repo name.Repository, d v1.Descriptor, spool string) error {
	if err := checkHash(d.Digest); err != nil {
		return err
	}
	dst := filepath.Join(spool, d.Digest.Hex)
	return reg.Retry(ctx, func() error {
		l, err := remote.Layer(repo.Digest(d.Digest.String()), reg.Remote(ctx)...)
		if err != nil {
			return registryclient.Describe(repo.Digest(d.Digest.String()).String(), err)
		}
		rc, err := l.Compressed()
		if err != nil {
			return registryclient.Describe(repo.Digest(d.Digest.String()).String(), err)
		}
		defer rc.Close()
		f, err := os.Create(dst)
		if err != nil {
			return err
		}
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(rc, d.Size+1))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if n != d.Size || hex.EncodeToString(h.Sum(nil)) != d.Digest.Hex {
			return fmt.Errorf("layer %s: the registry sends content that does not match its digest and size", d.Digest)
		}
		return nil
	})
}
