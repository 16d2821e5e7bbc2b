package components

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/netip"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/microshift-compose/microshift-compose/internal/imageref"
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/internal/safetext"
	"github.com/microshift-compose/microshift-compose/internal/suggest"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// NamePattern is the rule of the catalog's names (components, profiles,
// capabilities): DNS labels, which become directory names on the device.
// A component's name is at most MaxNameLength long.
const (
	NamePattern   = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	MaxNameLength = 63
)

var (
	namePattern    = lazyregexp.New(NamePattern)
	packagePattern = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)
	portPattern    = lazyregexp.New(`^(node-ports|[0-9]{1,5}(-[0-9]{1,5})?|[a-z][a-z0-9-]*):(tcp|udp)$`)
	unitPattern    = lazyregexp.New(`^[A-Za-z0-9:_.@-]+$`)
	modePattern    = lazyregexp.New(`^0?[0-7]{3}$`)
)

// ClusterNetworkSource is the trusted-source keyword for the configured
// cluster network CIDRs.
const ClusterNetworkSource = "cluster-network"

// NodePortsPort is the firewall port keyword for the configured service
// node port range.
const NodePortsPort = "node-ports"

// Problems checks the catalog on its own (no releases) and returns every
// problem found, sorted, each naming the file it comes from.
func (c *Catalog) Problems() []error {
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }

	// Two components may share an order: ties apply by name, and their
	// NNN-<name> directories sort the same way on the device.
	providers := map[string]int{}
	for _, comp := range c.Components {
		for _, p := range comp.Provides {
			providers[p]++
		}
	}
	for _, n := range c.ComponentNames() {
		comp := c.Components[n]
		for _, p := range comp.problems() {
			add("%s: %s", comp.Source, p)
		}
		if _, clash := c.Capabilities[n]; clash {
			add("%s: component %q has the same name as a capability", comp.Source, n)
		}
		for _, r := range comp.Requires {
			switch {
			case c.Components[r] == nil && c.Capabilities[r] == nil:
				add("%s: requires: %s", comp.Source, c.unknownRef(r))
			case c.Capabilities[r] != nil && providers[r] == 0:
				add("%s: requires capability %q, which no component in the catalog provides", comp.Source, r)
			}
		}
		for _, r := range comp.Conflicts {
			if c.Components[r] == nil && c.Capabilities[r] == nil {
				add("%s: conflicts: %s", comp.Source, c.unknownRef(r))
			}
		}
		for _, p := range comp.Provides {
			if c.Capabilities[p] == nil {
				add("%s: provides: unknown capability %q (declare it in catalog.toml [capabilities.%s])", comp.Source, p, p)
			}
		}
	}
	for _, n := range c.CapabilityNames() {
		capa := c.Capabilities[n]
		if !namePattern.MatchString(n) {
			add("%s: capability %q: name must be lowercase letters, digits and dashes", capa.Source, n)
		}
		providers := c.Providers(n)
		switch {
		case capa.Default == "":
			if len(providers) > 0 {
				add("%s: capability %q has no default provider (one of %s)", capa.Source, n, strings.Join(providers, ", "))
			}
		case c.Components[capa.Default] == nil:
			add("%s: capability %q: default provider %s", capa.Source, n, c.unknownRef(capa.Default))
		case !slices.Contains(c.Components[capa.Default].Provides, n):
			add("%s: capability %q: default provider %q does not provide it", capa.Source, n, capa.Default)
		}
	}
	for _, n := range c.ProfileNames() {
		p := c.Profiles[n]
		if !namePattern.MatchString(n) {
			add("%s: profile %q: name must be lowercase letters, digits and dashes", p.Source, n)
		}
		if len(p.Components) == 0 {
			add("%s: profile %q selects no components", p.Source, n)
		}
		seen := map[string]bool{}
		for _, m := range p.Components {
			if seen[m] {
				add("%s: profile %q lists %q twice", p.Source, n, m)
			}
			seen[m] = true
			if c.Components[m] == nil {
				add("%s: profile %q: %s", p.Source, n, c.unknownComponent(m))
			}
		}
	}
	for _, p := range c.claimProblems() {
		add("%s", p)
	}
	if cycle := c.findCycle(); cycle != nil {
		add("%s: dependency cycle: %s", c.Components[cycle[0]].Source, strings.Join(cycle, " -> "))
	}
	sort.Strings(probs)
	out := make([]error, len(probs))
	for i, p := range probs {
		out[i] = errors.New(p)
	}
	return out
}

func describeFile(component string) string { return releases.FileName(component, "<arch>") }

func (c *Catalog) unknownRef(name string) string {
	cands := append(slices.Sorted(maps.Keys(c.Components)), slices.Sorted(maps.Keys(c.Capabilities))...)
	if m := suggest.Closest(name, cands); m != "" {
		return fmt.Sprintf("unknown component or capability %q; did you mean %q?", name, m)
	}
	return fmt.Sprintf("unknown component or capability %q", name)
}

func (c *Catalog) unknownComponent(name string) string {
	if m := suggest.Closest(name, slices.Sorted(maps.Keys(c.Components))); m != "" {
		return fmt.Sprintf("unknown component %q; did you mean %q?", name, m)
	}
	return fmt.Sprintf("unknown component %q", name)
}

// problems checks one component's own fields.
func (comp *Component) problems() []string {
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	if !namePattern.MatchString(comp.Name) || len(comp.Name) > MaxNameLength {
		add("name %q must be lowercase letters, digits and dashes (at most %d)", comp.Name, MaxNameLength)
	}
	if strings.TrimSpace(comp.Description) == "" {
		add("missing description")
	} else if text.HasUnsafe(comp.Description) {
		add("description %q contains a control character (it is printed and written into blueprint.toml)", comp.Description)
	}
	if comp.Order < 0 || comp.Order > 999 {
		add("order %d is out of range 0-999", comp.Order)
	}
	checkNames := func(field string, list []string) {
		seen := map[string]bool{}
		for _, n := range list {
			if !namePattern.MatchString(n) {
				add("%s: %q must be lowercase letters, digits and dashes", field, n)
			}
			if seen[n] {
				add("%s: %q is listed twice", field, n)
			}
			if n == comp.Name {
				add("%s: a component cannot name itself", field)
			}
			seen[n] = true
		}
	}
	checkNames("provides", comp.Provides)
	checkNames("requires", comp.Requires)
	checkNames("conflicts", comp.Conflicts)
	checkNames("default_for", comp.DefaultFor)
	k, _ := knowledge.Default()
	for i, b := range comp.Builds {
		if k != nil && k.Build(b) == nil || slices.Index(comp.Builds, b) < i {
			add("builds: %q is not a build of MicroShift microshift-compose knows (%s), or is listed twice", b, strings.Join(k.BuildNames(), ", "))
		}
	}
	for _, c := range comp.DefaultFor {
		if !slices.Contains(comp.Provides, c) {
			add("default_for: %q is not a capability it provides", c)
		}
		if len(comp.Builds) == 0 {
			add("default_for: %q: a component is the default provider of a capability on the builds it names (builds); the catalog-wide default is catalog.toml's", c)
		}
	}
	seenArch := map[releases.Arch]bool{}
	for _, a := range comp.Arches {
		if seenArch[a] {
			add("arches: %q is listed twice", a)
		}
		seenArch[a] = true
	}
	for _, p := range comp.Packages {
		if !packagePattern.MatchString(p) {
			add("packages: %q is not a package name", p)
		}
	}
	probs = append(probs, repositoryProblems("", comp.Repositories, comp.Packages)...)
	probs = append(probs, imagesProblems("", comp.Images)...)
	probs = append(probs, configProblems("", comp.Config)...)
	probs = append(probs, comp.variantProblems()...)
	for _, u := range append(append([]string{}, comp.Services.Enabled...), comp.Services.Disabled...) {
		if !unitPattern.MatchString(u) {
			add("services: %q is not a systemd unit name", u)
		}
	}
	for _, u := range comp.Services.Enabled {
		if slices.Contains(comp.Services.Disabled, u) {
			add("services: %q is both enabled and disabled", u)
		}
	}
	for _, p := range comp.Firewall.Ports {
		if !portPattern.MatchString(p) {
			add("firewall.ports: %q must be port:proto, from-to:proto or node-ports:proto (proto tcp or udp)", p)
		} else if err := checkPortRange(p); err != nil {
			add("firewall.ports: %q: %v", p, err)
		}
	}
	for _, s := range comp.Firewall.Services {
		if !namePattern.MatchString(s) {
			add("firewall.services: %q is not a firewalld service name", s)
		}
	}
	for _, s := range comp.Firewall.TrustedSources {
		if s == ClusterNetworkSource {
			continue
		}
		if _, err := netip.ParseAddr(s); err == nil {
			continue
		}
		if _, err := netip.ParsePrefix(s); err == nil {
			continue
		}
		add("firewall.trusted_sources: %q is not an IP address, a CIDR or %q", s, ClusterNetworkSource)
	}
	probs = append(probs, comp.manifestProblems()...)
	seenPath := map[string]bool{}
	for i, f := range comp.Files {
		where := fmt.Sprintf("files[%d]", i)
		switch {
		case f.Path == "":
			add("%s: missing path", where)
			continue
		}
		if err := safetext.DevicePath(f.Path); err != nil {
			add("%s: path %q %v", where, f.Path, err)
		}
		if seenPath[f.Path] {
			add("%s: path %q is listed twice", where, f.Path)
		}
		seenPath[f.Path] = true
		if f.Mode != "" && !modePattern.MatchString(f.Mode) {
			add("%s: mode %q %s", where, f.Mode, modeProblem(f.Mode))
		}
		switch {
		case f.Content != "" && f.Source != "":
			add("%s: set content or source, not both", where)
		case f.Content == "" && f.Source == "":
			add("%s: set content or source", where)
		case f.Source != "":
			if !fs.ValidPath(f.Source) {
				add("%s: source %q must be a relative path inside the component directory", where, f.Source)
			} else if comp.FS != nil {
				if problem := sourceProblem(comp.FS, f.Source); problem != "" {
					add("%s: source %q %s", where, f.Source, problem)
				}
			}
		}
	}
	return probs
}

const notInComponent = "does not exist in the component directory"

// sourceProblem says what is wrong with a [[files]] source, "" when it is
// a regular file inside the component directory within MaxFileSource.
func sourceProblem(fsys fs.FS, name string) string {
	st, err := fs.Stat(fsys, name)
	var oe *inputfile.OutsideError
	switch {
	case errors.As(err, &oe):
		return "is " + oe.Outside("component directory") + " (sources must be inside it)"
	case errors.Is(err, fs.ErrNotExist):
		return notInComponent
	case err != nil:
		return "cannot be read: " + unwrapPath(err).Error()
	case !st.Mode().IsRegular():
		return "is " + inputfile.NotRegular(st.Mode()).Error()
	case st.Size() > MaxFileSource:
		return fmt.Sprintf("is larger than %d bytes (the limit for a device file)", MaxFileSource)
	}
	return ""
}

// repositoryIDPattern is a dnf repository ID, $basearch allowed.
var repositoryIDPattern = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._:$-]*$`)

// repositoryProblems checks [[repositories]]: an ID, an http(s) base URL,
// and packages the component (or variant) installs, each from one
// repository.
func repositoryProblems(prefix string, repos []Repository, packages []string) []string {
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, prefix+fmt.Sprintf(format, args...)) }
	seenID, from := map[string]bool{}, map[string]string{}
	for i, r := range repos {
		where := fmt.Sprintf("repositories[%d]", i)
		if !repositoryIDPattern.MatchString(r.ID) {
			add("%s: id %q must be letters, digits and ._:-$ (a dnf repository ID)", where, r.ID)
		}
		if seenID[r.ID] {
			add("%s: id %q is listed twice", where, r.ID)
		}
		seenID[r.ID] = true
		if text.HasUnsafe(r.Name) {
			add("%s: name %q contains a control character", where, r.Name)
		}
		u, err := url.Parse(strings.ReplaceAll(r.BaseURL, "$basearch", "x86_64"))
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || text.HasUnsafe(r.BaseURL) {
			add("%s: baseurl %q must be an http or https URL (the directory holding repodata/; $basearch for the arch)", where, r.BaseURL)
		}
		if len(r.Packages) == 0 {
			add("%s: packages: name the component's packages it provides", where)
		}
		for _, p := range r.Packages {
			if !slices.Contains(packages, p) {
				add("%s: packages: %q is not one of the component's packages", where, p)
			}
			if other, dup := from[p]; dup {
				add("%s: packages: %q comes from %s too", where, p, other)
			}
			from[p] = r.ID
		}
	}
	return probs
}

func imagesProblems(prefix string, im Images) []string {
	var probs []string
	files := map[string]bool{im.File: true}
	for i, a := range im.Also {
		where := fmt.Sprintf("%simages.also[%d]: ", prefix, i)
		switch {
		case a.File == "" || files[a.File]:
			probs = append(probs, fmt.Sprintf("%sfile %q: name a release file of its own (the <component> part of release-<component>-<arch>.json), not the core file nor one named before", where, a.File))
		case len(a.Keys) == 0 || len(a.Also) > 0:
			probs = append(probs, where+"list its keys (and no also of its own)")
		}
		files[a.File] = true
		for _, p := range imagesProblems("", Images{File: a.File, Keys: a.Keys, From: a.From}) {
			probs = append(probs, where+p)
		}
	}
	if im.File != "" && !namePattern.MatchString(im.File) {
		probs = append(probs, fmt.Sprintf("%simages.file: %q must be the <component> part of release-<component>-<arch>.json", prefix, im.File))
	}
	seenKey := map[string]bool{}
	for _, k := range im.Keys {
		if strings.TrimSpace(k) == "" {
			probs = append(probs, prefix+"images.keys: empty key")
		}
		if seenKey[k] {
			probs = append(probs, fmt.Sprintf("%simages.keys: %q is listed twice", prefix, k))
		}
		seenKey[k] = true
	}
	return probs
}

func configProblems(prefix string, cfg Config) []string {
	var probs []string
	for _, sec := range []struct {
		name string
		m    map[string]any
	}{{prefix + "config.selected", cfg.Selected}, {prefix + "config.omitted", cfg.Omitted}} {
		if err := checkConfigTree(sec.name, sec.m); err != nil {
			probs = append(probs, err.Error())
		}
	}
	return probs
}

// probeVersions are the MicroShift releases variant constraints are
// checked against when no release is at hand: every major.minor of 4.x to
// 6.x. Constraints on patch levels are not probed.
var probeVersions = sync.OnceValue(func() []*semver.Version {
	var out []*semver.Version
	for major := uint64(4); major <= 6; major++ {
		for minor := uint64(0); minor < 40; minor++ {
			out = append(out, semver.New(major, minor, 0, "", ""))
		}
	}
	return out
})

// variantProblems checks each [[variant]]'s own fields and that no two
// variants apply to one release.
func (comp *Component) variantProblems() []string {
	var probs []string
	for _, v := range comp.Variants {
		prefix := fmt.Sprintf("variant[%d] (release %s): ", v.Index, v.Release)
		for _, p := range v.Packages {
			if !packagePattern.MatchString(p) {
				probs = append(probs, fmt.Sprintf("%spackages: %q is not a package name", prefix, p))
			}
		}
		if v.Repositories != nil || v.Packages != nil {
			repos, pkgs := comp.Repositories, comp.Packages
			if v.Repositories != nil {
				repos = v.Repositories
			}
			if v.Packages != nil {
				pkgs = v.Packages
			}
			probs = append(probs, repositoryProblems(prefix, repos, pkgs)...)
		}
		if v.Images != nil {
			probs = append(probs, imagesProblems(prefix, *v.Images)...)
		}
		if v.Config != nil {
			probs = append(probs, configProblems(prefix, *v.Config)...)
		}
	}
	reported := map[[2]int]bool{}
	for _, ver := range probeVersions() {
		vs := comp.variantsFor(ver)
		if len(vs) < 2 {
			continue
		}
		pair := [2]int{vs[0].Index, vs[1].Index}
		if reported[pair] {
			continue
		}
		reported[pair] = true
		probs = append(probs, fmt.Sprintf("variant[%d] (release %s) and variant[%d] (release %s) both apply to release %d.%d; make their ranges disjoint",
			vs[0].Index, vs[0].Release, vs[1].Index, vs[1].Release, ver.Major(), ver.Minor()))
	}
	return probs
}

// allImageKeys is every key the component draws, whatever the release.
func (comp *Component) allImageKeys() []string {
	all := comp.Images.files()
	for _, v := range comp.Variants {
		if v.Images != nil {
			all = append(all, v.Images.files()...)
		}
	}
	var keys []string
	for _, im := range all {
		keys = append(keys, im.Keys...)
	}
	return keys
}

// claimProblems finds image keys two components claim for one release (a
// key may pass from one component to another between releases). Claims of
// components without variants are the same on every release and indexed
// once; only components with variants are looked at per release.
func (c *Catalog) claimProblems() []string {
	var probs []string
	reported := map[string]bool{}
	report := func(comp *Component, other, k string, ver *semver.Version) {
		msg := fmt.Sprintf("%s: image key %q of %s is already claimed by component %q", comp.Source, k, describeFile(comp.Images.File), other)
		if ver != nil {
			msg = fmt.Sprintf("%s: image key %q of %s is already claimed by component %q", comp.Source, k, describeFile(comp.imagesFor(ver).File), other)
		}
		if reported[msg] {
			return
		}
		reported[msg] = true
		if ver != nil {
			msg += fmt.Sprintf(" (release %d.%d)", ver.Major(), ver.Minor())
		}
		probs = append(probs, msg)
	}
	static := map[string]string{} // file\x00key -> component
	var varying []string
	for _, n := range c.ComponentNames() {
		comp := c.Components[n]
		if len(comp.Variants) > 0 {
			varying = append(varying, n)
			continue
		}
		for _, im := range comp.Images.files() {
			for _, k := range im.Keys {
				id := im.File + "\x00" + k
				if other, dup := static[id]; dup && other != n {
					report(comp, other, k, nil)
				} else {
					static[id] = n
				}
			}
		}
	}
	if len(varying) == 0 {
		return probs
	}
	for _, ver := range probeVersions() {
		claims := map[string]string{}
		for _, n := range varying {
			comp := c.Components[n]
			if !comp.supportsVersion(ver) {
				continue
			}
			for _, im := range comp.imagesFor(ver).files() {
				for _, k := range im.Keys {
					id := im.File + "\x00" + k
					other, dup := claims[id]
					if !dup {
						other, dup = static[id]
					}
					switch {
					case !dup:
						claims[id] = n
					case other != n:
						report(comp, other, k, ver)
					}
				}
			}
		}
	}
	return probs
}

// imagesFor returns the component's images on release v: its variant's, or
// its own.
func (comp *Component) imagesFor(v *semver.Version) Images {
	if vs := comp.variantsFor(v); len(vs) > 0 && vs[0].Images != nil {
		return *vs[0].Images
	}
	return comp.Images
}

// kustomizationFiles are the names kustomize accepts for a kustomization.
var kustomizationFiles = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// manifestProblems checks [manifests], the manifests/ directory, the plugin
// and the component's own release files.
func (comp *Component) manifestProblems() []string {
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	if len(comp.Manifests.Images) > 0 && !comp.Renders() {
		add("[manifests] is set but the component has neither a %s/ directory nor a %s", ManifestsDir, PluginFile)
	}
	for _, n := range slices.Sorted(maps.Keys(comp.Manifests.Images)) {
		key := comp.Manifests.Images[n]
		if problem := imageNameProblem(n); problem != "" {
			add("manifests.images: %q %s", n, problem)
		}
		if !slices.Contains(comp.allImageKeys(), key) {
			add("manifests.images: %q maps to %q, which is not in images.keys", n, key)
		}
	}
	if comp.HasManifests && comp.FS != nil {
		found, problem := false, ""
		for _, k := range kustomizationFiles {
			rel := path.Join(ManifestsDir, k)
			switch p := sourceProblem(comp.FS, rel); {
			case p == notInComponent:
			case p != "":
				if problem == "" {
					problem = rel + " " + p
				}
			default:
				found = true
			}
		}
		switch {
		case problem != "":
			add("%s", strings.Replace(problem, "(sources must be inside it)", "(kustomize reads only files inside it)", 1))
		case !found:
			add("%s/ has no kustomization.yaml", ManifestsDir)
		}
	}
	if comp.HasPlugin && comp.Dir != "" {
		if st, err := os.Stat(filepath.Join(comp.Dir, PluginFile)); err == nil && st.Mode().Perm()&0o111 == 0 {
			add("%s is not executable (chmod +x %s)", PluginFile, filepath.Join(comp.Dir, PluginFile))
		}
	}
	if len(comp.ReleaseFiles) > 0 && len(comp.Variants) > 0 {
		add("%s/: a component with [[variant]] entries cannot bring its own release files", ReleaseDir)
		return probs
	}
	if len(comp.ReleaseFiles) > 0 && comp.Images.File == "" {
		add("%s/: a component may bring only its own release-<images.file>-<arch>.json files; set images.file", ReleaseDir)
		return probs
	}
	for _, f := range comp.ReleaseFiles {
		where := ReleaseDir + "/" + f.Name
		i := slices.IndexFunc(comp.Images.files(), func(im Images) bool { return im.File == f.Component })
		if i < 0 {
			add("%s: a component may bring only its own %s files (images.file is %q)", where, describeFile(comp.Images.File), comp.Images.File)
			continue
		}
		im := comp.Images.files()[i]
		if !comp.SupportsArch(f.Arch) {
			add("%s: the component does not support %s (arches)", where, f.Arch)
		}
		for _, k := range im.Keys {
			if _, ok := f.Lookup(k); !ok {
				add("%s: has no image key %q that images.keys lists", where, k)
			}
		}
		for _, fim := range f.Images {
			if !slices.Contains(im.Keys, fim.Key) {
				add("%s: image key %q is not in images.keys", where, fim.Key)
			}
		}
	}
	return probs
}

// imageNameProblem says what is wrong with an image name as kustomize's
// images[].name matches it: a repository, without tag or digest.
func imageNameProblem(n string) string {
	last := n[strings.LastIndex(n, "/")+1:]
	if strings.Contains(n, "@") || strings.Contains(last, ":") {
		return "must be an image name without tag or digest (as in a kustomization's images[].name)"
	}
	if _, err := imageref.NewRepository(n, name.StrictValidation); err != nil {
		return "is not an image name"
	}
	return ""
}

func checkPortRange(p string) error {
	spec := strings.SplitN(p, ":", 2)[0]
	if spec == NodePortsPort || (spec[0] < '0' || spec[0] > '9') {
		return nil
	}
	from, to, isRange := strings.Cut(spec, "-")
	lo, _ := strconv.Atoi(from)
	hi := lo
	if isRange {
		hi, _ = strconv.Atoi(to)
	}
	if lo < 1 || hi > 65535 || lo > hi {
		return errors.New("port out of range 1-65535")
	}
	return nil
}

// checkConfigTree accepts nested tables whose leaves are strings, numbers,
// booleans or arrays of those: what a MicroShift config.yaml can hold.
func checkConfigTree(where string, m map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		p := where + "." + tomlKey(k)
		switch v := m[k].(type) {
		case map[string]any:
			if err := checkConfigTree(p, v); err != nil {
				return err
			}
		case []any:
			for _, e := range v {
				switch e.(type) {
				case string, int64, float64, bool:
				default:
					return fmt.Errorf("%s: arrays may hold only strings, numbers and booleans", p)
				}
			}
		case []map[string]any:
			return fmt.Errorf("%s: arrays of tables are not supported", p)
		case string, int64, float64, bool:
		default:
			return fmt.Errorf("%s: unsupported value type %T", p, v)
		}
	}
	return nil
}

var bareKey = lazyregexp.New(`^[A-Za-z0-9_-]+$`)

// tomlKey writes a key as TOML would in a dotted path: bare when it can be,
// quoted otherwise (which also keeps control characters out of messages).
func tomlKey(k string) string {
	if bareKey.MatchString(k) {
		return k
	}
	return strconv.Quote(k)
}

// findCycle returns a requires cycle (first name repeated at the end), or
// nil. A required capability counts as an edge to its default provider,
// since that is what resolution would pull in.
func (c *Catalog) findCycle() []string {
	const (
		unvisited = iota
		active
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(n string) []string
	visit = func(n string) []string {
		state[n] = active
		stack = append(stack, n)
		for _, r := range c.Components[n].Requires {
			next := r
			if capa := c.Capabilities[r]; capa != nil {
				next = capa.Default
			}
			if c.Components[next] == nil {
				continue
			}
			switch state[next] {
			case active:
				for i, s := range stack {
					if s == next {
						return append(append([]string{}, stack[i:]...), next)
					}
				}
			case unvisited:
				if cyc := visit(next); cyc != nil {
					return cyc
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		return nil
	}
	for _, n := range slices.Sorted(maps.Keys(c.Components)) {
		if state[n] == unvisited {
			if cyc := visit(n); cyc != nil {
				return cyc
			}
		}
	}
	return nil
}

// ReleaseProblems checks the catalog against one release: every component
// that claims to support the release has its release file and image keys for
// every arch it ships on, and every key of a release file that components
// draw from is claimed by exactly one component (an unclaimed key is an
// image no plan would embed). Release files components bring themselves
// count where rel lacks them.
func (c *Catalog) ReleaseProblems(rel *releases.Release) []error {
	rel, _ = c.WithReleaseFiles(rel)
	c = c.ForRelease(rel.Version)
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	drawn := map[string]bool{}
	claimed := map[string]bool{}
	for _, n := range c.ComponentNames() {
		comp := c.Components[n]
		for _, im := range comp.ImageSets() {
			drawn[im.File] = true
			for _, k := range im.Keys {
				claimed[im.File+"\x00"+k] = true
			}
			if !comp.SupportsRelease(rel) {
				continue
			}
			for _, a := range rel.Arches() {
				if !comp.SupportsArch(a) {
					continue
				}
				f := rel.File(im.File, a)
				if f == nil && im.From != "" {
					// The file comes with another product's release-info
					// (images.from); a build without it says so.
					continue
				}
				if f == nil {
					add("release %s: component %q supports %s (release %s) but %s is missing",
						rel, n, a, comp.ReleaseRange(), releases.FileName(im.File, a))
					continue
				}
				for _, k := range im.Keys {
					if _, ok := f.Lookup(k); !ok {
						add("release %s: %s has no image key %q that component %q needs", rel, f.Name, k, n)
					}
				}
			}
		}
	}
	for _, f := range rel.Files() {
		if !drawn[f.Component] {
			add("release %s: %s: no component draws images from this file", rel, f.Name)
			continue
		}
		for _, im := range f.Images {
			if !claimed[f.Component+"\x00"+im.Key] {
				add("release %s: %s: image key %q is not claimed by any component", rel, f.Name, im.Key)
			}
		}
	}
	sort.Strings(probs)
	out := make([]error, len(probs))
	for i, p := range probs {
		out[i] = errors.New(p)
	}
	return out
}

// modeProblem says what is wrong with a files[].mode and what is accepted:
// permission bits 0000 to 0777, written in octal. Setuid, setgid and
// sticky bits are refused deliberately: a catalog component (maybe from
// a pull request) must not install a setuid file in the image.
func modeProblem(mode string) string {
	if len(mode) == 4 && mode[0] >= '1' && mode[0] <= '7' && modePattern.MatchString("0"+mode[1:]) {
		return "sets setuid, setgid or sticky bits, which component files may not have: want 0000 to 0777, such as \"0644\""
	}
	return "is not an octal permission mode from 0000 to 0777, such as \"0644\""
}
