package operators_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/microshift-compose/microshift-compose/operators"
	"github.com/microshift-compose/microshift-compose/operators/operatorstest"
)

// mapFS lays files out as a configs directory.
func mapFS(files map[string][]byte) fstest.MapFS {
	fsys := fstest.MapFS{}
	for p, data := range files {
		fsys[p] = &fstest.MapFile{Data: data, Mode: 0o644}
	}
	return fsys
}

func index(t *testing.T, files map[string][]byte) *operators.Model {
	t.Helper()
	m, err := operators.Index(context.Background(), operators.FSFiles(mapFS(files)), operators.DefaultLimits)
	if err != nil {
		t.Fatalf("Index: %v", err)
	}
	return m
}

func mustChoices(t *testing.T, specs ...string) []operators.Choice {
	t.Helper()
	var out []operators.Choice
	for _, s := range specs {
		c, err := operators.ParseChoice(s)
		if err != nil {
			t.Fatalf("ParseChoice(%q): %v", s, err)
		}
		out = append(out, c)
	}
	return out
}

// selection is "package=bundle(channel)" per selected bundle, sorted.
func selection(s *operators.Set) []string {
	var out []string
	for _, sel := range s.Selected {
		why := "asked"
		if sel.Choice == nil {
			why = "by " + sel.RequiredBy
		}
		out = append(out, sel.Package+"="+sel.Bundle.Name+"("+sel.Channel+", "+why+")")
	}
	return out
}

func TestResolve(t *testing.T) {
	sample := operatorstest.Sample()
	for _, layout := range []struct {
		name  string
		files map[string][]byte
	}{
		{"one JSON file", map[string][]byte{"catalog.json": sample.JSON()}},
		{"one YAML file", map[string][]byte{"index.yaml": sample.YAML()}},
		{"a JSON file per package", sample.PerPackage(false)},
		{"a YAML file per package", sample.PerPackage(true)},
	} {
		m := index(t, layout.files)
		for _, tc := range []struct {
			name    string
			choices []string
			want    []string
		}{
			{"the default channel's head", []string{"etcd"}, []string{"etcd=etcdoperator.v0.9.4(stable, asked)"}},
			{"a channel's head", []string{"etcd:alpha"}, []string{"etcd=etcdoperator.v0.10.0-rc.1(alpha, asked)"}},
			{"the newest in a range", []string{"etcd@<0.9.4"}, []string{"etcd=etcdoperator.v0.9.2(stable, asked)"}},
			{"a version alone", []string{"etcd:stable@0.9.0"}, []string{"etcd=etcdoperator.v0.9.0(stable, asked)"}},
			{"a range of alternatives", []string{"etcd@0.9.0 || >=0.9.3 <0.9.5"}, []string{"etcd=etcdoperator.v0.9.4(stable, asked)"}},
			{"a prerelease is in a range", []string{"etcd:alpha@>=0.10.0-0"}, []string{"etcd=etcdoperator.v0.10.0-rc.1(alpha, asked)"}},
			{
				"package and API dependencies", []string{"prometheus"},
				[]string{"etcd=etcdoperator.v0.9.4(stable, by prometheus)", "prometheus=prometheusoperator.0.32.0(beta, asked)"},
			},
			{
				"a dependency asked for too", []string{"prometheus", "etcd@0.9.2,approval=Manual"},
				[]string{"etcd=etcdoperator.v0.9.2(stable, asked)", "prometheus=prometheusoperator.0.32.0(beta, asked)"},
			},
			{"an older bundle without dependencies", []string{"prometheus@<0.30"}, []string{"prometheus=prometheusoperator.0.27.0(beta, asked)"}},
			{"a bundle of objects alone", []string{"hello-microshift-operator"}, []string{"hello-microshift-operator=hello-microshift-operator.v0.1.0(alpha, asked)"}},
		} {
			t.Run(layout.name+"/"+tc.name, func(t *testing.T) {
				s, err := operators.Resolve(m, mustChoices(t, tc.choices...), operators.ResolveOptions{})
				if err != nil {
					t.Fatalf("Resolve(%q) = %v", tc.choices, err)
				}
				if got := selection(s); !slices.Equal(got, tc.want) {
					t.Errorf("Resolve(%q) = %q\nwant %q", tc.choices, got, tc.want)
				}
			})
		}
	}
}

// Every refusal is one line naming what is wrong, and the nearest names
// where there are.
func TestResolveRefusals(t *testing.T) {
	sample := operatorstest.Sample()
	twoHeads := &operatorstest.Catalog{}
	twoHeads.Package("split", "stable").
		Channel("split", "stable", operators.Entry{Name: "split.v1"}, operators.Entry{Name: "split.v2"}).
		Bundle(operatorstest.Bundle{Package: "split", Name: "split.v1", Version: "1.0.0", Image: operatorstest.Ref("quay.io/x/split", "1")}).
		Bundle(operatorstest.Bundle{Package: "split", Name: "split.v2", Version: "2.0.0", Image: operatorstest.Ref("quay.io/x/split", "2")})
	tagged := &operatorstest.Catalog{}
	tagged.Package("tagged", "stable").Channel("tagged", "stable", operators.Entry{Name: "tagged.v1"}).
		Bundle(operatorstest.Bundle{Package: "tagged", Name: "tagged.v1", Version: "1.0.0", Image: operatorstest.Ref("quay.io/x/tagged-bundle", "1"),
			Related: []operators.RelatedImage{{Name: "manager", Image: "quay.io/x/tagged-manager:latest"}}})
	missingDep := &operatorstest.Catalog{}
	missingDep.Package("app", "stable").Channel("app", "stable", operators.Entry{Name: "app.v1"}).
		Bundle(operatorstest.Bundle{Package: "app", Name: "app.v1", Version: "1.0.0", Image: operatorstest.Ref("quay.io/x/app", "1"),
			RequiresPackages: []operators.PackageRequirement{{Package: "lib", Range: ">=2.0.0"}}}).
		Package("lib", "stable").Channel("lib", "stable", operatorstest.Chain("lib.v1.0.0", "lib.v1.5.0")...).
		Bundle(operatorstest.Bundle{Package: "lib", Name: "lib.v1.0.0", Version: "1.0.0", Image: operatorstest.Ref("quay.io/x/lib", "1.0")}).
		Bundle(operatorstest.Bundle{Package: "lib", Name: "lib.v1.5.0", Version: "1.5.0", Image: operatorstest.Ref("quay.io/x/lib", "1.5"),
			RequiresGVKs: []operators.GVK{{Group: "nowhere.example.com", Version: "v1", Kind: "Thing"}}}).
		Package("app2", "stable").Channel("app2", "stable", operators.Entry{Name: "app2.v1"}).
		Bundle(operatorstest.Bundle{Package: "app2", Name: "app2.v1", Version: "1.0.0", Image: operatorstest.Ref("quay.io/x/app2", "1"),
			RequiresPackages: []operators.PackageRequirement{{Package: "lib", Range: ">=1.5.0"}}})
	for _, tc := range []struct {
		name    string
		catalog *operatorstest.Catalog
		choices []string
		want    []string
		is      error
	}{
		{"an unknown package", sample, []string{"etdc"}, []string{`the catalog has no package "etdc"; did you mean "etcd"?`}, nil},
		{"an unknown package, nothing near", sample, []string{"zzzzzzzzz"}, []string{`no package "zzzzzzzzz"`, "it has 3 packages: etcd, hello-microshift-operator, prometheus"}, nil},
		{"an unknown channel", sample, []string{"etcd:stabel"}, []string{`package "etcd" has no channel "stabel"; did you mean "stable"?`}, nil},
		{"a range nothing is in", sample, []string{"etcd@>=1.0.0"}, []string{`package "etcd" channel "stable" has no bundle in range ">=1.0.0"`, "versions 0.9.0, 0.9.2, 0.9.4"}, nil},
		{"a package asked for twice", sample, []string{"etcd", "etcd:alpha"}, []string{`--operator etcd and --operator etcd:alpha ask for package "etcd" twice`}, nil},
		{"two heads in a channel", twoHeads, []string{"split"}, []string{`package "split" channel "stable" has 2 heads (split.v1, split.v2)`}, nil},
		{"a dependency out of range", sample, []string{"prometheus", "etcd@0.9.0"}, []string{"prometheusoperator.0.32.0 (prometheus <- --operator prometheus) requires package etcd in range >=0.9.2 <0.10.0, and etcdoperator.v0.9.0 0.9.0 is selected (etcd <- --operator etcd@0.9.0)"}, operators.ErrUnsatisfiable},
		{"a dependency no bundle satisfies", missingDep, []string{"app"}, []string{"app.v1 (app <- --operator app) requires package lib in range >=2.0.0, and no bundle of it is (it has versions 1.0.0, 1.5.0)"}, operators.ErrUnsatisfiable},
		{"an API no bundle provides, with the chain", missingDep, []string{"lib@>=1.5.0"}, []string{"lib.v1.5.0 (lib <- --operator lib@>=1.5.0) requires API nowhere.example.com/v1 Thing"}, operators.ErrUnsatisfiable},
		{"a dependency's API no bundle provides, with the chain", missingDep, []string{"app2"}, []string{"lib.v1.5.0 (lib <- required by app2 (olm.package.required lib >=1.5.0) <- --operator app2) requires API nowhere.example.com/v1 Thing, which no selected bundle and no channel head of the catalog provides"}, operators.ErrUnsatisfiable},
		{"a related image by tag", tagged, []string{"tagged"}, []string{`bundle "tagged.v1" (tagged <- --operator tagged) related image "manager"`, "quay.io/x/tagged-manager:latest", "--allow-unpinned"}, operators.ErrUnpinned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := index(t, map[string][]byte{"catalog.json": tc.catalog.JSON()})
			_, err := operators.Resolve(m, mustChoices(t, tc.choices...), operators.ResolveOptions{})
			if err == nil {
				t.Fatalf("Resolve(%q) = nil error", tc.choices)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("Resolve(%q) = %q\nwant it to contain %q", tc.choices, msg, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q does not wrap %v", msg, tc.is)
			}
		})
	}
	// --allow-unpinned takes the tag.
	m := index(t, map[string][]byte{"catalog.json": tagged.JSON()})
	if _, err := operators.Resolve(m, mustChoices(t, "tagged"), operators.ResolveOptions{AllowUnpinned: true}); err != nil {
		t.Errorf("Resolve with AllowUnpinned = %v", err)
	}
}

func TestIndexRefusals(t *testing.T) {
	bundle := func(pkg, name, version string) operatorstest.Bundle {
		return operatorstest.Bundle{Package: pkg, Name: name, Version: version, Image: operatorstest.Ref("quay.io/x/"+pkg, version)}
	}
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{
			"a bundle defined twice",
			map[string][]byte{"a/catalog.json": (&operatorstest.Catalog{}).Package("a", "s").Channel("a", "s", operators.Entry{Name: "a.v1"}).Bundle(bundle("a", "a.v1", "1.0.0")).JSON(),
				"b/catalog.json": (&operatorstest.Catalog{}).Bundle(bundle("a", "a.v1", "1.0.1")).JSON()},
			`b/catalog.json:1: package "a" bundle "a.v1" is defined twice (first at a/catalog.json:`,
		},
		{
			"a package defined twice",
			map[string][]byte{"catalog.yaml": (&operatorstest.Catalog{}).Package("a", "s").Package("a", "t").YAML()},
			`catalog.yaml:6: package "a" is defined twice (first at catalog.yaml:2)`,
		},
		{
			"a channel of no package",
			map[string][]byte{"catalog.json": (&operatorstest.Catalog{}).Channel("ghost", "s", operators.Entry{Name: "g"}).JSON()},
			`catalog.json:1: package "ghost" has channels or bundles but no olm.package object`,
		},
		{
			"a version that is no semver",
			map[string][]byte{"catalog.json": (&operatorstest.Catalog{}).Package("a", "s").Bundle(bundle("a", "a.v1", "v1")).JSON()},
			`bundle "a.v1": version "v1" is not a semantic version`,
		},
		{"an object without a schema", map[string][]byte{"x/catalog.json": []byte("{\"schema\":\"olm.package\",\"name\":\"x\"}\n\n{\"name\": \"y\"}\n")}, "x/catalog.json:3: an object without a schema"},
		{"invalid JSON", map[string][]byte{"catalog.json": []byte("{\"schema\":\"olm.package\",\n\"name\":\"x\"}\n{\"schema\": \"olm.channel\",\n \"name\": }\n")}, "catalog.json:4: invalid JSON"},
		{"invalid YAML", map[string][]byte{"catalog.yaml": []byte("schema: olm.package\nname: x\n---\nschema: [\n")}, "catalog.yaml:4: invalid YAML"},
		{"not an object", map[string][]byte{"catalog.yaml": []byte("- a\n- b\n")}, "catalog.yaml:1: not a catalog object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := operators.Index(context.Background(), operators.FSFiles(mapFS(tc.files)), operators.DefaultLimits)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Index = %v\nwant one line containing %q", err, tc.want)
			}
		})
	}
}

// Files named in an .indexignore are not read, as opm skips them.
func TestIndexIgnore(t *testing.T) {
	files := operatorstest.Sample().PerPackage(false)
	files["README.md"] = []byte("# not a catalog\n")
	files["etcd/notes.txt"] = []byte("not a catalog either\n")
	files[".indexignore"] = []byte("# docs\nREADME.md\n*.txt\n")
	m := index(t, files)
	if len(m.Packages) != 3 {
		t.Errorf("%d packages, want 3", len(m.Packages))
	}
	delete(files, ".indexignore")
	if _, err := operators.Index(context.Background(), operators.FSFiles(mapFS(files)), operators.DefaultLimits); err == nil {
		t.Error("Index read README.md without the .indexignore naming it as a catalog file, and accepted it")
	}
}
