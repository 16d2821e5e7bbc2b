package compose_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// imageSelections are the selections whose images.txt is checked against
// the upstream release files: the four profiles and every optional
// component the release ships.
var imageSelections = []struct {
	profile string
	with    []string
	streams []string // nil = both
}{
	{profile: "minimal"},
	{profile: "networking-only"},
	{profile: "storage-only"},
	{profile: "full"},
	{profile: "minimal", with: []string{"multus"}},
	{profile: "minimal", with: []string{"multus", "networking-bridge"}},
	{profile: "full", with: []string{"olm", "gateway-api", "multus"}},
	{profile: "full", with: []string{"olm", "gateway-api", "sriov", "cert-manager", "metrics-server", "kube-state-metrics", "node-exporter"}, streams: []string{"5.0"}},
}

// TestImagesAreTheUpstreamUnion checks that images.txt is exactly the union
// of the release-file entries of the plan's components, computed from the
// upstream files without the catalog.
func TestImagesAreTheUpstreamUnion(t *testing.T) {
	cat := defaultCatalog(t)
	for _, stream := range goldenStreams {
		rel := embeddedRelease(t, stream)
		dir := upstreamDir(t, upstreamBranch[stream])
		for _, arch := range goldenArches {
			for _, sel := range imageSelections {
				if sel.streams != nil && !contains(sel.streams, stream) {
					continue
				}
				name := stream + "/" + strings.Join(append([]string{sel.profile}, sel.with...), "+") + "/" + string(arch)
				t.Run(name, func(t *testing.T) {
					p := mustResolve(t, cat, rel, compose.Request{Profile: sel.profile, With: sel.with, Arch: arch})
					out := mustBuild(t, p)
					got := lines(outputFile(t, out, compose.ImagesFile))
					want := upstreamImages(t, dir, arch, p.ComponentNames())
					if !reflect.DeepEqual(got, want) {
						t.Errorf("images.txt for %s has %d lines, want the %d of the upstream union\n got: %q\nwant: %q", name, len(got), len(want), got, want)
					}
					checkBlueprintContainers(t, outputFile(t, out, compose.BlueprintFile), want)
				})
			}
		}
	}
}

// TestImagesAIModelServing covers the one component whose upstream images
// are mostly tags: with --allow-unpinned its images.txt is still the union,
// tags included, since the device needs every one of them.
func TestImagesAIModelServing(t *testing.T) {
	p := mustResolve(t, defaultCatalog(t), embeddedRelease(t, "5.0"),
		compose.Request{Profile: "minimal", With: []string{"ai-model-serving"}, Arch: releases.X86_64, AllowUnpinned: true})
	out := mustBuild(t, p)
	got := lines(outputFile(t, out, compose.ImagesFile))
	want := upstreamImages(t, upstreamDir(t, "main"), releases.X86_64, p.ComponentNames())
	if !reflect.DeepEqual(got, want) {
		t.Errorf("images.txt = %q, want %q", got, want)
	}
}

// checkBlueprintContainers decodes the blueprint's [[containers]] and
// compares their sources with want.
func checkBlueprintContainers(t *testing.T, blueprint []byte, want []string) {
	t.Helper()
	var got []string
	for _, l := range lines(blueprint) {
		if src, ok := strings.CutPrefix(l, `source = "`); ok {
			got = append(got, strings.TrimSuffix(src, `"`))
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("blueprint [[containers]] sources = %q, want %q", got, want)
	}
}

// TestMinimal checks what minimal leaves out: no OVN-K, LVMS or snapshot
// controller image, package or service, and a drop-in that turns their
// MicroShift parts off.
func TestMinimal(t *testing.T) {
	for _, stream := range goldenStreams {
		for _, arch := range goldenArches {
			t.Run(stream+"/"+string(arch), func(t *testing.T) {
				p := mustResolve(t, defaultCatalog(t), embeddedRelease(t, stream), compose.Request{Profile: "minimal", Arch: arch})
				out := mustBuild(t, p)

				images := string(outputFile(t, out, compose.ImagesFile))
				core := upstreamCoreFile(t, stream, arch)
				for _, key := range []string{"ovn-kubernetes-microshift", "lvms_operator", "csi-snapshot-controller"} {
					ref := core[key]
					if ref == "" {
						t.Fatalf("upstream release-%s.json has no %s", arch, key)
					}
					if strings.Contains(images, ref) {
						t.Errorf("minimal images.txt has %s (%s)", key, ref)
					}
				}
				for _, im := range p.Images {
					for _, u := range im.Uses {
						if u.Component != "core" {
							t.Errorf("minimal image %s is used by %s", im.Ref, u.Component)
						}
					}
				}
				for _, pkg := range p.Packages {
					if pkg.Name == "microshift-networking" || pkg.Name == "lvm2" {
						t.Errorf("minimal installs %s", pkg.Name)
					}
				}
				if want := []string{"microshift"}; !reflect.DeepEqual(p.Services.Enabled, want) {
					t.Errorf("minimal enables %q, want %q", p.Services.Enabled, want)
				}

				dropIn := outputFile(t, out, compose.ConfigDir+"/10-microshift-compose.yaml")
				var cfg struct {
					Network struct {
						CNIPlugin string `json:"cniPlugin"`
						Multus    struct {
							Status string `json:"status"`
						} `json:"multus"`
					} `json:"network"`
					Storage struct {
						Driver                string   `json:"driver"`
						OptionalCSIComponents []string `json:"optionalCsiComponents"`
					} `json:"storage"`
				}
				if err := yaml.UnmarshalStrict(dropIn, &cfg); err != nil {
					t.Fatalf("parsing the drop-in: %v\n%s", err, dropIn)
				}
				if cfg.Network.CNIPlugin != "none" {
					t.Errorf("drop-in network.cniPlugin = %q, want none", cfg.Network.CNIPlugin)
				}
				if cfg.Network.Multus.Status != "Removed" {
					t.Errorf("drop-in network.multus.status = %q, want Removed", cfg.Network.Multus.Status)
				}
				if cfg.Storage.Driver != "none" {
					t.Errorf("drop-in storage.driver = %q, want none", cfg.Storage.Driver)
				}
				if want := []string{"none"}; !reflect.DeepEqual(cfg.Storage.OptionalCSIComponents, want) {
					t.Errorf("drop-in storage.optionalCsiComponents = %q, want %q", cfg.Storage.OptionalCSIComponents, want)
				}

				// The same bytes reach the device through the blueprint.
				var f *plan.File
				for i := range p.Files {
					if p.Files[i].Path == compose.DropInPath {
						f = &p.Files[i]
					}
				}
				if f == nil || !bytes.Equal(f.Data, dropIn) {
					t.Errorf("plan file %s does not hold the drop-in written to %s", compose.DropInPath, compose.ConfigDir)
				}
			})
		}
	}
}

// TestDropInForEachProfile checks the drop-in's values for every profile.
func TestDropInForEachProfile(t *testing.T) {
	for _, tc := range []struct {
		profile, cni, driver, csi string
	}{
		{"minimal", "none", "none", "none"},
		{"networking-only", "ovnk", "none", "none"},
		{"storage-only", "none", "lvms", "none"},
		{"full", "ovnk", "lvms", "snapshot-controller"},
	} {
		p := mustResolve(t, defaultCatalog(t), embeddedRelease(t, "5.0"), compose.Request{Profile: tc.profile, Arch: releases.X86_64})
		data := outputFile(t, mustBuild(t, p), compose.ConfigDir+"/10-microshift-compose.yaml")
		var cfg map[string]map[string]any
		if err := yaml.Unmarshal(data, &cfg); err != nil {
			t.Fatalf("parsing %s drop-in: %v", tc.profile, err)
		}
		got := []any{cfg["network"]["cniPlugin"], cfg["storage"]["driver"], cfg["storage"]["optionalCsiComponents"]}
		want := []any{tc.cni, tc.driver, []any{tc.csi}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s drop-in: cniPlugin, driver, optionalCsiComponents = %v, want %v", tc.profile, got, want)
		}
	}
}

func upstreamCoreFile(t *testing.T, stream string, arch releases.Arch) map[string]string {
	t.Helper()
	var doc struct {
		Images map[string]string `json:"images"`
	}
	path := filepath.Join(upstreamDir(t, upstreamBranch[stream]), "release-"+string(arch)+".json")
	if err := json.Unmarshal(mustRead(t, path), &doc); err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	return doc.Images
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
