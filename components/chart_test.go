package components_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/components"
)

// TestChartTableErrors is every [chart] table the catalog refuses, in one
// line naming component.toml.
func TestChartTableErrors(t *testing.T) {
	base := "name = \"app\"\norder = 90\nrequires = [\"core\"]\n"
	for _, tc := range []struct {
		name, chart string
		extra       map[string]string
		want        string
	}{
		{"no path", "[chart]\nnamespace = \"app\"\n", nil, `chart: missing required key "path"`},
		{"path outside", "[chart]\npath = \"../x.tgz\"\nnamespace = \"app\"\nsha256 = \"" + strings.Repeat("a", 64) + "\"\n", nil, `chart: path "../x.tgz": want a path inside the component directory`},
		{"absolute values", "[chart]\npath = \"c\"\nvalues = \"/etc/passwd\"\nnamespace = \"app\"\n", nil, `chart: values "/etc/passwd": want a path inside the component directory`},
		{"archive without digest", "[chart]\npath = \"c.tgz\"\nnamespace = \"app\"\n", nil, "chart: sha256: a packaged chart needs its sha256"},
		{"sha256 for a directory", "[chart]\npath = \"c\"\nnamespace = \"app\"\nsha256 = \"" + strings.Repeat("a", 64) + "\"\n", map[string]string{"c/Chart.yaml": "x"}, `chart: sha256: path "c" is a chart directory, which has no sha256 to check`},
		{"tar.gz without digest", "[chart]\npath = \"c.tar.gz\"\nnamespace = \"app\"\n", nil, "chart: sha256: a packaged chart needs its sha256"},
		{"archive that is a directory", "[chart]\npath = \"c.tgz\"\nnamespace = \"app\"\nsha256 = \"" + strings.Repeat("a", 64) + "\"\n", map[string]string{"c.tgz/Chart.yaml": "x"}, "c.tgz: a directory named like a chart archive"},
		{"a file that is no archive", "[chart]\npath = \"chart.zip\"\nnamespace = \"app\"\n", map[string]string{"chart.zip": "x"}, "chart.zip: a chart is a directory or a packaged chart named .tgz or .tar.gz"},
		{"no namespace", "[chart]\npath = \"c\"\n", nil, `chart: missing required key "namespace"`},
		{"bad namespace", "[chart]\npath = \"c\"\nnamespace = \"Bad_NS\"\n", nil, `chart: namespace "Bad_NS"`},
		{"bad release", "[chart]\npath = \"c\"\nnamespace = \"app\"\nrelease = \"a b\"\n", nil, `chart: release "a b"`},
		{"chart missing", "[chart]\npath = \"c\"\nnamespace = \"app\"\n", nil, "c: "},
		{"chart and manifests", "[chart]\npath = \"c\"\nnamespace = \"app\"\n", map[string]string{"c/Chart.yaml": "x", "manifests/kustomization.yaml": "resources: []\n"}, "a component renders one way: [chart], manifests/ or a plugin, not several"},
		{"unknown key", "[chart]\npath = \"c\"\nnamespace = \"app\"\nrepo = \"https://charts.example.com\"\n", nil, "chart.repo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			comp := filepath.Join(dir, "components", "app")
			files := map[string]string{"component.toml": base + tc.chart}
			for k, v := range tc.extra {
				files[k] = v
			}
			for name, data := range files {
				p := filepath.Join(comp, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := components.Load(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "component.toml") && !strings.Contains(err.Error(), filepath.Join("app", "c")) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Load = %v\nwant one line naming the file, containing %q", err, tc.want)
			}
		})
	}
}
