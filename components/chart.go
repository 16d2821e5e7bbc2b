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
	// Path is a packaged chart (.tgz) or a chart directory, relative to
	// the component directory.
	Path string `toml:"path"`
	// SHA256 is the archive's digest (hex), required for a .tgz.
	SHA256 string `toml:"sha256"`
	// Namespace is where every namespaced object lands.
	Namespace string `toml:"namespace"`
	// Values is a values file relative to the component directory.
	Values string `toml:"values"`
	// Release is the Helm release name; "" is the component name.
	Release string `toml:"release"`
}

// IsArchive says whether Path names a packaged chart.
func (c *Chart) IsArchive() bool { return strings.HasSuffix(c.Path, ".tgz") }

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
