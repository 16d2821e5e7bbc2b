package upstream

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/internal/stricttoml"
)

// Pins are the upstream commits the data is generated from.
type Pins struct {
	// Streams are in release order, oldest first.
	Streams []Pin   `toml:"stream"`
	Aliases []Alias `toml:"alias"`
}

// Pin is one stream's upstream source.
type Pin struct {
	Stream string `toml:"stream"`
	Branch string `toml:"branch"`
	Commit string `toml:"commit"`
	// Development marks upstream's development branch (main): its stream
	// is embedded, but a build without --release takes the newest other.
	Development bool `toml:"development,omitempty"`
	// ReleaseFiles, when set, is where the stream's release files come
	// from instead of Branch: a branch still carrying another stream's
	// files (main before its first rebase onto the new minor).
	ReleaseFiles *Ref `toml:"release_files,omitempty"`
}

// Ref is a branch and the commit pinned for it.
type Ref struct {
	Branch string `toml:"branch"`
	Commit string `toml:"commit"`
	Why    string `toml:"why,omitempty"`
}

// Alias is an upstream release branch that is another stream under
// another name (release-4.23 is release-5.0): not a stream of its own.
type Alias struct {
	Branch string `toml:"branch"`
	Commit string `toml:"commit"`
	Stream string `toml:"stream"`
	Why    string `toml:"why,omitempty"`
}

var (
	commitPattern = regexp.MustCompile(`^[0-9a-f]{40}$`)
	branchPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`)
)

// ParsePins reads pins.toml; name is for messages.
func ParsePins(name string, data []byte) (*Pins, error) {
	var p Pins
	if _, err := stricttoml.Decode(name, data, &p); err != nil {
		return nil, err
	}
	if len(p.Streams) == 0 {
		return nil, fmt.Errorf("%s: no [[stream]]", name)
	}
	var prev *semver.Version
	seen := map[string]bool{}
	for i, s := range p.Streams {
		where := fmt.Sprintf("%s: stream[%d]", name, i)
		v, err := streamVersion(s.Stream)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if prev != nil && !v.GreaterThan(prev) {
			return nil, fmt.Errorf("%s: stream %s is not newer than the one before: list streams oldest first", where, s.Stream)
		}
		prev = v
		if err := checkRef(s.Branch, s.Commit); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", where, s.Stream, err)
		}
		if seen[s.Branch] {
			return nil, fmt.Errorf("%s (%s): branch %s pinned twice", where, s.Stream, s.Branch)
		}
		seen[s.Branch] = true
		if r := s.ReleaseFiles; r != nil {
			if err := checkRef(r.Branch, r.Commit); err != nil {
				return nil, fmt.Errorf("%s (%s): release_files: %w", where, s.Stream, err)
			}
		}
	}
	if n := len(slices.DeleteFunc(slices.Clone(p.Streams), func(s Pin) bool { return !s.Development })); n > 1 {
		return nil, fmt.Errorf("%s: %d streams are marked development; only upstream's development branch is", name, n)
	}
	for i, a := range p.Aliases {
		where := fmt.Sprintf("%s: alias[%d]", name, i)
		if err := checkRef(a.Branch, a.Commit); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if p.Pin(a.Stream) == nil {
			return nil, fmt.Errorf("%s (%s): stream %q is not pinned", where, a.Branch, a.Stream)
		}
		if seen[a.Branch] {
			return nil, fmt.Errorf("%s: branch %s is pinned as a stream too", where, a.Branch)
		}
	}
	return &p, nil
}

func checkRef(branch, commit string) error {
	if !branchPattern.MatchString(branch) || strings.Contains(branch, "..") {
		return fmt.Errorf("branch %q is not a branch name", branch)
	}
	if !commitPattern.MatchString(commit) {
		return fmt.Errorf("commit %q is not a full commit hash (40 hex digits)", commit)
	}
	return nil
}

// streamVersion parses "X.Y".
func streamVersion(s string) (*semver.Version, error) {
	v, err := semver.StrictNewVersion(s + ".0")
	if err != nil || v.String() != s+".0" {
		return nil, fmt.Errorf("stream %q is not major.minor", s)
	}
	return v, nil
}

// Pin returns the pin of stream, or nil.
func (p *Pins) Pin(stream string) *Pin {
	for i := range p.Streams {
		if p.Streams[i].Stream == stream {
			return &p.Streams[i]
		}
	}
	return nil
}

// Encode writes pins.toml: the header, then the pins.
func (p *Pins) Encode() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(pinsHeader)
	enc := toml.NewEncoder(&b)
	enc.Indent = ""
	if err := enc.Encode(p); err != nil {
		return nil, fmt.Errorf("encoding pins: %w", err)
	}
	return b.Bytes(), nil
}

const pinsHeader = `# The upstream commits releases/data and releases/knowledge/data are
# generated from: one [[stream]] per MicroShift release stream, oldest
# first, its branch of openshift/microshift and the commit pinned for it.
#
#   make knowledge MICROSHIFT=<git dir>         moves every pin to its branch's
#                                               head (and adds new release-X.Y
#                                               branches), then regenerates
#   make knowledge-pinned MICROSHIFT=<git dir>  regenerates at these commits
#
# development = true: upstream's development branch (main); embedded, but a
# build without --release takes the newest release branch's stream.
# release_files: the stream's release files come from another ref (main
# before upstream merges its rebase onto the new minor still carries the
# release files of the stream it forked from).
# [[alias]]: an upstream release branch that is another stream under another
# name; not a stream of its own (the generator checks it still is).
# Rewritten by 'make knowledge'; edit it to add a stream by hand.

`
