package operators

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/microshift-compose/microshift-compose/releases"
)

// Catalog is a catalog image opened for one arch, its files indexed.
type Catalog struct {
	Image *CatalogImage
	Model *Model
	scan  *scan
	lim   Limits
}

// Load opens the catalog image r for arch and indexes its files: the
// layers are read once to find the configs (verified against their
// digests and the config's diff IDs), and the layers holding them once
// more to index them.
func Load(ctx context.Context, r Ref, arch releases.Arch, opts OpenOptions) (*Catalog, error) {
	if opts.Limits == (Limits{}) {
		opts.Limits = DefaultLimits
	}
	im, err := Open(ctx, r, arch, opts)
	if err != nil {
		return nil, err
	}
	c, err := func() (*Catalog, error) {
		s, err := im.scanLayers(ctx, opts.Limits)
		if err != nil {
			return nil, err
		}
		m, err := Index(ctx, im.files(ctx, s, opts.Limits), opts.Limits)
		if err != nil {
			return nil, err
		}
		return &Catalog{Image: im, Model: m, scan: s, lim: opts.Limits}, nil
	}()
	if err != nil {
		im.Close()
		return nil, fmt.Errorf("reading operator catalog %s: %w", r, err)
	}
	return c, nil
}

// Close releases the image.
func (c *Catalog) Close() error { return c.Image.Close() }

// Files are the catalog's files (for tests and benchmarks).
func (c *Catalog) Files(ctx context.Context) Files { return c.Image.files(ctx, c.scan, c.lim) }

// Result is a resolved and filtered operator set.
type Result struct {
	Set      *Set
	Configs  *Configs
	Filtered *Filtered
}

// Filter resolves choices in the catalog, reads the selected packages'
// objects again and builds the filtered catalog image. The filtered
// configs are indexed and resolved again, which must give the same
// bundles: what the device's OLM will find.
func (c *Catalog) Filter(ctx context.Context, choices []Choice, opts ResolveOptions) (*Result, error) {
	set, err := Resolve(c.Model, choices, opts)
	if err != nil {
		return nil, err
	}
	cfg, err := Extract(ctx, c.Files(ctx), c.lim, set, c.Model)
	if err != nil {
		return nil, fmt.Errorf("reading operator catalog %s: %w", c.Image.From, err)
	}
	if err := recheck(ctx, cfg, choices, set, opts); err != nil {
		return nil, err
	}
	var pkgs []string
	for _, sel := range set.Selected {
		pkgs = append(pkgs, sel.Package)
	}
	f, err := buildFiltered(c.Image, c.scan, cfg, pkgs)
	if err != nil {
		return nil, err
	}
	return &Result{Set: set, Configs: cfg, Filtered: f}, nil
}

// recheck resolves choices in the filtered configs: the same bundles must
// come out.
func recheck(ctx context.Context, cfg *Configs, choices []Choice, set *Set, opts ResolveOptions) error {
	m, err := Index(ctx, cfg.files(), DefaultLimits)
	if err != nil {
		return fmt.Errorf("checking the filtered catalog: %w", err)
	}
	again, err := Resolve(m, choices, opts)
	if err != nil {
		return fmt.Errorf("checking the filtered catalog: %w", err)
	}
	if len(again.Selected) != len(set.Selected) {
		return fmt.Errorf("checking the filtered catalog: it resolves to %d bundles, the catalog to %d", len(again.Selected), len(set.Selected))
	}
	for i, sel := range set.Selected {
		if a := again.Selected[i]; a.Bundle.Name != sel.Bundle.Name {
			return fmt.Errorf("checking the filtered catalog: package %s resolves to %s there, %s in the catalog", sel.Package, a.Bundle.Name, sel.Bundle.Name)
		}
	}
	return nil
}

// files yields the filtered configs.
func (c *Configs) files() Files {
	return func(yield func(File) error) error {
		for _, f := range c.Files {
			if err := yield(File{Path: f.Path, R: bytes.NewReader(f.Data)}); err != nil {
				return err
			}
		}
		return nil
	}
}

// LayoutFile is one file of the filtered catalog's OCI layout: its data,
// or, for a layer of the original image, how to read it.
type LayoutFile struct {
	// Path is relative to the layout directory.
	Path string
	Data []byte
	// Blob is a kept layer of the original image (Data is nil).
	Blob *v1.Descriptor
}

// Layout lists the files of an OCI image layout holding the filtered
// image, named by its reference (as mirror --to oci: names images), in
// path order: what build writes and mirror reads it from.
func (c *Catalog) Layout(f *Filtered) ([]LayoutFile, error) {
	desc := v1.Descriptor{
		MediaType: f.MediaType, Size: int64(len(f.Manifest)), Digest: f.Digest(),
		Annotations: map[string]string{refNameAnnotation: f.Ref, "io.containerd.image.name": f.Ref},
	}
	index, err := json.MarshalIndent(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []v1.Descriptor{desc}}, "", "  ")
	if err != nil {
		return nil, err
	}
	blob := func(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }
	files := []LayoutFile{
		{Path: "oci-layout", Data: []byte(`{"imageLayoutVersion":"1.0.0"}` + "\n")},
		{Path: "index.json", Data: append(index, '\n')},
		{Path: blob(f.Digest()), Data: f.Manifest},
		{Path: blob(digestOf(f.Config)), Data: f.Config},
		{Path: blob(f.Layer.Digest), Data: f.LayerData},
	}
	seen := map[string]bool{}
	for _, lf := range files {
		seen[lf.Path] = true
	}
	for i := range f.Kept {
		d := f.Kept[i]
		if p := blob(d.Digest); !seen[p] {
			seen[p] = true
			files = append(files, LayoutFile{Path: p, Blob: &d})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// OpenBlob streams a kept layer of the original image.
func (c *Catalog) OpenBlob(d v1.Descriptor) (io.ReadCloser, error) { return c.Image.OpenBlob(d.Digest) }
