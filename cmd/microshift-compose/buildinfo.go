package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Stamped by the release build and the Makefile:
// -ldflags "-X main.version=v1.2.3 -X main.commit=<sha> -X main.date=<RFC 3339>".
// A plain `go build` leaves them empty, and the build's own VCS
// information (debug.ReadBuildInfo) fills in what it can.
var (
	version = ""
	commit  = ""
	date    = ""
)

// develVersion is what a build without a version says: a plain go build
// outside a git checkout, or with -buildvcs=false.
const develVersion = "(devel)"

// buildInfo is what `version --output json` prints.
type buildInfo struct {
	Version string `json:"version"`
	// Commit is the git commit built, "" when unknown.
	Commit string `json:"commit"`
	// Date is the commit's time (RFC 3339), "" when unknown.
	Date string `json:"date"`
	// Modified says the working tree had uncommitted changes (Go's
	// vcs.modified; a Makefile build says so in its version, "-dirty").
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// currentBuild is this binary's buildInfo.
func currentBuild() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return resolveBuild(version, commit, date, bi)
}

// resolveBuild merges what the linker stamped (winning) with what Go
// recorded in the binary: the module version (`go install ...@v1.2.3`, or
// a VCS pseudo-version Go 1.24+ stamps in a git checkout) and vcs.revision,
// vcs.time, vcs.modified.
func resolveBuild(ldVersion, ldCommit, ldDate string, bi *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: ldVersion, Commit: ldCommit, Date: ldDate, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != develVersion {
			b.Version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			b.Go = bi.GoVersion
		}
		vcs := ldCommit == "" // the stamped commit's tree is not the one Go saw
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && b.Commit == "":
				b.Commit = s.Value
			case s.Key == "vcs.time" && b.Date == "":
				b.Date = s.Value
			case s.Key == "vcs.modified" && vcs:
				b.Modified = s.Value == "true"
			}
		}
	}
	if b.Version == "" {
		b.Version = develVersion
	}
	return b
}

// versionString is the version alone, for the SBOM's creator.
func versionString() string { return currentBuild().Version }

// String is the one line `version` and `--version` print, after the name:
// "v1.2.3 (commit 0123456789ab, 2025-01-02T03:04:05Z, go1.26.8 linux/amd64)".
func (b buildInfo) String() string {
	var parts []string
	if b.Commit != "" {
		c := b.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if b.Modified {
			c += ", modified"
		}
		parts = append(parts, "commit "+c)
	}
	if b.Date != "" {
		parts = append(parts, b.Date)
	}
	parts = append(parts, b.Go+" "+b.Platform)
	return fmt.Sprintf("%s (%s)", b.Version, strings.Join(parts, ", "))
}
