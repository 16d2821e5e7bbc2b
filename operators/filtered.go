package operators

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Filtered is the catalog image of only what was selected: the original's
// config and layers, without the layers that held nothing but the catalog
// (its configs and opm's cache), and one layer more with the filtered
// configs.
type Filtered struct {
	// Ref is the image by digest, in the original's repository.
	Ref       string
	MediaType types.MediaType
	Manifest  []byte
	Config    []byte
	// Layer is the layer of the filtered configs.
	Layer v1.Descriptor
	// LayerData is its blob.
	LayerData []byte
	// Kept are the original's layers the image keeps, Dropped those it
	// leaves out.
	Kept, Dropped []v1.Descriptor
	// Cmd is the image's command, changed from the original's when it
	// named a cache directory (see build).
	Cmd []string
}

// Digest is the manifest's digest.
func (f *Filtered) Digest() v1.Hash { return digestOf(f.Manifest) }

func digestOf(data []byte) v1.Hash {
	sum := sha256.Sum256(data)
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}
}

// epoch dates the filtered layer's entries: the same configs give the
// same layer.
var epoch = time.Unix(0, 0).UTC()

// buildFiltered makes the filtered image of im from cfg. The new layer
// hides the original configs (an opaque whiteout: a kept layer may hold
// some) and opm's cache directory when a kept layer holds it, and holds
// cfg's files. opm serve checks a cache against the configs it is built
// from and, with --cache-dir, refuses to start on one that does not match
// them unless told not to enforce it: the command gets
// --cache-enforce-integrity=false, so that opm builds its cache on the
// device's first start (as MicroShift's own test catalog runs it).
func buildFiltered(im *CatalogImage, s *scan, cfg *Configs, packages []string) (*Filtered, error) {
	f := &Filtered{MediaType: types.MediaType(im.Manifest.MediaType)}
	if f.MediaType == "" {
		f.MediaType = types.OCIManifestSchema1
	}
	var keptIDs []v1.Hash
	cacheKept := false
	for i, l := range im.Manifest.Layers {
		if s.layers[i].other {
			f.Kept = append(f.Kept, l)
			keptIDs = append(keptIDs, im.ConfigFile.RootFS.DiffIDs[i])
			cacheKept = cacheKept || s.layers[i].cache
		} else {
			f.Dropped = append(f.Dropped, l)
		}
	}
	layer, diffID, err := configsLayer(im.ConfigsDir, cfg, s.cacheDir, cacheKept)
	if err != nil {
		return nil, err
	}
	layerType := types.OCILayer
	if f.MediaType == types.DockerManifestSchema2 {
		layerType = types.DockerLayer
	}
	f.LayerData = layer
	f.Layer = v1.Descriptor{MediaType: layerType, Size: int64(len(layer)), Digest: digestOf(layer)}
	cmd := im.ConfigFile.Config.Cmd
	if s.cacheDir != "" {
		cmd = withoutCacheIntegrity(cmd)
	}
	f.Cmd = cmd
	desc := fmt.Sprintf("microshift-compose: the catalog's configs filtered to %s", strings.Join(packages, ", "))
	if f.Config, err = filteredConfig(im, s, append(keptIDs, diffID), cmd, desc); err != nil {
		return nil, err
	}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     f.MediaType,
		Config:        v1.Descriptor{MediaType: im.Manifest.Config.MediaType, Size: int64(len(f.Config)), Digest: digestOf(f.Config)},
		Layers:        append(slices.Clone(f.Kept), f.Layer),
	}
	if f.Manifest, err = json.Marshal(m); err != nil {
		return nil, fmt.Errorf("encoding the filtered catalog's manifest: %w", err)
	}
	f.Ref = im.Repository + "@" + f.Digest().String()
	return f, nil
}

// withoutCacheIntegrity is opm serve's command told to build a cache
// that does not match its configs rather than refuse to start.
func withoutCacheIntegrity(cmd []string) []string {
	out := []string{}
	for i := 0; i < len(cmd); i++ {
		a := cmd[i]
		if strings.HasPrefix(a, "--cache-enforce-integrity=") {
			continue
		}
		if a == "--cache-enforce-integrity" {
			if i+1 < len(cmd) && (cmd[i+1] == "true" || cmd[i+1] == "false") {
				i++
			}
			continue
		}
		out = append(out, a)
	}
	return append(out, "--cache-enforce-integrity=false")
}

// configsLayer is the layer of the filtered configs, gzip-compressed, and
// its diff ID.
func configsLayer(configs string, cfg *Configs, cache string, hideCache bool) ([]byte, v1.Hash, error) {
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	dirs := map[string]bool{}
	dir := func(p string) error {
		var parts []string
		for d := p; d != "." && d != "/" && d != ""; d = path.Dir(d) {
			parts = append(parts, d)
		}
		slices.Reverse(parts)
		for _, d := range parts {
			if dirs[d] {
				continue
			}
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
				return err
			}
		}
		return nil
	}
	file := func(name string, data []byte) error {
		if err := dir(path.Dir(name)); err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	if err := dir(configs); err != nil {
		return nil, v1.Hash{}, err
	}
	if err := file(path.Join(configs, opaqueWhiteout), nil); err != nil {
		return nil, v1.Hash{}, err
	}
	files := slices.Clone(cfg.Files)
	slices.SortFunc(files, func(a, b ConfigFile) int { return strings.Compare(a.Path, b.Path) })
	for _, cf := range files {
		if err := file(path.Join(configs, cf.Path), cf.Data); err != nil {
			return nil, v1.Hash{}, err
		}
	}
	if hideCache && cache != "" {
		if err := file(path.Join(path.Dir(cache), whiteoutPrefix+path.Base(cache)), nil); err != nil {
			return nil, v1.Hash{}, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, v1.Hash{}, err
	}
	diffID := digestOf(tarBuf.Bytes())
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := io.Copy(zw, &tarBuf); err != nil {
		return nil, v1.Hash{}, err
	}
	if err := zw.Close(); err != nil {
		return nil, v1.Hash{}, err
	}
	return gz.Bytes(), diffID, nil
}

// filteredConfig is the original's config with the kept layers' and the
// new layer's diff IDs, the history of the kept layers and one entry for
// the new layer, and cmd; every other field as the original has it.
func filteredConfig(im *CatalogImage, s *scan, diffIDs []v1.Hash, cmd []string, desc string) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(im.ConfigData, &fields); err != nil {
		return nil, fmt.Errorf("reading the catalog's config: %w", err)
	}
	set := func(key string, v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		fields[key] = data
		return nil
	}
	rootfs := map[string]any{"type": "layers", "diff_ids": diffIDs}
	if err := set("rootfs", rootfs); err != nil {
		return nil, err
	}
	// History entries that are not empty layers are the layers, in order;
	// a history that does not say so is left out rather than misread.
	hist := im.ConfigFile.History
	var layerEntries int
	for _, h := range hist {
		if !h.EmptyLayer {
			layerEntries++
		}
	}
	if layerEntries == len(im.Manifest.Layers) && len(hist) > 0 {
		var rawHist []json.RawMessage
		if err := json.Unmarshal(fields["history"], &rawHist); err != nil || len(rawHist) != len(hist) {
			return nil, fmt.Errorf("reading the catalog's config history: %v", err)
		}
		var out []json.RawMessage
		layer := 0
		for i, h := range hist {
			if !h.EmptyLayer {
				keep := s.layers[layer].other
				layer++
				if !keep {
					continue
				}
			}
			out = append(out, rawHist[i])
		}
		entry, err := json.Marshal(map[string]any{"created": im.ConfigFile.Created.Time.UTC().Format(time.RFC3339), "created_by": desc, "comment": "microshift-compose"})
		if err != nil {
			return nil, err
		}
		out = append(out, entry)
		if err := set("history", out); err != nil {
			return nil, err
		}
	} else {
		delete(fields, "history")
	}
	var conf map[string]json.RawMessage
	if raw, ok := fields["config"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &conf); err != nil {
			return nil, fmt.Errorf("reading the catalog's config: %w", err)
		}
	} else {
		conf = map[string]json.RawMessage{}
	}
	cmdJSON, err := json.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	if len(cmd) > 0 {
		conf["Cmd"] = cmdJSON
	}
	if err := set("config", conf); err != nil {
		return nil, err
	}
	return json.Marshal(fields)
}
