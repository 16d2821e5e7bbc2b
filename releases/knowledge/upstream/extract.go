package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/releases"
)

// streamFacts are the facts of one stream as read from its commit.
type streamFacts struct {
	pin Pin
	// release is the stream's release files.
	release *releases.Release
	origin  string

	kubernetes string
	spec       *Spec
	// packageConfigs are the config drop-ins packages install, by package.
	packageConfigs []packageConfig
	// packageReads are the drop-in directories a package's own config
	// makes it read.
	packageReads []packageRead
	config       map[string]*configKey
	distros      []distro
	upgrade      upgrade
	health       healthCheck
	storage      storage
	// lvmdEmpty is MicroShift's error for an empty lvmd.yaml; "" when its
	// source has none.
	lvmdEmpty string
}

type packageConfig struct {
	Package  string
	File     string
	Settings map[string]any
}

type packageRead struct {
	Package string `toml:"package"`
	Release string `toml:"release"`
	Glob    string `toml:"glob"`
	// Key is the config key naming the glob, File the config holding it.
	Key  string `toml:"key"`
	File string `toml:"file"`
}

type distro struct {
	Name      string
	BootcBase string
}

type upgrade struct {
	MaxSkew   int
	LastMinor map[string]int
}

type healthCheck struct {
	Method             string
	FailMarker         bool
	NamespaceFunctions map[string]namespaceFunction
}

type namespaceFunction struct {
	Function string `toml:"function"`
	Env      string `toml:"env"`
}

type storage struct {
	Provisioner          string
	DefaultClass         string
	FSTypeParameter      string
	DefaultFSType        string
	ReclaimPolicy        string
	VolumeBindingMode    string
	AllowVolumeExpansion bool
}

// The upstream files each fact is read from.
const (
	specPath        = "packaging/rpm/microshift.spec"
	kubeVarPath     = "Makefile.kube_git.var"
	openAPIPath     = "cmd/generate-config/config/config-openapi-spec.json"
	versionGoPath   = "pkg/admin/prerun/version.go"
	healthcheckPath = "pkg/cmd/healthcheck.go"
	functionsPath   = "packaging/greenboot/functions.sh"
	storageClass    = "assets/components/lvms/topolvm_default-storage-class.yaml"
	lvmdGoPath      = "pkg/config/lvmd/lvmd.go"
)

// extract reads one stream's facts at its pinned commits.
func extract(ctx context.Context, g *Git, pin Pin) (*streamFacts, error) {
	f := &streamFacts{pin: pin}
	read := func(p string) ([]byte, error) {
		data, err := g.Read(ctx, pin.Commit, p)
		if err != nil {
			return nil, fmt.Errorf("stream %s (%s): %w", pin.Stream, pin.Branch, err)
		}
		return data, nil
	}
	filesRef := Ref{Branch: pin.Branch, Commit: pin.Commit}
	if pin.ReleaseFiles != nil {
		filesRef = *pin.ReleaseFiles
	}
	rel, err := releaseFiles(ctx, g, filesRef)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", pin.Stream, err)
	}
	if rel.Stream() != pin.Stream {
		return nil, fmt.Errorf("stream %s: the release files of %s at %s are release %s (release.base %s), not %s",
			pin.Stream, filesRef.Branch, short(filesRef.Commit), rel.Stream(), rel.Base(releases.X86_64), pin.Stream)
	}
	f.release = rel
	f.origin = fmt.Sprintf("openshift/microshift %s at %s (assets/**/release*.json)", pin.Branch, short(pin.Commit))
	if pin.ReleaseFiles != nil {
		f.origin = fmt.Sprintf("openshift/microshift %s at %s, release files of %s at %s (assets/**/release*.json)",
			pin.Branch, short(pin.Commit), filesRef.Branch, short(filesRef.Commit))
	}

	data, err := read(kubeVarPath)
	if err != nil {
		return nil, err
	}
	if f.kubernetes, err = kubernetesVersion(data); err != nil {
		return nil, fmt.Errorf("stream %s: %s: %w", pin.Stream, kubeVarPath, err)
	}
	if data, err = read(specPath); err != nil {
		return nil, err
	}
	if f.spec, err = ParseSpec(specPath, data); err != nil {
		return nil, fmt.Errorf("stream %s: %w", pin.Stream, err)
	}
	if f.packageConfigs, err = packageConfigs(ctx, g, pin, f.spec); err != nil {
		return nil, err
	}
	if f.packageReads, err = packageReads(ctx, g, pin, f.spec); err != nil {
		return nil, err
	}
	if data, err = read(openAPIPath); err != nil {
		return nil, err
	}
	if f.config, err = openAPIConfigKeys(openAPIPath, data); err != nil {
		return nil, fmt.Errorf("stream %s: %w", pin.Stream, err)
	}
	if f.distros, err = distros(ctx, g, pin); err != nil {
		return nil, err
	}
	if data, err = read(versionGoPath); err != nil {
		return nil, err
	}
	if f.upgrade, err = upgradeRule(data); err != nil {
		return nil, fmt.Errorf("stream %s: %s: %w", pin.Stream, versionGoPath, err)
	}
	if f.health, err = healthCheckMethod(ctx, g, pin); err != nil {
		return nil, err
	}
	if data, err = read(storageClass); err != nil {
		return nil, err
	}
	if f.storage, err = storageClassFacts(data); err != nil {
		return nil, fmt.Errorf("stream %s: %s: %w", pin.Stream, storageClass, err)
	}
	if data, err = read(lvmdGoPath); err != nil {
		return nil, err
	}
	f.lvmdEmpty = lvmdEmptyError(data)
	return f, nil
}

// releaseFiles reads every assets/**/release*.json of ref, laid out flat
// as the release-info RPMs install them.
func releaseFiles(ctx context.Context, g *Git, ref Ref) (*releases.Release, error) {
	paths, err := g.List(ctx, ref.Commit, "assets")
	if err != nil {
		return nil, err
	}
	var files []*releases.File
	for _, p := range paths {
		base := path.Base(p)
		if !strings.HasPrefix(base, "release") || path.Ext(base) != ".json" {
			continue
		}
		data, err := g.Read(ctx, ref.Commit, p)
		if err != nil {
			return nil, err
		}
		f, err := releases.ParseFile(fmt.Sprintf("%s at %s: %s", ref.Branch, short(ref.Commit), p), base, data)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	rel, err := releases.New(fmt.Sprintf("%s at %s", ref.Branch, short(ref.Commit)), files)
	if err != nil {
		return nil, err
	}
	rel.Source = releases.EmbeddedSource
	return rel, nil
}

var kubeVar = regexp.MustCompile(`(?m)^KUBE_GIT_(MAJOR|MINOR)=(\d+)\s*$`)

// kubernetesVersion is major.minor of Makefile.kube_git.var.
func kubernetesVersion(data []byte) (string, error) {
	got := map[string]string{}
	for _, m := range kubeVar.FindAllSubmatch(data, -1) {
		got[string(m[1])] = string(m[2])
	}
	if got["MAJOR"] == "" || got["MINOR"] == "" {
		return "", errors.New("no KUBE_GIT_MAJOR and KUBE_GIT_MINOR")
	}
	return got["MAJOR"] + "." + got["MINOR"], nil
}

// packageConfigs are the config drop-ins (files under
// /etc/microshift/config.d) the spec's packages install, with the settings
// of the source file %install copies.
func packageConfigs(ctx context.Context, g *Git, pin Pin, spec *Spec) ([]packageConfig, error) {
	var out []packageConfig
	for _, pkg := range sortedKeys(spec.EtcFiles) {
		for _, file := range spec.EtcFiles[pkg] {
			if path.Dir(file) != "/etc/microshift/config.d" {
				continue
			}
			src, ok := spec.Sources[file]
			if !ok {
				return nil, fmt.Errorf("stream %s: %s: %s installs %s, but %%install copies nothing there that the generator reads", pin.Stream, specPath, pkg, file)
			}
			data, err := g.Read(ctx, pin.Commit, src)
			if err != nil {
				return nil, fmt.Errorf("stream %s: %w", pin.Stream, err)
			}
			var doc map[string]any
			if err := yaml.Unmarshal(data, &doc); err != nil {
				return nil, fmt.Errorf("stream %s: %s: %w", pin.Stream, src, err)
			}
			settings := map[string]any{}
			flatten("", doc, settings)
			out = append(out, packageConfig{Package: pkg, File: file, Settings: settings})
		}
	}
	return out, nil
}

// readsKeys are the config keys whose values are globs of drop-in files
// the package reads: the OpenTelemetry collector's Prometheus receiver
// reads scrape configs from scrape_config_files.
var readsKeys = []string{"scrape_config_files"}

// packageReads are the drop-in globs the YAML configs the spec's packages
// install under /etc name (readsKeys): where other packages put files for
// them to read.
func packageReads(ctx context.Context, g *Git, pin Pin, spec *Spec) ([]packageRead, error) {
	var out []packageRead
	for _, pkg := range sortedKeys(spec.EtcFiles) {
		for _, file := range spec.EtcFiles[pkg] {
			src, ok := spec.Sources[file]
			if !ok || (path.Ext(src) != ".yaml" && path.Ext(src) != ".yml") {
				continue
			}
			data, err := g.Read(ctx, pin.Commit, src)
			if err != nil {
				return nil, fmt.Errorf("stream %s: %w", pin.Stream, err)
			}
			var doc any
			if err := yaml.Unmarshal(data, &doc); err != nil {
				return nil, fmt.Errorf("stream %s: %s: %w", pin.Stream, src, err)
			}
			for _, key := range readsKeys {
				for _, glob := range findStrings(doc, key) {
					if strings.HasPrefix(glob, "/etc/") {
						out = append(out, packageRead{Package: pkg, Glob: path.Clean(glob), Key: key, File: file})
					}
				}
			}
		}
	}
	return out, nil
}

// findStrings returns the strings of every list under key, anywhere in doc.
func findStrings(doc any, key string) []string {
	var out []string
	switch x := doc.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			if list, ok := x[k].([]any); ok && k == key {
				for _, v := range list {
					if s, ok := v.(string); ok {
						out = append(out, s)
					}
				}
				continue
			}
			out = append(out, findStrings(x[k], key)...)
		}
	case []any:
		for _, v := range x {
			out = append(out, findStrings(v, key)...)
		}
	}
	return out
}

func flatten(prefix string, m map[string]any, out map[string]any) {
	for k, v := range m {
		p := join(prefix, k)
		if sub, ok := v.(map[string]any); ok {
			flatten(p, sub, out)
			continue
		}
		out[p] = v
	}
}

var (
	// crelImage is a current-release image upstream CI builds for every
	// change (base and presubmit layers, not periodic ones): the distros
	// the release is built and tested for.
	crelBootc  = regexp.MustCompile(`^test/image-blueprints-bootc/(?:el\d+/)?layer1-base/[^/]+/(rhel\d+)-bootc-crel\.containerfile$`)
	crelOstree = regexp.MustCompile(`^test/image-blueprints/layer[12]-[a-z]+/[^/]+/(rhel\d+)-crel\.toml$`)
	// fromLine is a containerfile's first FROM.
	fromLine = regexp.MustCompile(`(?m)^FROM\s+(\S+)`)
)

// distros are the RHEL releases upstream builds current-release images
// for, each with the bootc base image its image-mode builds start from
// (following FROM localhost/<image> through the containerfiles that build
// those images).
func distros(ctx context.Context, g *Git, pin Pin) ([]distro, error) {
	var paths []string
	for _, dir := range []string{"test/image-blueprints-bootc", "test/image-blueprints"} {
		ps, err := g.List(ctx, pin.Commit, dir)
		if err != nil {
			return nil, err
		}
		paths = append(paths, ps...)
	}
	containerfiles := map[string]string{} // image name -> path
	for _, p := range paths {
		if strings.HasSuffix(p, ".containerfile") {
			containerfiles[strings.TrimSuffix(path.Base(p), ".containerfile")] = p
		}
	}
	found := map[string]string{} // distro -> crel containerfile ("" for a blueprint only)
	for _, p := range paths {
		if m := crelBootc.FindStringSubmatch(p); m != nil {
			found[m[1]] = p
		} else if m := crelOstree.FindStringSubmatch(p); m != nil {
			if _, ok := found[m[1]]; !ok {
				found[m[1]] = ""
			}
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("stream %s: no current-release (crel) image under test/image-blueprints*", pin.Stream)
	}
	var out []distro
	for _, rhel := range sortedKeys(found) {
		name, err := distroName(rhel)
		if err != nil {
			return nil, fmt.Errorf("stream %s: %w", pin.Stream, err)
		}
		start := found[rhel]
		if start == "" {
			// No bootc current-release image: a bootc base image of the
			// same RHEL built for image-mode tests, if any.
			start = containerfiles[rhel+"-bootc-base"]
		}
		base := ""
		if start != "" {
			if base, err = followFrom(ctx, g, pin, containerfiles, start); err != nil {
				return nil, err
			}
		}
		out = append(out, distro{Name: name, BootcBase: base})
	}
	return out, nil
}

// distroName turns rhel96 into rhel-9.6 and rhel102 into rhel-10.2.
func distroName(rhel string) (string, error) {
	d := strings.TrimPrefix(rhel, "rhel")
	switch {
	case len(d) == 2:
		return "rhel-" + d[:1] + "." + d[1:], nil
	case len(d) == 3 && d[0] == '1':
		return "rhel-" + d[:2] + "." + d[2:], nil
	}
	return "", fmt.Errorf("%s: not a RHEL release name", rhel)
}

// followFrom follows a containerfile's FROM localhost/<image> to the
// containerfile building that image, until a FROM names a registry image:
// the bootc base.
func followFrom(ctx context.Context, g *Git, pin Pin, containerfiles map[string]string, start string) (string, error) {
	p := start
	for range 10 {
		data, err := g.Read(ctx, pin.Commit, p)
		if err != nil {
			return "", fmt.Errorf("stream %s: %w", pin.Stream, err)
		}
		m := fromLine.FindSubmatch(data)
		if m == nil {
			return "", fmt.Errorf("stream %s: %s has no FROM", pin.Stream, p)
		}
		from := string(m[1])
		local, ok := strings.CutPrefix(from, "localhost/")
		if !ok {
			return from, nil
		}
		name, _, _ := strings.Cut(local, ":")
		next, ok := containerfiles[name]
		if !ok {
			return "", fmt.Errorf("stream %s: %s starts FROM %s, which no containerfile under test/ builds", pin.Stream, p, from)
		}
		p = next
	}
	return "", fmt.Errorf("stream %s: %s: more than 10 FROM localhost/ images", pin.Stream, start)
}

// upgradeRule reads checkVersionCompatibility's rule from version.go: the
// skew (MAX_VERSION_SKEW, or before it the one minor of "maximum allowed
// difference is 1") and lastMinorForMajor.
func upgradeRule(src []byte) (upgrade, error) {
	u := upgrade{MaxSkew: -1, LastMinor: map[string]int{}}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, versionGoPath, src, parser.SkipObjectResolution)
	if err != nil {
		return u, err
	}
	ast.Inspect(file, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range vs.Names {
			if i >= len(vs.Values) {
				break
			}
			switch name.Name {
			case "MAX_VERSION_SKEW":
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.INT {
					u.MaxSkew, _ = strconv.Atoi(lit.Value)
				}
			case "lastMinorForMajor":
				cl, ok := vs.Values[i].(*ast.CompositeLit)
				if !ok {
					break
				}
				for _, e := range cl.Elts {
					kv, ok := e.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					k, kok := kv.Key.(*ast.BasicLit)
					v, vok := kv.Value.(*ast.BasicLit)
					if kok && vok {
						minor, _ := strconv.Atoi(v.Value)
						u.LastMinor[k.Value] = minor
					}
				}
			}
		}
		return true
	})
	if u.MaxSkew < 0 {
		if m := regexp.MustCompile(`maximum allowed difference is (\d+)`).FindSubmatch(src); m != nil {
			u.MaxSkew, _ = strconv.Atoi(string(m[1]))
		}
	}
	if u.MaxSkew < 0 {
		return u, errors.New("no MAX_VERSION_SKEW and no \"maximum allowed difference is N\"")
	}
	return u, nil
}

var (
	nsFunction = regexp.MustCompile(`function (namespace_([a-z]+)_ready)\(\)\s*\{\s*local -r ns="?\$\{([A-Z_]+)\}"?`)
	// workloadKinds maps the greenboot library's function names to
	// Kubernetes kinds.
	workloadKinds = map[string]string{"deployment": "Deployment", "daemonset": "DaemonSet", "statefulset": "StatefulSet"}
)

// healthCheckMethod says how a check waits for workloads: `microshift
// healthcheck --custom` where the command has the flag, else the greenboot
// functions library with its namespace_<kind>_ready functions; and whether
// the library has the fail marker functions.
func healthCheckMethod(ctx context.Context, g *Git, pin Pin) (healthCheck, error) {
	h := healthCheck{Method: "greenboot-functions"}
	fn, err := g.Read(ctx, pin.Commit, functionsPath)
	if err != nil {
		return h, fmt.Errorf("stream %s: %w", pin.Stream, err)
	}
	h.FailMarker = bytes.Contains(fn, []byte("function exit_if_fail_marker_exists()")) && bytes.Contains(fn, []byte("function create_fail_marker_and_exit()"))
	cmd, err := g.Read(ctx, pin.Commit, healthcheckPath)
	switch {
	case err == nil && bytes.Contains(cmd, []byte(`"custom"`)):
		h.Method = "microshift-healthcheck"
		return h, nil
	case err != nil && !errors.Is(err, ErrNotFound):
		return h, fmt.Errorf("stream %s: %w", pin.Stream, err)
	}
	h.NamespaceFunctions = map[string]namespaceFunction{}
	for _, m := range nsFunction.FindAllSubmatch(fn, -1) {
		if kind, ok := workloadKinds[string(m[2])]; ok {
			h.NamespaceFunctions[kind] = namespaceFunction{Function: string(m[1]), Env: string(m[3])}
		}
	}
	return h, nil
}

// storageClassFacts reads MicroShift's default LVMS StorageClass.
func storageClassFacts(data []byte) (storage, error) {
	var sc struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Provisioner          string            `json:"provisioner"`
		Parameters           map[string]string `json:"parameters"`
		ReclaimPolicy        string            `json:"reclaimPolicy"`
		VolumeBindingMode    string            `json:"volumeBindingMode"`
		AllowVolumeExpansion bool              `json:"allowVolumeExpansion"`
	}
	if err := yaml.Unmarshal(data, &sc); err != nil {
		return storage{}, err
	}
	s := storage{Provisioner: sc.Provisioner, DefaultClass: sc.Metadata.Name, ReclaimPolicy: sc.ReclaimPolicy,
		VolumeBindingMode: sc.VolumeBindingMode, AllowVolumeExpansion: sc.AllowVolumeExpansion}
	for _, k := range slices.Sorted(maps.Keys(sc.Parameters)) {
		if strings.HasSuffix(k, "/fstype") {
			s.FSTypeParameter, s.DefaultFSType = k, sc.Parameters[k]
		}
	}
	if s.Provisioner == "" || s.DefaultClass == "" || s.FSTypeParameter == "" {
		return s, errors.New("no provisioner, name or fstype parameter")
	}
	return s, nil
}

var (
	lvmdEmptyCheck = regexp.MustCompile(`if l == nil \{\s*return nil, fmt\.Errorf\("([^"]*)"`)
	lvmdRuntime    = regexp.MustCompile(`RuntimeLvmdConfigFile\s*=\s*"([^"]+)"`)
)

// lvmdEmptyError is the error NewLvmdConfigFromFile returns for an empty
// lvmd.yaml (from 5.0), its %q the runtime copy MicroShift reads; "" when
// the source has none.
func lvmdEmptyError(src []byte) string {
	m := lvmdEmptyCheck.FindSubmatch(src)
	if m == nil {
		return ""
	}
	msg := string(m[1])
	if r := lvmdRuntime.FindSubmatch(src); r != nil {
		msg = strings.ReplaceAll(msg, "%q", strconv.Quote(string(r[1])))
	}
	return msg
}
