package startgc

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// gcPercent reads the collector's target percentage.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestFirstCollection: the target is FirstPercent until the first
// collection or Done, and the default after either; with GOGC set,
// GOGC's throughout.
func TestFirstCollection(t *testing.T) {
	if v := os.Getenv("GOGC"); v != "" {
		Done()
		if p := gcPercent(); raised || (p == FirstPercent && v != "400") {
			t.Errorf("GOGC=%s: the target is %d (raised %v), want GOGC's", v, p, raised)
		}
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	collected := ms.NumGC > 0
	if p := gcPercent(); !collected && p != FirstPercent {
		t.Fatalf("before the first collection the target is %d, want %d", p, FirstPercent)
	}
	Done()
	if p := gcPercent(); p != 100 {
		t.Errorf("after Done the target is %d, want 100", p)
	}
	if collected {
		return // the cleanup has run, or is about to
	}
	// As if Done had not been called: the first collection restores it.
	debug.SetGCPercent(FirstPercent)
	runtime.GC()
	// The cleanup runs on its own goroutine after the collection.
	deadline := time.Now().Add(30 * time.Second)
	for gcPercent() != 100 {
		if time.Now().After(deadline) {
			t.Fatalf("after the first collection the target is %d, want 100", gcPercent())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
