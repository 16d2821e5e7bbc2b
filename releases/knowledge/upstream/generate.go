package upstream

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/releases"
)

// The files Generate writes, relative to the source tree.
const (
	BundleDir    = "releases/data"
	ReleasesFile = "releases/knowledge/data/releases.toml"
	ConfigFile   = "releases/knowledge/data/config.toml"
	// PinsFile and HandFile are the generator's own inputs.
	PinsFile = "releases/knowledge/upstream/pins.toml"
	HandFile = "releases/knowledge/upstream/handkept.toml"
)

// Output is what Generate makes: file contents by slash path relative to
// the source tree.
type Output struct {
	Files map[string][]byte
}

// BundlePath is a stream's embedded release bundle.
func BundlePath(stream string) string { return BundleDir + "/" + stream + ".json" }

// Generate reads every pinned stream from g and returns the release
// bundles and the two knowledge files.
func Generate(ctx context.Context, g *Git, pins *Pins, hand *Hand) (*Output, error) {
	var facts []*streamFacts
	for _, pin := range pins.Streams {
		f, err := extract(ctx, g, pin)
		if err != nil {
			return nil, err
		}
		facts = append(facts, f)
	}
	for _, a := range pins.Aliases {
		if err := checkAlias(ctx, g, a); err != nil {
			return nil, err
		}
	}
	out := &Output{Files: map[string][]byte{}}
	for _, f := range facts {
		f.release.Development = f.pin.Development
		out.Files[BundlePath(f.pin.Stream)] = releases.EncodeBundle(f.release, f.origin)
	}
	gen := &generator{pins: pins, hand: hand, facts: facts}
	for _, f := range facts {
		gen.streams = append(gen.streams, f.pin.Stream)
	}
	rel, err := gen.releasesTOML()
	if err != nil {
		return nil, err
	}
	cfg, err := gen.configTOML()
	if err != nil {
		return nil, err
	}
	out.Files[ReleasesFile], out.Files[ConfigFile] = rel, cfg
	return out, nil
}

// checkAlias makes sure an alias branch still is its stream: its release
// files say so.
func checkAlias(ctx context.Context, g *Git, a Alias) error {
	rel, err := releaseFiles(ctx, g, Ref{Branch: a.Branch, Commit: a.Commit})
	if err != nil {
		return fmt.Errorf("alias %s: %w", a.Branch, err)
	}
	if rel.Stream() != a.Stream {
		return fmt.Errorf("alias %s at %s: its release files are release %s, not %s: it is no longer an alias; pin it as a stream in %s",
			a.Branch, short(a.Commit), rel.Stream(), a.Stream, PinsFile)
	}
	return nil
}

type generator struct {
	pins    *Pins
	hand    *Hand
	facts   []*streamFacts
	streams []string
}

// each collects a per-stream value.
func each[T any](g *generator, fn func(f *streamFacts) *T) []*T {
	out := make([]*T, len(g.facts))
	for i, f := range g.facts {
		out[i] = fn(f)
	}
	return out
}

// presence groups the streams holding each of a set of values into runs,
// ordered by first stream and then by the value's fingerprint.
func presence[T any](g *generator, fn func(f *streamFacts) []T) []run[T] {
	type item struct {
		value   T
		present []bool
		first   int
	}
	byKey := map[string]*item{}
	for i, f := range g.facts {
		for _, v := range fn(f) {
			k := fingerprint(v)
			it := byKey[k]
			if it == nil {
				it = &item{value: v, present: make([]bool, len(g.facts)), first: i}
				byKey[k] = it
			}
			it.present[i] = true
		}
	}
	keys := slices.Collect(maps.Keys(byKey))
	sort.Slice(keys, func(a, b int) bool {
		if byKey[keys[a]].first != byKey[keys[b]].first {
			return byKey[keys[a]].first < byKey[keys[b]].first
		}
		return keys[a] < keys[b]
	})
	var out []run[T]
	for _, k := range keys {
		for _, r := range ranges(g.streams, byKey[k].present) {
			out = append(out, run[T]{Release: r, Value: byKey[k].value})
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		return firstStream(g.streams, out[a].Release) < firstStream(g.streams, out[b].Release)
	})
	return out
}

// firstStream is the index of the stream a generated range starts at.
func firstStream(streams []string, rng string) int {
	from, _, _ := strings.Cut(strings.TrimPrefix(rng, ">="), ",")
	return slices.Index(streams, from)
}

// version is a stream's X.Y.0.
func version(stream string) *semver.Version {
	v, err := streamVersion(stream)
	if err != nil {
		panic(err) // streams come from parsed pins
	}
	return v
}

// handMatches reports whether a hand-kept range applies to stream.
func handMatches(rng, stream string) (bool, error) {
	c, err := semver.NewConstraint(rng)
	if err != nil {
		return false, fmt.Errorf("%s: release: invalid semver constraint %q", HandFile, rng)
	}
	return c.Check(version(stream)), nil
}
