// Package chart renders a component's Helm chart offline, in process, with
// Helm's own chart loader, values coalescing and template engine: no helm
// binary, no cluster, no network. The rendered resources go through the
// same kustomize path as a component's manifests/ (images pinned to the
// release digests, cross-checked against the plan), and the chart archive
// is kept beside the images so a rebuild, or the device, has it offline.
//
// What has no meaning for MicroShift's manifest loader is refused, never
// dropped silently: chart hooks (the loader applies a kustomization once;
// there is no install or upgrade event to hook) and the lookup function
// (there is no cluster at build time, so it would render as if nothing
// existed).
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
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
)

// MaxArchiveSize bounds a chart archive (.tgz) and the files of a chart
// directory together; Helm's loader bounds the decompressed size on top.
const MaxArchiveSize = 10 << 20

// Spec is a component's [chart] table.
type Spec struct {
	// Path is a packaged chart (.tgz) or a chart directory, relative to
	// the component directory.
	Path string `toml:"path"`
	// SHA256 is the archive's digest, required for a .tgz.
	SHA256 string `toml:"sha256"`
	// Namespace is where every namespaced object lands.
	Namespace string `toml:"namespace"`
	// Values is a values file relative to the component directory.
	Values string `toml:"values"`
	// Release is the Helm release name; "" is the component name.
	Release string `toml:"release"`
}

// IsArchive says whether Path names a packaged chart.
func (s Spec) IsArchive() bool { return strings.HasSuffix(s.Path, ".tgz") }

// Loaded is a chart read from a component directory.
type Loaded struct {
	Chart *chart.Chart
	// Archive is the packaged chart: the .tgz as given, or the chart
	// directory packaged deterministically.
	Archive []byte
	// SHA256 is the hex digest of Archive.
	SHA256 string
	values []byte
}

// File is the archive's name in the build output: NAME-VERSION.tgz.
func (l *Loaded) File() string {
	return l.Chart.Metadata.Name + "-" + l.Chart.Metadata.Version + ".tgz"
}

// Load reads the chart and its values from fsys (a component directory)
// through the input gate, checks the archive's digest and refuses archive
// entries that are no regular files (a symlink in a chart could make a
// later unpack write outside it).
func Load(fsys fs.FS, s Spec) (*Loaded, error) {
	l := &Loaded{}
	if s.Values != "" {
		v, err := inputfile.ReadFS(fsys, s.Values, 1<<20)
		if err != nil {
			return nil, fmt.Errorf("reading values %s: %w", s.Values, err)
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
		if err := checkArchiveEntries(data); err != nil {
			return nil, fmt.Errorf("chart %s: %w", s.Path, err)
		}
		if files, err = loader.LoadArchiveFiles(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("chart %s: %w", s.Path, err)
		}
		l.Archive = data
	} else {
		var err error
		if files, err = dirFiles(fsys, s.Path); err != nil {
			return nil, fmt.Errorf("chart %s: %w", s.Path, err)
		}
	}
	ch, err := loader.LoadFiles(files)
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

// checkArchiveEntries refuses links, devices and other non-regular entries.
func checkArchiveEntries(data []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not a gzip archive: %w", err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading archive: %w", err)
		}
		switch h.Typeflag {
		case tar.TypeReg, tar.TypeDir, tar.TypeXGlobalHeader, tar.TypeXHeader:
		case tar.TypeSymlink, tar.TypeLink:
			return fmt.Errorf("entry %q is a link (to %q): a chart holds regular files only", h.Name, h.Linkname)
		default:
			return fmt.Errorf("entry %q is not a regular file (tar type %q)", h.Name, h.Typeflag)
		}
	}
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

// lookupCall finds the lookup function in a template action.
var lookupCall = lazyregexp.New(`\{\{[^}]*\blookup\b`)

// isTestHook says whether a hook is only for `helm test`.
func isTestHook(h *release.Hook) bool {
	for _, e := range h.Events {
		if e != release.HookTest {
			return false
		}
	}
	return len(h.Events) > 0
}

// Render renders the chart for a release named release in namespace, for
// Kubernetes kubeVersion ("1.31"), and returns the resources in Helm's
// install order, CRDs (crds/) first, plus a Namespace for namespace when
// the chart renders none (helm install --create-namespace).
func Render(l *Loaded, release, namespace, kubeVersion string) (stream []byte, notes []string, err error) {
	for _, c := range append([]*chart.Chart{l.Chart}, l.Chart.Dependencies()...) {
		for _, t := range c.Templates {
			if lookupCall.Match(t.Data) {
				return nil, nil, fmt.Errorf("template %s calls lookup, which needs a cluster: a build renders offline, where lookup finds nothing", path.Join(c.Name(), t.Name))
			}
		}
	}
	vals := chartutil.Values{}
	if l.values != nil {
		v, err := chartutil.ReadValues(l.values)
		if err != nil {
			return nil, nil, fmt.Errorf("reading values: %w", err)
		}
		vals = v
	}
	caps := chartutil.DefaultCapabilities.Copy()
	kv := "v" + kubeVersion + ".0"
	major, minor, _ := strings.Cut(kubeVersion, ".")
	caps.KubeVersion = chartutil.KubeVersion{Version: kv, Major: major, Minor: minor}
	if err := chartutil.ProcessDependenciesWithMerge(l.Chart, vals); err != nil {
		return nil, nil, fmt.Errorf("processing dependencies: %w", err)
	}
	opts := chartutil.ReleaseOptions{Name: release, Namespace: namespace, Revision: 1, IsInstall: true}
	top, err := chartutil.ToRenderValues(l.Chart, vals, opts, caps)
	if err != nil {
		return nil, nil, err
	}
	rendered, err := engine.Render(l.Chart, top)
	if err != nil {
		return nil, nil, err
	}
	for name := range rendered {
		if strings.HasSuffix(name, "NOTES.txt") {
			delete(rendered, name)
		}
	}
	hooks, ms, err := releaseutil.SortManifests(rendered, caps.APIVersions, releaseutil.InstallOrder)
	if err != nil {
		return nil, nil, err
	}
	var refused []string
	for _, h := range hooks {
		if isTestHook(h) {
			notes = append(notes, fmt.Sprintf("%s %s (%s) dropped: a test hook, which only `helm test` runs", h.Kind, h.Name, h.Path))
			continue
		}
		refused = append(refused, fmt.Sprintf("%s %s (%s)", h.Kind, h.Name, h.Path))
	}
	if len(refused) > 0 {
		return nil, nil, fmt.Errorf("chart hooks have no meaning for MicroShift's manifest loader, which applies the manifests once with no install or upgrade event: %s", strings.Join(refused, ", "))
	}
	var out bytes.Buffer
	hasNamespace := false
	for _, crd := range l.Chart.CRDObjects() {
		writeDoc(&out, crd.File.Data)
	}
	for _, m := range ms {
		if m.Head != nil && m.Head.Kind == "Namespace" && m.Head.Metadata != nil && m.Head.Metadata.Name == namespace {
			hasNamespace = true
		}
		doc, err := inNamespace([]byte(m.Content), namespace)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		writeDoc(&out, doc)
	}
	if !hasNamespace {
		ns, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": namespace}})
		if err != nil {
			return nil, nil, err
		}
		var b bytes.Buffer
		writeDoc(&b, ns)
		b.Write(out.Bytes())
		return b.Bytes(), notes, nil
	}
	return out.Bytes(), notes, nil
}

func writeDoc(w *bytes.Buffer, doc []byte) {
	w.WriteString("---\n")
	w.Write(bytes.TrimRight(doc, "\n"))
	w.WriteString("\n")
}

// inNamespace puts a namespaced object that names no namespace into
// namespace, as helm install does with the release namespace; whether a
// kind is namespaced is kustomize's knowledge (kyaml's OpenAPI data), as
// its namespace transformer uses it. Objects of kinds it does not know
// (custom resources) are left as the chart wrote them.
func inNamespace(doc []byte, namespace string) ([]byte, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return nil, err
	}
	if head.Metadata.Namespace != "" {
		return doc, nil
	}
	namespaced, known := openapi.IsNamespaceScoped(kyaml.TypeMeta{APIVersion: head.APIVersion, Kind: head.Kind})
	if !known || !namespaced {
		return doc, nil
	}
	var obj map[string]any
	if err := yaml.Unmarshal(doc, &obj); err != nil {
		return nil, err
	}
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		obj["metadata"] = md
	}
	md["namespace"] = namespace
	return yaml.Marshal(obj)
}
