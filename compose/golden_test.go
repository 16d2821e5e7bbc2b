package compose_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

var update = flag.Bool("update", false, "rewrite golden files")

var (
	goldenStreams  = []string{"4.18", "5.0"}
	goldenArches   = []releases.Arch{releases.X86_64, releases.AArch64}
	goldenProfiles = []string{"minimal", "networking-only", "storage-only", "full"}
	goldenFiles    = []string{compose.BlueprintFile, compose.ImagesFile, compose.LockFile, compose.Containerfile}
)

// TestGolden compares blueprint.toml, images.txt, compose.lock.json and the
// bootc Containerfile for
// the four profiles on both arches of both embedded releases with
// testdata/golden/<stream>/<profile>-<arch>/. Regenerate with
// go test ./compose -run Golden -update, and review the diff.
func TestGolden(t *testing.T) {
	cat := defaultCatalog(t)
	for _, stream := range goldenStreams {
		rel := embeddedRelease(t, stream)
		for _, arch := range goldenArches {
			for _, profile := range goldenProfiles {
				name := profile + "-" + string(arch)
				t.Run(stream+"/"+name, func(t *testing.T) {
					p := mustResolve(t, cat, rel, compose.Request{Profile: profile, Arch: arch})
					out, err := compose.Build(context.Background(), p, compose.BuildOptions{Bootc: true})
					if err != nil {
						t.Fatalf("Build(%s %s, bootc) = %v", stream, name, err)
					}
					dir := testdataDir(t, "golden", stream, name)
					for _, file := range goldenFiles {
						got := outputFile(t, out, file)
						path := filepath.Join(dir, file)
						if *update {
							writeFile(t, path, got)
							continue
						}
						want, err := os.ReadFile(path)
						if err != nil {
							t.Fatalf("reading golden file (regenerate with -update): %v", err)
						}
						if !bytes.Equal(got, want) {
							t.Errorf("Build(%s %s) %s differs from %s (go test ./compose -run Golden -update, then review the diff):\n%s",
								stream, name, file, path, testutil.FirstDiff(want, got))
						}
					}
				})
			}
		}
	}
}
