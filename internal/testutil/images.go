package testutil

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/microshift-compose/microshift-compose/internal/imageref"
)

// Synthetic images are built from pseudo-random layers: real tar streams in
// gzip (stored blocks, so generating a GiB is fast and the layer's size is
// what was asked), OCI media types (every version of skopeo reads them from
// an OCI layout), pushed with go-containerregistry.

// Layer is a generated layer blob.
type Layer struct {
	Data   []byte
	Desc   v1.Descriptor
	DiffID v1.Hash
}

// NewLayer makes a layer of about size bytes of seeded random content.
func NewLayer(seed uint64, size int64) Layer {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	content := make([]byte, size)
	for i := 0; i+8 <= len(content); i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			content[i+j] = byte(v >> (8 * j))
		}
	}
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("data-%x", seed), Mode: 0o644, Size: size, Typeflag: tar.TypeReg})
	tw.Write(content)
	tw.Close()
	diff := sha256.Sum256(tarBuf.Bytes())
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.NoCompression)
	zw.Write(tarBuf.Bytes())
	zw.Close()
	data := gz.Bytes()
	sum := sha256.Sum256(data)
	return Layer{
		Data:   data,
		Desc:   v1.Descriptor{MediaType: types.OCILayer, Size: int64(len(data)), Digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}},
		DiffID: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(diff[:])},
	}
}

// Raw is a manifest or index as bytes, pushable with remote.Put.
type Raw struct {
	Data []byte
	Type types.MediaType
}

func (r Raw) RawManifest() ([]byte, error)        { return r.Data, nil }
func (r Raw) MediaType() (types.MediaType, error) { return r.Type, nil }

// Digest is the sha256 of the bytes.
func (r Raw) Digest() v1.Hash {
	sum := sha256.Sum256(r.Data)
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}
}

// Descriptor describes r, with platform p when set.
func (r Raw) Descriptor(p *v1.Platform) v1.Descriptor {
	return v1.Descriptor{MediaType: r.Type, Size: int64(len(r.Data)), Digest: r.Digest(), Platform: p}
}

// Image builds the config and manifest of an image of layers for arch,
// with OCI media types.
func Image(arch string, layers []Layer) (config Raw, manifest Raw) {
	return image(arch, layers, types.OCIConfigJSON, types.OCIManifestSchema1)
}

// DockerImage is Image with Docker's media types (schema 2 manifest,
// container config, layers), as most images of OpenShift releases have:
// the kind the skopeo of older RHEL bootc bases cannot read from an OCI
// layout.
func DockerImage(arch string, layers []Layer) (config Raw, manifest Raw) {
	docker := make([]Layer, len(layers))
	for i, l := range layers {
		docker[i] = l.Docker()
	}
	return image(arch, docker, types.DockerConfigJSON, types.DockerManifestSchema2)
}

// Docker is the layer with Docker's layer media type (the same bytes).
func (l Layer) Docker() Layer {
	l.Desc.MediaType = types.DockerLayer
	return l
}

func image(arch string, layers []Layer, configType, manifestType types.MediaType) (config Raw, manifest Raw) {
	cfg := v1.ConfigFile{Architecture: arch, OS: "linux", RootFS: v1.RootFS{Type: "layers"}}
	for _, l := range layers {
		cfg.RootFS.DiffIDs = append(cfg.RootFS.DiffIDs, l.DiffID)
	}
	cdata, _ := json.Marshal(cfg)
	config = Raw{cdata, configType}
	m := v1.Manifest{SchemaVersion: 2, MediaType: manifestType, Config: config.Descriptor(nil)}
	for _, l := range layers {
		m.Layers = append(m.Layers, l.Desc)
	}
	mdata, _ := json.Marshal(m)
	return config, Raw{mdata, manifestType}
}

// Index builds an OCI index of manifests, one per platform.
func Index(manifests []Raw, platforms []v1.Platform) Raw {
	return index(manifests, platforms, types.OCIImageIndex)
}

// DockerIndex builds a Docker manifest list.
func DockerIndex(manifests []Raw, platforms []v1.Platform) Raw {
	return index(manifests, platforms, types.DockerManifestList)
}

func index(manifests []Raw, platforms []v1.Platform, mt types.MediaType) Raw {
	idx := v1.IndexManifest{SchemaVersion: 2, MediaType: mt}
	for i, m := range manifests {
		p := platforms[i]
		idx.Manifests = append(idx.Manifests, m.Descriptor(&p))
	}
	data, _ := json.Marshal(idx)
	return Raw{data, mt}
}

// Pusher pushes synthetic content to a registry.
type Pusher struct {
	Host string
	// Transport, when set, is used for every request.
	Transport http.RoundTripper
	// User and Password authenticate, when set.
	User, Password string
	// Secure reaches the registry over HTTPS only.
	Secure bool
	pushed map[string]bool
}

func (p *Pusher) opts() []remote.Option {
	o := []remote.Option{remote.WithJobs(4)}
	if p.Transport != nil {
		o = append(o, remote.WithTransport(p.Transport))
	}
	if p.User != "" {
		o = append(o, remote.WithAuth(&authn.Basic{Username: p.User, Password: p.Password}))
	}
	return o
}

func (p *Pusher) repo(path string) (name.Repository, error) {
	if p.Secure {
		return imageref.NewRepository(p.Host + "/" + path)
	}
	return imageref.NewRepository(p.Host+"/"+path, name.Insecure)
}

// Blob uploads data once per repository.
func (p *Pusher) Blob(path string, data []byte, mt types.MediaType) error {
	sum := sha256.Sum256(data)
	key := path + "@" + hex.EncodeToString(sum[:])
	if p.pushed == nil {
		p.pushed = map[string]bool{}
	}
	if p.pushed[key] {
		return nil
	}
	repo, err := p.repo(path)
	if err != nil {
		return err
	}
	if err := remote.WriteLayer(repo, static.NewLayer(data, mt), p.opts()...); err != nil {
		return fmt.Errorf("pushing blob to %s: %w", repo, err)
	}
	p.pushed[key] = true
	return nil
}

// Manifest puts a manifest or index by digest, or under tag when set, and
// returns its digest reference.
func (p *Pusher) Manifest(path string, m Raw, tag string) (string, error) {
	repo, err := p.repo(path)
	if err != nil {
		return "", err
	}
	var ref name.Reference = repo.Digest(m.Digest().String())
	if tag != "" {
		ref = repo.Tag(tag)
	}
	if err := remote.Put(ref, m, p.opts()...); err != nil {
		return "", fmt.Errorf("pushing manifest to %s: %w", ref, err)
	}
	return repo.Digest(m.Digest().String()).String(), nil
}

// PushImage pushes the layers, config and manifest of a single-arch image
// and returns its digest reference.
func (p *Pusher) PushImage(path, arch string, layers []Layer) (string, error) {
	return p.push(path, arch, layers, false)
}

// PushDockerImage is PushImage with Docker media types.
func (p *Pusher) PushDockerImage(path, arch string, layers []Layer) (string, error) {
	return p.push(path, arch, layers, true)
}

func (p *Pusher) push(path, arch string, layers []Layer, docker bool) (string, error) {
	for _, l := range layers {
		if err := p.Blob(path, l.Data, l.Desc.MediaType); err != nil {
			return "", err
		}
	}
	cfg, m := Image(arch, layers)
	if docker {
		cfg, m = DockerImage(arch, layers)
	}
	if err := p.Blob(path, cfg.Data, cfg.Type); err != nil {
		return "", err
	}
	return p.Manifest(path, m, "")
}

// PushIndex pushes an image per arch (layers[arch]) and an index over them,
// returning the index's digest reference and the per-arch manifest digests.
func (p *Pusher) PushIndex(path string, arches []string, layers map[string][]Layer) (string, map[string]string, error) {
	return p.pushIndex(path, arches, layers, false)
}

// PushDockerIndex is PushIndex with Docker media types (a manifest list).
func (p *Pusher) PushDockerIndex(path string, arches []string, layers map[string][]Layer) (string, map[string]string, error) {
	return p.pushIndex(path, arches, layers, true)
}

func (p *Pusher) pushIndex(path string, arches []string, layers map[string][]Layer, docker bool) (string, map[string]string, error) {
	var manifests []Raw
	var platforms []v1.Platform
	digests := map[string]string{}
	for _, arch := range arches {
		ref, err := p.push(path, arch, layers[arch], docker)
		if err != nil {
			return "", nil, err
		}
		_, m := Image(arch, layers[arch])
		if docker {
			_, m = DockerImage(arch, layers[arch])
		}
		manifests = append(manifests, m)
		platforms = append(platforms, v1.Platform{OS: "linux", Architecture: arch})
		digests[arch] = ref
	}
	idx := Index(manifests, platforms)
	if docker {
		idx = DockerIndex(manifests, platforms)
	}
	ref, err := p.Manifest(path, idx, "")
	return ref, digests, err
}
