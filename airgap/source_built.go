package airgap

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/plan"
)

// BuiltLayout is where a plan's filtered operator catalog is: build made
// it, so no registry has it until mirror puts it in one. Build writes it
// to the output's operators/catalog layout, whose path a lock gives
// relative to itself.
func BuiltLayout(lockPath string, p *plan.Plan) (Target, bool) {
	if p.Operators == nil || p.Operators.Filtered.Layout == "" {
		return Target{}, false
	}
	return Target{Transport: TransportOCI, Path: filepath.Join(filepath.Dir(lockPath), filepath.FromSlash(p.Operators.Filtered.Layout))}, true
}

// builtSource reads the images of layouts build wrote (Options.Built, or
// a plan's filtered catalog not written yet) from them, and every other
// image from next.
type builtSource struct {
	byRef map[string]*layoutSource
	all   []*layoutSource
	next  source
}

var _ source = (*builtSource)(nil)

// withBuilt wraps next with the layouts of built (and of p's filtered
// catalog while the plan holds its files); next alone when there are none.
func withBuilt(next source, built []Target, p *plan.Plan, reg registryclient.Options) (source, error) {
	b := &builtSource{byRef: map[string]*layoutSource{}, next: next}
	add := func(s *layoutSource) {
		b.all = append(b.all, s)
		for _, n := range s.names() {
			b.byRef[n] = s
		}
	}
	for _, t := range built {
		s, err := openLayoutSource(t, reg)
		if err != nil {
			b.close()
			return nil, fmt.Errorf("reading the layout build wrote: %w", err)
		}
		add(s)
	}
	if p != nil && p.Operators != nil && len(p.Operators.Filtered.Files) > 0 {
		s, err := newLayoutSource("the filtered operator catalog "+p.Operators.Filtered.Ref, newFilesStore(p.Operators.Filtered.Files), reg)
		if err != nil {
			b.close()
			return nil, err
		}
		if err := s.readIndex(s.entries); err != nil {
			b.close()
			return nil, err
		}
		add(s)
	}
	if len(b.all) == 0 {
		return next, nil
	}
	return b, nil
}

func (b *builtSource) close() error {
	for _, s := range b.all {
		s.close()
	}
	return b.next.close()
}

func (b *builtSource) top(ctx context.Context, ref string) (*image, error) {
	if s := b.byRef[ref]; s != nil {
		return s.top(ctx, ref)
	}
	return b.next.top(ctx, ref)
}

func (b *builtSource) child(ctx context.Context, im *image, d v1.Descriptor) (manifestBlob, error) {
	if s := b.byRef[im.Ref]; s != nil {
		return s.child(ctx, im, d)
	}
	return b.next.child(ctx, im, d)
}

func (b *builtSource) openBlob(ctx context.Context, im *image, d v1.Descriptor) (io.ReadCloser, error) {
	if s := b.byRef[im.Ref]; s != nil {
		return s.openBlob(ctx, im, d)
	}
	return b.next.openBlob(ctx, im, d)
}

// filesStore is a layout build has not written yet: the plan's files of it.
type filesStore struct{ files map[string]plan.LayoutFile }

func newFilesStore(files []plan.LayoutFile) *filesStore {
	s := &filesStore{files: map[string]plan.LayoutFile{}}
	for _, f := range files {
		s.files[f.Path] = f
	}
	return s
}

func (s *filesStore) open(d v1.Hash) (io.ReadCloser, int64, error) {
	f, ok := s.files["blobs/"+d.Algorithm+"/"+d.Hex]
	if !ok {
		return nil, 0, fmt.Errorf("blob %s: %w", d, errMissing)
	}
	if f.Open != nil {
		rc, err := f.Open()
		return rc, f.Size, err
	}
	return io.NopCloser(bytes.NewReader(f.Data)), int64(len(f.Data)), nil
}

func (s *filesStore) readFile(name string, limit int64) ([]byte, error) {
	f, ok := s.files[name]
	if !ok || f.Open != nil {
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	if int64(len(f.Data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, limit)
	}
	return f.Data, nil
}

func (s *filesStore) close() error { return nil }
