package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/releases"
)

var releaseBranch = regexp.MustCompile(`^release-(\d+\.\d+)$`)

// Refresh moves every pin to its branch's head in g and adds the
// release-X.Y branches newer than the oldest pinned stream whose release
// files are release X.Y; it says on log what it moved, added and skipped
// (a branch whose release files are another stream's: an alias at that
// stream's commit, else not yet rebased). A development stream keeps its
// release_files ref until its own branch carries the stream's files.
func Refresh(ctx context.Context, g *Git, pins *Pins, log io.Writer) (*Pins, error) {
	heads, err := g.Branches(ctx)
	if err != nil {
		return nil, err
	}
	out := &Pins{}
	for _, p := range pins.Streams {
		head, ok := heads[p.Branch]
		if !ok {
			return nil, fmt.Errorf("%s: stream %s: branch %s is not in the git directory", PinsFile, p.Stream, p.Branch)
		}
		if head != p.Commit {
			fmt.Fprintf(log, "%s: %s %s -> %s\n", p.Stream, p.Branch, short(p.Commit), short(head))
		}
		p.Commit = head
		if r := p.ReleaseFiles; r != nil {
			own, err := releaseFiles(ctx, g, Ref{Branch: p.Branch, Commit: head})
			if err != nil {
				return nil, err
			}
			if own.Stream() == p.Stream {
				fmt.Fprintf(log, "%s: %s now carries %s's release files: release_files from %s dropped\n", p.Stream, p.Branch, p.Stream, r.Branch)
				p.ReleaseFiles = nil
			} else if h, ok := heads[r.Branch]; ok && h != r.Commit {
				fmt.Fprintf(log, "%s: release files %s %s -> %s\n", p.Stream, r.Branch, short(r.Commit), short(h))
				p.ReleaseFiles = &Ref{Branch: r.Branch, Commit: h, Why: r.Why}
			}
		}
		out.Streams = append(out.Streams, p)
	}
	for _, a := range pins.Aliases {
		if head, ok := heads[a.Branch]; ok {
			a.Commit = head
		}
		out.Aliases = append(out.Aliases, a)
	}
	oldest := version(pins.Streams[0].Stream)
	var candidates []string
	for name := range heads {
		m := releaseBranch.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		v, err := streamVersion(m[1])
		if err != nil || v.LessThan(oldest) {
			continue
		}
		if slices.ContainsFunc(out.Streams, func(p Pin) bool { return p.Branch == name }) ||
			slices.ContainsFunc(out.Aliases, func(a Alias) bool { return a.Branch == name }) {
			continue
		}
		candidates = append(candidates, name)
	}
	slices.Sort(candidates)
	for _, name := range candidates {
		stream := strings.TrimPrefix(name, "release-")
		rel, err := releaseFiles(ctx, g, Ref{Branch: name, Commit: heads[name]})
		if err != nil {
			return nil, err
		}
		if rel.Stream() != stream {
			same := ""
			for _, p := range out.Streams {
				if p.Commit == heads[name] {
					same = fmt.Sprintf(", the commit of %s", p.Branch)
				}
			}
			fmt.Fprintf(log, "skipped %s: at %s%s, its release files are release %s (%s): not a %s stream (add an [[alias]] to %s if it is %s under another name)\n",
				name, short(heads[name]), same, rel.Stream(), rel.Base(releases.X86_64), stream, PinsFile, rel.Stream())
			continue
		}
		if existing := out.Pin(stream); existing != nil {
			return nil, fmt.Errorf("%s now carries release %s, which %s is pinned for: edit %s (the development branch moves to the next stream)", name, stream, existing.Branch, PinsFile)
		}
		fmt.Fprintf(log, "added %s: %s at %s\n", stream, name, short(heads[name]))
		out.Streams = append(out.Streams, Pin{Stream: stream, Branch: name, Commit: heads[name]})
	}
	slices.SortStableFunc(out.Streams, func(a, b Pin) int { return version(a.Stream).Compare(version(b.Stream)) })
	data, err := out.Encode()
	if err != nil {
		return nil, err
	}
	if _, err := ParsePins(PinsFile, data); err != nil {
		return nil, errors.Join(errors.New("the refreshed pins do not parse (a bug)"), err)
	}
	return out, nil
}
