package compose_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/compose/microshiftconfig"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
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
		if !contains(keep, e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

func buildFor(t *testing.T, req compose.Request) *compose.Output {
	t.Helper()
	if req.Arch == "" {
		req.Arch = releases.X86_64
	}
	return mustBuild(t, mustResolve(t, defaultCatalog(t), embeddedRelease(t, "5.0"), req))
}

func mustWrite(t *testing.T, dir string, out *compose.Output) {
	t.Helper()
	if err := compose.Write(context.Background(), dir, out); err != nil {
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
		if got, want := outputFile(t, out, compose.LockFile), outputFile(t, base, compose.LockFile); !bytes.Equal(got, want) {
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
		writeFile(t, filepath.Join(dir, "notes", "stale.txt"), []byte("left by hand\n"))
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
	t.Run("a trailing slash names the same directory", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		mustWrite(t, dir+string(filepath.Separator), buildFor(t, compose.Request{Profile: "full"}))
		mustWrite(t, dir+string(filepath.Separator), buildFor(t, compose.Request{Profile: "minimal"}))
		if l := leftovers(t, parent, "out"); len(l) > 0 {
			t.Errorf("Write(out/) left %q beside the output", l)
		}
		if got := mustRead(t, filepath.Join(dir, compose.LockFile)); !strings.Contains(string(got), `"profile": "minimal"`) {
			t.Errorf("Write(out/) did not replace the previous output")
		}
	})
	t.Run("an empty existing directory is used", func(t *testing.T) {
		dir := t.TempDir()
		mustWrite(t, dir, buildFor(t, compose.Request{Profile: "minimal"}))
		if _, err := os.Stat(filepath.Join(dir, compose.LockFile)); err != nil {
			t.Errorf("Write(empty dir): %v", err)
		}
	})
}

// TestWriteFailures checks that a failed write returns the error, leaves
// the previous output byte-identical and leaves nothing beside it.
func TestWriteFailures(t *testing.T) {
	good := buildFor(t, compose.Request{Profile: "full"})
	withFile := func(f compose.OutputFile) *compose.Output {
		c := *good
		c.Files = append(append([]compose.OutputFile(nil), good.Files...), f)
		return &c
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		out     *compose.Output
		wantErr string // exact, "" = not checked
		wantIs  error
	}{
		{
			name:    "a path outside the output directory",
			out:     withFile(compose.OutputFile{Path: "../x", Data: []byte("escape\n")}),
			wantErr: `refusing to write "../x" outside the output directory`,
		},
		{
			name:    "an absolute path",
			out:     withFile(compose.OutputFile{Path: "/etc/x", Data: []byte("escape\n")}),
			wantErr: `refusing to write "/etc/x" outside the output directory`,
		},
		{
			name:   "a file where a directory must go, after other files are written",
			out:    withFile(compose.OutputFile{Path: compose.LockFile + "/nested", Data: []byte("x\n")}),
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
			err := compose.Write(ctx, dir, tc.out)
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

// TestWriteRefuses covers targets Write must not touch.
func TestWriteRefuses(t *testing.T) {
	out := buildFor(t, compose.Request{Profile: "minimal"})
	t.Run("a directory that is not an output directory", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "home")
		writeFile(t, filepath.Join(dir, "thesis.tex"), []byte("precious\n"))
		before := readTree(t, dir)
		err := compose.Write(context.Background(), dir, out)
		if !errors.Is(err, compose.ErrNotOutputDir) {
			t.Fatalf("Write(%s) = %v, want ErrNotOutputDir", dir, err)
		}
		want := "output " + dir + ": not a microshift-compose output directory (it has files but no compose.lock.json); choose an empty or new directory"
		if err.Error() != want {
			t.Errorf("Write(%s) = %q, want %q", dir, err, want)
		}
		if after := readTree(t, dir); !reflect.DeepEqual(after, before) {
			t.Errorf("Write(%s) refused but changed it", dir)
		}
		if l := leftovers(t, parent, "home"); len(l) > 0 {
			t.Errorf("Write(%s) left %q beside it", dir, l)
		}
	})
	t.Run("a regular file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "out")
		writeFile(t, path, []byte("not a directory\n"))
		err := compose.Write(context.Background(), path, out)
		want := "output " + path + " exists and is not a directory"
		if err == nil || err.Error() != want {
			t.Errorf("Write(%s) = %v, want %q", path, err, want)
		}
		if got := mustRead(t, path); string(got) != "not a directory\n" {
			t.Errorf("Write(%s) refused but changed the file to %q", path, got)
		}
	})
	t.Run("no directory", func(t *testing.T) {
		err := compose.Write(context.Background(), "", out)
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
	first := &compose.Output{Files: []compose.OutputFile{
		{Path: compose.LockFile, Data: []byte("{}\n")},
		{Path: "stale.txt", Data: []byte("old\n")},
	}}
	if err := compose.Write(ctx, dir, first); err != nil {
		t.Fatal(err)
	}
	blob := filepath.Join(dir, compose.ImagesDir, "blobs", "sha256", "abc")
	if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blob, []byte("layer"), 0o644); err != nil {
		t.Fatal(err)
	}
	second := &compose.Output{Files: []compose.OutputFile{{Path: compose.LockFile, Data: []byte("{\"new\": true}\n")}}}
	if err := compose.Write(ctx, dir, second); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(blob); err != nil || string(got) != "layer" {
		t.Errorf("mirrored blob after rebuild = %q, %v; want it kept", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "stale.txt")); !os.IsNotExist(err) {
		t.Errorf("stale.txt after rebuild: %v, want it gone", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, compose.LockFile)); string(got) != "{\"new\": true}\n" {
		t.Errorf("lock after rebuild = %q", got)
	}
	// A failing rebuild leaves both the previous output and the images.
	bad := &compose.Output{Files: []compose.OutputFile{{Path: "../escape", Data: nil}}}
	if err := compose.Write(ctx, dir, bad); err == nil {
		t.Fatal("Write(../escape) = nil, want an error")
	}
	if got, err := os.ReadFile(blob); err != nil || string(got) != "layer" {
		t.Errorf("mirrored blob after a failed rebuild = %q, %v; want it kept", got, err)
	}
}
