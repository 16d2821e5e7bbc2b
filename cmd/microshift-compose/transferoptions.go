package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/transfer"
	"github.com/microshift-compose/microshift-compose/releases"
)

// transferOptions are how diff and release diff read the images' manifests
// to say what an update moves: from their registries (--resolve-sizes,
// reached as footprint reaches them) or from OCI layouts and archives
// (--from).
type transferOptions struct {
	ResolveSizes bool
	// From are oci:DIR or oci-archive:FILE layouts to read the manifests
	// from instead of registries.
	From []string
	reg  registryOptions
	from []airgap.Target
}

func (o *transferOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&o.ResolveSizes, "resolve-sizes", false, "read both sides' image manifests from their registries (no layers are downloaded) and add what the update moves: new blobs and bytes per component")
	f.StringSliceVar(&o.From, "from", nil, "read the image manifests from this OCI layout, oci:DIR or oci-archive:FILE, instead of registries (repeatable: each image from the first that names it); implies --resolve-sizes")
	o.reg.addFlags(cmd)
}

// Validate checks the flags and parses --from.
func (o *transferOptions) Validate() error {
	if err := o.reg.Validate(); err != nil {
		return err
	}
	o.from = nil
	for _, s := range o.From {
		t, err := airgap.ParseSource(s)
		if err != nil {
			return usageError{fmt.Errorf("--from: %w", err)}
		}
		// Opened once here, so that a path that is not a layout is named
		// before anything is read.
		if _, err := airgap.LayoutImages(t, registryclient.Options{}); err != nil {
			return err
		}
		o.from = append(o.from, t)
	}
	return nil
}

func (o *transferOptions) enabled() bool { return o.ResolveSizes || len(o.From) > 0 }

// reader reads image contents for an arch from the registries or layouts;
// built are the layouts build wrote that the locks name (their filtered
// operator catalogs), read with the registries.
func (o *transferOptions) reader(ctx context.Context, built ...airgap.Target) (func(refs []string, arch releases.Arch) (map[string]transfer.Image, error), error) {
	rc, err := o.reg.client()
	if err != nil {
		return nil, err
	}
	return func(refs []string, arch releases.Arch) (map[string]transfer.Image, error) {
		contents, err := airgap.ReadImageContents(ctx, refs, arch, o.from, airgap.Options{Registry: rc, Built: built})
		if err != nil {
			where := "their registries"
			if len(o.from) > 0 {
				where = strings.Join(o.From, ", ")
			}
			return nil, fmt.Errorf("reading the %s manifests from %s: %w", arch, where, err)
		}
		out := map[string]transfer.Image{}
		for _, c := range contents {
			im := transfer.Image{Ref: c.Ref}
			for _, m := range c.Manifests {
				im.Manifests = append(im.Manifests, transfer.Blob{Digest: m.Digest.String(), Size: m.Size})
			}
			for _, b := range c.Blobs {
				im.Blobs = append(im.Blobs, transfer.Blob{Digest: b.Digest.String(), Size: b.Size})
			}
			out[c.Ref] = im
		}
		return out, nil
	}, nil
}
