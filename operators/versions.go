package operators

import (
	"errors"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/internal/text"
)

// Range is a version range as OLM writes one (a bundle's skipRange, an
// olm.package.required versionRange) and --operator PACKAGE@RANGE takes
// it: comparisons that must all hold, separated by spaces or commas, and
// alternatives separated by "||" (">=1.2.0 <2.0.0", ">=4.1.0 <4.3.0 ||
// >=5.0.0"); a version alone is that version. A prerelease is in a range
// like any other version, as OLM compares them.
type Range struct {
	s string
	c *semver.Constraints
}

// maxRange bounds a range's text: OLM's are a few dozen characters.
const maxRange = 1024

// ErrRange is wrapped by the error for a range that does not parse.
var ErrRange = errors.New("not a version range")

// ParseRange parses a version range.
func ParseRange(s string) (Range, error) {
	t := strings.TrimSpace(s)
	switch {
	case text.HasUnsafe(s):
		return Range{}, fmt.Errorf("%w: %s holds a control character", ErrRange, text.QuoteExcerpt(s))
	case t == "":
		return Range{}, fmt.Errorf("%w: empty (e.g. >=1.2.0 <2.0.0)", ErrRange)
	case len(t) > maxRange:
		return Range{}, fmt.Errorf("%w: longer than %d characters", ErrRange, maxRange)
	}
	c, err := semver.NewConstraint(t)
	if err != nil {
		return Range{}, fmt.Errorf("%w: %s: %v (e.g. >=1.2.0 <2.0.0, or one version)", ErrRange, text.QuoteExcerpt(t), err)
	}
	c.IncludePrerelease = true
	return Range{s: t, c: c}, nil
}

// Contains reports whether v is in the range.
func (r Range) Contains(v *semver.Version) bool { return r.c != nil && v != nil && r.c.Check(v) }

// String is the range as written.
func (r Range) String() string { return r.s }
