package assemble

import (
	"cmp"
	"slices"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/distros"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// LookAhead starts, in the background, osbuild's lookup of the image type
// Build will validate the blueprint for, from what is known before
// resolving: the release, the request's distro and arch, and the image
// type asked for ("" for the distro's, as the resolved target will have it). osbuild
// parses its distro definitions on a distro's first lookup, a tenth of a
// build; started here, that overlaps with resolving on another core, and
// Build's own lookup (distros caches it per process) finds it done.
//
// It decides nothing: a lookup that fails, or that Build does not make
// (another distro, bootc only), costs time, not a result. The returned
// function waits for the lookup; a command calls it before it exits, so
// that no definitions cache is left half written.
func LookAhead(rel *releases.Release, req compose.Request, imageType string) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if distro, it := lookAheadTarget(rel, req, imageType); it != "" {
			_, _ = distros.ImageType(distro, it, req.Arch)
		}
	}()
	return func() { <-done }
}

// lookAheadTarget is the distro and image type Build will look up for the
// plan of rel and req with imageType asked for (compose's chooseTarget and
// outputsFor decide them); an empty image type when there is nothing to
// look up.
func lookAheadTarget(rel *releases.Release, req compose.Request, imageType string) (distro, it string) {
	know, err := knowledge.Default()
	if err != nil {
		return "", ""
	}
	facts, err := know.For(rel.Version)
	if err != nil || len(facts.Distros) == 0 {
		return "", ""
	}
	d := facts.Distros[0] // the default
	if req.Distro != "" {
		i := slices.IndexFunc(facts.Distros, func(c knowledge.Distro) bool { return c.Name == req.Distro })
		if i < 0 {
			return "", "" // resolving refuses it
		}
		d = facts.Distros[i]
	}
	return d.Name, cmp.Or(imageType, d.ImageType)
}
