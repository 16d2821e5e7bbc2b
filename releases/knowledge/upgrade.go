package knowledge

import (
	"fmt"
	"slices"

	"github.com/Masterminds/semver/v3"
)

// UpgradeError says why a release does not start on another release's
// data.
type UpgradeError struct {
	From, To string // major.minor
	// Downgrade: the data is of a newer release.
	Downgrade bool
	// Distance is how many minors newer To is (counted as To's rule
	// counts); -1 when To refuses another major outright.
	Distance, MaxSkew int
	// Through are the releases to upgrade through first, when some are
	// known.
	Through []string
}

func (e *UpgradeError) Error() string {
	switch {
	case e.Downgrade:
		return fmt.Sprintf("MicroShift %s does not start on data written by %s: it never migrates data to an older release", e.To, e.From)
	case e.Distance < 0:
		return fmt.Sprintf("MicroShift %s does not start on data written by %s: it refuses data of another major version", e.To, e.From) + e.through()
	}
	return fmt.Sprintf("MicroShift %s does not start on data written by %s: %s is %d minor versions newer, and it takes over data at most %d older", e.To, e.From, e.To, e.Distance, e.MaxSkew) + e.through()
}

func (e *UpgradeError) through() string {
	if len(e.Through) == 0 {
		return ""
	}
	return "; upgrade through " + joinAnd(e.Through) + " first"
}

func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	out := s[0]
	for _, x := range s[1 : len(s)-1] {
		out += ", " + x
	}
	return out + " and " + s[len(s)-1]
}

// Upgrade is the verdict on starting a release on another's data.
type Upgrade struct {
	From, To string // major.minor
	// Distance is how many minors newer To is, counted by To's rule; 0
	// for the same minor, -1 when To refuses another major outright.
	Distance int
	MaxSkew  int
	// Err is nil when To starts on From's data.
	Err *UpgradeError
}

// AcceptsDataFrom says whether release r starts on data written by release
// from, by r's own rule (only major.minor count: z-streams of one minor are
// interchangeable). Through suggests the known releases to upgrade through
// when it does not.
func (k *Knowledge) AcceptsDataFrom(r *Release, from *semver.Version) (*Upgrade, error) {
	if r.Upgrade == nil {
		return nil, fmt.Errorf("MicroShift %s: %w: no upgrade rule", r.Stream(), ErrUnsupported)
	}
	u := verdict(r.Upgrade, from, r.Version)
	if u.Err != nil && !u.Err.Downgrade {
		u.Err.Through = k.upgradePath(from, r.Version)
	}
	return u, nil
}

// verdict applies rule (the target's) to data of release from.
func verdict(rule *UpgradeRule, from, to *semver.Version) *Upgrade {
	u := &Upgrade{From: stream(from), To: stream(to), MaxSkew: rule.MaxSkew}
	fail := func() *Upgrade {
		u.Err = &UpgradeError{From: u.From, To: u.To, Distance: u.Distance, MaxSkew: u.MaxSkew}
		return u
	}
	if from.Major() > to.Major() || from.Major() == to.Major() && from.Minor() > to.Minor() {
		u.Distance = -1
		fail().Err.Downgrade = true
		return u
	}
	fromLinear, okFrom := linear(rule, from)
	toLinear, okTo := linear(rule, to)
	if !okFrom || !okTo || len(rule.LastMinor) == 0 && from.Major() != to.Major() {
		u.Distance = -1
		return fail()
	}
	u.Distance = toLinear - fromLinear
	if u.Distance > rule.MaxSkew {
		return fail()
	}
	return u
}

// linear flattens major.minor as MicroShift's linearVersion does: the
// minors of every earlier major, counted from 4, plus the minor. Without
// a last minor for an earlier major, only the target's own major counts.
func linear(rule *UpgradeRule, v *semver.Version) (int, bool) {
	if len(rule.LastMinor) == 0 {
		return int(v.Minor()), true
	}
	n := 0
	for major := uint64(4); major < v.Major(); major++ {
		last, ok := rule.LastMinor[major]
		if !ok {
			return 0, false
		}
		n += int(last) + 1
	}
	return n + int(v.Minor()), true
}

// upgradePath lists the releases to go through from from to to, each one
// the newest known release that starts on the previous one's data; nil
// when there is no such path.
func (k *Knowledge) upgradePath(from, to *semver.Version) []string {
	var known []*semver.Version
	for s := range k.Kubernetes {
		if v, err := semver.NewVersion(s); err == nil && v.GreaterThan(from) && v.LessThan(to) {
			known = append(known, v)
		}
	}
	slices.SortFunc(known, func(a, b *semver.Version) int { return b.Compare(a) }) // newest first
	var path []string
	cur := from
	for {
		if ok := k.accepts(to, cur); ok {
			return path
		}
		next := -1
		for i, v := range known {
			if v.GreaterThan(cur) && k.accepts(v, cur) {
				next = i
				break
			}
		}
		if next < 0 {
			return nil
		}
		cur = known[next]
		path = append(path, stream(cur))
	}
}

// accepts reports whether release to starts on data of release from.
func (k *Knowledge) accepts(to, from *semver.Version) bool {
	for i := range k.Upgrades {
		if rule := &k.Upgrades[i]; rule.Matches(to) {
			return verdict(rule, from, to).Err == nil
		}
	}
	return false
}

func stream(v *semver.Version) string { return fmt.Sprintf("%d.%d", v.Major(), v.Minor()) }

// Verdict is what a diff of two releases says about upgrading a device
// from the old one to the new one.
type Verdict struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Accepted: MicroShift To starts on the data From wrote.
	Accepted bool `json:"accepted"`
	// Distance is how many minor versions newer To is, by To's rule (-1
	// for a downgrade or another major To refuses).
	Distance int `json:"distance"`
	MaxSkew  int `json:"max_skew"`
	// Reason says why not, when not.
	Reason string `json:"reason,omitempty"`
}

// UpgradeVerdict judges upgrading from one release to another by the
// target's own rule; nil when both are the same major.minor (z-streams
// are interchangeable).
func (k *Knowledge) UpgradeVerdict(from, to *semver.Version) (*Verdict, error) {
	if from.Major() == to.Major() && from.Minor() == to.Minor() {
		return nil, nil
	}
	r, err := k.For(to)
	if err != nil {
		return nil, err
	}
	u, err := k.AcceptsDataFrom(r, from)
	if err != nil {
		return nil, err
	}
	v := &Verdict{From: u.From, To: u.To, Accepted: u.Err == nil, Distance: u.Distance, MaxSkew: u.MaxSkew}
	if u.Err != nil {
		v.Reason = u.Err.Error()
	}
	return v, nil
}

// Sentence says the verdict in one line.
func (v *Verdict) Sentence() string {
	if v.Accepted {
		return fmt.Sprintf("MicroShift %s starts on the data %s wrote: it is %d minor versions newer, and takes over data at most %d older.", v.To, v.From, v.Distance, v.MaxSkew)
	}
	return "**Refused.** " + v.Reason + "."
}
