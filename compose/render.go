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
	// From is plan.FromManifests, plan.FromPlugin or plan.FromChart.
	From string
	Job  *manifests.Job
	// Chart is the chart rendered, for FromChart, and Notes what its
	// rendering left out.
	Chart *plan.Chart
	Notes []string
}

// prepareManifests runs plugins and prepares a kustomize job for every
// selected component that has manifests/ or a plugin, with an images:
// override pinning its [manifests.images] to the plan's references.
func prepareManifests(ctx context.Context, in *inputs, p *plan.Plan) ([]ManifestJob, error) {
	refs := imageRefs(p)
	var jobs []ManifestJob
	for _, pc := range p.Components {
		n := pc.Name
		c := in.cat.Components[n]
		if !c.Renders() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		input := manifests.Input{Component: n, FS: c.FS, Images: pins(c, refs[n])}
		mj := ManifestJob{Component: n, From: plan.FromManifests}
		if c.Chart != nil {
			mj.From = plan.FromChart
			stream, ch, notes, err := renderChart(ctx, in, c)
			if err != nil {
				return nil, fmt.Errorf("component %q: %w", n, err)
			}
			mj.Chart, mj.Notes = ch, notes
			// The chart's resources are the whole input: the component
			// directory, read by chart.Load, is not kustomize's.
			input.FS, input.Resources = nil, stream
		} else if c.HasPlugin {
			mj.From = plan.FromPlugin
			out, err := runPlugin(ctx, in, c)
			if err != nil {
				return nil, fmt.Errorf("component %q: %w", n, err)
			}
			if out.Empty() {
				jobs = append(jobs, mj)
				continue
			}
			input.Kustomization, input.Resources = out.Kustomization, out.Resources
		} else {
			input.Dir = components.ManifestsDir
		}
		job, err := manifests.Prepare(input)
		if err != nil {
			return nil, fmt.Errorf("component %q: %w", n, err)
		}
		mj.Job = job
		jobs = append(jobs, mj)
	}
	if err := checkStorageClasses(in, p); err != nil {
		return nil, err
	}
	return jobs, nil
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
func runPlugin(ctx context.Context, in *inputs, c *components.Component) (*plugin.Output, error) {
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
	env := plugin.Env(in.req.Config.Params(), os.Getenv("PATH"))
	out, err := plugin.Run(ctx, dir, env, plugin.Options{Timeout: in.req.PluginTimeout, Logger: slog.Default().With("component", c.Name)})
	if err != nil {
		return nil, err
	}
	parsed, err := plugin.ParseOutput(out)
	if err != nil {
		return nil, fmt.Errorf("plugin run printed bad output: %w", err)
	}
	return parsed, nil
}

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

// EdgeLight is the request that renders every manifest-based component of
// the default catalog: OVN-K networking with the hostpath CSI driver instead
// of LVMS. Benchmarks and the kustomize CLI comparison of `make bench` use
// it. The hostpath driver is published by tag only, so it needs
// AllowUnpinned.
func EdgeLight(arch releases.Arch) Request {
	return Request{Profile: "networking-only", With: []string{"storage-hostpath"}, Arch: arch, AllowUnpinned: true}
}
