// Package chart renders a component's Helm chart offline, in process, as
// `helm install` would: Helm's chart loader, and the rest written here over
// text/template and Sprig (engine.go: Helm's function map, include, tpl;
// values.go: values coalescing and dependencies; manifests.go: hooks and
// install order; schema.go: values.schema.json), each checked against the
// pinned `helm template` in the tests. No helm binary, no cluster, no
// network; it links none of Helm's engine, chartutil or releaseutil, which
// bring client-go's scheme and a JSON-schema validator whose package
// initialisation every start of the binary would pay. The rendered resources go through the
// same kustomize path as a component's manifests/ (images pinned to the
// release digests, cross-checked against the plan), and the chart archive
// is kept beside the images so a rebuild, or the device, has it offline.
//
// What has no meaning for MicroShift's manifest loader is refused, never
// dropped silently: chart hooks (the loader applies a kustomization once;
// there is no install or upgrade event to hook), functions whose result
// the inputs do not determine (random, clock, key generation, lookup: the
// template engine's function map refuses them however they are called),
// and what `helm install` refuses. A rendering is bounded in time, memory
// and output (Limits), and its output by the budgets of a component's
// kustomize input.
package chart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
)

// MaxArchiveSize bounds a chart archive (.tgz) and the files of a chart
// directory together; what an archive unpacks to is bounded by
// MaxChartSize.
const MaxArchiveSize = 10 << 20

// MaxChartSize bounds what a chart archive unpacks to, subcharts'
// archives unpacked too, and MaxChartFile each file of it (Helm's own
// bound of a file).
const (
	MaxChartSize = 10 << 20
	MaxChartFile = 5 << 20
)

// maxSubchartNesting bounds charts/*.tgz inside charts/*.tgz.
const maxSubchartNesting = 8

// Spec is a component's [chart] table.
type Spec struct {
	// Path is a packaged chart (.tgz or .tar.gz) or a chart directory,
	// relative to the component directory.
	Path string `toml:"path"`
	// SHA256 is the archive's digest, required for a packaged chart.
	SHA256 string `toml:"sha256"`
	// Namespace is where every namespaced object lands.
	Namespace string `toml:"namespace"`
	// Values is a values file relative to the component directory.
	Values string `toml:"values"`
	// Release is the Helm release name; "" is the component name.
	Release string `toml:"release"`
}

// IsArchive says whether Path names a packaged chart.
func (s Spec) IsArchive() bool {
	return strings.HasSuffix(s.Path, ".tgz") || strings.HasSuffix(s.Path, ".tar.gz")
}

// Loaded is a chart read from a component directory.
type Loaded struct {
	Chart *chart.Chart
	// Archive is the packaged chart: the archive as given, or the chart
	// directory packaged deterministically.
	Archive []byte
	// SHA256 is the hex digest of Archive.
	SHA256 string
	// Values names the values file in messages ("" when none is given).
	Values string
	values []byte
	// files are what the chart was loaded from: Render loads a chart of
	// its own from them (Helm's dependency processing changes the chart it
	// is given).
	files []*loader.BufferedFile
}

// File is the archive's name in the build output: NAME-VERSION.tgz.
func (l *Loaded) File() string {
	return l.Chart.Metadata.Name + "-" + l.Chart.Metadata.Version + ".tgz"
}

// load loads a chart of its own from the files.
func (l *Loaded) load() (*chart.Chart, error) {
	files := make([]*loader.BufferedFile, len(l.files))
	for i, f := range l.files {
		c := *f // LoadFiles renames the files of subcharts in place
		files[i] = &c
	}
	return loader.LoadFiles(files)
}

// Load reads the chart and its values from fsys (a component directory)
// through the input gate, checks the archive's digest, and refuses what
// the chart's files must not hold: entries that are no regular files (a
// symlink in a chart could make a later unpack write outside it), paths
// out of the chart, more than MaxChartSize unpacked, and YAML or JSON that
// Helm decodes beyond the input limits, in subcharts too.
func Load(fsys fs.FS, s Spec) (*Loaded, error) {
	l := &Loaded{Values: s.Values}
	if s.Values != "" {
		v, err := inputfile.ReadFS(fsys, s.Values, 1<<20)
		if err != nil {
			return nil, fmt.Errorf("reading values %s: %w", s.Values, err)
		}
		if err := inputfile.CheckYAML(v); err != nil {
			return nil, fmt.Errorf("values %s: %w", s.Values, err)
		}
		l.values = v
	}
	var files []*loader.BufferedFile
	if s.IsArchive() {
		data, err := inputfile.ReadFS(fsys, s.Path, MaxArchiveSize)
		if err != nil {
			return nil, fmt.Errorf("reading chart %s: %w", s.Path, err)
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != s.SHA256 {
			return nil, fmt.Errorf("chart %s: sha256 is %s, the component says %s", s.Path, got, s.SHA256)
		}
		budget := int64(MaxChartSize)
		if err := checkArchive(data, &budget, 0); err != nil {
			return nil, fmt.Errorf("chart %s: %w", s.Path, err)
		}
		if files, err = loader.LoadArchiveFiles(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("chart %s: %w", s.Path, err)
		}
		l.Archive = data
	} else {
		if s.SHA256 != "" {
			return nil, fmt.Errorf("chart %s: a sha256 is given for a chart directory, which has none to check: it pins a packaged chart (.tgz or .tar.gz)", s.Path)
		}
		var err error
		if files, err = dirFiles(fsys, s.Path); err != nil {
			return nil, fmt.Errorf("chart %s: %w", s.Path, err)
		}
		budget := int64(MaxChartSize)
		for _, f := range files {
			if err := checkChartFile(f.Name, f.Data, &budget, 0); err != nil {
				return nil, fmt.Errorf("chart %s: %w", s.Path, err)
			}
		}
	}
	l.files = files
	ch, err := l.load()
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", s.Path, err)
	}
	l.Chart = ch
	if l.Archive == nil {
		if l.Archive, err = pack(ch.Metadata.Name, files); err != nil {
			return nil, fmt.Errorf("packaging chart %s: %w", s.Path, err)
		}
	}
	sum := sha256.Sum256(l.Archive)
	l.SHA256 = hex.EncodeToString(sum[:])
	return l, nil
}

// checkArchive reads a chart archive as Helm's loader will and refuses,
// before it does: links, devices and other non-regular entries, absolute
// paths and paths out of the archive's one top directory, more than the
// budget unpacked (subcharts' archives, which the loader unpacks in turn,
// count in it), a file over MaxChartFile, and chart files beyond the input
// limits (checkChartFile).
func checkArchive(data []byte, budget *int64, nesting int) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not a gzip archive: %w", err)
	}
	tr := tar.NewReader(zr)
	top := ""
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading archive: %w", err)
		}
		switch h.Typeflag {
		case tar.TypeXGlobalHeader, tar.TypeXHeader:
			continue
		case tar.TypeReg, tar.TypeDir:
		case tar.TypeSymlink, tar.TypeLink:
			return fmt.Errorf("entry %q is a link (to %q): a chart holds regular files only", h.Name, h.Linkname)
		default:
			return fmt.Errorf("entry %q is not a regular file (tar type %q)", h.Name, h.Typeflag)
		}
		name := strings.ReplaceAll(h.Name, `\`, "/")
		if strings.HasPrefix(name, "/") || (len(name) > 1 && name[1] == ':') {
			return fmt.Errorf("entry %q is an absolute path: a chart's entries are relative to its directory", h.Name)
		}
		first, rest, _ := strings.Cut(strings.TrimPrefix(path.Clean(name), "./"), "/")
		if first == ".." || slices.Contains(strings.Split(name, "/"), "..") {
			return fmt.Errorf("entry %q leaves the chart's directory", h.Name)
		}
		if top == "" {
			top = first
		} else if first != top {
			return fmt.Errorf("entry %q is outside the chart's directory %s/: an archive holds one chart", h.Name, top)
		}
		if h.Typeflag == tar.TypeDir || rest == "" {
			continue
		}
		if h.Size > MaxChartFile {
			return fmt.Errorf("entry %q unpacks to %d bytes, more than a chart file may hold (%d)", h.Name, h.Size, MaxChartFile)
		}
		if *budget -= h.Size; *budget < 0 {
			return fmt.Errorf("the chart unpacks to more than %d bytes (at %q)", MaxChartSize, h.Name)
		}
		content, err := io.ReadAll(io.LimitReader(tr, h.Size))
		if err != nil {
			return fmt.Errorf("reading archive entry %q: %w", h.Name, err)
		}
		if err := checkChartFile(rest, content, budget, nesting); err != nil {
			return err
		}
	}
}

// yamlChartFiles are the files of a chart, relative to its directory,
// that Helm's loader decodes as YAML.
var yamlChartFiles = []string{"Chart.yaml", "values.yaml", "requirements.yaml", "Chart.lock", "requirements.lock"}

// checkChartFile checks one file of a chart (name relative to the chart's
// directory): the YAML and JSON Helm decodes (Chart.yaml, values, the
// schema, crds/) within the input limits, and a subchart's archive as the
// chart's own.
func checkChartFile(name string, data []byte, budget *int64, nesting int) error {
	rel := name
	for {
		after, ok := strings.CutPrefix(rel, "charts/")
		if !ok {
			break
		}
		sub, inner, ok := strings.Cut(after, "/")
		if !ok {
			if strings.HasSuffix(sub, ".tgz") && !strings.HasPrefix(sub, "_") && !strings.HasPrefix(sub, ".") {
				if nesting >= maxSubchartNesting {
					return fmt.Errorf("%s: subchart archives nested more than %d deep", name, maxSubchartNesting)
				}
				if err := checkArchive(data, budget, nesting+1); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
			}
			return nil
		}
		rel = inner
	}
	switch {
	case slices.Contains(yamlChartFiles, rel),
		strings.HasPrefix(rel, "crds/") && (strings.HasSuffix(rel, ".yaml") || strings.HasSuffix(rel, ".yml")):
		if err := inputfile.CheckYAML(data); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	case rel == "values.schema.json", strings.HasPrefix(rel, "crds/") && strings.HasSuffix(rel, ".json"):
		if err := inputfile.CheckJSON(data); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// dirFiles reads a chart directory: regular files only, within
// MaxArchiveSize together.
func dirFiles(fsys fs.FS, dir string) ([]*loader.BufferedFile, error) {
	var files []*loader.BufferedFile
	var total int64
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel := strings.TrimPrefix(p, dir+"/")
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: %w", rel, inputfile.NotRegular(d.Type()))
		}
		data, err := inputfile.ReadFS(fsys, p, MaxArchiveSize-total)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		total += int64(len(data))
		files = append(files, &loader.BufferedFile{Name: rel, Data: data})
		return nil
	})
	return files, err
}

// pack writes files as NAME/<file> into a tar.gz with fixed times, modes
// and owners and sorted entries: the same directory, the same bytes.
func pack(name string, files []*loader.BufferedFile) ([]byte, error) {
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b *loader.BufferedFile) int { return strings.Compare(a.Name, b.Name) })
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for _, f := range sorted {
		h := &tar.Header{Name: path.Join(name, f.Name), Mode: 0o644, Size: int64(len(f.Data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
