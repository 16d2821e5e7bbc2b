package matrix

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/internal/suggest"
	"github.com/microshift-compose/microshift-compose/releases"
)

// Release is one release of a matrix and how the user named it.
type Release struct {
	Release *releases.Release
	// From is the flag that selected it ("--release 4.19",
	// "--release-dir DIR"), for messages.
	From string
	// Dir is the release directory, "" for an embedded release.
	Dir string
}

// Spec is a matrix: every profile for every arch for every release.
type Spec struct {
	Profiles []string
	Arches   []releases.Arch
	Releases []Release
}

// Cell is one composition of a matrix.
type Cell struct {
	// Name is "<release stream>-<profile>-<arch>": the cell's output
	// directory and its name in summaries.
	Name    string
	Profile string
	Arch    releases.Arch
	Release Release
}

// cellName is what a cell name must look like: one plain path element.
var cellName = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Cells checks a spec against the catalog and lists its cells, releases
// first, then profiles, then arches, in the order given. Empty lists, an
// unknown profile and two cells of one name (two --release values that
// select one release) are errors.
func Cells(cat *components.Catalog, spec Spec) ([]Cell, error) {
	switch {
	case len(spec.Profiles) == 0:
		return nil, errors.New("--profile: no profile given (a comma-separated list, e.g. minimal,full)")
	case len(spec.Arches) == 0:
		return nil, errors.New("--arch: no arch given (a comma-separated list, e.g. x86_64,aarch64)")
	case len(spec.Releases) == 0:
		return nil, errors.New("--release: no release given (a comma-separated list, e.g. 4.18,4.19,5.0, or --release-dir)")
	}
	for _, p := range spec.Profiles {
		if cat.Profiles[p] != nil {
			continue
		}
		names := cat.ProfileNames()
		if m := suggest.Closest(p, names); m != "" {
			return nil, fmt.Errorf("--profile: unknown profile %q; did you mean %q?", p, m)
		}
		return nil, fmt.Errorf("--profile: unknown profile %q (have %s)", p, strings.Join(names, ", "))
	}
	var cells []Cell
	seen := map[string]Cell{}
	for _, rel := range spec.Releases {
		for _, profile := range spec.Profiles {
			for _, arch := range spec.Arches {
				c := Cell{Name: rel.Release.Stream() + "-" + profile + "-" + string(arch), Profile: profile, Arch: arch, Release: rel}
				if !cellName.MatchString(c.Name) {
					return nil, fmt.Errorf("--profile %q: cell name %q is not a plain directory name", profile, c.Name)
				}
				if prev, dup := seen[c.Name]; dup {
					if prev.Release.From != rel.From {
						return nil, fmt.Errorf("duplicate cell %s: %s and %s select release %s", c.Name, prev.Release.From, rel.From, rel.Release.Stream())
					}
					return nil, fmt.Errorf("duplicate cell %s: --profile or --arch names it twice", c.Name)
				}
				seen[c.Name] = c
				cells = append(cells, c)
			}
		}
	}
	return cells, nil
}

// Cell statuses.
const (
	StatusOK     = "ok"
	StatusFailed = "failed"
)

// CellRef names a cell as the summary and the emits print it.
type CellRef struct {
	Cell    string `json:"cell"`
	Profile string `json:"profile"`
	Arch    string `json:"arch"`
	Release string `json:"release"`
	// ReleaseDir is the release directory the cell was built from; ""
	// for an embedded release.
	ReleaseDir string `json:"release_dir,omitempty"`
	// ID is the cell's composition ID; "" when it failed.
	ID string `json:"id"`
}

// Result is one cell's outcome, as the matrix summary prints it.
type Result struct {
	CellRef
	Status string `json:"status"`
	// Rules is the release whose rules were applied: Release, or the
	// newest the tool knows for a newer release (with a warning).
	Rules string `json:"rules,omitempty"`
	// Output is the cell's output directory ("" with an emit).
	Output   string           `json:"output,omitempty"`
	Counts   *assemble.Counts `json:"counts,omitempty"`
	Warnings []string         `json:"warnings"`
	Error    string           `json:"error,omitempty"`
}

// Summary is what matrix prints on stdout.
type Summary struct {
	Cells  []Result `json:"cells"`
	OK     int      `json:"ok"`
	Failed int      `json:"failed"`
}

// Func composes one cell: resolves, builds and (unless the matrix is only
// described) writes it, returning what build's --format json prints.
type Func func(ctx context.Context, c Cell) (assemble.Summary, error)

// runCell runs fn for one cell, a panic in it failing the cell rather than
// the whole matrix (every other cell is still written and summarised).
func runCell(ctx context.Context, fn Func, c Cell) (s assemble.Summary, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("cell %s failed: internal error: %v", c.Name, p)
		}
	}()
	return fn(ctx, c)
}

// Run runs fn for every cell, at most jobs at a time. A failing cell does
// not stop the others; its error is in its Result. The results are in cell
// order, whatever order the cells finished in. Run fails only when ctx is
// done (the cells not started are failed with its error).
func Run(ctx context.Context, cells []Cell, jobs int, fn Func) (Summary, error) {
	if jobs < 1 {
		return Summary{}, fmt.Errorf("--jobs must be 1 or more, got %d", jobs)
	}
	results := make([]Result, len(cells))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(jobs)
	for i, c := range cells {
		results[i] = Result{CellRef: CellRef{Cell: c.Name, Profile: c.Profile, Arch: string(c.Arch), Release: c.Release.Release.Stream(), ReleaseDir: c.Release.Dir}, Warnings: []string{}}
		g.Go(func() error {
			r := &results[i]
			if err := gctx.Err(); err != nil {
				r.Status, r.Error = StatusFailed, err.Error()
				return nil
			}
			s, err := runCell(gctx, fn, c)
			if err != nil {
				r.Status, r.Error = StatusFailed, err.Error()
				return nil
			}
			counts := s.Counts
			r.Status, r.ID, r.Rules, r.Output, r.Counts = StatusOK, s.ID, s.Release.Rules, s.Output, &counts
			r.Warnings = append(r.Warnings, s.Warnings...)
			return nil
		})
	}
	_ = g.Wait() // cells report their own errors
	sum := Summary{Cells: results}
	for _, r := range results {
		if r.Status == StatusOK {
			sum.OK++
		} else {
			sum.Failed++
		}
	}
	return sum, ctx.Err()
}
