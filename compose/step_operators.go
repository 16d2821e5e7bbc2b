package compose

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/operators"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// addOperators resolves the operators asked for in their catalog (package
// operators: bundles, dependencies, the filtered catalog image and where
// each is installed) and puts the set into the plan: plan.Operators, the
// filtered catalog's layout for build to write, and the filtered catalog,
// the bundle images and their related images among the plan's images,
// used by component olm.
func addOperators(ctx context.Context, in *inputs, p soFar) (soFar, error) {
	r := in.req.Operators
	if r == nil {
		return p, nil
	}
	c := r.Catalog
	res, err := c.Filter(ctx, r.Choices, operators.ResolveOptions{AllowUnpinned: in.req.AllowUnpinned})
	if err != nil {
		return p, err
	}
	installs, notes, err := operators.Installs(res)
	if err != nil {
		return p, err
	}
	layout, err := c.Layout(res.Filtered)
	if err != nil {
		return p, err
	}
	im, f := c.Image, res.Filtered
	ops := &plan.Operators{
		Catalog: plan.OperatorCatalog{Source: im.From.String(), Ref: im.Ref(), Manifest: im.ManifestHash.String(), ConfigsDir: "/" + im.ConfigsDir},
		Filtered: plan.FilteredCatalog{
			Ref: f.Ref, Layout: output.OperatorCatalogLayout, KeptLayers: len(f.Kept), DroppedLayers: len(f.Dropped),
			Files: layoutFiles(c, layout),
		},
		Packages: []plan.OperatorPackage{},
	}
	uses := map[string][]plan.ImageUse{}
	use := func(ref, key string) {
		uses[ref] = append(uses[ref], plan.ImageUse{Component: OLMComponent, File: plan.OperatorImagesFile, Key: key})
	}
	use(f.Ref, "catalog")
	for _, i := range installs {
		b := i.Bundle
		pkg := plan.OperatorPackage{
			Name: i.Package, Channel: i.Channel, Bundle: b.Name, Version: b.Version.String(), Image: b.Image,
			RelatedImages: []plan.RelatedImage{}, RequiredBy: i.RequiredBy, Requirement: i.Requirement,
			Namespace: i.Namespace, Approval: i.Approval, InstallMode: i.InstallMode,
		}
		if i.Choice != nil {
			pkg.Versions = i.Choice.Versions
		}
		if i.Waited {
			pkg.Deployments = slices.Clone(i.CSV.Deployments)
		}
		if b.Image != "" {
			use(b.Image, i.Package+"/bundle")
		}
		for _, ri := range b.RelatedImages {
			pkg.RelatedImages = append(pkg.RelatedImages, plan.RelatedImage{Name: ri.Name, Image: ri.Image})
			key := ri.Name
			if key == "" {
				key = imageRepository(ri.Image)
			}
			use(ri.Image, i.Package+"/"+key)
		}
		ops.Packages = append(ops.Packages, pkg)
	}
	p.Operators = ops
	p.Images = mergeOperatorImages(p.Images, uses)
	if im.Resolved {
		p.Notes = append(p.Notes, fmt.Sprintf("operator catalog %s is %s: its tag was read when the plan was made; --operator-catalog %s builds the same catalog", im.From, im.Ref(), im.Ref()))
	}
	p.Notes = append(p.Notes, fmt.Sprintf("operators: %s, from %s, filtered into %s (%d of its %s kept, %d left out)",
		operatorList(ops.Packages), im.Ref(), f.Ref, len(f.Kept), text.Plural(len(f.Kept)+len(f.Dropped), "layer", "layers"), len(f.Dropped)))
	p.Notes = append(p.Notes, res.Set.Notes...)
	p.Notes = append(p.Notes, res.Configs.Notes...)
	p.Notes = append(p.Notes, notes...)
	for _, ref := range slices.Sorted(maps.Keys(uses)) {
		if !releases.IsDigestPinned(ref) {
			p.Warnings = append(p.Warnings, fmt.Sprintf("operator image %s is not pinned by digest (allowed by --allow-unpinned; the device may not boot offline reproducibly)", ref))
		}
	}
	return p, nil
}

// layoutFiles are the filtered catalog's layout files, kept layers read
// from the catalog image when build writes them.
func layoutFiles(c *operators.Catalog, files []operators.LayoutFile) []plan.LayoutFile {
	out := make([]plan.LayoutFile, len(files))
	for i, lf := range files {
		out[i] = plan.LayoutFile{Path: lf.Path, Data: lf.Data}
		if d := lf.Blob; d != nil {
			desc := *d
			out[i].Open = func() (io.ReadCloser, error) { return c.OpenBlob(desc) }
			out[i].SHA256, out[i].Size = desc.Digest.Hex, desc.Size
		}
	}
	return out
}

// mergeOperatorImages adds images and their uses to the plan's, which stay sorted
// by reference; an image the plan has already gets the uses too.
func mergeOperatorImages(images []plan.Image, uses map[string][]plan.ImageUse) []plan.Image {
	out := slices.Clone(images)
	for ref, us := range uses {
		i := slices.IndexFunc(out, func(im plan.Image) bool { return im.Ref == ref })
		if i < 0 {
			out = append(out, plan.Image{Ref: ref, Pinned: releases.IsDigestPinned(ref)})
			i = len(out) - 1
		}
		out[i].Uses = append(slices.Clone(out[i].Uses), us...)
	}
	slices.SortFunc(out, func(a, b plan.Image) int { return strings.Compare(a.Ref, b.Ref) })
	return out
}

// imageRepository is an image's repository path without its registry, which
// names a related image that has no name.
func imageRepository(ref string) string {
	repo, _, _ := strings.Cut(ref, "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	if _, rest, ok := strings.Cut(repo, "/"); ok {
		return rest
	}
	return repo
}

func operatorList(pkgs []plan.OperatorPackage) string {
	var s []string
	for _, p := range pkgs {
		what := fmt.Sprintf("%s %s (%s)", p.Name, p.Version, p.Channel)
		if !p.Subscribed() {
			what += " for " + p.RequiredBy
		}
		s = append(s, what)
	}
	return strings.Join(s, ", ")
}
