package airgap

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/microshift-compose/microshift-compose/releases"
)

// ImageContents is what one image is made of for an arch: the manifests a
// copy of it stores and its config and layer blobs. No blob is read.
type ImageContents struct {
	Ref string
	// Manifests are the index (when the reference names one) and the
	// arch's manifest.
	Manifests []v1.Descriptor
	Blobs     []v1.Descriptor
}

// ReadImageContents reads the manifests of refs for arch, as Footprint
// does: from their registries (opts.Registry: registries.conf mirrors,
// auth files, certs.d) or, with layouts, from those OCI layouts and
// archives only, each image from the first that names it (an image none
// names is an error: nothing is read from a registry then, a disconnected
// side has none).
func ReadImageContents(ctx context.Context, refs []string, arch releases.Arch, layouts []Target, opts Options) ([]ImageContents, error) {
	var src source
	if len(layouts) == 0 {
		r, err := newRegistrySource(ctx, opts.Registry)
		if err != nil {
			return nil, err
		}
		// Filtered operator catalogs are read where build wrote them.
		if src, err = withBuilt(r, opts.Built, nil, opts.Registry); err != nil {
			return nil, err
		}
	} else {
		m := &layoutsSource{owner: map[string]*layoutSource{}}
		for _, t := range layouts {
			s, err := openLayoutSource(t, opts.Registry)
			if err != nil {
				m.close()
				return nil, err
			}
			m.layouts = append(m.layouts, s)
		}
		src = m
	}
	defer src.close()
	out := make([]ImageContents, len(refs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(jobs(opts))
	for i, ref := range refs {
		g.Go(func() error {
			im, err := resolve(gctx, src, ref, selection{arch: arch})
			if err != nil {
				return err
			}
			c := ImageContents{Ref: ref, Blobs: im.Blobs}
			for _, m := range im.Manifests {
				c.Manifests = append(c.Manifests, v1.Descriptor{MediaType: m.MediaType, Digest: m.Digest, Size: int64(len(m.Data))})
			}
			out[i] = c
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// layoutsSource reads images from several layouts: each image from the
// first layout that names it.
type layoutsSource struct {
	layouts []*layoutSource
	mu      sync.Mutex
	owner   map[string]*layoutSource // image ref -> the layout it is read from
}

var _ source = (*layoutsSource)(nil)

func (m *layoutsSource) top(ctx context.Context, ref string) (*image, error) {
	for _, l := range m.layouts {
		if _, ok := l.byName[ref]; ok {
			m.mu.Lock()
			m.owner[ref] = l
			m.mu.Unlock()
			return l.top(ctx, ref)
		}
	}
	var names []string
	for _, l := range m.layouts {
		names = append(names, l.desc)
	}
	return nil, fmt.Errorf("%s: %w %s", ref, ErrNotInLayout, strings.Join(names, " or "))
}

func (m *layoutsSource) layout(im *image) *layoutSource {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.owner[im.Ref]
}

func (m *layoutsSource) child(ctx context.Context, im *image, d v1.Descriptor) (manifestBlob, error) {
	return m.layout(im).child(ctx, im, d)
}

func (m *layoutsSource) openBlob(ctx context.Context, im *image, d v1.Descriptor) (io.ReadCloser, error) {
	return m.layout(im).openBlob(ctx, im, d)
}

func (m *layoutsSource) close() error {
	for _, l := range m.layouts {
		l.close()
	}
	return nil
}
