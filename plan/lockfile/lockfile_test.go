package lockfile_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
)

// TestLockRoundTrip reads every golden lock back: ParseLock(EncodeLock(p))
// re-encodes byte for byte, with and without a footprint section.
func TestLockRoundTrip(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(testutil.TestdataDir(t, "golden"), "*", "*", output.LockFile))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden locks: %v", err)
	}
	for _, path := range paths {
		data := testutil.ReadFile(t, path)
		p, err := lockfile.Parse(path, data)
		if err != nil {
			t.Fatalf("ParseLock(%s) = %v", path, err)
		}
		again, err := lockfile.Encode(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, data) {
			t.Errorf("ParseLock(%s) does not re-encode to the same bytes:\n%s", path, testutil.FirstDiff(data, again))
		}
	}
	p, err := lockfile.Parse(paths[0], testutil.ReadFile(t, paths[0]))
	if err != nil {
		t.Fatal(err)
	}
	p.Footprint = &plan.Footprint{
		Images:     []plan.ImageFootprint{{Ref: p.Images[0].Ref, Manifest: "sha256:" + strings.Repeat("a", 64), Blobs: 3, Compressed: 100}},
		Components: []plan.ComponentFootprint{{Name: "core", Images: 1, Compressed: 100, Unique: 100}},
		Total:      plan.FootprintTotal{Images: 1, Blobs: 3, Compressed: 100, Unique: 100},
	}
	data, err := lockfile.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := lockfile.Parse("with-footprint.json", data)
	if err != nil {
		t.Fatalf("ParseLock(with footprint) = %v", err)
	}
	if !reflect.DeepEqual(back.Footprint, p.Footprint) {
		t.Errorf("footprint did not round-trip: %+v", back.Footprint)
	}
}

func TestParseLockErrors(t *testing.T) {
	good := string(testutil.ReadFile(t, filepath.Join(testutil.TestdataDir(t, "golden"), "5.0", "minimal-x86_64", output.LockFile)))
	for _, tc := range []struct {
		name, data, want string
	}{
		{"empty", "", "lock.json: empty lock file"},
		{"syntax", "{\n  \"schema\": 1,\n  oops\n}", "lock.json:3: invalid JSON: invalid character 'o' looking for beginning of object key string"},
		{"type", "{\n  \"schema\": \"one\"\n}", "lock.json:2: schema: want int, got string"},
		{"unknown field", `{"schema": 1, "profiel": "full"}`, `lock.json: json: unknown field "profiel"`},
		{"schema", `{"schema": 7, "arch": "x86_64"}`, "lock.json: lock schema 7, this microshift-compose reads schema 1; rebuild the lock with this version"},
		{"arch", `{"schema": 1, "arch": "s390x"}`, `lock.json: arch: unknown arch "s390x" (want one of x86_64, aarch64, amd64, arm64)`},
		{"two documents", good + good, "lock.json: more than one JSON document"},
		{"pinned mismatch", `{"schema": 1, "arch": "x86_64", "images": [{"ref": "quay.io/a/b:1", "pinned": true}]}`, "lock.json: images[0]: quay.io/a/b:1 has pinned true, but the reference says false"},
		{"empty ref", `{"schema": 1, "arch": "x86_64", "images": [{"ref": " "}]}`, "lock.json: images[0]: empty reference"},
		{"ref climbing out of its repository", `{"schema": 1, "arch": "x86_64", "images": [{"ref": "quay.io/a/../../v2/x:1"}]}`,
			`lock.json: images[0]: invalid image reference "quay.io/a/../../v2/x:1": path segment ".." in the repository: a registry would resolve it outside the repository`},
		{"config differs from its sources", strings.Replace(good, `"cniPlugin": "none"`, `"cniPlugin": "ovnk"`, 1),
			`lock.json: config: network.cniPlugin is "ovnk", but config_sources says "none" (the lock was edited: rebuild it)`},
		{"config without a source", strings.Replace(good, `"driver": "none",`, `"driver": "none", "x": 1,`, 1),
			"lock.json: config: storage.x is set, but config_sources does not list it (the lock was edited: rebuild it)"},
		{"source without config", strings.Replace(good, "\"network\": {\n      \"cniPlugin\": \"none\"\n    },", `"network": {},`, 1),
			"lock.json: config_sources: network.cniPlugin is listed, but config does not set it (the lock was edited: rebuild it)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lockfile.Parse("lock.json", []byte(tc.data))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("ParseLock() = %v\nwant %s", err, tc.want)
			}
		})
	}
	missing := filepath.Join(t.TempDir(), "missing.json")
	if _, err := lockfile.Load(missing); err == nil || err.Error() != "lock file "+missing+" does not exist" {
		t.Errorf("LoadLock(missing) = %v, want a not-exist error", err)
	}
}

func FuzzParseLock(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "testdata", "golden", "5.0", "*", output.LockFile))
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"schema": 1, "arch": "x86_64", "images": [{"ref": "quay.io/a/b:1"}], "footprint": {"total": {"unique": -1}}}`))
	f.Add([]byte("{\"schema\": 1,\n\"arch\": 5}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const display = "fuzz/compose.lock.json"
		p, err := lockfile.Parse(display, data)
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, display) {
				t.Fatalf("error is not one line starting with the file name: %q", msg)
			}
			return
		}
		// What parses must encode and parse again to the same plan.
		again, err := lockfile.Encode(p)
		if err != nil {
			t.Fatalf("EncodeLock(parsed) = %v", err)
		}
		if _, err := lockfile.Parse(display, again); err != nil {
			t.Fatalf("ParseLock(EncodeLock(parsed)) = %v", err)
		}
	})
}
