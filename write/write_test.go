package write_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/compose/microshiftconfig"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/write"
)

// readTree returns every file and directory under dir: path -> mode and
// content, so two trees compare with reflect.DeepEqual.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		info, err := d.Info()
		if err != nil {
			return err
		}
		entry := info.Mode().String()
		if d.Type().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			entry += " " + string(data)
		}
		tree[filepath.ToSlash(rel)] = entry
		return nil
	})
	if err != nil {
		t.Fatalf("reading %s: %v", dir, err)
	}
	return tree
}

// leftovers lists entries of parent other than keep: temporary or
// previous-output directories a write must not leave behind.
func leftovers(t *testing.T, parent string, keep ...string) []string {
	t.Helper()
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !slices.Contains(keep, e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

func buildFor(t *testing.T, req compose.Request) *output.Dir {
	t.Helper()
	if req.Arch == "" {
		req.Arch = releases.X86_64
	}
	return assembletest.Build(t, assembletest.Plan(t, assembletest.Catalog(t), assembletest.Release(t, "5.0"), req), assemble.Options{})
}

func mustWrite(t *testing.T, dir string, out *output.Dir) {
	t.Helper()
	if err := write.Write(context.Background(), dir, out); err != nil {
		t.Fatalf("Write(%s) = %v", dir, err)
	}
}

// TestDeterministic builds and writes the same inputs twice, from scratch
// each time, and wants byte-identical trees.
func TestDeterministic(t *testing.T) {
	cfg, err := microshiftconfig.Parse("config.yaml", []byte("network:\n  clusterNetwork: [10.100.0.0/16]\ndebugging:\n  logLevel: Debug\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []compose.Request{
		{Profile: "full"},
		{Profile: "minimal", Arch: releases.AArch64, With: []string{"multus"}},
		{Profile: "networking-only", With: []string{"storage-hostpath"}, AllowUnpinned: true},
		{Profile: "full", With: []string{"olm", "gateway-api", "sriov", "cert-manager", "node-exporter"}, Config: cfg},
		{Profile: "minimal", With: []string{"ai-model-serving"}, AllowUnpinned: true},
	} {
		t.Run(req.Profile+"+"+strings.Join(req.With, "+"), func(t *testing.T) {
			parent := t.TempDir()
			a, b := filepath.Join(parent, "a"), filepath.Join(parent, "b")
			first, second := buildFor(t, req), buildFor(t, req)
			if !reflect.DeepEqual(first.Files, second.Files) {
				t.Fatalf("Build(%+v) twice gives different outputs", req)
			}
			mustWrite(t, a, first)
			mustWrite(t, b, second)
			ta, tb := readTree(t, a), readTree(t, b)
			if !reflect.DeepEqual(ta, tb) {
				t.Errorf("Write(%+v) twice gives different trees:\n%v\n%v", req, keys(ta), keys(tb))
			}
			if len(ta) < 1+len(first.Files) {
				t.Errorf("written tree has %d entries, want at least %d", len(ta), 1+len(first.Files))
			}
		})
	}
}

// TestDeterministicFlagOrder gives --with and --without in different orders
// and with repeats: the lock (and every output) must not change.
func TestDeterministicFlagOrder(t *testing.T) {
	base := buildFor(t, compose.Request{Profile: "full", With: []string{"gateway-api", "multus", "olm"}, Without: []string{"node-exporter", "snapshot-controller"}})
	for _, req := range []compose.Request{
		{Profile: "full", With: []string{"olm", "multus", "gateway-api"}, Without: []string{"snapshot-controller", "node-exporter"}},
		{Profile: "full", With: []string{"multus", "gateway-api", "olm", "multus"}, Without: []string{"node-exporter", "snapshot-controller", "node-exporter"}},
	} {
		out := buildFor(t, req)
		if got, want := assembletest.File(t, out, output.LockFile), assembletest.File(t, base, output.LockFile); !bytes.Equal(got, want) {
			t.Errorf("Build(with %q, without %q) lock differs from the sorted order's:\n%s", req.With, req.Without, testutil.FirstDiff(want, got))
		}
		if !reflect.DeepEqual(out.Files, base.Files) {
			t.Errorf("Build(with %q, without %q) outputs differ from the sorted order's", req.With, req.Without)
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestWrite covers what a write leaves on disk.
func TestWrite(t *testing.T) {
	t.Run("new directory, parents created, modes", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "nested", "out")
		out := buildFor(t, compose.Request{Profile: "networking-only", With: []string{"storage-hostpath"}, AllowUnpinned: true})
		mustWrite(t, dir, out)
		tree := readTree(t, dir)
		want := map[string]string{".": "drwxr-xr-x"}
		for _, f := range out.Files {
			want[f.Path] = "-rw-r--r-- " + string(f.Data)
			for d := filepath.Dir(f.Path); d != "."; d = filepath.Dir(d) {
				want[d] = "drwxr-xr-x"
			}
		}
		if !reflect.DeepEqual(tree, want) {
			t.Errorf("Write() tree = %v, want %v", keys(tree), keys(want))
		}
		if _, ok := tree["manifests.d/009-storage-hostpath/kustomization.yaml"]; !ok {
			t.Errorf("Write() did not place the hostpath manifests under manifests.d/: %v", keys(tree))
		}
		if l := leftovers(t, filepath.Dir(dir), "out"); len(l) > 0 {
			t.Errorf("Write() left %q beside the output", l)
		}
	})
	t.Run("replaces a previous output completely", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		mustWrite(t, dir, buildFor(t, compose.Request{Profile: "networking-only", With: []string{"multus", "storage-hostpath"}, AllowUnpinned: true}))
		next := buildFor(t, compose.Request{Profile: "minimal"})
		mustWrite(t, dir, next)

		fresh := filepath.Join(t.TempDir(), "fresh")
		mustWrite(t, fresh, next)
		if got, want := readTree(t, dir), readTree(t, fresh); !reflect.DeepEqual(got, want) {
			t.Errorf("Write() over a previous output = %v, want exactly %v", keys(got), keys(want))
		}
		if l := leftovers(t, parent, "out"); len(l) > 0 {
			t.Errorf("Write() left %q beside the output", l)
		}
	})
	t.Run("--force replaces a directory with foreign files", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		mustWrite(t, dir, buildFor(t, compose.Request{Profile: "full"}))
		testutil.WriteFile(t, filepath.Join(dir, "notes", "stale.txt"), []byte("left by hand\n"))
		next := buildFor(t, compose.Request{Profile: "minimal"})
		if err := write.Write(context.Background(), dir, next, write.Options{Force: true}); err != nil {
			t.Fatalf("Write(--force) = %v", err)
		}
		fresh := filepath.Join(t.TempDir(), "fresh")
		mustWrite(t, fresh, next)
		if got, want := readTree(t, dir), readTree(t, fresh); !reflect.DeepEqual(got, want) {
			t.Errorf("Write(--force) = %v, want exactly %v", keys(got), keys(want))
		}
	})
	t.Run("a trailing slash names the same directory", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		mustWrite(t, dir+string(filepath.Separator), buildFor(t, compose.Request{Profile: "full"}))
		mustWrite(t, dir+string(filepath.Separator), buildFor(t, compose.Request{Profile: "minimal"}))
		if l := leftovers(t, parent, "out"); len(l) > 0 {
			t.Errorf("Write(out/) left %q beside the output", l)
		}
		if got := testutil.ReadFile(t, filepath.Join(dir, output.LockFile)); !strings.Contains(string(got), `"profile": "minimal"`) {
			t.Errorf("Write(out/) did not replace the previous output")
		}
	})
	t.Run("an empty existing directory is used", func(t *testing.T) {
		dir := t.TempDir()
		mustWrite(t, dir, buildFor(t, compose.Request{Profile: "minimal"}))
		if _, err := os.Stat(filepath.Join(dir, output.LockFile)); err != nil {
			t.Errorf("Write(empty dir): %v", err)
		}
	})
}

// TestWriteFailures checks that a failed write returns the error, leaves
// the previous output byte-identical and leaves nothing beside it.
func TestWriteFailures(t *testing.T) {
	good := buildFor(t, compose.Request{Profile: "full"})
	withFile := func(f output.File) *output.Dir {
		c := *good
		c.Files = append(append([]output.File(nil), good.Files...), f)
		return &c
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		out     *output.Dir
		wantErr string // exact, "" = not checked
		wantIs  error
	}{
		{
			name:    "a path outside the output directory",
			out:     withFile(output.File{Path: "../x", Data: []byte("escape\n")}),
			wantErr: `refusing to write "../x" outside the output directory`,
		},
		{
			name:    "an absolute path",
			out:     withFile(output.File{Path: "/etc/x", Data: []byte("escape\n")}),
			wantErr: `refusing to write "/etc/x" outside the output directory`,
		},
		{
			name:   "a file where a directory must go, after other files are written",
			out:    withFile(output.File{Path: output.LockFile + "/nested", Data: []byte("x\n")}),
			wantIs: syscall.ENOTDIR,
		},
		{
			name:   "a cancelled context",
			ctx:    cancelled,
			out:    good,
			wantIs: context.Canceled,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "out")
			mustWrite(t, dir, buildFor(t, compose.Request{Profile: "minimal", Arch: releases.AArch64}))
			before := readTree(t, dir)
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			err := write.Write(ctx, dir, tc.out)
			if err == nil {
				t.Fatalf("Write() = nil, want an error")
			}
			if tc.wantErr != "" && err.Error() != tc.wantErr {
				t.Errorf("Write() = %q, want %q", err, tc.wantErr)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("Write() = %v, want errors.Is(err, %v)", err, tc.wantIs)
			}
			if after := readTree(t, dir); !reflect.DeepEqual(after, before) {
				t.Errorf("Write() failed but changed the previous output: %v, was %v", keys(after), keys(before))
			}
			if l := leftovers(t, parent, "out"); len(l) > 0 {
				t.Errorf("Write() failed and left %q beside the output", l)
			}
		})
	}
}

// TestWriteRefuses covers targets Write must not touch: anything but a
// previous build's output and nothing else. Each case names the first
// foreign entry and leaves the directory as it was.
func TestWriteRefuses(t *testing.T) {
	out := buildFor(t, compose.Request{Profile: "minimal"})
	prev := buildFor(t, compose.Request{Profile: "storage-only"})
	notOurs := func(entry, why string) string {
		return ": not a microshift-compose output directory: " + entry + " " + why + ", so replacing the directory would delete it; move it away, choose another --output, or pass --force"
	}
	for _, tc := range []struct {
		name string
		// setup fills dir; prev is a previous build to start from.
		prev  bool
		setup func(t *testing.T, dir string)
		want  string // after "output <dir>"
	}{
		{
			name: "a home directory",
			setup: func(t *testing.T, dir string) {
				testutil.WriteFile(t, filepath.Join(dir, "thesis.tex"), []byte("precious\n"))
			},
			want: notOurs("thesis.tex", "is not something build writes"),
		},
		{
			// The campaign's case: an empty lock beside the user's file.
			name: "a user file and an empty compose.lock.json",
			setup: func(t *testing.T, dir string) {
				testutil.WriteFile(t, filepath.Join(dir, "thesis.tex"), []byte("precious\n"))
				testutil.WriteFile(t, filepath.Join(dir, output.LockFile), nil)
			},
			want: notOurs("thesis.tex", "is not something build writes"),
		},
		{
			name:  "only an empty compose.lock.json",
			setup: func(t *testing.T, dir string) { testutil.WriteFile(t, filepath.Join(dir, output.LockFile), nil) },
			want:  ": not a microshift-compose output directory: its compose.lock.json does not parse (" + "DIR/compose.lock.json: empty lock file); choose an empty or new directory, or pass --force",
		},
		{
			name: "files of a build but no lock",
			setup: func(t *testing.T, dir string) {
				testutil.WriteFile(t, filepath.Join(dir, output.ImagesFile), []byte("x\n"))
			},
			want: ": not a microshift-compose output directory (it has files but no compose.lock.json); choose an empty or new directory, or pass --force",
		},
		{
			name: "a foreign file beside a previous build",
			prev: true,
			setup: func(t *testing.T, dir string) {
				testutil.WriteFile(t, filepath.Join(dir, "notes.md"), []byte("mine\n"))
			},
			want: notOurs("notes.md", "is not something build writes"),
		},
		{
			name: "a foreign file in files/",
			prev: true,
			setup: func(t *testing.T, dir string) {
				testutil.WriteFile(t, filepath.Join(dir, "files", "etc", "thesis.tex"), []byte("mine\n"))
			},
			want: notOurs("files/etc/thesis.tex", "is not a file the previous build wrote"),
		},
		{
			name: "a foreign file in manifests.d/",
			prev: true,
			setup: func(t *testing.T, dir string) {
				testutil.WriteFile(t, filepath.Join(dir, "manifests.d", "extra.yaml"), []byte("mine\n"))
			},
			want: notOurs("manifests.d/extra.yaml", "is not a file the previous build wrote"),
		},
		{
			name: "a symlink where build writes a file",
			prev: true,
			setup: func(t *testing.T, dir string) {
				os.Remove(filepath.Join(dir, output.BlueprintFile))
				if err := os.Symlink("/etc/passwd", filepath.Join(dir, output.BlueprintFile)); err != nil {
					t.Fatal(err)
				}
			},
			want: notOurs("blueprint.toml", "is a symlink, which build never writes"),
		},
		{
			name: "a directory where build writes a file",
			prev: true,
			setup: func(t *testing.T, dir string) {
				testutil.WriteFile(t, filepath.Join(dir, output.Containerfile, "x"), []byte("mine\n"))
			},
			want: notOurs("Containerfile", "is not the kind of file build writes there"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "out")
			if tc.prev {
				mustWrite(t, dir, prev)
			} else if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, dir)
			before := readTree(t, dir)
			err := write.Write(context.Background(), dir, out)
			if !errors.Is(err, write.ErrNotOutputDir) {
				t.Fatalf("Write(%s) = %v, want ErrNotOutputDir", dir, err)
			}
			want := "output " + dir + strings.ReplaceAll(tc.want, "DIR", dir)
			if err.Error() != want {
				t.Errorf("Write(%s) = %q\nwant %q", dir, err, want)
			}
			if after := readTree(t, dir); !reflect.DeepEqual(after, before) {
				t.Errorf("Write(%s) refused but changed it", dir)
			}
			if l := leftovers(t, parent, "out"); len(l) > 0 {
				t.Errorf("Write(%s) left %q beside it", dir, l)
			}
		})
	}
	t.Run("a regular file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "out")
		testutil.WriteFile(t, path, []byte("not a directory\n"))
		err := write.Write(context.Background(), path, out)
		want := "output " + path + " exists and is not a directory"
		if err == nil || err.Error() != want {
			t.Errorf("Write(%s) = %v, want %q", path, err, want)
		}
		if got := testutil.ReadFile(t, path); string(got) != "not a directory\n" {
			t.Errorf("Write(%s) refused but changed the file to %q", path, got)
		}
	})
	t.Run("a parent that is a file: the message names --output", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		testutil.WriteFile(t, file, []byte("x\n"))
		dir := filepath.Join(file, "out")
		err := write.Write(context.Background(), dir, out)
		want := "creating output directory " + dir + ": not a directory"
		if err == nil || err.Error() != want {
			t.Errorf("Write(%s) = %v, want %q", dir, err, want)
		}
	})
	t.Run("no directory", func(t *testing.T) {
		err := write.Write(context.Background(), "", out)
		if want := "no output directory given"; err == nil || err.Error() != want {
			t.Errorf(`Write("") = %v, want %q`, err, want)
		}
	})
}

// A mirrored image layout in <output>/images survives a rebuild; everything
// else of the previous output is replaced.
func TestWriteKeepsMirroredImages(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "out")
	mustWrite(t, dir, buildFor(t, compose.Request{Profile: "full"}))
	blob := filepath.Join(dir, output.ImagesDir, "blobs", "sha256", "abc")
	testutil.WriteFile(t, blob, []byte("layer"))
	next := buildFor(t, compose.Request{Profile: "minimal"})
	mustWrite(t, dir, next)
	if got, err := os.ReadFile(blob); err != nil || string(got) != "layer" {
		t.Errorf("mirrored blob after rebuild = %q, %v; want it kept", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "files", "etc", "microshift", "lvmd.yaml")); !os.IsNotExist(err) && err != nil {
		t.Errorf("stat after rebuild: %v", err)
	}
	if got := testutil.ReadFile(t, filepath.Join(dir, output.LockFile)); !strings.Contains(string(got), `"profile": "minimal"`) {
		t.Errorf("lock after rebuild is not the new one")
	}
	// A failing rebuild leaves both the previous output and the images.
	bad := &output.Dir{Files: []output.File{{Path: "../escape", Data: nil}}}
	if err := write.Write(ctx, dir, bad); err == nil {
		t.Fatal("Write(../escape) = nil, want an error")
	}
	if got, err := os.ReadFile(blob); err != nil || string(got) != "layer" {
		t.Errorf("mirrored blob after a failed rebuild = %q, %v; want it kept", got, err)
	}
}

// TestWriteRecoversLeftovers plays what a build killed with SIGKILL
// leaves beside its output (.out.tmp-*): the next build removes it, and
// recovers a mirrored images/ layout it holds; a temporary directory a
// live build holds locked is left alone.
func TestWriteRecoversLeftovers(t *testing.T) {
	out := buildFor(t, compose.Request{Profile: "minimal"})
	t.Run("killed after moving the images into its temporary directory", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		mustWrite(t, dir, out)
		left := filepath.Join(parent, ".out.tmp-1234567")
		testutil.WriteFile(t, filepath.Join(left, output.LockFile), []byte("{}\n"))
		testutil.WriteFile(t, filepath.Join(left, output.ImagesDir, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`))
		testutil.WriteFile(t, filepath.Join(left, output.ImagesDir, "blobs", "sha256", "abc"), []byte("layer"))
		mustWrite(t, dir, out)
		if got, err := os.ReadFile(filepath.Join(dir, output.ImagesDir, "blobs", "sha256", "abc")); err != nil || string(got) != "layer" {
			t.Errorf("recovered blob = %q, %v; want the layout moved into the output", got, err)
		}
		if l := leftovers(t, parent, "out"); len(l) > 0 {
			t.Errorf("Write() left %q beside the output", l)
		}
	})
	t.Run("killed while writing", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		testutil.WriteFile(t, filepath.Join(parent, ".out.tmp-1", output.BlueprintFile), []byte("half"))
		testutil.WriteFile(t, filepath.Join(parent, ".out.tmp-2.old", output.LockFile), []byte("{}"))
		testutil.WriteFile(t, filepath.Join(parent, ".other.tmp-3", "keep"), []byte("another output's"))
		mustWrite(t, dir, out)
		if l := leftovers(t, parent, "out", ".other.tmp-3"); len(l) > 0 {
			t.Errorf("Write() left %q beside the output", l)
		}
	})
	t.Run("the output has images too: the recovered ones are kept, not deleted", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		mustWrite(t, dir, out)
		testutil.WriteFile(t, filepath.Join(dir, output.ImagesDir, "oci-layout"), []byte("current"))
		left := filepath.Join(parent, ".out.tmp-9")
		testutil.WriteFile(t, filepath.Join(left, output.ImagesDir, "oci-layout"), []byte("older"))
		testutil.WriteFile(t, filepath.Join(left, output.BlueprintFile), []byte("half"))
		mustWrite(t, dir, out)
		if got := testutil.ReadFile(t, filepath.Join(dir, output.ImagesDir, "oci-layout")); string(got) != "current" {
			t.Errorf("output images = %q, want the output's own", got)
		}
		if got := testutil.ReadFile(t, filepath.Join(left, output.ImagesDir, "oci-layout")); string(got) != "older" {
			t.Errorf("leftover images = %q, want them kept", got)
		}
		if _, err := os.Stat(filepath.Join(left, output.BlueprintFile)); !os.IsNotExist(err) {
			t.Errorf("the rest of the leftover is still there: %v", err)
		}
	})
	t.Run("a live build's temporary directory is left alone", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		live := filepath.Join(parent, ".out.tmp-live")
		testutil.WriteFile(t, filepath.Join(live, output.BlueprintFile), []byte("being written"))
		f, err := os.Open(live)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, dir, out)
		if got := testutil.ReadFile(t, filepath.Join(live, output.BlueprintFile)); string(got) != "being written" {
			t.Errorf("live temporary directory changed: %q", got)
		}
	})
}
