package rpmrepo_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases/rpmrepo"
)

// coreRPM builds microshift-release-info 4.18.7 from the 4.18 reference
// release files with payload compression payload.
func coreRPM(t *testing.T, payload string) []byte {
	t.Helper()
	ref := testutil.ReleaseDir(t, "release-4.18")
	files := map[string][]byte{}
	for _, a := range []string{"x86_64", "aarch64"} {
		data, err := os.ReadFile(filepath.Join(ref, "release-"+a+".json"))
		if err != nil {
			t.Fatal(err)
		}
		files["/usr/share/microshift/release/release-"+a+".json"] = data
	}
	files["/usr/share/microshift/blueprint/blueprint-x86_64.toml"] = []byte("name = \"microshift\"\n")
	p := testutil.BuildRPM(t, t.TempDir(), testutil.RPM{Name: "microshift-release-info", Version: "4.18.7", Release: "1.el9", Files: files, Payload: payload})
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestReadPackage(t *testing.T) {
	ref := testutil.ReleaseDir(t, "release-4.18")
	want, err := os.ReadFile(filepath.Join(ref, "release-x86_64.json"))
	if err != nil {
		t.Fatal(err)
	}
	// RHEL 9 builds with zstd, RHEL 8 with xz; gzip and bzip2 are rpm's
	// older defaults.
	for _, payload := range []string{"w19.zstdio", "w2.xzdio", "w9.gzdio", "w9.bzdio"} {
		t.Run(payload, func(t *testing.T) {
			data := coreRPM(t, payload)
			pkg, err := rpmrepo.ReadPackage("test.rpm", data)
			if err != nil {
				t.Fatalf("ReadPackage = %v", err)
			}
			if got := pkg.NEVRA.String(); got != "microshift-release-info-4.18.7-1.el9.noarch" {
				t.Errorf("NEVRA = %s", got)
			}
			sum := sha256.Sum256(data)
			if pkg.SHA256 != hex.EncodeToString(sum[:]) || pkg.Size != int64(len(data)) {
				t.Errorf("SHA256, Size = %s, %d; want the file's", pkg.SHA256, pkg.Size)
			}
			var names []string
			for _, f := range pkg.Files {
				names = append(names, f.Name)
			}
			if strings.Join(names, " ") != "release-aarch64.json release-x86_64.json" {
				t.Errorf("files = %v; want the two core files (the blueprint is not a release file)", names)
			}
			if !bytes.Equal(pkg.Raw["release-x86_64.json"], want) {
				t.Errorf("release-x86_64.json differs from what was packaged")
			}
		})
	}
}

func TestReadPackageRefuses(t *testing.T) {
	good := coreRPM(t, "w19.zstdio")
	dir := t.TempDir()
	build := func(r testutil.RPM) []byte {
		data, err := os.ReadFile(testutil.BuildRPM(t, dir, r))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	release := func(name string) map[string][]byte {
		return map[string][]byte{"/usr/share/microshift/release/" + name: []byte(`{"release": {"base": "4.18.7"}, "images": {"a": "quay.io/a/b@sha256:` + strings.Repeat("a", 64) + `"}}`)}
	}
	// 8 MiB of zeros compress to a few kilobytes; the header then says
	// the payload is 2000 bytes.
	bombFiles := release("release-x86_64.json")
	bombFiles["/usr/share/microshift/blueprint/zeros"] = make([]byte, 8<<20)
	bomb := testutil.SetRPMSignatureTag(t, build(testutil.RPM{Name: "microshift-release-info", Version: "4.18.8", Files: bombFiles}), 1007, 2000)
	// Five release files within the per-file bound, over the RPM's
	// together.
	manyFiles := map[string][]byte{}
	for _, c := range []string{"a", "b", "c", "d", "e"} {
		manyFiles["/usr/share/microshift/release/release-"+c+"-x86_64.json"] = append([]byte(`{"release": {"base": "4.18.7"}, "images": {}}`), bytes.Repeat([]byte(" "), 4<<20-100)...)
	}
	many := build(testutil.RPM{Name: "microshift-a-release-info", Version: "4.18.7", Files: manyFiles})
	flipped := bytes.Clone(good)
	flipped[len(flipped)-40] ^= 0xff
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"text file", []byte("hello, I am not an RPM\n"), "test.rpm: not an RPM file: it does not begin with the RPM lead (magic ed ab ee db); want a release-info .rpm"},
		{"empty", nil, "test.rpm: not an RPM file"},
		{"lead only", good[:96], "test.rpm: truncated RPM: the file ends before its signature header"},
		{"cut in the header", good[:400], "test.rpm: truncated RPM: its"},
		{"cut in the payload", good[:len(good)-100], "test.rpm: damaged or truncated RPM: payload SHA-256 digest mismatch"},
		{"payload flipped", flipped, "test.rpm: damaged or truncated RPM: payload SHA-256 digest mismatch"},
		{"not release-info", build(testutil.RPM{Name: "microshift", Version: "4.18.7", Files: release("release-x86_64.json")}),
			"test.rpm: microshift-4.18.7-1.el9.noarch is not a MicroShift release-info package"},
		{"no release files", build(testutil.RPM{Name: "microshift-release-info", Version: "4.18.9", Files: map[string][]byte{"/usr/share/microshift/blueprint/b.toml": []byte("x")}}),
			"test.rpm: microshift-release-info-4.18.9-1.el9.noarch installs no release files in /usr/share/microshift/release"},
		{"component file in the core package", build(testutil.RPM{Name: "microshift-release-info", Version: "4.18.10", Files: release("release-olm-x86_64.json")}),
			"installs release-olm-x86_64.json, which belongs to microshift-olm-release-info"},
		{"bad release file", build(testutil.RPM{Name: "microshift-olm-release-info", Version: "4.18.7", Files: map[string][]byte{"/usr/share/microshift/release/release-olm-x86_64.json": []byte(`{"release": {}}`)}}),
			"test.rpm: /usr/share/microshift/release/release-olm-x86_64.json: missing release.base"},
		{"bomb", bomb, "test.rpm: reading the payload: payload is larger than the RPM declares (2000 bytes): refused as an RPM bomb or a damaged file"},
		{"too large", make([]byte, rpmrepo.MaxRPMSize+1), "test.rpm: file is larger than 33554432 bytes"},
		{"release files over 16 MiB together", many, "test.rpm: the release files in /usr/share/microshift/release add up to more than 16777216 bytes (at /usr/share/microshift/release/release-e-x86_64.json); a release-info RPM's are tens of kilobytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pkg, err := rpmrepo.ReadPackage("test.rpm", tc.data)
			if err == nil {
				t.Fatalf("ReadPackage = %v, nil; want an error", pkg.NEVRA)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v\nwant it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
	if _, err := rpmrepo.ReadPackage("bomb.rpm", bomb); !errors.Is(err, rpmrepo.ErrPayloadTooLarge) {
		t.Errorf("bomb: error %v does not wrap ErrPayloadTooLarge", err)
	}
}

func TestIsReleaseInfo(t *testing.T) {
	for name, want := range map[string]bool{
		"microshift-release-info":                  true,
		"microshift-olm-release-info":              true,
		"microshift-ai-model-serving-release-info": true,
		"microshift":                    false,
		"microshift--release-info":      false,
		"microshift-release-info-extra": false,
		"other-release-info":            false,
	} {
		if got := rpmrepo.IsReleaseInfo(name); got != want {
			t.Errorf("IsReleaseInfo(%q) = %v, want %v", name, got, want)
		}
	}
}
