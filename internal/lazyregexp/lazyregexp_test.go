package lazyregexp

import (
	"regexp"
	"slices"
	"sync"
	"testing"
)

// Every method answers as the compiled *regexp.Regexp does.
func TestSameAsRegexp(t *testing.T) {
	tests := []struct {
		expr, in, repl string
	}{
		{`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`, "edge-1", ""},
		{`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`, "Edge_1", ""},
		{`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`, `toml: line 3 (last key "a.b"): bad`, ""},
		{`[^A-Za-z0-9.-]+`, "a b/c@d", "-"},
		{`x*`, "", "y"},
	}
	for _, tt := range tests {
		lazy, want := New(tt.expr), regexp.MustCompile(tt.expr)
		if lazy.String() != tt.expr || lazy.Regexp().String() != tt.expr {
			t.Errorf("%q: String() = %q, Regexp().String() = %q", tt.expr, lazy.String(), lazy.Regexp().String())
		}
		if got, w := lazy.MatchString(tt.in), want.MatchString(tt.in); got != w {
			t.Errorf("%q.MatchString(%q) = %v, want %v", tt.expr, tt.in, got, w)
		}
		if got, w := lazy.Match([]byte(tt.in)), want.Match([]byte(tt.in)); got != w {
			t.Errorf("%q.Match(%q) = %v, want %v", tt.expr, tt.in, got, w)
		}
		if got, w := lazy.FindString(tt.in), want.FindString(tt.in); got != w {
			t.Errorf("%q.FindString(%q) = %q, want %q", tt.expr, tt.in, got, w)
		}
		if got, w := lazy.FindStringSubmatch(tt.in), want.FindStringSubmatch(tt.in); !slices.Equal(got, w) {
			t.Errorf("%q.FindStringSubmatch(%q) = %q, want %q", tt.expr, tt.in, got, w)
		}
		if got, w := lazy.FindStringSubmatchIndex(tt.in), want.FindStringSubmatchIndex(tt.in); !slices.Equal(got, w) {
			t.Errorf("%q.FindStringSubmatchIndex(%q) = %v, want %v", tt.expr, tt.in, got, w)
		}
		if got, w := lazy.ReplaceAllString(tt.in, tt.repl), want.ReplaceAllString(tt.in, tt.repl); got != w {
			t.Errorf("%q.ReplaceAllString(%q, %q) = %q, want %q", tt.expr, tt.in, tt.repl, got, w)
		}
	}
}

// panics reports whether f panics.
func panics(f func()) (p bool) {
	defer func() { p = recover() != nil }()
	f()
	return false
}

// Outside a test binary a pattern is compiled on first use, not by New;
// inside one (this binary), New compiles it, so a bad pattern fails the
// package's tests at start.
func TestCompiledWhen(t *testing.T) {
	if !inTest {
		t.Fatalf("inTest is false in a test binary")
	}
	if !panics(func() { New(`(`) }) {
		t.Errorf("New of a bad pattern in a test binary did not panic")
	}
	inTest = false
	defer func() { inTest = true }()
	var r *Regexp
	if panics(func() { r = New(`(`) }) {
		t.Fatalf("New compiled the pattern outside a test binary")
	}
	if !panics(func() { r.MatchString("x") }) {
		t.Errorf("first use of a bad pattern did not panic")
	}
}

// One pattern used by many goroutines at once (matrix cells in parallel)
// is compiled once and answers alike (go test -race checks the rest).
func TestConcurrentFirstUse(t *testing.T) {
	inTest = false
	defer func() { inTest = true }()
	r := New(`^[0-9]+$`)
	var wg sync.WaitGroup
	results := make([]bool, 16)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = r.MatchString("123")
		}()
	}
	wg.Wait()
	for i, ok := range results {
		if !ok {
			t.Errorf("goroutine %d: MatchString = false", i)
		}
	}
	if first, again := r.Regexp(), r.Regexp(); first != again {
		t.Errorf("the pattern was compiled more than once")
	}
}
