package releases_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/releases"
)

func TestLoadDirReal(t *testing.T) {
	for _, tc := range []struct {
		dir       string
		files     int
		version   string
		stream    string
		baseX86   string
		baseARM   string
		component string // one component file that must be there
	}{
		{"main", 19, "5.0.0", "5.0", "5.0.0-0.nightly-2026-07-23-224236", "5.0.0-0.nightly-arm64-2026-07-27-004356", "ai-model-serving"},
		{"release-4.18", 8, "4.18.0", "4.18", "4.18.0-0.nightly-2026-08-12-221652", "4.18.0-0.nightly-arm64-2026-08-12-180320", "gateway-api"},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			dir := refDir(t, tc.dir)
			r, err := releases.LoadDir(dir)
			if err != nil {
				t.Fatalf("LoadDir(%s) = %v", dir, err)
			}
			if got := len(r.Files()); got != tc.files {
				t.Errorf("%d files, want %d", got, tc.files)
			}
			if r.Version.String() != tc.version || r.Stream() != tc.stream {
				t.Errorf("version %s stream %s, want %s %s", r.Version, r.Stream(), tc.version, tc.stream)
			}
			if r.Source != dir || r.Origin != "" {
				t.Errorf("source %q origin %q, want %q and no origin", r.Source, r.Origin, dir)
			}
			if got := r.String(); got != tc.stream+" ("+dir+")" {
				t.Errorf("String() = %q", got)
			}
			if !reflect.DeepEqual(r.Arches(), []releases.Arch{releases.X86_64, releases.AArch64}) {
				t.Errorf("Arches() = %v", r.Arches())
			}
			if got := r.Base(releases.X86_64); got != tc.baseX86 {
				t.Errorf("Base(x86_64) = %q, want %q", got, tc.baseX86)
			}
			if got := r.Base(releases.AArch64); got != tc.baseARM {
				t.Errorf("Base(aarch64) = %q, want %q", got, tc.baseARM)
			}
			if got := r.Base(releases.Arch("s390x")); got != "" {
				t.Errorf("Base(s390x) = %q, want empty", got)
			}
			if f := r.File(tc.component, releases.X86_64); f == nil || f.Component != tc.component {
				t.Errorf("File(%q, x86_64) = %+v", tc.component, f)
			}
			if f := r.File("no-such", releases.X86_64); f != nil {
				t.Errorf("File(no-such) = %+v, want nil", f)
			}
			names, _ := refFiles(t, tc.dir)
			var got []string
			for _, f := range r.Files() {
				got = append(got, f.Name)
			}
			if !reflect.DeepEqual(got, names) {
				t.Errorf("Files() = %v, want sorted %v", got, names)
			}
		})
	}
}

// writeDir creates a release directory from name -> content.
func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func coreJSON(base string) string {
	return `{"release": {"base": "` + base + `"}, "images": {"cli": "quay.io/x/cli@` + digestA + `"}}`
}

func TestLoadDirErrors(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "nope")
		_, err := releases.LoadDir(dir)
		want := "release dir " + dir + " does not exist"
		if err == nil || err.Error() != want {
			t.Errorf("LoadDir(missing) = %v, want %q", err, want)
		}
	})
	t.Run("not a directory", func(t *testing.T) {
		dir := writeDir(t, map[string]string{"f": ""})
		_, err := releases.LoadDir(filepath.Join(dir, "f"))
		want := "release dir " + filepath.Join(dir, "f") + " is not a directory"
		if err == nil || err.Error() != want {
			t.Errorf("LoadDir(file) = %v, want %q", err, want)
		}
	})
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string // %s is the directory
	}{
		{"empty dir", map[string]string{}, "%s: no core release file (release-x86_64.json or release-aarch64.json)"},
		{"only other files", map[string]string{"README.md": "hi", "release-x86_64.json.bak": "{"}, "%s: no core release file (release-x86_64.json or release-aarch64.json)"},
		{"only component files", map[string]string{"release-olm-x86_64.json": coreJSON("4.18.0")}, "%s: no core release file (release-x86_64.json or release-aarch64.json)"},
		{"bad arch in name", map[string]string{"release-x86_64.json": coreJSON("4.18.0"), "release-olm-arm64.json": coreJSON("4.18.0")},
			"%s: release-olm-arm64.json: file name does not end in -x86_64.json or -aarch64.json"},
		{"bad file", map[string]string{"release-x86_64.json": coreJSON("4.18.0"), "release-olm-x86_64.json": `{"release": {"base": "4.18.0"}, "images": []}`},
			"%s/release-olm-x86_64.json: line 1, column 43: \"images\" must be a JSON object, got an array"},
		{"core files disagree", map[string]string{"release-x86_64.json": coreJSON("4.18.0-0.nightly-1"), "release-aarch64.json": coreJSON("4.19.1")},
			"%s: core files disagree on the release: release-aarch64.json says 4.19.1, release-x86_64.json says 4.18.0"},
		{"base not semver", map[string]string{"release-x86_64.json": coreJSON("latest")},
			"%s: release-x86_64.json: release.base \"latest\" is not a semantic version: invalid semantic version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeDir(t, tc.files)
			_, err := releases.LoadDir(dir)
			want := strings.ReplaceAll(tc.want, "%s", dir)
			if err == nil || err.Error() != want {
				t.Errorf("LoadDir() = %v\nwant %q", err, want)
			}
		})
	}
	t.Run("subdirectory named like a release file", func(t *testing.T) {
		dir := writeDir(t, map[string]string{"release-x86_64.json": coreJSON("4.18.0")})
		if err := os.Mkdir(filepath.Join(dir, "release-olm-x86_64.json"), 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := releases.LoadDir(dir)
		want := filepath.Join(dir, "release-olm-x86_64.json") + ": not a regular file (a directory)"
		if err == nil || err.Error() != want {
			t.Errorf("LoadDir() = %v, want %q", err, want)
		}
	})
	t.Run("oversized file", func(t *testing.T) {
		dir := writeDir(t, map[string]string{"release-x86_64.json": coreJSON("4.18.0")})
		big := filepath.Join(dir, "release-olm-x86_64.json")
		if err := os.WriteFile(big, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(big, releases.MaxFileSize+1); err != nil {
			t.Fatal(err)
		}
		_, err := releases.LoadDir(dir)
		want := big + ": file is larger than 4194304 bytes"
		if err == nil || err.Error() != want {
			t.Errorf("LoadDir() = %v, want %q", err, want)
		}
	})
}

func TestNew(t *testing.T) {
	core := func(name string, arch releases.Arch, base string) *releases.File {
		return &releases.File{Name: name, Arch: arch, Base: base}
	}
	olm := &releases.File{Name: "release-olm-x86_64.json", Component: "olm", Arch: releases.X86_64, Base: "4.18.0"}
	for _, tc := range []struct {
		name    string
		files   []*releases.File
		version string
		err     string
	}{
		{"one core file", []*releases.File{core("release-x86_64.json", releases.X86_64, "4.18.3")}, "4.18.3", ""},
		{"prerelease dropped", []*releases.File{core("release-x86_64.json", releases.X86_64, "5.0.0-0.nightly-2026-07-23-224236")}, "5.0.0", ""},
		{"arches agree on major.minor.patch", []*releases.File{
			core("release-x86_64.json", releases.X86_64, "4.18.0-0.nightly-2026-08-12-221652"),
			core("release-aarch64.json", releases.AArch64, "4.18.0-0.nightly-arm64-2026-08-12-180320"), olm}, "4.18.0", ""},
		{"no files", nil, "", "src: no core release file (release-x86_64.json or release-aarch64.json)"},
		{"no core file", []*releases.File{olm}, "", "src: no core release file (release-x86_64.json or release-aarch64.json)"},
		{"core files disagree", []*releases.File{
			core("release-x86_64.json", releases.X86_64, "4.18.0"),
			core("release-aarch64.json", releases.AArch64, "4.18.1")}, "",
			"src: core files disagree on the release: release-aarch64.json says 4.18.1, release-x86_64.json says 4.18.0"},
		{"file twice", []*releases.File{core("release-x86_64.json", releases.X86_64, "4.18.0"), core("release-x86_64.json", releases.X86_64, "4.18.0")}, "",
			"src: release-x86_64.json appears twice"},
		{"base major.minor only", []*releases.File{core("release-x86_64.json", releases.X86_64, "4.18")}, "4.18.0", ""},
		{"base garbage", []*releases.File{core("release-aarch64.json", releases.AArch64, "four")}, "",
			"src: release-aarch64.json: release.base \"four\" is not a semantic version: invalid semantic version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := releases.New("src", tc.files)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("New() = %v, want error %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("New() = %v", err)
			}
			if r.Version.String() != tc.version {
				t.Errorf("Version = %s, want %s", r.Version, tc.version)
			}
		})
	}
}

func TestSelect(t *testing.T) {
	rels, err := releases.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		constraint string
		want       string
		err        string
	}{
		{constraint: "", want: "5.0"},
		{constraint: "  ", want: "5.0"},
		{constraint: "4.18", want: "4.18"},
		{constraint: "4.18.0", want: "4.18"},
		// A constraint matching the development stream (main's 5.1)
		// selects it; only the default leaves it out.
		{constraint: ">=5.0", want: "5.1"},
		{constraint: ">=4.18", want: "5.1"},
		{constraint: "5.1", want: "5.1"},
		{constraint: "5.0", want: "5.0"},
		{constraint: "~4.18", want: "4.18"},
		{constraint: "^4", want: "4.22"},
		{constraint: "5", want: "5.1"},
		{constraint: ">=4.18, <5", want: "4.22"},
		{constraint: "<5.0.0-0", want: "4.22"},
		{constraint: "4.19", want: "4.19"},
		{constraint: "~4.14", want: "4.14"},
		{constraint: "<4.18", want: "4.17"},
		{constraint: ">=6", err: `no release matches ">=6" (have 4.14, 4.15, 4.16, 4.17, 4.18, 4.19, 4.20, 4.21, 4.22, 5.0, 5.1)`},
		{constraint: "<4.14", err: `no release matches "<4.14" (have 4.14, 4.15, 4.16, 4.17, 4.18, 4.19, 4.20, 4.21, 4.22, 5.0, 5.1)`},
		{constraint: "4.23", err: `no release matches "4.23" (have 4.14, 4.15, 4.16, 4.17, 4.18, 4.19, 4.20, 4.21, 4.22, 5.0, 5.1)`},
		{constraint: "latest", err: `parsing release constraint "latest": improper constraint: latest`},
		{constraint: ">=4.18 <<5", err: `parsing release constraint ">=4.18 <<5": improper constraint: >=4.18 <<5`},
	} {
		t.Run(tc.constraint, func(t *testing.T) {
			r, err := releases.Select(rels, tc.constraint)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("Select(%q) = %v, %v; want error %q", tc.constraint, r, err, tc.err)
				}
				// The CLI adds its hint (--release-dir, release import)
				// to a constraint that parses and matches nothing.
				if noMatch := strings.HasPrefix(tc.err, "no release matches"); errors.Is(err, releases.ErrNoMatch) != noMatch {
					t.Errorf("Select(%q): errors.Is(ErrNoMatch) = %v, want %v", tc.constraint, !noMatch, noMatch)
				}
				return
			}
			if err != nil || r.Stream() != tc.want {
				t.Fatalf("Select(%q) = %v, %v; want %s", tc.constraint, r, err, tc.want)
			}
		})
	}
	// The input order does not matter.
	rev := []*releases.Release{rels[2], rels[1], rels[0]}
	if r, err := releases.Select(rev, ""); err != nil || r.Stream() != "5.0" {
		t.Errorf("Select(reversed, \"\") = %v, %v; want 5.0", r, err)
	}
	// Only development streams: the default is the newest of them.
	if r, err := releases.Select(rels[:1], ""); err != nil || r.Stream() != "5.1" || !r.Development {
		t.Errorf("Select(5.1 only, \"\") = %v, %v; want the development 5.1", r, err)
	}
	if rev[0] != rels[2] {
		t.Errorf("Select reordered its input")
	}
	if _, err := releases.Select(nil, ""); err == nil || err.Error() != "no releases to choose from" {
		t.Errorf("Select(nil) = %v, want \"no releases to choose from\"", err)
	}
}

func TestLoad(t *testing.T) {
	dir418 := refDir(t, "release-4.18")
	for _, tc := range []struct {
		name, dir, constraint string
		want                  string // String() of the release
		err                   string
	}{
		// The newest release branch's stream, not main's development 5.1.
		{name: "embedded newest", want: "5.0 (embedded)"},
		{name: "embedded development", constraint: "5.1", want: "5.1 (embedded)"},
		{name: "embedded 4.18", constraint: "~4.18", want: "4.18 (embedded)"},
		{name: "embedded no match", constraint: "4.13", err: `selecting embedded release: no release matches "4.13" (have 4.14, 4.15, 4.16, 4.17, 4.18, 4.19, 4.20, 4.21, 4.22, 5.0, 5.1)`},
		{name: "embedded bad constraint", constraint: "four", err: `selecting embedded release: parsing release constraint "four": improper constraint: four`},
		{name: "dir", dir: dir418, want: "4.18 (" + dir418 + ")"},
		{name: "dir matching", dir: dir418, constraint: "4.18", want: "4.18 (" + dir418 + ")"},
		{name: "dir mismatch", dir: dir418, constraint: ">=5.0", err: dir418 + ` is release 4.18.0, which does not match ">=5.0"`},
		{name: "dir bad constraint", dir: dir418, constraint: "four", err: `parsing release constraint "four": improper constraint: four`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := releases.Load(tc.dir, tc.constraint)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("Load(%q, %q) = %v; want error %q", tc.dir, tc.constraint, err, tc.err)
				}
				return
			}
			if err != nil || r.String() != tc.want {
				t.Fatalf("Load(%q, %q) = %v, %v; want %s", tc.dir, tc.constraint, r, err, tc.want)
			}
		})
	}
}

func TestIsDigestPinned(t *testing.T) {
	for _, tc := range []struct {
		ref  string
		want bool
	}{
		{"quay.io/openshift-release-dev/ocp-v4.0-art-dev@" + digestA, true},
		{"registry.redhat.io/lvms4/lvms-rhel9-operator@" + digestB, true},
		{"quay.io/a/b:tag@" + digestA, true},
		{"localhost:5000/ns/img@" + digestA, true},
		{"quay.io/a/b:v1.2.3", false},
		{"quay.io/a/b", false},
		{"quay.io/a/b@sha256:abc", false},
		{"quay.io/a/b@sha512:" + strings.Repeat("a", 128), false},
		// Strict parsing: no implicit docker.io/library.
		{"ubuntu@" + digestA, false},
		{"ubuntu", false},
		{"", false},
		{"not a ref", false},
	} {
		if got := releases.IsDigestPinned(tc.ref); got != tc.want {
			t.Errorf("IsDigestPinned(%q) = %v, want %v", tc.ref, got, tc.want)
		}
	}
}
