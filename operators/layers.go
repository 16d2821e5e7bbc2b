package operators

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"path"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/microshift-compose/microshift-compose/internal/text"
)

// Whiteouts, as the OCI image spec names them.
const (
	whiteoutPrefix = ".wh."
	opaqueWhiteout = ".wh..wh..opq"
)

// layerFacts are what a scan learned of one layer.
type layerFacts struct {
	// other: the layer has entries outside the configs and cache
	// directories (other than their parent directories): it is kept in
	// the filtered image.
	other bool
	// cache: it has entries in the cache directory.
	cache bool
	// files: it holds the final version of a configs file.
	files bool
}

// scan is what one pass over an image's layers learned: where each file of
// the configs directory is (the layer with its last version, after
// whiteouts), what each layer holds, and the .indexignore patterns.
type scan struct {
	layers []layerFacts
	// final maps a configs file (below the configs directory) to the
	// layer holding its last version.
	final    map[string]int
	ignores  ignores
	cacheDir string
}

// cleanName is a tar entry's name as a path below the image root.
func cleanName(n string) string {
	return strings.TrimPrefix(path.Clean("/"+n), "/")
}

// under reports whether p is dir or inside it.
func under(p, dir string) bool {
	return dir != "" && (p == dir || strings.HasPrefix(p, dir+"/"))
}

// parentOf reports whether p is a directory above dir.
func parentOf(p, dir string) bool {
	return dir != "" && strings.HasPrefix(dir, p+"/")
}

// openLayer streams a layer's tar: gzip, zstd or uncompressed, told apart
// by their first bytes; the compressed bytes are hashed into blob.
func openLayer(r io.Reader, blob hash.Hash) (io.Reader, func(), error) {
	br := bufio.NewReaderSize(io.TeeReader(r, blob), 64<<10)
	magic, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		zr.Multistream(true)
		return zr, func() { zr.Close() }, nil
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(256<<20))
		if err != nil {
			return nil, nil, err
		}
		return zr, zr.Close, nil
	}
	return br, func() {}, nil
}

// limitedLayer bounds a layer's uncompressed bytes and hashes them (its
// diff ID).
type limitedLayer struct {
	r     io.Reader
	n     int64
	limit int64
	h     hash.Hash
	index int
}

func (l *limitedLayer) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.h != nil {
		l.h.Write(p[:n])
	}
	if l.n > l.limit {
		return n, fmt.Errorf("%w: layer %d is larger than %d bytes uncompressed", ErrLimit, l.index, l.limit)
	}
	return n, err
}

// eachEntry streams the tar entries of layer i; with verify, the layer's
// digest and diff ID are checked once its end is read.
func (im *CatalogImage) eachEntry(ctx context.Context, i int, lim Limits, verify bool, fn func(h *tar.Header, name string, r io.Reader) error) error {
	d := im.Manifest.Layers[i]
	rc, err := im.blobs.open(d.Digest)
	if err != nil {
		return fmt.Errorf("layer %d: %w", i, err)
	}
	defer rc.Close()
	blobHash := sha256.New()
	r, closeLayer, err := openLayer(rc, blobHash)
	if err != nil {
		return fmt.Errorf("layer %d (%s): %w", i, d.Digest, err)
	}
	defer closeLayer()
	ll := &limitedLayer{r: r, limit: lim.LayerBytes, index: i}
	if verify {
		ll.h = sha256.New()
	}
	tr := tar.NewReader(ll)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("layer %d (%s): %w", i, d.Digest, err)
		}
		if len(h.Name) > 4096 {
			return fmt.Errorf("layer %d (%s): %w: an entry name of more than 4096 bytes", i, d.Digest, ErrLimit)
		}
		if err := fn(h, cleanName(h.Name), tr); err != nil {
			return err
		}
	}
	if !verify {
		return nil
	}
	// The tar's end-of-archive blocks and padding count in the diff ID.
	if _, err := io.Copy(io.Discard, ll); err != nil {
		return fmt.Errorf("layer %d (%s): %w", i, d.Digest, err)
	}
	if _, err := io.Copy(io.Discard, rc); err != nil {
		return fmt.Errorf("layer %d (%s): %w", i, d.Digest, err)
	}
	if got := hex.EncodeToString(blobHash.Sum(nil)); got != d.Digest.Hex {
		return fmt.Errorf("layer %d: the blob does not match its digest %s", i, d.Digest)
	}
	if got, want := hex.EncodeToString(ll.h.Sum(nil)), im.ConfigFile.RootFS.DiffIDs[i].Hex; got != want {
		return fmt.Errorf("layer %d (%s): its content does not match the config's diff ID sha256:%s", i, d.Digest, want)
	}
	return nil
}

// scanLayers reads every layer once, verified: which layer holds the last
// version of each configs file (whiteouts applied), which layers hold
// anything besides the catalog, and the .indexignore patterns.
func (im *CatalogImage) scanLayers(ctx context.Context, lim Limits) (*scan, error) {
	s := &scan{final: map[string]int{}, ignores: ignores{}, cacheDir: cacheDir(im.ConfigFile.Config.Entrypoint, im.ConfigFile.Config.Cmd)}
	configs := im.ConfigsDir
	// catalog reports whether p is the catalog's: in the configs or cache
	// directory, or one of their parents.
	catalog := func(p string) bool {
		return p == "" || under(p, configs) || under(p, s.cacheDir) || parentOf(p, configs) || parentOf(p, s.cacheDir)
	}
	ignoreFiles := map[string][]byte{}
	for i := range im.Manifest.Layers {
		var facts layerFacts
		err := im.eachEntry(ctx, i, lim, true, func(h *tar.Header, n string, r io.Reader) error {
			dir, base := path.Split(n)
			dir = strings.TrimSuffix(dir, "/")
			if strings.HasPrefix(base, whiteoutPrefix) {
				// A whiteout hides what lower layers put at its target
				// (an opaque one, what they put in its directory).
				target := path.Join(dir, strings.TrimPrefix(base, whiteoutPrefix))
				if base == opaqueWhiteout {
					target = dir
				}
				if !(under(target, configs) || under(target, s.cacheDir)) {
					facts.other = true
				}
				switch {
				case under(configs, target):
					clearUnder(s.final, "")
				case under(target, configs):
					clearUnder(s.final, strings.TrimPrefix(strings.TrimPrefix(target, configs), "/"))
				}
				return nil
			}
			if !catalog(n) || (parentOf(n, configs) || parentOf(n, s.cacheDir)) && h.Typeflag != tar.TypeDir {
				facts.other = true
				return nil
			}
			if under(n, s.cacheDir) && !under(n, configs) {
				facts.cache = true
				return nil
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(n, configs), "/")
			if !under(n, configs) || rel == "" {
				return nil
			}
			switch h.Typeflag {
			case tar.TypeDir:
				return nil
			case tar.TypeReg:
			default:
				return fmt.Errorf("/%s: %s is a %s, not a regular file: a catalog's configs are files", configs, text.QuoteExcerpt(rel), typeName(h.Typeflag))
			}
			if h.Size > lim.FileBytes {
				return fmt.Errorf("/%s/%s: %w: larger than %d bytes", configs, text.Escape(rel), ErrLimit, lim.FileBytes)
			}
			if path.Base(rel) == IndexIgnore {
				data, err := io.ReadAll(io.LimitReader(r, 1<<20+1))
				if err != nil {
					return err
				}
				ignoreFiles[rel] = data
			}
			s.final[rel] = i
			if len(s.final) > lim.Files {
				return fmt.Errorf("%w: more than %d files in the configs directory /%s", ErrLimit, lim.Files, configs)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		s.layers = append(s.layers, facts)
	}
	for _, i := range s.final {
		s.layers[i].files = true
	}
	// The last version of each .indexignore that is still there.
	for rel, data := range ignoreFiles {
		if _, ok := s.final[rel]; ok {
			if err := s.ignores.add(rel, bytes.NewReader(data)); err != nil {
				return nil, err
			}
		}
	}
	if len(s.final) == 0 {
		return nil, fmt.Errorf("the configs directory /%s (label %s) holds no files", configs, ConfigsLabel)
	}
	return s, nil
}

// clearUnder forgets the configs files at sub or below it (a path below
// the configs directory; "" for all of them).
func clearUnder(final map[string]int, sub string) {
	for rel := range final {
		if sub == "" || rel == sub || strings.HasPrefix(rel, sub+"/") {
			delete(final, rel)
		}
	}
}

func typeName(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "symbolic link"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeChar, tar.TypeBlock:
		return "device"
	case tar.TypeFifo:
		return "FIFO"
	}
	return fmt.Sprintf("tar entry of type %q", t)
}

// cacheDir is the --cache-dir opm serve is given by the image's
// entrypoint and command, without the leading slash; "" for none.
func cacheDir(entrypoint, cmd []string) string {
	args := append(append([]string{}, entrypoint...), cmd...)
	for i, a := range args {
		var v string
		switch {
		case strings.HasPrefix(a, "--cache-dir="):
			v = strings.TrimPrefix(a, "--cache-dir=")
		case a == "--cache-dir" && i+1 < len(args):
			v = args[i+1]
		default:
			continue
		}
		if c := cleanName(v); c != "" {
			return c
		}
	}
	return ""
}

// files yields the catalog's files from the layers holding their last
// versions, in layer and then tar order, without the ignored ones.
func (im *CatalogImage) files(ctx context.Context, s *scan, lim Limits) Files {
	return func(yield func(File) error) error {
		for i, facts := range s.layers {
			if !facts.files {
				continue
			}
			err := im.eachEntry(ctx, i, lim, false, func(h *tar.Header, n string, r io.Reader) error {
				if h.Typeflag != tar.TypeReg || !under(n, im.ConfigsDir) {
					return nil
				}
				rel := strings.TrimPrefix(strings.TrimPrefix(n, im.ConfigsDir), "/")
				if at, ok := s.final[rel]; !ok || at != i || s.ignores.ignored(rel) {
					return nil
				}
				return yield(File{Path: path.Join(im.ConfigsDir, rel), R: r})
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
}
