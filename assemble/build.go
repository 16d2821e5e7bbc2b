package assemble

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/internal/distros"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/render/installer"
	"github.com/microshift-compose/microshift-compose/render/sbom"
)

// Options are how outputs are rendered and checked.
type Options struct {
	// ImageType is the osbuild image type the blueprint is validated
	// against, for the plan's target distro; "" is the target's default.
	// A target without one (bootc only) writes no blueprint with Bootc,
	// and refuses to build without it.
	ImageType string
	// Bootc also renders the Containerfile of a bootc image.
	Bootc bool
	// BootcImages is how its images get in: blueprints.BootcImagesMirror
	// (the default) or blueprints.BootcImagesPull.
	BootcImages string
	// SBOM sets the SBOMs' creation time, the tool version they name and
	// the formats written (SPDX alone by default); the zero value records
	// the Unix epoch and no version.
	SBOM sbom.Options
	// Installer adds the installer outputs (microshift.ks, config.toml,
	// installer.toml) and the user and filesystem customizations.
	Installer InstallerOptions
	// noSBOM leaves the SBOM out: Validate wants the blueprint's verdict,
	// and the SBOM is a seventh of its time.
	noSBOM bool
}

// Build renders every output of a plan and validates the blueprint with
// osbuild/images; an osbuild error fails the build.
func Build(ctx context.Context, p *plan.Plan, opts Options) (*output.Dir, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := blueprints.CheckPlan(p); err != nil {
		return nil, err
	}
	distro, arch := p.Target.Distro, releases.Arch(p.Arch)
	if distro == "" { // a plan from a lock older than targets
		distro = p.Release.Distro
	}
	if opts.Bootc && p.Target.BootcBase == "" {
		return nil, fmt.Errorf("release %s targets %s, which has no bootc base image for MicroShift %s: pass --bootc-base IMAGE", p.Release, distro, p.Release.Stream)
	}
	imageType := opts.ImageType
	if imageType == "" {
		imageType = p.Target.ImageType
	}
	var bpData []byte
	var warnings []string
	ib := &installerBuild{}
	var ko installer.KickstartOptions
	var body []byte // the kickstart without its payload, for installer images
	if err := checkDiskSize(opts.Installer); err != nil {
		return nil, err
	}
	if o := opts.Installer.OSTree; o != nil {
		// The URL reaches microshift.ks, installer.toml and the lock.
		if err := blueprints.CheckOSTree(*o); err != nil {
			return nil, err
		}
	}
	vg := installer.DefaultVolumeGroup
	if opts.Installer.Kickstart || opts.Installer.BIB {
		var err error
		if vg, ib.warnings, err = volumeGroup(p, opts.Installer); err != nil {
			return nil, err
		}
	}
	if opts.Installer.Kickstart {
		ko = kickstartOptions(p, opts.Installer, vg)
		var err error
		if body, err = installer.Kickstart(p, ko); err != nil {
			return nil, err
		}
	}
	switch {
	case imageType == "" && opts.Bootc:
		// MicroShift on the distro is image mode only: the Containerfile
		// is the composition, and no image type takes the blueprint. The
		// lock says so (on a copy: Build does not change its plan).
		cp := *p
		cp.Notes = append(slices.Clone(p.Notes), fmt.Sprintf("%s not written: %s has no rpm-ostree image types, so MicroShift on it is image mode (bootc) only and the Containerfile is the composition; --image-type writes a blueprint for one of its package-based image types", output.BlueprintFile, distro))
		p = &cp
		if err := checkBootcOnlyInstaller(opts.Installer); err != nil {
			return nil, err
		}
	case imageType == "":
		return nil, fmt.Errorf("%s is image mode (bootc) only for MicroShift: it has no rpm-ostree image types; use --bootc for the Containerfile, or --image-type for a package-based image (%s has %s)",
			distro, distro, strings.Join(distros.ImageTypes(distro, arch), ", "))
	default:
		var bib *installerBuild
		var err error
		if bpData, bib, warnings, err = buildBlueprints(p, distro, imageType, arch, opts.Installer, body); err != nil {
			if p.Target.BootcOnly() && !slices.Contains(distros.ImageTypes(distro, arch), imageType) {
				return nil, fmt.Errorf("%s is image mode (bootc) only for MicroShift: it has no rpm-ostree image types such as %s; use --bootc for the Containerfile, or --image-type for a package-based image (%s has %s)",
					distro, imageType, distro, strings.Join(distros.ImageTypes(distro, arch), ", "))
			}
			return nil, err
		}
		bpData = markTagOnly(bpData, p)
		ib.files, ib.notes, ib.kargsIn = bib.files, bib.notes, bib.kargsIn
		for i := range ib.files {
			ib.files[i].Private = len(body) > 0 && p.HasSecret()
		}
	}
	hardNotes, err := checkHardeningOutputs(p, opts, imageType, bpData != nil, ib.kargsIn)
	if err != nil {
		return nil, err
	}
	ib.notes = append(ib.notes, hardNotes...)
	// The options join the composition ID, on a copy (Build does not
	// change its plan), once it is known which outputs took them.
	if id, err := buildInputs(opts, imageType, p.Target.ImageType, distro, arch, (opts.Installer.Kickstart || opts.Installer.BIB) && !ib.fsInBlueprint); err != nil {
		return nil, err
	} else if id != nil {
		cp := *p
		if err := cp.SetInput("build", id); err != nil {
			return nil, err
		}
		p = &cp
	}
	instFiles, err := installerOutputs(p, distro, arch, opts.Installer, ko, vg, body)
	if err != nil {
		return nil, err
	}
	ib.files = append(ib.files, instFiles...)
	if len(ib.notes)+len(ib.warnings) > 0 {
		cp := *p
		cp.Notes = append(slices.Clone(p.Notes), ib.notes...)
		cp.Warnings = append(slices.Clone(p.Warnings), ib.warnings...)
		p = &cp
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
	out := &output.Dir{Plan: p, Warnings: warnings}
	if bpData != nil {
		out.Files = append(out.Files, output.File{Path: output.BlueprintFile, Data: bpData, Private: p.HasSecret()})
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
	written := map[string]string{}
	for _, ch := range p.Charts {
		if ch.Data == nil {
			return nil, fmt.Errorf("chart %s of component %s: the plan has no archive (a plan read from a lock names charts by digest only): resolve again", ch.File, ch.Component)
		}
		if sum, dup := written[ch.File]; dup {
			if sum != ch.SHA256 {
				return nil, fmt.Errorf("chart %s of component %s: another component's chart of that name has sha256 %s, this one %s", ch.File, ch.Component, sum, ch.SHA256)
			}
			continue // the same chart in two components: one file
		}
		written[ch.File] = ch.SHA256
		out.Files = append(out.Files, output.File{Path: ch.File, Data: ch.Data})
	}
	out.Files = append(out.Files, ib.files...)
	if opts.Bootc {
		out.Files = append(out.Files, output.File{Path: output.Containerfile, Data: blueprints.Containerfile(p, output.ImagesFile, output.Path, blueprints.BootcOptions{Images: opts.BootcImages})})
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
// and bootc-image-builder's config take the filesystem sizes
// (onlyKickstartFS: both lay the disk out with installer's defaults; a
// blueprint would carry it, and its defaults are osbuild's).
func buildInputs(opts Options, imageType, defaultType, distro string, arch releases.Arch, onlyKickstartFS bool) (*idBuild, error) {
	var b idBuild
	if imageType != defaultType {
		b.ImageType = imageType
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
		def, err := blueprints.CommitRef(distro, distros.DefaultImageType, arch)
		if err != nil {
			return nil, err
		}
		if o.OSTree.Ref == def {
			o.OSTree = &blueprints.OSTreeOptions{URL: o.OSTree.URL}
		}
	}
	if onlyKickstartFS {
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
