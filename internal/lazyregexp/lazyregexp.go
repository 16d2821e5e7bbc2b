// Package lazyregexp is a package-level regular expression compiled on its
// first use instead of at package initialisation. Every command of the one
// binary initialises every package it links, so a pattern compiled at
// init is paid for by every process (`version`, `build`), whether or not
// the command ever matches it. Declare it as
//
//	var namePattern = lazyregexp.New(`^[a-z0-9]+$`)
//
// and use it as a *regexp.Regexp. In a test binary the pattern is
// compiled at once, so that a bad pattern still fails every test of its
// package, as regexp.MustCompile at init did.
package lazyregexp

import (
	"os"
	"regexp"
	"strings"
	"sync"
)

// Regexp is a regular expression compiled on first use; safe for
// concurrent use, as *regexp.Regexp is.
type Regexp struct {
	expr string
	rx   func() *regexp.Regexp
}

// inTest says whether the process is a Go test binary (go test names it
// <package>.test).
var inTest = len(os.Args) > 0 && strings.HasSuffix(os.Args[0], ".test")

// New returns expr, to be compiled with regexp.MustCompile on first use.
func New(expr string) *Regexp {
	r := &Regexp{expr: expr, rx: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
	if inTest {
		r.rx()
	}
	return r
}

// Regexp is the compiled expression.
func (r *Regexp) Regexp() *regexp.Regexp { return r.rx() }

// String is the source text of the expression.
func (r *Regexp) String() string { return r.expr }

// Match is regexp.Regexp.Match.
func (r *Regexp) Match(b []byte) bool { return r.rx().Match(b) }

// MatchString is regexp.Regexp.MatchString.
func (r *Regexp) MatchString(s string) bool { return r.rx().MatchString(s) }

// FindString is regexp.Regexp.FindString.
func (r *Regexp) FindString(s string) string { return r.rx().FindString(s) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.rx().FindStringSubmatch(s) }

// FindStringSubmatchIndex is regexp.Regexp.FindStringSubmatchIndex.
func (r *Regexp) FindStringSubmatchIndex(s string) []int { return r.rx().FindStringSubmatchIndex(s) }

// ReplaceAllString is regexp.Regexp.ReplaceAllString.
func (r *Regexp) ReplaceAllString(src, repl string) string { return r.rx().ReplaceAllString(src, repl) }
