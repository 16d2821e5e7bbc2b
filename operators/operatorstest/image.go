package operatorstest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/operators"
	"github.com/microshift-compose/microshift-compose/releases"
)

// ImageOptions describe a catalog image: a base layer, the configs layer,
// opm's cache layer, and any more layers.
type ImageOptions struct {
	// Files are the configs directory's files, by path below it.
	Files map[string][]byte
	// ConfigsDir is the label's value; "/configs" when empty.
	ConfigsDir string
	// NoLabel leaves the configs label out (an SQLite index image).
	NoLabel bool
	// Base are the base layer's files; a placeholder /bin/opm when nil.
	Base map[string][]byte
	// Cache adds a layer at /tmp/cache, which the command names with
	// --cache-dir, as opm's catalog images have.
	Cache bool
	// Extra layers follow, each a map of paths to contents (a path
	// ending in "/" is a directory; whiteouts are files named .wh.*).
	Extra []map[string][]byte
	// Docker uses Docker's media types.
	Docker bool
	// Raw layers follow the others as they are (a truncated tar, a
	// layer of a million files).
	Raw []testutil.Layer
}

// Built is a catalog image: its config, manifest and layers.
type Built struct {
	Config, Manifest testutil.Raw
	Layers           []testutil.Layer
}

// Digest is the manifest's digest.
func (b Built) Digest() string { return b.Manifest.Digest().String() }

// TarLayer makes a gzip layer of files (sorted, parent directories
// first, dated the epoch).
func TarLayer(files map[string][]byte, docker bool) testutil.Layer {
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	dirs := map[string]bool{}
	epoch := time.Unix(0, 0)
	var mkdir func(d string)
	mkdir = func(d string) {
		if d == "." || d == "/" || d == "" || dirs[d] {
			return
		}
		mkdir(path.Dir(d))
		dirs[d] = true
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch})
	}
	for _, n := range names {
		if strings.HasSuffix(n, "/") {
			mkdir(strings.TrimSuffix(n, "/"))
			continue
		}
		mkdir(path.Dir(n))
		mode := int64(0o644)
		if strings.HasPrefix(n, "bin/") {
			mode = 0o755
		}
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: mode, Size: int64(len(files[n])), ModTime: epoch})
		tw.Write(files[n])
	}
	tw.Close()
	diff := sha256.Sum256(tb.Bytes())
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(tb.Bytes())
	zw.Close()
	sum := sha256.Sum256(gz.Bytes())
	mt := types.OCILayer
	if docker {
		mt = types.DockerLayer
	}
	return testutil.Layer{
		Data:   gz.Bytes(),
		Desc:   v1.Descriptor{MediaType: mt, Size: int64(gz.Len()), Digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}},
		DiffID: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(diff[:])},
	}
}

// Image builds a catalog image for arch.
func Image(arch string, o ImageOptions) Built {
	dir := o.ConfigsDir
	if dir == "" {
		dir = "/configs"
	}
	base := o.Base
	if base == nil {
		base = map[string][]byte{"bin/opm": []byte("#!/bin/sh\n# opm for " + arch + "\n"), "etc/os-release": []byte("ID=test\n")}
	}
	layers := []testutil.Layer{TarLayer(base, o.Docker)}
	history := []v1.History{{CreatedBy: "base"}}
	cfgFiles := map[string][]byte{}
	for p, data := range o.Files {
		cfgFiles[path.Join(strings.TrimPrefix(dir, "/"), p)] = data
	}
	layers = append(layers, TarLayer(cfgFiles, o.Docker))
	history = append(history, v1.History{CreatedBy: "COPY catalog " + dir})
	cmd := []string{"serve", dir}
	if o.Cache {
		layers = append(layers, TarLayer(map[string][]byte{"tmp/cache/pogreb.v1/db/00000.psg": []byte("cache of " + arch), "tmp/cache/digest": []byte("0123")}, o.Docker))
		history = append(history, v1.History{CreatedBy: "RUN opm serve " + dir + " --cache-dir=/tmp/cache --cache-only"})
		cmd = append(cmd, "--cache-dir=/tmp/cache")
	}
	for i, files := range o.Extra {
		layers = append(layers, TarLayer(files, o.Docker))
		history = append(history, v1.History{CreatedBy: "extra " + string(rune('0'+i))})
	}
	for range o.Raw {
		history = append(history, v1.History{CreatedBy: "raw"})
	}
	layers = append(layers, o.Raw...)
	history = append(history, v1.History{CreatedBy: "LABEL", EmptyLayer: true})
	cfg := v1.ConfigFile{
		Architecture: arch, OS: "linux",
		Created: v1.Time{Time: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)},
		Config:  v1.Config{Entrypoint: []string{"/bin/opm"}, Cmd: cmd, Labels: map[string]string{}},
		RootFS:  v1.RootFS{Type: "layers"}, History: history,
	}
	if !o.NoLabel {
		cfg.Config.Labels[operators.ConfigsLabel] = dir
	}
	for _, l := range layers {
		cfg.RootFS.DiffIDs = append(cfg.RootFS.DiffIDs, l.DiffID)
	}
	cdata, _ := json.Marshal(cfg)
	ct, mt := types.OCIConfigJSON, types.OCIManifestSchema1
	if o.Docker {
		ct, mt = types.DockerConfigJSON, types.DockerManifestSchema2
	}
	config := testutil.Raw{Data: cdata, Type: ct}
	m := v1.Manifest{SchemaVersion: 2, MediaType: mt, Config: config.Descriptor(nil)}
	for _, l := range layers {
		m.Layers = append(m.Layers, l.Desc)
	}
	mdata, _ := json.Marshal(m)
	return Built{Config: config, Manifest: testutil.Raw{Data: mdata, Type: mt}, Layers: layers}
}

// Index is a multi-arch catalog: one image per arch.
type Index struct {
	Arches []string
	Images map[string]Built
}

// Raw is the index manifest.
func (x Index) Raw() testutil.Raw {
	var ms []testutil.Raw
	var ps []v1.Platform
	for _, a := range x.Arches {
		ms = append(ms, x.Images[a].Manifest)
		ps = append(ps, v1.Platform{OS: "linux", Architecture: a})
	}
	return testutil.Index(ms, ps)
}

func writeBlob(dir string, data []byte) error {
	sum := sha256.Sum256(data)
	p := filepath.Join(dir, "blobs", "sha256", hex.EncodeToString(sum[:]))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

// WriteLayout writes an OCI layout of top (an image's or an index's
// manifest, whose blobs the images hold) named refName.
func WriteLayout(t testing.TB, dir, refName string, top testutil.Raw, images ...Built) {
	t.Helper()
	if err := WriteLayoutDir(dir, refName, top, images...); err != nil {
		t.Fatal(err)
	}
}

// WriteLayoutDir is WriteLayout for programs (hack/benchcatalog).
func WriteLayoutDir(dir, refName string, top testutil.Raw, images ...Built) error {
	blobs := [][]byte{top.Data}
	for _, b := range images {
		blobs = append(blobs, b.Config.Data, b.Manifest.Data)
		for _, l := range b.Layers {
			blobs = append(blobs, l.Data)
		}
	}
	for _, data := range blobs {
		if err := writeBlob(dir, data); err != nil {
			return err
		}
	}
	desc := top.Descriptor(nil)
	if refName != "" {
		desc.Annotations = map[string]string{"org.opencontainers.image.ref.name": refName}
	}
	idx, err := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": []v1.Descriptor{desc}})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "index.json"), idx, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644)
}

// Push pushes the image to the registry under path, tagged tag when set,
// and returns its reference by digest.
func (b Built) Push(t testing.TB, p *testutil.Pusher, repo, tag string) string {
	t.Helper()
	for _, l := range b.Layers {
		if err := p.Blob(repo, l.Data, l.Desc.MediaType); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Blob(repo, b.Config.Data, b.Config.Type); err != nil {
		t.Fatal(err)
	}
	ref, err := p.Manifest(repo, b.Manifest, tag)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// Push pushes every image of the index and the index.
func (x Index) Push(t testing.TB, p *testutil.Pusher, repo, tag string) string {
	t.Helper()
	for _, a := range x.Arches {
		x.Images[a].Push(t, p, repo, "")
	}
	ref, err := p.Manifest(repo, x.Raw(), tag)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// TarDir writes dir as a tar file (an oci-archive: of a layout).
func TarDir(t testing.TB, dir, file string) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	err = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		if info.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			_, err = tw.Write(data)
			return err
		}
		return nil
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Opm is the pinned opm (OPM_VERSION), the program OLM serves catalogs
// with: the tests' oracle for what a catalog holds and whether it is
// valid.
func Opm(t testing.TB) string {
	t.Helper()
	return testutil.PinnedTool(t, "opm")
}

// Skopeo is Debian's skopeo.
func Skopeo(t testing.TB) string {
	t.Helper()
	return testutil.NeedTool(t, "skopeo", "skopeo")
}

// SampleRepository is the repository the sample catalog images are named
// in.
const SampleRepository = "quay.io/example/catalog"

// Layout writes c as a catalog image for arch (a configs file per package,
// opm's cache layer) into an OCI layout under dir, named
// SampleRepository:v1, and returns oci:DIR.
func Layout(t testing.TB, dir string, c *Catalog, arch string) string {
	t.Helper()
	img := Image(arch, ImageOptions{Files: c.PerPackage(false), Cache: true})
	WriteLayout(t, dir, SampleRepository+":v1", img.Manifest, img)
	return "oci:" + dir
}

// Load opens c as a catalog image of an OCI layout (see Layout) for arch,
// closed when the test ends.
func Load(t testing.TB, c *Catalog, arch releases.Arch) *operators.Catalog {
	t.Helper()
	r, err := operators.ParseRef(Layout(t, t.TempDir(), c, arch.GOARCH()))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := operators.Load(context.Background(), r, arch, operators.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return cat
}

// GzipLayer makes a layer of a tar stream as it is (it need not be a
// whole tar): gzip-compressed at the fastest level.
func GzipLayer(tarData []byte) testutil.Layer {
	diff := sha256.Sum256(tarData)
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	zw.Write(tarData)
	zw.Close()
	sum := sha256.Sum256(gz.Bytes())
	return testutil.Layer{
		Data:   gz.Bytes(),
		Desc:   v1.Descriptor{MediaType: types.OCILayer, Size: int64(gz.Len()), Digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}},
		DiffID: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(diff[:])},
	}
}

// WriteImageLayout writes img as the only image of an OCI layout at dir,
// named SampleRepository:v1, and returns oci:DIR.
func WriteImageLayout(t testing.TB, dir string, img Built) string {
	t.Helper()
	WriteLayout(t, dir, SampleRepository+":v1", img.Manifest, img)
	return "oci:" + dir
}
