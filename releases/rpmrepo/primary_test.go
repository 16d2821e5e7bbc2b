package rpmrepo

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func TestScanPrimary(t *testing.T) {
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<metadata xmlns="http://linux.duke.edu/metadata/common" xmlns:rpm="http://linux.duke.edu/metadata/rpm" packages="3">
<package type="rpm"><name>bash</name><arch>x86_64</arch><version epoch="0" ver="5.1.8" rel="9.el9"/>
  <checksum type="sha256" pkgid="YES">` + strings.Repeat("a", 64) + `</checksum><format><rpm:requires><rpm:entry name="libc.so.6"/></rpm:requires></format></package>
<package type="rpm"><name>microshift-release-info</name><arch>noarch</arch><version epoch="0" ver="4.18.7" rel="1.el9"/>
  <checksum type="sha256" pkgid="YES">` + strings.Repeat("b", 64) + `</checksum><size package="7286" installed="1" archive="2"/>
  <location xml:base="https://other.example/repo/" href="Packages/m/microshift-release-info-4.18.7-1.el9.noarch.rpm"/></package>
<package type="rpm"><name>microshift-olm-release-info</name><arch>noarch</arch><version epoch="1" ver="4.18.7" rel="1.el9"/></package>
</metadata>`
	pkgs, err := scanPrimary(strings.NewReader(doc), IsReleaseInfo)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 2 {
		t.Fatalf("%d packages, want the two release-info ones", len(pkgs))
	}
	p := pkgs[0]
	if p.nevra().String() != "microshift-release-info-4.18.7-1.el9.noarch" || p.Size.Package != 7286 ||
		p.Location.Base != "https://other.example/repo/" || p.Checksum.Value != strings.Repeat("b", 64) {
		t.Errorf("package = %+v", p)
	}
	if got := pkgs[1].nevra().String(); got != "microshift-olm-release-info-1:4.18.7-1.el9.noarch" {
		t.Errorf("epoch: %s", got)
	}
	for _, bad := range []string{"", "<other/>", "<metadata><package><name>x</name>", "<metadata>&bogus;</metadata>"} {
		if _, err := scanPrimary(strings.NewReader(bad), IsReleaseInfo); err == nil || !strings.HasPrefix(err.Error(), "invalid primary metadata") {
			t.Errorf("scanPrimary(%q) = %v", bad, err)
		}
	}
}

// FuzzScanPrimary: any metadata gives packages or an error, never a panic.
func FuzzScanPrimary(f *testing.F) {
	f.Add(`<metadata><package type="rpm"><name>microshift-release-info</name><version ver="4.18.7" rel="1"/></package></metadata>`)
	f.Add("<metadata>" + strings.Repeat(" ", 1000) + "<!-- <<< --><package><name>microshift-olm-release-info</name></package></metadata>")
	f.Fuzz(func(t *testing.T, doc string) {
		pkgs, err := scanPrimary(strings.NewReader(doc), IsReleaseInfo)
		if err == nil {
			for _, p := range pkgs {
				if !IsReleaseInfo(p.Name) {
					t.Fatalf("kept %q", p.Name)
				}
			}
		} else if strings.Contains(err.Error(), "\n") {
			t.Fatalf("error spans lines: %q", err)
		}
	})
}

// FuzzReadPrimary: compressed metadata whose checksum repomd.xml lists,
// read through decompression, the checksum and the bounds (open-size,
// the element bound, the package bound), gives packages or one error
// line.
func FuzzReadPrimary(f *testing.F) {
	f.Add([]byte(`<metadata><package type="rpm"><name>microshift-release-info</name><version ver="4.18.7" rel="1"/></package></metadata>`), int64(0), true)
	f.Add([]byte("<metadata>"+strings.Repeat("\n", 4096)+"</metadata>"), int64(100), false)
	f.Fuzz(func(t *testing.T, doc []byte, openSize int64, gz bool) {
		var packed bytes.Buffer
		href := "x-primary.xml"
		if gz {
			href += ".gz"
			zw := gzip.NewWriter(&packed)
			zw.Write(doc)
			zw.Close()
		} else {
			packed.Write(doc)
		}
		sum := sha256.Sum256(packed.Bytes())
		d := &repomdData{Checksum: checksum{Type: "sha256", Value: hex.EncodeToString(sum[:])}, Location: location{Href: href}, Size: int64(packed.Len()), OpenSize: openSize}
		pkgs, err := readPrimary(bytes.NewReader(packed.Bytes()), d, IsReleaseInfo)
		switch {
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Fatalf("error spans lines: %q", err)
		case err == nil && openSize > 0 && int64(len(doc)) > openSize:
			t.Fatalf("read %d bytes against an open-size of %d", len(doc), openSize)
		case len(pkgs) > MaxPrimaryPackages:
			t.Fatalf("kept %d packages", len(pkgs))
		}
	})
}

func TestResolveLocation(t *testing.T) {
	base, _ := parseBaseURL("https://cdn.example/rhocp/4.18/os")
	for _, tc := range []struct {
		loc  location
		want string
	}{
		{location{Href: "Packages/m/a.rpm"}, "https://cdn.example/rhocp/4.18/os/Packages/m/a.rpm"},
		{location{Href: "a.rpm", Base: "https://mirror.example/x"}, "https://mirror.example/x/a.rpm"},
		{location{Href: "file:///etc/shadow"}, `location "file:///etc/shadow" leaves the repository's https scheme`},
		{location{Href: "http://cdn.example/a.rpm"}, `leaves the repository's https scheme`},
		{location{Href: ""}, `location "" is not a URL`},
	} {
		u, err := resolve(base, tc.loc)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = u.String()
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("resolve(%+v) = %s, want %s", tc.loc, got, tc.want)
		}
	}
}

func TestNearest(t *testing.T) {
	v := []string{"4.14.1", "4.18.6", "4.18.7", "4.18.10", "4.19.0", "4.19.2", "5.0.1"}
	for version, want := range map[string]string{
		"4.18.9": "4.18.6 4.18.7 4.18.10 4.19.0 4.19.2",
		"4.1.0":  "4.14.1 4.18.6 4.18.7 4.18.10 4.19.0",
		"6.0.0":  "4.18.10 4.19.0 4.19.2 5.0.1",
	} {
		n := 5
		if version == "6.0.0" {
			n = 4
		}
		if got := strings.Join(Nearest(v, version, n), " "); got != want {
			t.Errorf("Nearest(%s) = %s, want %s", version, got, want)
		}
	}
}
