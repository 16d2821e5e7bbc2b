// Package startgc sets the garbage collector's target for the start of
// the process, when it is linked (the command imports it).
//
// The runtime's smallest heap goal is 4 MB at the default GOGC of 100.
// Initialising the binary's packages allocates 3.5 MB and a build parses
// the embedded data after that, so a build collected three or four times
// for a few megabytes of garbage: a fifth of its CPU. Until the first
// collection ends the target is 400 here (the first comes at 16 MB, which
// a build does not reach); from then on it is the default. A command
// whose memory is bounded (mirror, serve, release fetch) calls Done as it
// starts, and collects from then on as if this package were not there:
// its peak stays what it was. GOGC, when set, is left to rule.
//
// The setting is made while packages are initialised, not in main: Go
// initialises packages in import path order, each after what it imports,
// so this one, importing only the runtime's own, comes before many of the
// binary's (2.2 of the 3.5 MB are allocated before it), and the rest do
// not start a collection at the 4 MB goal (TestPackageInitialisation
// checks that none starts). It does nothing else at init.
package startgc

import (
	"os"
	"runtime"
	"runtime/debug"
)

// FirstPercent is the target until the first collection ends.
const FirstPercent = 400

// raised is whether init raised the target.
var raised bool

func init() {
	if os.Getenv("GOGC") != "" {
		return
	}
	raised = true
	debug.SetGCPercent(FirstPercent)
	// A cleanup runs after the collection that found its object
	// unreachable: this one, after the first.
	runtime.AddCleanup(&sentinel{}, func(int) { debug.SetGCPercent(100) }, 0)
}

// Done gives the collector its default target now rather than after the
// first collection; nothing when GOGC is set.
func Done() {
	if raised {
		debug.SetGCPercent(100)
	}
}

// sentinel is an object for the cleanup to watch. It holds a pointer so
// that the runtime does not batch it with other small objects in one
// block, which could keep it reachable.
type sentinel struct{ _ *byte }
