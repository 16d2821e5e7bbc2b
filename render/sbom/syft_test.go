package sbom_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/render/sbom"
)

// syftVersion is the syft the tests read the SBOMs with, built pinned from
// the Go module proxy into bin/tools (testutil.GoTool).
const syftVersion = "v1.57.1"

// syftPackage is a package of syft's own JSON format, as syft read it from
// our document.
type syftPackage struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Version string `json:"version"`
	PURL    string `json:"purl"`
}

// syftRead is what syft makes of an SBOM file: `syft convert FILE -o
// syft-json`, the way it reads an SBOM before grype scans it.
func syftRead(t *testing.T, syft, file string) []syftPackage {
	t.Helper()
	cmd := exec.Command(syft, "convert", file, "-o", "syft-json", "-q")
	cmd.Env = append(os.Environ(), "SYFT_CHECK_FOR_APP_UPDATE=false")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("syft cannot read %s: %v\n%s", filepath.Base(file), err, stderr)
	}
	var doc struct {
		Artifacts []syftPackage `json:"artifacts"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("syft's reading of %s is not its JSON: %v", filepath.Base(file), err)
	}
	return doc.Artifacts
}

// TestSyftReads: syft reads the SPDX and the CycloneDX document of a plan
// with pinned RPMs. Every RPM is an rpm package for syft (grype matches
// those against the distro's advisories) with its purl, and with the
// exact version-release where the plan pins the build. syft's model has
// no package type for a container image: from CycloneDX it keeps the
// images as container components, not packages; from SPDX it keeps them
// as packages of type UnknownPackage, each with its pkg:oci purl and its
// digest as version. Nothing else is left untyped but the composition and
// its MicroShift components and charts, which have no package ecosystem.
func TestSyftReads(t *testing.T) {
	syft := testutil.GoTool(t, "github.com/anchore/syft/cmd/syft", syftVersion)
	p := nevraPlan()
	lock := []byte("{}\n")
	dir := t.TempDir()
	spdxData, err := sbom.Encode(p, lock, sbom.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cdxData, err := sbom.EncodeCycloneDX(p, lock, sbom.Options{})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"sbom.spdx.json": spdxData, "sbom.cdx.json": cdxData}
	rpms := map[string]string{ // name: version syft must see
		"microshift":              "4.18.7-1.el9",
		"microshift-selinux":      "4.18.7-1.el9",
		"microshift-release-info": "4.18.7-1.el9",
		"libstdc++":               "",
		"orphan":                  "1.*",
	}
	untypedNames := []string{"microshift-minimal-custom-aarch64", "core", "ai_model", "podinfo"}
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			pkgs := syftRead(t, syft, path)
			seen := map[string]bool{}
			images := 0
			for _, pk := range pkgs {
				switch {
				case strings.HasPrefix(pk.PURL, "pkg:rpm/"):
					want, ok := rpms[pk.Name]
					if !ok || pk.Type != "rpm" || pk.Version != want {
						t.Errorf("syft reads %s as type %q version %q (purl %s); want an rpm of version %q", pk.Name, pk.Type, pk.Version, pk.PURL, want)
					}
					seen[pk.Name] = true
				case strings.HasPrefix(pk.PURL, "pkg:oci/"):
					images++
					if name != "sbom.spdx.json" || pk.Type != "UnknownPackage" {
						t.Errorf("syft reads image %s from %s as type %q", pk.Name, name, pk.Type)
					}
					if !strings.HasPrefix(pk.Version, "sha256:") && !strings.Contains(pk.PURL, "tag=") {
						t.Errorf("image %s: version %q, want its digest", pk.Name, pk.Version)
					}
				default:
					if (pk.Type != "" && pk.Type != "UnknownPackage") || !slices.Contains(untypedNames, pk.Name) {
						t.Errorf("syft reads %s from %s as %q (purl %q): a package neither typed by its ecosystem nor one of %v", pk.Name, name, pk.Type, pk.PURL, untypedNames)
					}
				}
			}
			for rpm := range rpms {
				if !seen[rpm] {
					t.Errorf("syft finds no rpm %s in %s", rpm, name)
				}
			}
			wantImages := 0
			if name == "sbom.spdx.json" {
				wantImages = len(p.Images)
			}
			if images != wantImages {
				t.Errorf("syft reads %d images as packages from %s, want %d", images, name, wantImages)
			}
		})
	}
}
