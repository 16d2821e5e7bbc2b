package testutil

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"regexp"
	"slices"
)

// RPM is a package a test builds with rpmbuild (Debian's rpm package).
type RPM struct {
	Name, Version string
	// Release defaults to "1.el9", Arch to noarch.
	Release, Arch string
	// Files are installed at their absolute paths with these contents.
	Files map[string][]byte
	// Payload is rpm's _binary_payload; default w19.zstdio, what RHEL 9
	// builds with ("w2.xzdio" is RHEL 8's).
	Payload string
}

// BuildRPM builds r into dir with rpmbuild and returns the .rpm's path.
func BuildRPM(t testing.TB, dir string, r RPM) string {
	t.Helper()
	rpmbuild := NeedTool(t, "rpmbuild", "rpm")
	if r.Release == "" {
		r.Release = "1.el9"
	}
	if r.Arch == "" {
		r.Arch = "noarch"
	}
	if r.Payload == "" {
		r.Payload = "w19.zstdio"
	}
	work := t.TempDir()
	stage := filepath.Join(work, "stage")
	var paths []string
	for p, data := range r.Files {
		dst := filepath.Join(stage, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	spec := fmt.Sprintf(`Name: %s
Version: %s
Release: %s
Summary: test package
License: Apache-2.0
BuildArch: %s
%%description
A package built by a microshift-compose test.
%%install
mkdir -p %%{buildroot}
cp -a %s/. %%{buildroot}/
%%files
%s
`, r.Name, r.Version, r.Release, r.Arch, stage, strings.Join(paths, "\n"))
	specFile := filepath.Join(work, r.Name+".spec")
	if err := os.WriteFile(specFile, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(rpmbuild, "-bb", "--quiet",
		"--define", "_topdir "+filepath.Join(work, "top"),
		"--define", "_rpmdir "+dir,
		"--define", "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm",
		"--define", "_binary_payload "+r.Payload,
		"--define", "debug_package %{nil}",
		"--define", "__os_install_post %{nil}",
		"--define", "_build_id_links none",
		specFile)
	cmd.Env = append(os.Environ(), "HOME="+work)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rpmbuild %s: %v\n%s", r.Name, err, out)
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s-%s.%s.rpm", r.Name, r.Version, r.Release, r.Arch))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("rpmbuild did not write %s: %v", path, err)
	}
	return path
}

// ReleaseInfoRPMs builds the release-info RPMs of the release files in
// releaseDir as MicroShift's spec splits them: microshift-release-info with
// release-<arch>.json, microshift-<component>-release-info with each
// component's files, all installing into /usr/share/microshift/release.
// Every file's release.base becomes version (a shipped version's RPMs
// carry it). only, when given, names the packages to build. It returns
// the paths, the core package first.
func ReleaseInfoRPMs(t testing.TB, dir, releaseDir, version, release string, only ...string) []string {
	t.Helper()
	return releaseInfoRPMs(t, dir, releaseDir, version, release, true, only)
}

// MicroShiftIORPMs builds the release-info RPMs of a microshift-io release
// directory (MicroShiftIORelease) as its spec splits them, version (a
// microshift-io version, MicroShiftIOVersion) and release: the files as
// they are, for microshift-io leaves every release.base as MicroShift's
// own. It returns the paths, the core package first.
func MicroShiftIORPMs(t testing.TB, dir, releaseDir, version, release string) []string {
	t.Helper()
	return releaseInfoRPMs(t, dir, releaseDir, version, release, false, nil)
}

func releaseInfoRPMs(t testing.TB, dir, releaseDir, version, release string, rebase bool, only []string) []string {
	t.Helper()
	entries, err := os.ReadDir(releaseDir)
	if err != nil {
		t.Fatal(err)
	}
	byPackage := map[string]map[string][]byte{}
	for _, e := range entries {
		m := releaseFileName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		comp := m[1]
		data, err := os.ReadFile(filepath.Join(releaseDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if rebase {
			data = releaseBase.ReplaceAll(data, []byte(`${1}"`+version+`"`))
		}
		pkg := "microshift-release-info"
		if comp == "kube-proxy" && !rebase {
			comp = "kindnet" // microshift-io's kindnet-release-info holds both
		}
		if comp != "" {
			pkg = "microshift-" + comp + "-release-info"
		}
		if len(only) > 0 && !slices.Contains(only, pkg) {
			continue
		}
		if byPackage[pkg] == nil {
			byPackage[pkg] = map[string][]byte{}
		}
		byPackage[pkg]["/usr/share/microshift/release/"+e.Name()] = data
	}
	names := make([]string, 0, len(byPackage))
	for n := range byPackage {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == "microshift-release-info") != (names[j] == "microshift-release-info") {
			return names[i] == "microshift-release-info"
		}
		return names[i] < names[j]
	})
	var out []string
	for _, n := range names {
		files := byPackage[n]
		if n == "microshift-release-info" {
			// The real package also carries blueprints and kickstarts.
			files["/usr/share/microshift/blueprint/blueprint-x86_64.toml"] = []byte("name = \"microshift\"\n")
		}
		out = append(out, BuildRPM(t, dir, RPM{Name: n, Version: version, Release: release, Files: files}))
	}
	return out
}

var (
	releaseFileName = regexp.MustCompile(`^release-(?:(.+)-)?(?:x86_64|aarch64)\.json$`)
	releaseBase     = regexp.MustCompile(`("base"\s*:\s*)"[^"]*"`)
)

// CreateRepo makes dir a dnf repository with createrepo_c (sha256
// checksums; extra arguments such as --compress-type=xz are passed on).
func CreateRepo(t testing.TB, dir string, args ...string) {
	t.Helper()
	createrepo := NeedTool(t, "createrepo_c", "createrepo-c")
	cmd := exec.Command(createrepo, append(append([]string{"--quiet", "--checksum", "sha256", "--no-database"}, args...), dir)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("createrepo_c %s: %v\n%s", dir, err, out)
	}
}

// SetRPMSignatureTag overwrites the first 4 bytes of the value of a tag of
// an RPM's signature header (an INT32 such as PAYLOADSIZE, 1007, which no
// digest covers) and returns the changed copy: a payload that lies about
// its size, as an RPM bomb does.
func SetRPMSignatureTag(t testing.TB, data []byte, tag uint32, value uint32) []byte {
	t.Helper()
	out := bytes.Clone(data)
	const lead = 96
	n := binary.BigEndian.Uint32(out[lead+8:])
	store := lead + 16 + int(n)*16
	for i := 0; i < int(n); i++ {
		e := out[lead+16+i*16:]
		if binary.BigEndian.Uint32(e) == tag {
			off := binary.BigEndian.Uint32(e[8:])
			binary.BigEndian.PutUint32(out[store+int(off):], value)
			return out
		}
	}
	t.Fatalf("no signature tag %d", tag)
	return nil
}
