package repo_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// TestCatalogDocHelm: docs/catalog.md says what a build does with Helm: a
// component's [chart] is rendered (in process), a kustomization's
// helmCharts are not, and the section the manifests error points to
// ("docs/catalog.md, Helm charts") exists. It used to say builds run no
// Helm at all.
func TestCatalogDocHelm(t *testing.T) {
	root := testutil.Root(t)
	data, err := os.ReadFile(filepath.Join(root, "docs", "catalog.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(data)), " ")
	if !strings.Contains(string(data), "\n## Helm charts\n") {
		t.Error("docs/catalog.md has no \"## Helm charts\" section")
	}
	for _, stale := range []string{"builds run no Helm", "are not rendered (builds"} {
		if strings.Contains(doc, stale) {
			t.Errorf("docs/catalog.md still says %q", stale)
		}
	}
	if !strings.Contains(doc, "A chart is rendered when it is the component's `[chart]`") {
		t.Error("docs/catalog.md does not say a component's [chart] is rendered where it refuses helmCharts")
	}
	src, err := os.ReadFile(filepath.Join(root, "compose", "manifests", "render.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "(docs/catalog.md, Helm charts)") {
		t.Error("the helmCharts error no longer points to docs/catalog.md's Helm charts section: update this test")
	}
}
