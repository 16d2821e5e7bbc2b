package releases_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/usercache"
	"github.com/microshift-compose/microshift-compose/releases"
)

// shippedFiles are the 4.18 reference files with release.base 4.18.7, as
// the 4.18.7 release-info RPMs hold them.
func shippedFiles(t *testing.T) map[string][]byte {
	t.Helper()
	_, data := refFiles(t, "release-4.18")
	for n, b := range data {
		f, err := releases.ParseFile(n, n, b)
		if err != nil {
			t.Fatal(err)
		}
		f.Base = "4.18.7"
		data[n] = f.Encode()
	}
	return data
}

var shippedRPMs = []releases.RPM{
	{NEVRA: "microshift-release-info-4.18.7-1.el9.noarch", SHA256: strings.Repeat("a", 64), From: "https://repo.example/microshift-release-info-4.18.7-1.el9.noarch.rpm"},
	{NEVRA: "microshift-olm-release-info-4.18.7-1.el9.noarch", SHA256: strings.Repeat("b", 64)},
}

func TestStoreAndLoadExactVersion(t *testing.T) {
	t.Setenv(usercache.Env, t.TempDir())
	files := shippedFiles(t)
	dir, err := releases.StoredDir("4.18.7")
	if err != nil {
		t.Fatal(err)
	}
	res, err := releases.WriteDir(dir, files, shippedRPMs, false)
	if err != nil {
		t.Fatalf("WriteDir = %v", err)
	}
	if res.Unchanged || res.Replaced {
		t.Errorf("first write: %+v", res)
	}
	// Written again: nothing changes; other files: refused without force.
	if res, err := releases.WriteDir(dir, files, shippedRPMs, false); err != nil || !res.Unchanged {
		t.Errorf("same write = %+v, %v; want unchanged", res, err)
	}
	other := []releases.RPM{{NEVRA: "microshift-release-info-4.18.7-2.el9.noarch", SHA256: strings.Repeat("c", 64)}}
	if _, err := releases.WriteDir(dir, files, other, false); !errors.Is(err, releases.ErrStored) ||
		!strings.Contains(err.Error(), "(release 4.18.7, from microshift-release-info-4.18.7-1.el9.noarch): release already stored; pass --force to replace it") {
		t.Errorf("other RPMs without force = %v", err)
	}

	r, err := releases.Load("", "4.18.7")
	if err != nil {
		t.Fatalf("Load 4.18.7 = %v", err)
	}
	if r.Source != releases.FetchedSource || r.Version.String() != "4.18.7" || r.Base(releases.X86_64) != "4.18.7" {
		t.Errorf("Load 4.18.7 = %s, version %s, base %s", r, r.Version, r.Base(releases.X86_64))
	}
	if len(r.RPMs) != 2 || r.RPMs[0] != shippedRPMs[0] || r.Origin != shippedRPMs[0].NEVRA {
		t.Errorf("RPMs = %+v, origin %q", r.RPMs, r.Origin)
	}
	// A range still selects among the embedded releases.
	if r, err := releases.Load("", "4.18"); err != nil || r.Source != releases.EmbeddedSource {
		t.Errorf("Load 4.18 = %v, %v; want the embedded release", r, err)
	}
	fetched, err := releases.Fetched()
	if err != nil || len(fetched) != 1 || fetched[0].Version.String() != "4.18.7" {
		t.Errorf("Fetched = %v, %v", fetched, err)
	}

	// A version neither stored nor embedded is no match (the CLI adds
	// how to fetch it), named as the exact version it is.
	_, err = releases.Load("", "4.18.9")
	if !errors.Is(err, releases.ErrNoMatch) || !strings.HasPrefix(err.Error(), "selecting release 4.18.9: ") {
		t.Errorf("Load 4.18.9 = %v; want ErrNoMatch for release 4.18.9", err)
	}

	// Once a file changes (release update), the directory is no longer
	// the RPMs' and says so by naming none.
	x86 := filepath.Join(dir, "release-x86_64.json")
	data, _ := os.ReadFile(x86)
	if err := os.WriteFile(x86, bytes.Replace(data, []byte("4.18.7"), []byte("4.18.8"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	// release-aarch64 still says 4.18.7; put it in line too.
	a64 := filepath.Join(dir, "release-aarch64.json")
	data, _ = os.ReadFile(a64)
	if err := os.WriteFile(a64, bytes.Replace(data, []byte("4.18.7"), []byte("4.18.8"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = releases.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.RPMs != nil || r.Origin != "" {
		t.Errorf("edited dir: RPMs %v, origin %q; want none", r.RPMs, r.Origin)
	}
	if _, err := releases.Load("", "4.18.7"); err == nil || !strings.Contains(err.Error(), "holds release 4.18.8") {
		t.Errorf("Load of a store entry holding another version = %v", err)
	}
}

func TestWriteDirRefuses(t *testing.T) {
	files := shippedFiles(t)
	root := t.TempDir()
	link := filepath.Join(root, "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	bad := map[string][]byte{"release-x86_64.json": []byte(`{"release": {"base": "4.18.7"}}`)}
	for _, tc := range []struct {
		name  string
		dir   string
		files map[string][]byte
		want  string
	}{
		{"symlink", link, files, "exists and is not a directory (a symlink is not followed)"},
		{"bad file", filepath.Join(root, "new"), bad, `release-x86_64.json: missing "images" object`},
		{"no core file", filepath.Join(root, "new"), map[string][]byte{"release-olm-x86_64.json": files["release-olm-x86_64.json"]}, "no core release file"},
		{"path in a name", filepath.Join(root, "new"), map[string][]byte{"../release-x86_64.json": files["release-x86_64.json"]}, "is not a plain file name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := releases.WriteDir(tc.dir, tc.files, shippedRPMs, true)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("WriteDir = %v; want %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(root, "new")); err == nil {
				t.Errorf("a refused write left %s", filepath.Join(root, "new"))
			}
		})
	}
}

func TestRPMRecordRefused(t *testing.T) {
	dir := t.TempDir()
	for n, b := range shippedFiles(t) {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ name, record, want string }{
		{"unknown key", `{"version": "4.18.7", "rpms": [], "files": {}, "x": 1}`, `unknown field "x"`},
		{"control character", `{"version": "4.18.7", "rpms": [{"nevra": "a\u001b[31m", "sha256": ""}], "files": {}}`, "control characters"},
		{"not JSON", `{"version": `, "invalid record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, releases.RPMRecordFile), []byte(tc.record), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := releases.LoadDir(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), releases.RPMRecordFile) {
				t.Errorf("LoadDir = %v; want %q naming the record", err, tc.want)
			}
		})
	}
}
