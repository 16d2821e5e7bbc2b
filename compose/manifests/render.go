package manifests

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/microshift-compose/microshift-compose/internal/imageref"
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/k8sname"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/internal/text"
	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/yaml"
)

// KustomizationFile is the file a rendered directory's resources are
// listed in.
const KustomizationFile = "kustomization.yaml"

// Where things sit in the in-memory filesystem.
const (
	componentRoot = "/component"
	overlayRoot   = "/overlay"
	streamFile    = "resources.yaml"
)

// kustomizationNames are the names kustomize accepts for a kustomization.
var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// Input is what to render for one component. Exactly one of Dir,
// Kustomization and Resources is set.
type Input struct {
	// Component names the component in messages.
	Component string
	// FS is the component directory.
	FS fs.FS
	// Dir is a kustomization directory inside FS ("manifests").
	Dir string
	// Kustomization is a kustomization a plugin printed; it is rendered
	// as the kustomization at the root of FS, so it may reference the
	// component's co-located files.
	Kustomization []byte
	// Resources is a stream of resources a plugin printed.
	Resources []byte
	// Images pin image names to references (kustomize images: entries).
	Images []types.Image
}

// Job is a prepared rendering: the in-memory filesystem holding a copy
// of the component directory and an overlay kustomization that adds the
// images override.
type Job struct {
	component string
	fs        filesys.FileSystem
	// stream: the input is a plugin's resource stream; kustDir: the
	// input is the kustomization in this directory (for batches).
	stream  bool
	kustDir string
	// pins are the images: entries, applied to container args and env
	// values too (finish).
	pins []types.Image
}

// Prepare copies the component into memory, checks that every
// kustomization in it refers only to local files (a build never reaches
// the network), and writes the overlay.
func Prepare(in Input) (*Job, error) {
	j := &Job{component: in.Component, fs: filesys.MakeFsInMemory(), pins: in.Images}
	if err := copyFS(in.FS, j.fs, componentRoot); err != nil {
		return nil, err
	}
	overlay := types.Kustomization{
		TypeMeta: types.TypeMeta{APIVersion: types.KustomizationVersion, Kind: types.KustomizationKind},
		Images:   in.Images,
	}
	switch {
	case in.Dir != "":
		overlay.Resources = []string{path.Join("..", path.Base(componentRoot), in.Dir)}
		j.kustDir = path.Join(componentRoot, in.Dir)
	case in.Kustomization != nil:
		for _, n := range kustomizationNames {
			_ = j.fs.RemoveAll(path.Join(componentRoot, n))
		}
		if err := j.fs.WriteFile(path.Join(componentRoot, KustomizationFile), in.Kustomization); err != nil {
			return nil, err
		}
		overlay.Resources = []string{path.Join("..", path.Base(componentRoot))}
		j.kustDir = componentRoot
	case in.Resources != nil:
		if err := j.fs.WriteFile(path.Join(overlayRoot, streamFile), in.Resources); err != nil {
			return nil, err
		}
		overlay.Resources = []string{streamFile}
		j.stream = true
	default:
		return nil, fmt.Errorf("component %s: nothing to render", in.Component)
	}
	if err := checkLocal(j.fs); err != nil {
		return nil, err
	}
	data, err := yaml.Marshal(overlay)
	if err != nil {
		return nil, fmt.Errorf("encoding overlay kustomization: %w", err)
	}
	if err := j.fs.WriteFile(path.Join(overlayRoot, KustomizationFile), data); err != nil {
		return nil, err
	}
	return j, nil
}

// MaxComponentBytes bounds what a component directory may hold for
// rendering: every file is copied into memory. Each file is bounded by
// inputfile.DefaultMaxFile as well.
const MaxComponentBytes = 64 << 20

// copyFS copies the component directory into memory through the input
// gate: a symlink is followed only to a file inside the component, a named
// pipe, device or socket is refused (it never blocks the build), files and
// the whole are bounded, and YAML whose aliases would explode is refused
// here, before kustomize expands it.
func copyFS(src fs.FS, dst filesys.FileSystem, root string) error {
	if src == nil {
		return dst.MkdirAll(root)
	}
	var total int64
	var nodes int
	var skipped []string
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return gateError(err)
		}
		target := path.Join(root, p)
		if d.IsDir() {
			if err := dst.MkdirAll(target); isIllegalName(err) {
				skipped = append(skipped, p)
				return fs.SkipDir
			} else if err != nil {
				return err
			}
			return nil
		}
		if err := dst.WriteFile(target, nil); isIllegalName(err) {
			skipped = append(skipped, p)
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			st, err := fs.Stat(src, p)
			if errors.Is(err, fs.ErrNotExist) {
				target, _ := fs.ReadLink(src, p)
				return fmt.Errorf("%s: a symlink to %s, which does not exist", p, target)
			}
			if err != nil {
				return gateError(err)
			}
			if st.IsDir() {
				return fmt.Errorf("%s: a symlink to a directory, which is not followed; put the files in the component", p)
			}
		} else if !d.Type().IsRegular() {
			return fmt.Errorf("%s: %w", p, inputfile.NotRegular(d.Type()))
		}
		data, err := inputfile.ReadFS(src, p, inputfile.DefaultMaxFile)
		if err != nil {
			return gateError(err)
		}
		if total += int64(len(data)); total > MaxComponentBytes {
			return fmt.Errorf("%s: the component directory holds more than %d bytes", p, MaxComponentBytes)
		}
		shape, err := inputfile.CheckYAMLShape(data)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if nodes += shape.Nodes; nodes > inputfile.MaxManifestNodes {
			return fmt.Errorf("%s: the component directory holds more than %d YAML nodes (kustomize's limit here; split the component)", p, inputfile.MaxManifestNodes)
		}
		return dst.WriteFile(target, data)
	})
	if err != nil {
		return err
	}
	return checkSkipped(dst, root, skipped)
}

// isIllegalName reports whether err is kustomize's in-memory filesystem
// refusing a name it cannot hold ("illegal name 'a..b' in file creation":
// anything but letters, digits and - _ . :, or "..").
func isIllegalName(err error) bool {
	return err != nil && strings.Contains(err.Error(), "illegal name")
}

// checkSkipped refuses, naming the path, a file or directory copyFS left
// out because kustomize cannot hold its name, when a kustomization of the
// component names it; one that none names (an editor's backup such as
// kustomization.yaml~, a file a..b) is no part of the rendering.
func checkSkipped(dst filesys.FileSystem, root string, skipped []string) error {
	if len(skipped) == 0 {
		return nil
	}
	var kusts [][]byte
	_ = dst.Walk(root, func(p string, info fs.FileInfo, err error) error {
		if err == nil && !info.IsDir() && slices.Contains(kustomizationNames, path.Base(p)) {
			if data, err := dst.ReadFile(p); err == nil {
				kusts = append(kusts, data)
			}
		}
		return nil
	})
	for _, p := range skipped {
		for _, k := range kusts {
			if bytes.Contains(k, []byte(path.Base(p))) {
				return fmt.Errorf("%s: a name kustomize cannot read (letters, digits and - _ . : only, no \"..\"), and a kustomization names it: rename it", p)
			}
		}
	}
	return nil
}

// gateError words what the input gate refused as "<path>: <why>", the
// path relative to the component directory.
func gateError(err error) error {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return err
	}
	var oe *inputfile.OutsideError
	if errors.As(pe.Err, &oe) {
		return fmt.Errorf("%s: %s (kustomize reads only files inside it)", pe.Path, oe.Outside("component directory"))
	}
	return fmt.Errorf("%s: %w", pe.Path, pe.Err)
}

// display turns an in-memory path into one relative to the component
// directory, for messages.
func display(p string) string {
	if rest, ok := strings.CutPrefix(p, componentRoot+"/"); ok {
		return rest
	}
	if p == componentRoot {
		return "."
	}
	return strings.TrimPrefix(p, "/")
}

// checkLocal refuses kustomizations that would make kustomize fetch
// something: a remote base (git), or an http(s) URL anywhere a file may
// be named.
func checkLocal(fsys filesys.FileSystem) error {
	var found []string
	err := fsys.Walk(componentRoot, func(p string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !info.IsDir() && slices.Contains(kustomizationNames, path.Base(p)) {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(found)
	for _, p := range found {
		data, err := fsys.ReadFile(p)
		if err != nil {
			return err
		}
		var k types.Kustomization
		if err := yaml.Unmarshal(data, &k); err != nil {
			return fmt.Errorf("%s: invalid kustomization: %s", display(p), text.OneLine(err.Error()))
		}
		// helmChartInflationGenerator is the old spelling of helmCharts.
		if len(k.HelmCharts) > 0 || k.HelmGlobals != nil || len(k.HelmChartInflationGenerator) > 0 {
			return fmt.Errorf("%s: a kustomization's helmCharts are not rendered (kustomize's Helm inflation runs a helm binary); give the chart as the component's [chart] (docs/catalog.md, Helm charts), render it with 'helm template' into the component's manifests, or print it from a plugin", display(p))
		}
		dir := path.Dir(p)
		//lint:ignore SA1019 components may still use bases; they must be local too
		for _, ref := range slices.Concat(k.Resources, k.Components, k.Bases) {
			if isURL(ref) || !fsys.Exists(path.Join(dir, ref)) {
				return fmt.Errorf("%s: resource %q is not a file or directory of the component (remote resources are not fetched: builds are offline; vendor it into the component)", display(p), ref)
			}
		}
		var files []string
		files = append(files, k.Crds...)
		files = append(files, k.Configurations...)
		files = append(files, k.Generators...)
		files = append(files, k.Transformers...)
		files = append(files, k.Validators...)
		//lint:ignore SA1019 deprecated fields still name files kustomize reads
		for _, pt := range k.PatchesStrategicMerge {
			files = append(files, string(pt))
		}
		files = append(files, k.OpenAPI["path"])
		for _, pt := range k.Patches {
			files = append(files, pt.Path)
		}
		//lint:ignore SA1019 deprecated fields still name files kustomize reads
		for _, pt := range k.PatchesJson6902 {
			files = append(files, pt.Path)
		}
		for _, r := range k.Replacements {
			files = append(files, r.Path)
		}
		for _, g := range k.ConfigMapGenerator {
			files = append(append(append(files, g.FileSources...), g.EnvSources...), g.EnvSource)
		}
		for _, g := range k.SecretGenerator {
			files = append(append(append(files, g.FileSources...), g.EnvSources...), g.EnvSource)
		}
		for _, f := range files {
			if _, after, ok := strings.Cut(f, "="); ok {
				f = after // configMapGenerator files: key=path
			}
			if isURL(f) {
				return fmt.Errorf("%s: %q is a URL (remote files are not fetched: builds are offline; vendor it into the component)", display(p), f)
			}
		}
	}
	return nil
}

func isURL(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.Contains(s, "://") || strings.HasPrefix(s, "git@") || strings.HasPrefix(s, "github.com/") || strings.Contains(s, "?ref=")
}

// Resource is one rendered Kubernetes object.
type Resource struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	// File is its file name in the rendered directory.
	File string
	Data []byte
	// Images are the container images it names.
	Images []Image
}

// ID names the resource for messages: "DaemonSet ns/name", "Namespace name".
func (r Resource) ID() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// Image is a container image a resource names.
type Image struct {
	// Field is the containers field: containers, initContainers or
	// ephemeralContainers.
	Field string
	// Container is the container's name.
	Container string
	// In is where in the container the reference is when not in image:
	// "args[3]", "command[0]", "env[SOLVER_IMAGE]".
	In  string
	Ref string
}

// Result is a rendered directory: resources in kustomize's output order
// and the kustomization.yaml that lists them.
type Result struct {
	Resources     []Resource
	Kustomization []byte
}

// Render runs kustomize on the job: in batches when the input allows it
// (see batches), else in one run.
func (j *Job) Render() (*Result, error) {
	if plan, ok := j.batches(BatchSize); ok {
		rs, err := j.renderBatches(plan)
		if err != nil {
			return nil, err
		}
		return finish(rs, j.pins)
	}
	m, err := run(j.fs, krusty.ReorderOptionUnspecified)
	if err != nil {
		return nil, err
	}
	return finish(m.Resources(), j.pins)
}

// run renders the overlay of fsys. reorder is kustomize's: Unspecified
// sorts as the kustomize CLI does by default (Namespaces first, then RBAC,
// config, workloads: its "legacy" order), None keeps input order.
func run(fsys filesys.FileSystem, reorder krusty.ReorderOption) (resmap.ResMap, error) {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = reorder
	m, err := krusty.MakeKustomizer(opts).Run(fsys, overlayRoot)
	if err != nil {
		msg := text.OneLine(err.Error())
		msg = strings.ReplaceAll(msg, componentRoot+"/", "")
		msg = strings.ReplaceAll(msg, overlayRoot+"/"+streamFile, "plugin output")
		// kustomize's advice names its CLI's flag, which this tool has not.
		msg = strings.ReplaceAll(msg, "must specify --enable-helm", "a kustomization's helmCharts are not rendered (kustomize's Helm inflation runs a helm binary); give the chart as the component's [chart]")
		return nil, errors.New(kustomizeError(msg))
	}
	return m, nil
}

var (
	kustAccumulation = lazyregexp.New(`^accumulation err='accumulating resources from '[^']*': '[^']*' must resolve to a file': `)
	kustRecursed     = lazyregexp.New(`^recursed accumulation of path '([^']*)': `)
	kustFrom         = lazyregexp.New(`^accumulating resources from '([^']*)': `)
	kustInFile       = lazyregexp.New(` in File: (\S+)$`)
)

// kustomizeError reduces kustomize's error chain (each accumulation step
// wraps the one inside it, and the overlay this package adds is one of
// them) to one line: the file at fault, relative to the component
// directory, and the innermost error. Without a file named, the fault is
// in the kustomization of the directory it names.
func kustomizeError(msg string) string {
	dir, file := "", ""
	for {
		if rest, ok := strings.CutPrefix(msg, "accumulating resources: "); ok {
			msg = rest
		} else if m := kustAccumulation.FindString(msg); m != "" {
			msg = msg[len(m):]
		} else if m := kustRecursed.FindStringSubmatch(msg); m != nil {
			dir, msg = m[1], msg[len(m[0]):]
		} else if m := kustFrom.FindStringSubmatch(msg); m != nil {
			file, msg = path.Join(dir, m[1]), msg[len(m[0]):]
		} else if rest, ok := strings.CutPrefix(msg, "MalformedYAMLError: "); ok {
			msg = rest
		} else {
			break
		}
	}
	if m := kustInFile.FindStringSubmatchIndex(msg); m != nil {
		msg = msg[:m[0]]
	}
	switch {
	case file != "":
	case dir != "":
		file = dir + " (its kustomization)"
	default:
		return "kustomize: " + msg
	}
	return fmt.Sprintf("%s: kustomize: %s", file, msg)
}

// finish turns rendered resources, in apply order, into the Result: each
// with the image references of its containers' args, command and env
// pinned as kustomize pins image: (pinArgs), encoded as kustomize's CLI
// prints it, checked, named and scanned for images. Encoding, the costly
// part, runs on every core.
func finish(rs []*resource.Resource, pins []types.Image) (*Result, error) {
	names := fileNames(rs)
	out := make([]Resource, len(rs))
	errs := make([]error, len(rs))
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), max(1, len(rs)/64))
	next := make(chan int, len(rs))
	for i := range rs {
		next <- i
	}
	close(next)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = encode(rs[i], names[rs[i]], pins)
			}
		}()
	}
	wg.Wait()
	res := &Result{Resources: out}
	seen := map[string]string{}
	for i, r := range out {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if prev, dup := seen[r.File]; dup {
			return nil, fmt.Errorf("%s and %s would both be written to %s", prev, r.ID(), r.File)
		}
		seen[r.File] = r.ID()
	}
	res.Kustomization = kustomization(res.Resources)
	return res, nil
}

// encode renders one resource: its YAML as `kustomize build` prints it,
// its names checked, and its container images.
func encode(r *resource.Resource, file string, pins []types.Image) (Resource, error) {
	out := Resource{
		APIVersion: r.GetApiVersion(),
		Kind:       r.GetKind(),
		Namespace:  r.GetNamespace(),
		Name:       r.GetName(),
		File:       file,
	}
	if err := checkNames(out); err != nil {
		return out, err
	}
	if out.Kind != "CustomResourceDefinition" {
		pinArgs(r.YNode(), pins)
	}
	data, err := r.AsYAML()
	if err != nil {
		// kyaml's errors span lines ("unmarshal errors:\n  line 2: ...").
		return out, fmt.Errorf("encoding %s: %s", out.ID(), text.OneLine(err.Error()))
	}
	out.Data = data
	if out.Kind != "CustomResourceDefinition" {
		out.Images = findImages(r.YNode())
	}
	return out, nil
}

// checkNames refuses a rendered resource whose kind, apiVersion, name or
// namespace the API server would reject: such a resource fails on the
// device, and its name becomes a file name and a line of
// kustomization.yaml.
func checkNames(r Resource) error {
	if err := k8sname.Kind(r.Kind); err != nil {
		return err
	}
	if err := k8sname.APIVersion(r.APIVersion); err != nil {
		return fmt.Errorf("%s: %w", r.Kind, err)
	}
	if err := k8sname.Name(r.APIVersion, r.Kind, r.Name); err != nil {
		return fmt.Errorf("%s: %w", r.Kind, err)
	}
	if r.Namespace != "" {
		if err := k8sname.Namespace(r.Namespace); err != nil {
			return fmt.Errorf("%s %s: %w", r.Kind, r.Name, err)
		}
	}
	return nil
}

// fileNames names files as `kustomize build -o DIR` does:
// <group>_<version>_<kind>_<name>.yaml, lowercase, prefixed with
// <namespace>_ when the namespaced resources span several namespaces
// (grouped by effective namespace, as kustomize's ResMap does).
func fileNames(rs []*resource.Resource) map[*resource.Resource]string {
	base := func(r *resource.Resource) string {
		return strings.ToLower(r.GetGvk().StringWoEmptyField()) + "_" + strings.ToLower(r.GetName()) + ".yaml"
	}
	namespaces := map[string]bool{}
	ns := make([]string, len(rs))
	for i, r := range rs {
		ns[i] = r.CurId().EffectiveNamespace()
		if ns[i] != resid.TotallyNotANamespace {
			namespaces[ns[i]] = true
		}
	}
	out := make(map[*resource.Resource]string, len(rs))
	for i, r := range rs {
		n := base(r)
		if ns[i] != resid.TotallyNotANamespace && len(namespaces) > 1 {
			n = strings.ToLower(ns[i]) + "_" + n
		}
		out[r] = n
	}
	return out
}

// kustomization lists the rendered files in apply order.
func kustomization(rs []Resource) []byte {
	var b bytes.Buffer
	b.WriteString("# Rendered by microshift-compose; do not edit.\n")
	b.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n")
	for _, r := range rs {
		b.WriteString("- " + yamlItem(r.File) + "\n")
	}
	return b.Bytes()
}

var plainItem = lazyregexp.New(`^[a-z0-9][A-Za-z0-9._:@+-]*$`)

// yamlItem writes a file name as a YAML list item: plain when it is made
// of the characters checked names give (checkNames), else double-quoted
// with escapes, so that no name can add an item or a key.
func yamlItem(s string) string {
	if plainItem.MatchString(s) {
		return s
	}
	return strconv.Quote(text.Escape(s))
}

var containerFields = []string{"containers", "initContainers", "ephemeralContainers"}

// findImages walks an object for lists of containers wherever they are
// (pods, every workload kind's template, CronJob's job template, custom
// resources that embed pod specs), as kustomize's own image transformer
// does for containers and initContainers. It reads the YAML node tree,
// keys in sorted order.
func findImages(n *yaml3.Node) []Image {
	var out []Image
	var walk func(*yaml3.Node)
	walk = func(n *yaml3.Node) {
		for n != nil && n.Kind == yaml3.AliasNode {
			n = n.Alias
		}
		if n == nil {
			return
		}
		switch n.Kind {
		case yaml3.DocumentNode, yaml3.SequenceNode:
			for _, c := range n.Content {
				walk(c)
			}
		case yaml3.MappingNode:
			type field struct {
				key   string
				value *yaml3.Node
			}
			fields := make([]field, 0, len(n.Content)/2)
			for i := 0; i+1 < len(n.Content); i += 2 {
				fields = append(fields, field{n.Content[i].Value, n.Content[i+1]})
			}
			slices.SortStableFunc(fields, func(a, b field) int { return strings.Compare(a.key, b.key) })
			for _, f := range fields {
				if slices.Contains(containerFields, f.key) && f.value.Kind == yaml3.SequenceNode {
					for _, c := range f.value.Content {
						if c.Kind != yaml3.MappingNode {
							continue
						}
						name := scalar(c, "name")
						out = append(out, Image{Field: f.key, Container: name, Ref: scalar(c, "image")})
						eachArg(c, func(in string, v *yaml3.Node) {
							if _, ref := argImage(v.Value); ref != "" && looksLikeImage(ref) {
								out = append(out, Image{Field: f.key, Container: name, In: in, Ref: ref})
							}
						})
					}
					continue
				}
				walk(f.value)
			}
		}
	}
	walk(n)
	return out
}

// eachArg calls fn with every string of a container's args and command,
// and every env value given as a string, with where it is.
func eachArg(c *yaml3.Node, fn func(in string, v *yaml3.Node)) {
	for i := 0; i+1 < len(c.Content); i += 2 {
		key, list := c.Content[i].Value, c.Content[i+1]
		if list.Kind != yaml3.SequenceNode {
			continue
		}
		for j, item := range list.Content {
			switch key {
			case "args", "command":
				if item.Kind == yaml3.ScalarNode && item.ShortTag() == "!!str" {
					fn(fmt.Sprintf("%s[%d]", key, j), item)
				}
			case "env":
				if item.Kind != yaml3.MappingNode {
					continue
				}
				for k := 0; k+1 < len(item.Content); k += 2 {
					if v := item.Content[k+1]; item.Content[k].Value == "value" && v.Kind == yaml3.ScalarNode && v.ShortTag() == "!!str" {
						fn(fmt.Sprintf("env[%s]", scalar(item, "name")), v)
					}
				}
			}
		}
	}
}

// argImage splits an argument into a flag prefix ("--image=") and the
// value that may be an image reference: the whole of it, or what follows
// the = of a flag.
func argImage(s string) (prefix, ref string) {
	if strings.HasPrefix(s, "-") {
		if i := strings.Index(s, "="); i > 0 {
			return s[:i+1], s[i+1:]
		}
		return s, ""
	}
	return "", s
}

// looksLikeImage says whether s is a fully written image reference: a
// registry host, a repository and a tag or digest (quay.io/x/y:v1), the
// form an argument or an environment value names an image in. Shorter
// forms are too like other values to be taken for images; they are
// pinned only when an images: entry names them.
func looksLikeImage(s string) bool {
	if !strings.Contains(s, "/") || strings.Contains(s, "://") {
		return false // a URL's scheme parses as a registry host
	}
	_, err := imageref.ParseReference(s, name.StrictValidation)
	return err == nil
}

// imageName is a reference without its tag and digest, as kustomize's
// images: name matches it.
func imageName(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

// pinArgs pins the image references in containers' args, command and env
// values as kustomize's images: transformer pins image: fields: a value
// (or the value of a --flag=value argument) whose image name an entry
// names gets the entry's name and digest (or tag). An operator that
// starts pods of its own takes their image from such an argument
// (cert-manager's --acme-http01-solver-image): left as a tag, an
// airgapped device could not pull it.
func pinArgs(n *yaml3.Node, pins []types.Image) {
	if len(pins) == 0 {
		return
	}
	byName := map[string]types.Image{}
	for _, p := range pins {
		byName[p.Name] = p
	}
	var walk func(*yaml3.Node)
	walk = func(n *yaml3.Node) {
		if n == nil || n.Kind == yaml3.AliasNode {
			return
		}
		if n.Kind == yaml3.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				v := n.Content[i+1]
				if slices.Contains(containerFields, n.Content[i].Value) && v.Kind == yaml3.SequenceNode {
					for _, c := range v.Content {
						if c.Kind == yaml3.MappingNode {
							eachArg(c, func(_ string, arg *yaml3.Node) {
								prefix, ref := argImage(arg.Value)
								if p, ok := byName[imageName(ref)]; ok && ref != "" {
									arg.Value = prefix + pinned(ref, p)
									arg.Style &^= yaml3.LiteralStyle | yaml3.FoldedStyle
								}
							})
						}
					}
					continue
				}
				walk(v)
			}
			return
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
}

// pinned is ref with an images: entry applied, as kustomize applies it.
func pinned(ref string, p types.Image) string {
	name, tag, digest := imageName(ref), "", ""
	if i := strings.Index(ref, "@"); i >= 0 {
		digest = ref[i+1:]
	} else if len(name) < len(ref) {
		tag = ref[len(name)+1:]
	}
	if p.NewName != "" {
		name = p.NewName
	}
	switch {
	case p.NewTag != "" && p.Digest != "":
		tag, digest = p.NewTag, p.Digest
	case p.NewTag != "":
		tag, digest = p.NewTag, ""
	case p.Digest != "":
		tag, digest = "", p.Digest
	}
	if tag != "" {
		name += ":" + tag
	}
	if digest != "" {
		name += "@" + digest
	}
	return name
}

// scalar returns the string value of key in a mapping node, "" when it is
// missing or not a string.
func scalar(m *yaml3.Node, key string) string {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v := m.Content[i+1]
			if v.Kind == yaml3.ScalarNode && v.ShortTag() == "!!str" {
				return v.Value
			}
			return ""
		}
	}
	return ""
}

// WriteTo writes the job's files to dir on disk (the overlay in
// dir/overlay, the component in dir/component), so that the kustomize CLI
// can render exactly what Render renders: `kustomize build dir/overlay`.
func (j *Job) WriteTo(dir string) error {
	return j.fs.Walk("/", func(p string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(p))
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := j.fs.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// OverlayDir is the directory WriteTo's caller passes to kustomize build.
func OverlayDir(dir string) string {
	return filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(overlayRoot, "/")))
}
