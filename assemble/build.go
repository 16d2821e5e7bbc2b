package assemble

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
	"github.com/microshift-compose/microshift-compose/render/installer"
	"github.com/microshift-compose/microshift-compose/render/sbom"
)

// Build renders every output of a plan with opts: the blueprints
// (validated with osbuild/images; an osbuild error fails the build), the
// image list, the lock, the SBOMs, the device files, the chart archives,
// the filtered operator catalog's layout, the installer outputs and the
// Containerfile. What opts mean for the
// plan's target is decided, and refused where the target cannot take it,
// before anything is rendered.
func Build(ctx context.Context, p *plan.Plan, opts Options) (*output.Dir, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := blueprints.CheckPlan(p); err != nil {
		return nil, err
	}
	outs, err := opts.outputsFor(p)
	if err != nil {
		return nil, err
	}
	inst, err := renderInstaller(p, outs, opts.Installer)
	if err != nil {
		return nil, err
	}
	bp, err := renderBlueprints(p, outs, opts.Installer, inst.customization)
	if err != nil {
		return nil, err
	}
	// The options join the composition ID, on a copy (Build does not
	// change its plan), and the notes and warnings of the outputs join
	// the plan's.
	cp := *p
	p = &cp
	if id, err := buildInputs(opts, outs); err != nil {
		return nil, err
	} else if id != nil {
		if err := p.SetInput("build", id); err != nil {
			return nil, err
		}
	}
	if len(outs.notes)+len(inst.warnings)+len(outs.warnings) > 0 {
		p.Notes = append(slices.Clone(p.Notes), outs.notes...)
		p.Warnings = append(append(slices.Clone(p.Warnings), inst.warnings...), outs.warnings...)
	}
	instFiles, err := inst.files(p, outs, opts.Installer)
	if err != nil {
		return nil, err
	}
	lock, err := lockfile.Encode(p)
	if err != nil {
		return nil, err
	}
	var boms []output.File
	if !opts.noSBOM {
		for _, f := range opts.SBOM.Wanted() {
			path := output.SBOMFile
			if f == sbom.FormatCycloneDX {
				path = output.CycloneDXFile
			}
			data, err := sbom.EncodeFormat(f, p, lock, opts.SBOM)
			if err != nil {
				return nil, fmt.Errorf("writing %s: %w", path, err)
			}
			boms = append(boms, output.File{Path: path, Data: data})
		}
	}
	out := &output.Dir{Plan: p, Warnings: bp.warnings}
	if bp.main != nil {
		out.Files = append(out.Files, output.File{Path: output.BlueprintFile, Data: bp.main, Private: p.HasSecret()})
	}
	out.Files = append(out.Files,
		output.File{Path: output.ImagesFile, Data: ImageList(p)},
		output.File{Path: output.LockFile, Data: lock},
	)
	out.Files = append(out.Files, boms...)
	for _, f := range p.Files {
		if f.Secret {
			continue // only in the blueprint; a Containerfile mounts it as a build secret
		}
		out.Files = append(out.Files, output.File{Path: output.Path(f.Path), Data: f.Data})
	}
	charts, err := chartFiles(p)
	if err != nil {
		return nil, err
	}
	out.Files = append(out.Files, charts...)
	catalog, err := operatorCatalogFiles(p)
	if err != nil {
		return nil, err
	}
	out.Files = append(out.Files, catalog...)
	if bp.installer != nil {
		out.Files = append(out.Files, output.File{Path: output.InstallerBlueprintFile, Data: bp.installer, Private: len(inst.body) > 0 && p.HasSecret()})
	}
	out.Files = append(out.Files, instFiles...)
	if opts.Bootc {
		out.Files = append(out.Files, output.File{Path: output.Containerfile, Data: blueprints.Containerfile(p, output.ImagesFile, output.Path, blueprints.BootcOptions{Images: opts.BootcImages})})
	}
	return out, nil
}

// chartFiles are the plan's chart archives (charts/NAME-VERSION.tgz): the
// same chart in two components is one file.
func chartFiles(p *plan.Plan) ([]output.File, error) {
	var files []output.File
	written := map[string]string{}
	for _, ch := range p.Charts {
		if ch.Data == nil {
			return nil, fmt.Errorf("chart %s of component %s: the plan has no archive (a plan read from a lock names charts by digest only): resolve again", ch.File, ch.Component)
		}
		if sum, dup := written[ch.File]; dup {
			if sum != ch.SHA256 {
				return nil, fmt.Errorf("chart %s of component %s: another component's chart of that name has sha256 %s, this one %s", ch.File, ch.Component, sum, ch.SHA256)
			}
			continue
		}
		written[ch.File] = ch.SHA256
		files = append(files, output.File{Path: ch.File, Data: ch.Data})
	}
	return files, nil
}

// operatorCatalogFiles are the OCI layout of the plan's filtered operator
// catalog (operators/catalog/), which mirror reads: its layers kept from
// the original catalog image are copied from it as they are written.
func operatorCatalogFiles(p *plan.Plan) ([]output.File, error) {
	if p.Operators == nil {
		return nil, nil
	}
	f := p.Operators.Filtered
	if len(f.Files) == 0 {
		return nil, fmt.Errorf("operator catalog %s: the plan has no layout of it (a plan read from a lock names it by digest only): resolve again", f.Ref)
	}
	out := make([]output.File, len(f.Files))
	for i, lf := range f.Files {
		out[i] = output.File{Path: f.Layout + "/" + lf.Path, Data: lf.Data, Open: lf.Open, SHA256: lf.SHA256, Size: lf.Size}
	}
	return out, nil
}

// idBuild is what of Options the composition ID covers; the defaults
// (the target's image type, no Containerfile) add nothing, so that a
// resolve and a build of the same selection share their ID.
type idBuild struct {
	ImageType   string       `json:"image_type,omitempty"`
	Bootc       bool         `json:"bootc,omitempty"`
	BootcImages string       `json:"bootc_images,omitempty"`
	Installer   *idInstaller `json:"installer,omitempty"`
}

// idInstaller is what of InstallerOptions the composition ID covers: every
// option that changes an installer output. The user's public keys count
// by content, not by the file they were read from.
type idInstaller struct {
	Kickstart          bool                      `json:"kickstart,omitempty"`
	BIB                bool                      `json:"bib,omitempty"`
	BootcImage         string                    `json:"bootc_image,omitempty"`
	OSTree             *blueprints.OSTreeOptions `json:"ostree,omitempty"`
	User               string                    `json:"user,omitempty"`
	SSHKeys            []string                  `json:"ssh_keys,omitempty"`
	Filesystems        []installer.Filesystem    `json:"filesystems,omitempty"`
	InstallationDevice string                    `json:"installation_device,omitempty"`
	DiskSize           uint64                    `json:"disk_size,omitempty"`
}

// buildInputs is what of opts the composition ID covers. Options that name
// what the build does anyway are left out: the distro's default ostree
// ref, and a root of installer.DefaultRootSize when only the kickstart
// and bootc-image-builder's config take the filesystem sizes (both lay the
// disk out with installer's defaults; a blueprint would carry it, and its
// defaults are osbuild's).
func buildInputs(opts Options, outs *outputs) (*idBuild, error) {
	var b idBuild
	if outs.imageType != outs.defaultType {
		b.ImageType = outs.imageType
	}
	if opts.Bootc {
		b.Bootc = true
		b.BootcImages = opts.BootcImages
		if b.BootcImages == "" {
			b.BootcImages = blueprints.BootcImagesMirror
		}
	}
	o := opts.Installer
	if o.OSTree != nil && o.OSTree.Ref != "" {
		if o.OSTree.Ref == outs.defaultRef {
			o.OSTree = &blueprints.OSTreeOptions{URL: o.OSTree.URL}
		}
	}
	if onlyKickstartFS := (o.Kickstart || o.BIB) && !outs.mainFilesystems && !outs.installerFilesystems; onlyKickstartFS {
		o.Filesystems = slices.DeleteFunc(slices.Clone(o.Filesystems), func(fs installer.Filesystem) bool {
			return fs.Mount == "/" && fs.MinSize == installer.DefaultRootSize
		})
		if len(o.Filesystems) == 0 {
			o.Filesystems = nil
		}
	}
	if in := installerInputs(o); in != nil {
		b.Installer = in
	}
	if b == (idBuild{}) {
		return nil, nil
	}
	return &b, nil
}

func installerInputs(o InstallerOptions) *idInstaller {
	in := idInstaller{Kickstart: o.Kickstart, BIB: o.BIB, BootcImage: o.BootcImage, OSTree: o.OSTree, Filesystems: o.Filesystems, InstallationDevice: o.InstallationDevice, DiskSize: o.DiskSize}
	if o.User != nil {
		in.User = o.User.Name
		in.SSHKeys = o.User.Keys
	}
	if reflect.ValueOf(in).IsZero() {
		return nil
	}
	return &in
}

// TagOnlyMark follows, as a TOML comment, the [[containers]] source of an
// image the release names by tag only (embedded with --allow-unpinned).
const TagOnlyMark = " # tag-only: not pinned by digest (--allow-unpinned)"

// markTagOnly marks the blueprint's tag-only container sources, so that a
// review of blueprint.toml shows them as plainly as the lock does.
func markTagOnly(bp []byte, p *plan.Plan) []byte {
	for _, im := range p.Images {
		if im.Pinned {
			continue
		}
		line := fmt.Sprintf("source = %q\n", im.Ref)
		bp = bytes.Replace(bp, []byte(line), []byte(strings.TrimSuffix(line, "\n")+TagOnlyMark+"\n"), 1)
	}
	return bp
}

// ImageList renders images.txt: one reference per line, sorted, unique.
func ImageList(p *plan.Plan) []byte {
	var b bytes.Buffer
	for _, ref := range p.ImageRefs() {
		b.WriteString(ref)
		b.WriteByte('\n')
	}
	return b.Bytes()
}
