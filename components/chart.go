package components

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/k8sname"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
)

// Chart is a component's [chart] table: a Helm chart rendered offline at
// build time (compose/chart) and kept in the output beside the images.
type Chart struct {
	// Path is a packaged chart (.tgz or .tar.gz) or a chart directory,
	// relative to the component directory.
	Path string `toml:"path"`
	// SHA256 is the archive's digest (hex), required for a packaged
	// chart and refused for a directory.
	SHA256 string `toml:"sha256"`
	// Namespace is where every namespaced object lands.
	Namespace string `toml:"namespace"`
	// Values is a values file relative to the component directory.
	Values string `toml:"values"`
	// Release is the Helm release name; "" is the component name.
	Release string `toml:"release"`
}

// IsArchive says whether Path names a packaged chart: a .tgz or .tar.gz,
// the names `helm package` and `tar czf` give.
func (c *Chart) IsArchive() bool { return IsChartArchive(c.Path) }

// IsChartArchive says whether a chart path names a packaged chart.
func IsChartArchive(p string) bool {
	return strings.HasSuffix(p, ".tgz") || strings.HasSuffix(p, ".tar.gz")
}

var hexDigest = lazyregexp.New(`^[0-9a-f]{64}$`)

// checkChart checks the table alone; the files are checked when the
// component directory is read.
func checkChart(c *Chart) error {
	if c.Path == "" {
		return fmt.Errorf("missing required key \"path\" (a packaged chart .tgz or a chart directory)")
	}
	for key, p := range map[string]string{"path": c.Path, "values": c.Values} {
		if p != "" && !fs.ValidPath(p) {
			return fmt.Errorf("%s %q: want a path inside the component directory (no leading /, no ..)", key, p)
		}
	}
	if c.IsArchive() && !hexDigest.MatchString(c.SHA256) {
		return fmt.Errorf("sha256: a packaged chart needs its sha256 (64 lowercase hex digits), have %q", c.SHA256)
	}
	if !c.IsArchive() && c.SHA256 != "" {
		// It would be checked against nothing: the directory's files are
		// what the build reads, and the archive it packs them into is
		// named by its digest in the lock.
		return fmt.Errorf("sha256: path %q is a chart directory, which has no sha256 to check (a packaged chart is a .tgz or .tar.gz): remove the key, or package the chart (helm package) and name the archive", c.Path)
	}
	if c.Namespace == "" {
		return fmt.Errorf("missing required key \"namespace\" (where the chart's namespaced objects land)")
	}
	if err := k8sname.Namespace(c.Namespace); err != nil {
		return fmt.Errorf("namespace %q: %w", c.Namespace, err)
	}
	if c.Release != "" {
		if err := k8sname.Namespace(c.Release); err != nil {
			return fmt.Errorf("release %q: %w", c.Release, err)
		}
	}
	return nil
}
