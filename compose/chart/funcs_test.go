package chart

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"helm.sh/helm/v3/pkg/chartutil"
)

// helmModuleDir is the Helm module the build links (its chart loader).
func helmModuleDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "helm.sh/helm/v3").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("go list -m helm.sh/helm/v3: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// helmFuncNames are the names of Helm's template functions, read from the
// Helm module's pkg/engine/funcs.go: Sprig's text functions, less those it
// deletes, and those of its own map.
func helmFuncNames(t *testing.T) []string {
	t.Helper()
	file := filepath.Join(helmModuleDir(t), "pkg", "engine", "funcs.go")
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for name := range sprig.TxtFuncMap() {
		names[name] = true
	}
	deleted, added := 0, 0
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "delete" && len(n.Args) == 2 {
				if lit, ok := n.Args[1].(*ast.BasicLit); ok {
					name, _ := strconv.Unquote(lit.Value)
					delete(names, name)
					deleted++
				}
			}
		case *ast.CompositeLit:
			if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "FuncMap" {
				for _, e := range n.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						if lit, ok := kv.Key.(*ast.BasicLit); ok {
							name, _ := strconv.Unquote(lit.Value)
							names[name] = true
							added++
						}
					}
				}
			}
		}
		return true
	})
	if deleted == 0 || added < 10 {
		t.Fatalf("%s: found %d deleted and %d added functions: has Helm's function map changed shape?", file, deleted, added)
	}
	return slices.Sorted(maps.Keys(names))
}

// TestFuncMapIsHelms: the function map templates get has Helm's names,
// no fewer and no more (what the guard replaces keeps its name), besides
// text/template's builtins (which the guard bounds) and the guard's own
// step functions.
func TestFuncMapIsHelms(t *testing.T) {
	want := helmFuncNames(t)
	e := &engine{g: newGuard(t.Context(), DefaultLimits, nil), included: map[string]int{}}
	m := e.funcs(template.New("t"))
	var got []string
	for name := range m {
		if _, builtin := builtins()[name]; builtin || name == tickFunc || name == enterFunc || name == leaveFunc {
			continue
		}
		got = append(got, name)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		missing, extra := difference(want, got), difference(got, want)
		t.Errorf("function map differs from Helm's: missing %v, not Helm's %v", missing, extra)
	}
	for _, name := range slices.Concat(slices.Collect(maps.Keys(refused())), slices.Collect(maps.Keys(deterministic())), slices.Collect(maps.Keys(clockWhenNoTime))) {
		if !slices.Contains(want, name) {
			t.Errorf("the guard replaces %s, which is not Helm's", name)
		}
	}
	for _, name := range []string{"env", "expandenv"} {
		if _, ok := m[name]; ok {
			t.Errorf("%s is in the function map: a chart must not read the environment", name)
		}
	}
}

func difference(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// TestCapabilitiesMatchHelm: .Capabilities is Helm's default for the
// Kubernetes version: the API versions Helm's library computes from
// client-go's scheme (apiversions.txt, in Helm's order) and Helm's
// version of itself.
func TestCapabilitiesMatchHelm(t *testing.T) {
	caps := newCapabilities("1.31")
	theirs := chartutil.DefaultCapabilities
	if !slices.Equal([]string(caps.APIVersions), []string(theirs.APIVersions)) {
		t.Errorf("API versions differ from Helm's (rewrite apiversions.txt from chartutil.DefaultVersionSet):\nours %v\nHelm %v", caps.APIVersions, theirs.APIVersions)
	}
	if caps.HelmVersion.Version != theirs.HelmVersion.Version || caps.HelmVersion.GitCommit != theirs.HelmVersion.GitCommit || caps.HelmVersion.GoVersion != theirs.HelmVersion.GoVersion {
		t.Errorf("HelmVersion %+v, Helm's %+v", caps.HelmVersion, theirs.HelmVersion)
	}
	kv, err := chartutil.ParseKubeVersion("1.31.0")
	if err != nil {
		t.Fatal(err)
	}
	if caps.KubeVersion.Version != kv.Version || caps.KubeVersion.Major != kv.Major || caps.KubeVersion.Minor != kv.Minor {
		t.Errorf("KubeVersion %+v, Helm's %+v", caps.KubeVersion, *kv)
	}
}
