package operators_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/operators"
	"github.com/microshift-compose/microshift-compose/operators/operatorstest"
)

// fuzzLimits are small, so that the fuzzer reaches them.
var fuzzLimits = operators.Limits{Files: 4, FileBytes: 1 << 20, TotalBytes: 2 << 20, ObjectBytes: 64 << 10, LayerBytes: 4 << 20}

func oneLine(t *testing.T, err error) {
	t.Helper()
	if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\n\r") {
		t.Fatalf("error is not one line: %q", msg)
	}
}

// FuzzIndex feeds any bytes as a catalog file (name tells JSON or YAML
// apart only by content, as opm does) to Index and, when it is accepted,
// resolves every package's default channel: no panic, every refusal one
// line, an accepted catalog indexed the same way twice, and a resolution
// that picks a bundle of the package asked for.
func FuzzIndex(f *testing.F) {
	sample := operatorstest.Sample()
	f.Add(sample.JSON())
	f.Add(sample.YAML())
	f.Add([]byte("{\"schema\":\"olm.package\",\"name\":\"a\",\"defaultChannel\":\"s\"}\n{\"schema\":\"olm.channel\",\"package\":\"a\",\"name\":\"s\",\"entries\":[{\"name\":\"a.v1\",\"skipRange\":\"<1.0.0\"}]}\n{\"schema\":\"olm.bundle\",\"package\":\"a\",\"name\":\"a.v1\",\"image\":\"quay.io/a/b@sha256:0000000000000000000000000000000000000000000000000000000000000000\",\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"a\",\"version\":\"1.0.0\"}}]}"))
	f.Add([]byte("--- {schema: olm.package, name: x}\n...\n---\n# only a comment\n"))
	f.Add([]byte(strings.Repeat("[", 200)))
	f.Add([]byte("a: &a [*a, *a]\nb: *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		files := map[string][]byte{"p/catalog.json": data}
		m, err := operators.Index(context.Background(), operators.FSFiles(mapFS(files)), fuzzLimits)
		if err != nil {
			oneLine(t, err)
			return
		}
		again, err := operators.Index(context.Background(), operators.FSFiles(mapFS(files)), fuzzLimits)
		if err != nil || len(again.Packages) != len(m.Packages) {
			t.Fatalf("indexed twice: %d packages, then %d (%v)", len(m.Packages), len(again.Packages), err)
		}
		for n, p := range m.Packages {
			if p.Name != n || p.Where == "" {
				t.Fatalf("package %q: name %q, where %q", n, p.Name, p.Where)
			}
			for bn, b := range p.Bundles {
				if b.Name != bn || b.Package != n || b.Version == nil {
					t.Fatalf("bundle %q of %q: %+v", bn, n, b)
				}
			}
			c := operators.Choice{Package: n}
			if c.Check() != nil {
				continue // a name --operator cannot say
			}
			s, err := operators.Resolve(m, []operators.Choice{c}, operators.ResolveOptions{AllowUnpinned: true})
			if err != nil {
				oneLine(t, err)
				continue
			}
			if sel := s.Get(n); sel == nil || sel.Bundle.Package != n || sel.Choice == nil {
				t.Fatalf("Resolve(%q) did not select it: %+v", n, s.Selected)
			}
		}
	})
}

// FuzzParseRange: any text parses to a range or is refused in one line;
// a range's text parses again to a range with the same verdict on a few
// versions; ParseChoice of PACKAGE@RANGE keeps the range.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{">=1.2.0 <2.0.0", ">=4.1.0, <4.3.0 || >=5.0.0", "1.2.3", "<0.9.0-rc.1", "1.x", "~1.2", "^2.0", "!=1.0.0", ">= 1.0 < 2"} {
		f.Add(s)
	}
	versions := []*semver.Version{semver.MustParse("0.0.1"), semver.MustParse("1.2.3"), semver.MustParse("1.5.0-rc.1"), semver.MustParse("2.0.0"), semver.MustParse("4.2.0"), semver.MustParse("10.0.0")}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := operators.ParseRange(s)
		if err != nil {
			oneLine(t, err)
			if !errors.Is(err, operators.ErrRange) {
				t.Fatalf("error %q does not wrap ErrRange", err)
			}
			return
		}
		again, err := operators.ParseRange(r.String())
		if err != nil {
			t.Fatalf("ParseRange(%q) accepted, its String %q refused: %v", s, r.String(), err)
		}
		for _, v := range versions {
			if r.Contains(v) != again.Contains(v) {
				t.Fatalf("%q and %q disagree on %s", s, r.String(), v)
			}
		}
		c, err := operators.ParseChoice("pkg@" + s)
		if err != nil {
			if strings.ContainsAny(s, "@,") {
				return // a choice cannot hold those after @ as a range
			}
			t.Fatalf("ParseChoice(pkg@%q) = %v, and the range parses", s, err)
		}
		if c.Versions != r.String() {
			t.Fatalf("ParseChoice(pkg@%q).Versions = %q, want %q", s, c.Versions, r.String())
		}
	})
}
