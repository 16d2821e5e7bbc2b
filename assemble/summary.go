package assemble

import (
	"fmt"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// Summary is what a build wrote, for scripts: build --format json prints
// it, and matrix reports each cell with its ID and counts.
type Summary struct {
	// ID is the composition ID (the lock's id).
	ID string `json:"id"`
	// Output is the output directory, as given (placeholders expanded).
	Output  string         `json:"output"`
	Profile string         `json:"profile"`
	Release SummaryRelease `json:"release"`
	Arch    string         `json:"arch"`
	// Files are every file written, sorted by path.
	Files  []SummaryFile `json:"files"`
	Counts Counts        `json:"counts"`
	// Warnings are every warning of the build, each once: the plan's (as
	// the lock records them, the installer's included), osbuild's
	// ("osbuild: ..."), and what writing the output said (AddWarnings).
	// build prints each as a "warning:" line on stderr.
	Warnings []string `json:"warnings"`
}

// SummaryRelease is the release of a summary: its stream, the version of its
// files, and the release whose rules were applied (the stream, or the
// newest one the tool knows for a newer release).
type SummaryRelease struct {
	Stream  string `json:"stream"`
	Version string `json:"version"`
	// Kind says what the release's base names (plan.Release.Kind):
	// "shipped" for a published X.Y.Z.
	Kind  string `json:"kind"`
	Rules string `json:"rules"`
}

// SummaryFile is one file of the output directory.
type SummaryFile struct {
	// Path is relative to the output directory, slash-separated.
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int    `json:"size"`
}

// Counts are the sizes of a plan.
type Counts struct {
	Components  int `json:"components"`
	Images      int `json:"images"`
	Packages    int `json:"packages"`
	DeviceFiles int `json:"device_files"`
	Manifests   int `json:"manifests"`
}

// PlanCounts counts a plan's parts.
func PlanCounts(p *plan.Plan) Counts {
	return Counts{Components: len(p.Components), Images: len(p.Images), Packages: len(p.Packages), DeviceFiles: len(p.Files), Manifests: len(p.Manifests)}
}

// Summarize describes out, written to dir.
func Summarize(out *output.Dir, dir string) Summary {
	p := out.Plan
	s := Summary{
		ID: p.ID, Output: dir, Profile: p.Profile, Arch: p.Arch,
		Release:  SummaryRelease{Stream: p.Release.Stream, Version: p.Release.Version, Kind: p.Release.Kind, Rules: p.Release.Rules},
		Counts:   PlanCounts(p),
		Files:    make([]SummaryFile, len(out.Files)),
		Warnings: slices.Clone(p.Warnings),
	}
	for i, f := range out.Files {
		sum, size := f.Digest()
		s.Files[i] = SummaryFile{Path: f.Path, SHA256: sum, Size: int(size)}
	}
	slices.SortFunc(s.Files, func(a, b SummaryFile) int { return strings.Compare(a.Path, b.Path) })
	for _, w := range out.Warnings {
		s.Warnings = append(s.Warnings, "osbuild: "+w)
	}
	if s.Warnings == nil {
		s.Warnings = []string{}
	}
	return s
}

// AddWarnings appends the warnings s does not hold yet: what writing the
// output said (a killed build's leftovers), so that the summary holds
// every warning the build printed.
func (s *Summary) AddWarnings(warnings ...string) {
	for _, w := range warnings {
		if !slices.Contains(s.Warnings, w) {
			s.Warnings = append(s.Warnings, w)
		}
	}
}

// Name is how a summary names the release: a shipped version as itself
// (4.19.3), any other (a nightly, a candidate) by its stream (4.19).
func (r SummaryRelease) Name() string {
	if r.Kind == releases.Shipped && r.Version != "" {
		return r.Version
	}
	return r.Stream
}

// Line is the one-line text form of a summary, what build prints.
func (s Summary) Line() string {
	return fmt.Sprintf("wrote %s: profile %s, release %s, %s: %d components, %d images, %d packages, %d device files, %d manifests.d directories; composition %s",
		s.Output, s.Profile, s.Release.Name(), s.Arch, s.Counts.Components, s.Counts.Images, s.Counts.Packages, s.Counts.DeviceFiles, s.Counts.Manifests, plan.ShortID(s.ID))
}
