package compose

import (
	"fmt"
	"strings"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// Unavailable says why component c (as the catalog is for rel) is not
// available for release rel, whose facts (for its build of MicroShift) are
// facts: it is another build's, it is outside its release range, or it
// needs what the release's build lacks (an RPM it does not build, an image
// it leaves as another build's, a repository it cannot reach); "" when it
// is available.
func Unavailable(c *components.Component, rel *releases.Release, facts *knowledge.Release, know *knowledge.Knowledge) string {
	if !c.ForBuild(rel.Build) {
		var titles []string
		for _, b := range c.Builds {
			if kb := know.Build(b); kb != nil {
				titles = append(titles, kb.Title)
			}
		}
		return fmt.Sprintf("it is for %s of MicroShift, and release %s is %s", strings.Join(titles, " and "), rel, buildTitle(facts))
	}
	if !c.SupportsRelease(rel) {
		return fmt.Sprintf("it needs release %s", c.ReleaseRange())
	}
	var repos []string
	for _, r := range c.Repositories {
		repos = append(repos, r.BaseURL)
	}
	for i, im := range append([]components.Images{c.Images}, c.Images.Also...) {
		n := knowledge.Needs{ImageFile: im.File, ImageKeys: im.Keys}
		if i == 0 {
			n.Packages, n.Repositories = c.Packages, repos
		}
		if what, why := facts.Lacking(n); what != "" {
			return fmt.Sprintf("%s lacks %s: %s", buildTitle(facts), what, why)
		}
	}
	return ""
}

// buildTitle names the build of the facts' release: "Red Hat's build".
func buildTitle(facts *knowledge.Release) string {
	if facts.Build == nil {
		return "Red Hat's build"
	}
	return facts.Build.Title
}
