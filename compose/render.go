package compose

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/types"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose/manifests"
	"github.com/microshift-compose/microshift-compose/compose/microshiftconfig"
	"github.com/microshift-compose/microshift-compose/compose/plugin"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// ErrImageNotInPlan is wrapped by the error for a rendered manifest that
// names an image the plan does not embed.
var ErrImageNotInPlan = fmt.Errorf("image is not in the plan")

// ManifestJob is one component's prepared kustomize rendering: what
// Resolve renders into manifests.d/NNN-<name>/. Job is nil when the
// component's plugin printed nothing.
type ManifestJob struct {
	Component string
	// From is plan.FromManifests, plan.FromPlugin, plan.FromChart or
	// plan.FromLvmd.
	From string
	Job  *manifests.Job
	// Dir is the manifests.d directory's name; "" is NNN-<component>.
	Dir string
	// Chart is the chart rendered, for FromChart, and Notes what its
	// rendering left out.
	Chart *plan.Chart
	Notes []string
}

// ManifestJobs resolves req and prepares, without rendering, the kustomize
// jobs of its components with manifests or a plugin (plugins run). It is
// for benchmarks and for comparing with the kustomize CLI on exactly the
// inputs Resolve renders (Job.WriteTo).
func ManifestJobs(ctx context.Context, cat *components.Catalog, rel *releases.Release, req Request) ([]ManifestJob, error) {
	r, p, err := newResolver(ctx, cat, rel, req)
	if err != nil {
		return nil, err
	}
	return r.prepareManifests(ctx, p)
}

// prepareManifests runs plugins and prepares a kustomize job for every
// selected component that has manifests/ or a plugin, with an images:
// override pinning its [manifests.images] to the plan's references.
func (r *resolver) prepareManifests(ctx context.Context, p *plan.Plan) ([]ManifestJob, error) {
	refs := imageRefs(p)
	var jobs []ManifestJob
	for _, n := range r.order {
		c := r.cat.Components[n]
		if !c.Renders() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		in := manifests.Input{Component: n, FS: c.FS, Images: pins(c, refs[n])}
		mj := ManifestJob{Component: n, From: plan.FromManifests}
		if c.Chart != nil {
			mj.From = plan.FromChart
			stream, ch, notes, err := r.renderChart(ctx, c)
			if err != nil {
				return nil, fmt.Errorf("component %q: %w", n, err)
			}
			mj.Chart, mj.Notes = ch, notes
			// The chart's resources are the whole input: the component
			// directory, read by chart.Load, is not kustomize's.
			in.FS, in.Resources = nil, stream
		} else if c.HasPlugin {
			mj.From = plan.FromPlugin
			out, err := r.runPlugin(ctx, c)
			if err != nil {
				return nil, fmt.Errorf("component %q: %w", n, err)
			}
			if out.Empty() {
				jobs = append(jobs, mj)
				continue
			}
			in.Kustomization, in.Resources = out.Kustomization, out.Resources
		} else {
			in.Dir = components.ManifestsDir
		}
		job, err := manifests.Prepare(in)
		if err != nil {
			return nil, fmt.Errorf("component %q: %w", n, err)
		}
		mj.Job = job
		jobs = append(jobs, mj)
	}
	if mj, ok, err := r.storageClassJob(); err != nil {
		return nil, err
	} else if ok {
		jobs = r.insertAfter(jobs, mj)
	}
	return jobs, nil
}

// addManifests renders the prepared jobs, cross-checks every container
// image against the plan, and returns the rendered directories as device
// files.
func (r *resolver) addManifests(ctx context.Context, p *plan.Plan) ([]plan.File, error) {
	jobs, err := r.prepareManifests(ctx, p)
	if err != nil {
		return nil, err
	}
	var files []plan.File
	for _, mj := range jobs {
		c := r.cat.Components[mj.Component]
		if mj.Job == nil {
			p.Notes = append(p.Notes, fmt.Sprintf("component %s: its plugin printed no manifests, so %s has no %03d-%s directory", c.Name, ManifestsDevicePath, c.Order, c.Name))
			continue
		}
		res, err := mj.Job.Render()
		if err != nil {
			return nil, fmt.Errorf("component %q: rendering %s: %w", c.Name, mj.From, err)
		}
		m, err := r.checkImages(p, c.Name, mj.From, res)
		if err != nil {
			return nil, err
		}
		dir := fmt.Sprintf("%s%03d-%s/", ManifestsDevicePath, c.Order, c.Name)
		if mj.Dir != "" {
			dir = ManifestsDevicePath + mj.Dir + "/"
		}
		m.Dir = dir
		files = append(files, plan.File{Path: dir + manifests.KustomizationFile, Mode: "0644", Component: c.Name, Data: res.Kustomization})
		for _, rs := range res.Resources {
			files = append(files, plan.File{Path: dir + rs.File, Mode: "0644", Component: c.Name, Data: rs.Data})
		}
		p.Manifests = append(p.Manifests, m)
		if mj.Chart != nil {
			if err := sameChartFile(p.Charts, mj.Chart); err != nil {
				return nil, err
			}
			p.Charts = append(p.Charts, *mj.Chart)
			p.Notes = append(p.Notes, mj.Notes...)
		}
		if mj.From == plan.FromLvmd {
			p.Notes = append(p.Notes, r.storageClassNote(m))
		}
	}
	return files, nil
}

// sameChartFile refuses a chart whose archive would be written where
// another component's different chart is (charts/NAME-VERSION.tgz): one
// would overwrite the other, and the lock and SBOM would name a digest no
// file has. The same chart in two components is one file.
func sameChartFile(charts []plan.Chart, ch *plan.Chart) error {
	for _, prev := range charts {
		if prev.File == ch.File && prev.SHA256 != ch.SHA256 {
			return fmt.Errorf("components %q and %q carry different charts named %s %s (sha256 %.12s and %.12s): %s holds one archive; give the changed chart a version of its own in its Chart.yaml",
				prev.Component, ch.Component, ch.Name, ch.Version, prev.SHA256, ch.SHA256, ch.File)
		}
	}
	return nil
}

// imageRefs maps component -> release-file key -> reference.
func imageRefs(p *plan.Plan) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, im := range p.Images {
		for _, u := range im.Uses {
			if out[u.Component] == nil {
				out[u.Component] = map[string]string{}
			}
			out[u.Component][u.Key] = im.Ref
		}
	}
	return out
}

// pins turns [manifests.images] into kustomize images: entries, as
// MicroShift's own kustomization.<arch>.yaml files do: newName and digest
// (or newTag for a tag-only reference allowed by --allow-unpinned).
func pins(c *components.Component, refs map[string]string) []types.Image {
	var out []types.Image
	for _, name := range slices.Sorted(maps.Keys(c.Manifests.Images)) {
		ref, ok := refs[c.Manifests.Images[name]]
		if !ok {
			continue // catalog validation ties every mapping to an images.keys entry
		}
		img := types.Image{Name: name}
		if repo, digest, ok := strings.Cut(ref, "@"); ok {
			img.NewName, img.Digest = repo, digest
		} else {
			slash := strings.LastIndex(ref, "/")
			if i := strings.LastIndex(ref, ":"); i > slash {
				img.NewName, img.NewTag = ref[:i], ref[i+1:]
			} else {
				img.NewName = ref
			}
		}
		out = append(out, img)
	}
	return out
}

// checkImages requires every container image of the rendered resources to
// be one the plan embeds: anything else is an image an airgapped device
// cannot pull.
func (r *resolver) checkImages(p *plan.Plan, component, from string, res *manifests.Result) (plan.Manifest, error) {
	inPlan := map[string]bool{}
	for _, im := range p.Images {
		inPlan[im.Ref] = true
	}
	m := plan.Manifest{Component: component, From: from, Resources: []string{}, Images: []string{}}
	used := map[string]bool{}
	for _, rs := range res.Resources {
		m.Resources = append(m.Resources, rs.ID())
		for _, im := range rs.Images {
			if !inPlan[im.Ref] {
				return m, imageError(component, rs.ID(), im)
			}
			used[im.Ref] = true
		}
	}
	m.Images = slices.Sorted(maps.Keys(used))
	return m, nil
}

func imageError(component, resource string, im manifests.Image) error {
	if im.Ref == "" {
		return fmt.Errorf("component %q: %s: %s %q has no image", component, resource, im.Field, im.Container)
	}
	name := im.Ref
	if i := strings.Index(name, "@"); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name = name[:i]
	}
	where := fmt.Sprintf("container %q image %q", im.Container, im.Ref)
	if im.In != "" {
		// An image named in an argument or an environment value: what the
		// container starts, or makes the cluster pull, at run time.
		where = fmt.Sprintf("container %q %s names image %q", im.Container, im.In, im.Ref)
	}
	return fmt.Errorf("component %q: %s: %s: %w; map %q to a key of images.keys in [manifests.images] so it is pinned to the release digest (an airgapped device cannot pull it)",
		component, resource, where, ErrImageNotInPlan, name)
}

// runPlugin runs a component's plugin with the plan's config and parses
// what it printed. An embedded component's plugin is extracted to a
// temporary directory first (go:embed keeps no file modes).
func (r *resolver) runPlugin(ctx context.Context, c *components.Component) (*plugin.Output, error) {
	dir := c.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "microshift-compose-plugin-")
		if err != nil {
			return nil, fmt.Errorf("extracting plugin: %w", err)
		}
		defer os.RemoveAll(tmp)
		if err := extract(c.FS, tmp); err != nil {
			return nil, fmt.Errorf("extracting plugin: %w", err)
		}
		dir = tmp
	}
	env := plugin.Env(r.params(), os.Getenv("PATH"))
	out, err := plugin.Run(ctx, dir, env, plugin.Options{Timeout: r.req.PluginTimeout, Logger: slog.Default().With("component", c.Name)})
	if err != nil {
		return nil, err
	}
	parsed, err := plugin.ParseOutput(out)
	if err != nil {
		return nil, fmt.Errorf("plugin run printed bad output: %w", err)
	}
	return parsed, nil
}

func (r *resolver) params() microshiftconfig.Params { return r.req.Config.Params() }

// extract writes fsys to dir: directories 0755, the plugin 0755, other
// files 0644.
func extract(fsys fs.FS, dir string) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if path.Clean(p) == components.PluginFile {
			mode = 0o755
		}
		return os.WriteFile(target, data, mode)
	})
}

// warnUnused reports images of rendering components that nothing on the
// device uses: no rendered container and no device file names them. Images
// of components without manifests or a plugin are not checked: their
// manifests are built into MicroShift or shipped by their RPMs, which
// reference exactly the release file's images.
func (r *resolver) warnUnused(p *plan.Plan) {
	refs := imageRefs(p)
	used := map[string]bool{}
	for _, m := range p.Manifests {
		for _, ref := range m.Images {
			used[ref] = true
		}
	}
	for _, n := range r.order {
		c := r.cat.Components[n]
		if !c.Renders() {
			continue
		}
		for _, k := range c.Images.Keys {
			ref, ok := refs[n][k]
			if !ok || used[ref] || r.inFiles(p, ref) {
				continue
			}
			p.Warnings = append(p.Warnings, fmt.Sprintf("component %q: image %q (%s) is embedded but no rendered manifest or device file uses it", n, k, ref))
		}
	}
}

func (r *resolver) inFiles(p *plan.Plan, ref string) bool {
	for _, f := range p.Files {
		if strings.Contains(string(f.Data), ref) {
			return true
		}
	}
	return false
}

// EdgeLight is the request that renders every manifest-based component of
// the default catalog: OVN-K networking with the hostpath CSI driver instead
// of LVMS. Benchmarks and the kustomize CLI comparison of `make bench` use
// it. The hostpath driver is published by tag only, so it needs
// AllowUnpinned.
func EdgeLight(arch releases.Arch) Request {
	return Request{Profile: "networking-only", With: []string{"storage-hostpath"}, Arch: arch, AllowUnpinned: true}
}
