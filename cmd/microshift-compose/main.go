// Command microshift-compose builds the OS image inputs for MicroShift edge
// devices. See README.md, the guides in docs/ and docs/cli/.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"
)

// interruptGrace is how long the work has, after the first SIGINT or
// SIGTERM cancelled it, to clean up (temporary files, partial blobs)
// and return; past it the process ends anyway, so that nothing the
// context cannot interrupt keeps it alive.
const interruptGrace = 3 * time.Second

// softMemoryLimit is the Go runtime's memory limit unless GOMEMLIMIT sets
// one: the garbage collector works harder near it instead of letting the
// heap grow to twice what is live. What the tool holds live is bounded by
// the input gate's limits (docs/reference.md, "Limits"); most of a build's peak was
// garbage of the YAML libraries. A limit the live heap exceeds slows the
// process down, it never fails it.
const softMemoryLimit = 100 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal cancels the work, which then cleans up and
	// returns; a second one ends the process at once, whatever it waits
	// for, and so does the end of the grace period.
	go func() {
		<-ctx.Done()
		stop()
		time.Sleep(interruptGrace)
		fmt.Fprintf(os.Stderr, "error: interrupted (%v); stopped without waiting for the work to end\n", context.Cause(ctx))
		os.Exit(exitError)
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
