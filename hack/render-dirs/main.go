// Command render-dirs writes, for `make bench`, the kustomize inputs that
// microshift-compose renders in process for the edge-light selection
// (networking-only + storage-hostpath: every manifest-based component of
// the default catalog) so that the kustomize
// CLI can render exactly the same directories. Beside each overlay it
// writes rendered.yaml, microshift-compose's own rendering as one stream,
// for a byte-for-byte comparison. It prints one overlay directory per line.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/compose/manifests"
	"github.com/microshift-compose/microshift-compose/releases"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: render-dirs OUTDIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "render-dirs:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	cat, err := components.Default()
	if err != nil {
		return err
	}
	rel, err := releases.Load("", "")
	if err != nil {
		return err
	}
	jobs, err := compose.ManifestJobs(context.Background(), cat, rel, compose.EdgeLight(releases.X86_64))
	if err != nil {
		return err
	}
	for _, j := range jobs {
		dir := filepath.Join(out, j.Component)
		if err := j.Job.WriteTo(dir); err != nil {
			return err
		}
		res, err := j.Job.Render()
		if err != nil {
			return err
		}
		var stream []byte
		for i, r := range res.Resources {
			if i > 0 {
				stream = append(stream, "---\n"...)
			}
			stream = append(stream, r.Data...)
		}
		if err := os.WriteFile(filepath.Join(dir, "rendered.yaml"), stream, 0o644); err != nil {
			return err
		}
		fmt.Println(manifests.OverlayDir(dir))
	}
	return nil
}
