package assemble_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

var update = flag.Bool("update", false, "rewrite golden files")

var (
	// goldenStreams are a release of each MicroShift mechanism: config.yaml
	// only with LVMS and OVN-K built in (4.14), storage settings (4.17),
	// cniPlugin and config.d (4.18, whose greenboot still reads config.yaml),
	// the drop-in and the multus RPM drop-in (4.19), validated multus status
	// (4.21), and the 5.0 development stream.
	goldenStreams  = []string{"4.14", "4.17", "4.18", "4.19", "4.21", "5.0"}
	goldenArches   = []releases.Arch{releases.X86_64, releases.AArch64}
	goldenProfiles = []string{"minimal", "networking-only", "storage-only", "full"}
)

// refusedFile holds, in a golden directory, the one-line reason a release
// refuses the selection.
const refusedFile = "refused.txt"

// TestGolden compares every output file of the four profiles on both arches
// of the golden releases, bootc Containerfile included where the release has a bootc base, with
// testdata/golden/<stream>/<profile>-<arch>/; a selection the release cannot
// honour has its refusal in refused.txt instead. Regenerate with
// go test ./assemble -run Golden -update, and review the diff.
func TestGolden(t *testing.T) {
	cat := assembletest.Catalog(t)
	for _, stream := range goldenStreams {
		rel := assembletest.Release(t, stream)
		for _, arch := range goldenArches {
			for _, profile := range goldenProfiles {
				name := profile + "-" + string(arch)
				t.Run(stream+"/"+name, func(t *testing.T) {
					dir := testutil.TestdataDir(t, "golden", stream, name)
					files := map[string][]byte{}
					// A selection whose device never becomes healthy (no CNI
					// on 4.18) is refused by default (TestResolve); its
					// golden outputs are what --allow-red-boot builds.
					p, err := assemble.Plan(context.Background(), cat, rel, compose.Request{Profile: profile, Arch: arch, AllowRedBoot: true})
					var cannot *compose.CannotHonourError
					switch {
					case errors.As(err, &cannot):
						files[refusedFile] = []byte(err.Error() + "\n")
					case err != nil:
						t.Fatalf("Resolve(%s %s) = %v", stream, name, err)
					default:
						// A release whose distro has no bootc base (4.14 on
						// RHEL 9.2) has no Containerfile (TestTarget).
						out, err := assemble.Build(context.Background(), p, assemble.Options{Bootc: p.Target.BootcBase != ""})
						if err != nil {
							t.Fatalf("Build(%s %s, bootc) = %v", stream, name, err)
						}
						for _, f := range out.Files {
							files[f.Path] = f.Data
						}
						assembletest.CheckListedFiles(t, files)
					}
					checkGoldenDir(t, dir, files)
				})
			}
		}
	}
}

// checkGoldenDir compares files (path relative to dir -> bytes) with the
// golden directory: same set of files, same bytes. With -update it
// rewrites the directory.
func checkGoldenDir(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		for path, data := range files {
			testutil.WriteFile(t, filepath.Join(dir, filepath.FromSlash(path)), data)
		}
		return
	}
	var have []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		have = append(have, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatalf("reading golden directory (regenerate with -update): %v", err)
	}
	want := slices.Sorted(maps.Keys(files))
	slices.Sort(have)
	if !slices.Equal(have, want) {
		t.Errorf("output files %q, golden %s has %q (go test ./assemble -run Golden -update, then review the diff)", want, dir, have)
	}
	for _, path := range want {
		golden, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
		if err != nil {
			continue // reported above
		}
		if !bytes.Equal(files[path], golden) {
			t.Errorf("%s differs from %s (go test ./assemble -run Golden -update, then review the diff):\n%s",
				path, filepath.Join(dir, path), testutil.FirstDiff(golden, files[path]))
		}
	}
}

// goldenMicroShiftIORepo is the --repo-file of the microshift-io goldens:
// the repository of its RPMs, as a user writes it.
const goldenMicroShiftIORepo = "[microshift-io]\nname=microshift-io's MicroShift RPMs\nbaseurl=https://rpms.example.com/microshift-io/$basearch/\ngpgcheck=1\ngpgkey=https://rpms.example.com/microshift-io/RPM-GPG-KEY\n"

// TestGoldenMicroShiftIO compares every output of the four profiles on
// both arches of microshift-io's build of the 4.21 reference release
// (assembletest.MicroShiftIO: its RPMs recorded, its TopoLVM tag resolved),
// built for its default distro (CentOS Stream 9) with --bootc and a
// --repo-file, and the full profile of its el10 build, whose distro is
// CentOS Stream 10 (image mode only), with
// testdata/golden/microshift-io-4.21/<profile>-<arch>[-<distro>]/.
func TestGoldenMicroShiftIO(t *testing.T) {
	cat := assembletest.Catalog(t)
	el9, el10 := assembletest.MicroShiftIO(t, "release-4.21"), assembletest.MicroShiftIODist(t, "release-4.21", "el10")
	type cell struct {
		profile string
		arch    releases.Arch
		distro  string
	}
	var cells []cell
	for _, arch := range goldenArches {
		for _, profile := range goldenProfiles {
			cells = append(cells, cell{profile, arch, ""})
		}
	}
	cells = append(cells, cell{"full", releases.X86_64, "centos-stream-10"})
	for _, c := range cells {
		name := c.profile + "-" + string(c.arch)
		if c.distro != "" {
			name += "-" + c.distro
		}
		t.Run(name, func(t *testing.T) {
			req := compose.Request{Profile: c.profile, Arch: c.arch,
				RepoFiles: []compose.RepoFile{{Source: "microshift-io.repo", Data: []byte(goldenMicroShiftIORepo)}}}
			rel := el9
			if c.distro != "" {
				rel = el10
			}
			p, err := assemble.Plan(context.Background(), cat, rel, req)
			if err == nil && c.distro != "" && p.Target.Distro != c.distro {
				t.Fatalf("the el10 build targets %s, want %s", p.Target.Distro, c.distro)
			}
			if err != nil {
				t.Fatalf("Plan() = %v", err)
			}
			out, err := assemble.Build(context.Background(), p, assemble.Options{Bootc: true})
			if err != nil {
				t.Fatalf("Build() = %v", err)
			}
			files := map[string][]byte{}
			for _, f := range out.Files {
				files[f.Path] = f.Data
			}
			assembletest.CheckListedFiles(t, files)
			checkGoldenDir(t, testutil.TestdataDir(t, "golden", "microshift-io-4.21", name), files)
		})
	}
}
