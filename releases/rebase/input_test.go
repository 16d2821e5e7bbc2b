package rebase_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/rebase"
)

// describePayload renders what ParsePayload read, for golden files.
func describePayload(p *rebase.Payload) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "version %s\narch %q\n%d images\n", p.Version, p.Arch, len(p.Images))
	for _, im := range p.Images {
		fmt.Fprintf(&b, "%s %s\n", im.Name, im.Ref)
	}
	return []byte(b.String())
}

// The upstream-shaped fixtures: the payload's own image-references (JSON,
// and the same as YAML) and `oc adm release info -o json`.
func TestLoadPayloadGolden(t *testing.T) {
	for _, tc := range []struct{ file, golden string }{
		{"image-references-x86_64.json", "payload-x86_64.txt"},
		{"image-references-x86_64.yaml", "payload-x86_64.txt"},
		{"release-info-aarch64.json", "payload-aarch64.txt"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := testdata("rebase", "payloads", tc.file)
			p, err := rebase.LoadPayload(path)
			if err != nil {
				t.Fatalf("LoadPayload(%s) = %v", path, err)
			}
			if p.Source != path {
				t.Errorf("Source = %q, want %q", p.Source, path)
			}
			golden(t, tc.golden, describePayload(p))
			for _, im := range p.Images {
				if ref, ok := p.Lookup(im.Name); !ok || ref != im.Ref {
					t.Errorf("Lookup(%q) = %q, %v", im.Name, ref, ok)
				}
			}
			if _, ok := p.Lookup("lvms_operator"); ok {
				t.Errorf("Lookup(lvms_operator) found an image the payload does not have")
			}
		})
	}
}

func TestCheckArch(t *testing.T) {
	for _, tc := range []struct {
		version, arch string
		target        releases.Arch
		want          string
	}{
		{"4.18.0-0.nightly-2026-09-02-101010", "", releases.X86_64, ""},
		{"4.18.0-0.nightly-2026-09-02-101010", "", releases.AArch64, ""}, // amd64 nightlies carry no arch
		{"4.18.0-0.nightly-arm64-2026-09-02-094512", "", releases.AArch64, ""},
		{"4.18.0-0.nightly-arm64-2026-09-02-094512", "", releases.X86_64, "release 4.18.0-0.nightly-arm64-2026-09-02-094512 is for arm64, not x86_64 (amd64)"},
		{"4.18.0-0.nightly-multi-2026-09-02-094512", "", releases.X86_64, ""},
		{"4.18.0-0.nightly-s390x-2026-09-02-094512", "", releases.AArch64, "release 4.18.0-0.nightly-s390x-2026-09-02-094512 is for s390x, not aarch64 (arm64)"},
		{"4.18.3", "arm64", releases.X86_64, "release 4.18.3 is for arm64, not x86_64 (amd64)"},
		{"4.18.3", "amd64", releases.X86_64, ""},
	} {
		data := `{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1", "metadata": {"name": "` + tc.version + `"},
			"spec": {"tags": [{"name": "cli", "from": {"kind": "DockerImage", "name": "quay.io/x/cli:1"}}]}}`
		if tc.arch != "" {
			data = `{"config": {"architecture": "` + tc.arch + `"}, "metadata": {"version": "` + tc.version + `"}, "references": ` + data + `}`
		}
		p, err := rebase.ParsePayload("p.json", []byte(data))
		if err != nil {
			t.Fatalf("ParsePayload(%s) = %v", tc.version, err)
		}
		if got := errString(p.CheckArch(tc.target)); got != tc.want && !(tc.want == "" && got == "<nil>") {
			t.Errorf("CheckArch(%s, %s) = %q, want %q", tc.version, tc.target, got, tc.want)
		}
	}
}

const (
	tagCLI = `{"name": "cli", "from": {"kind": "DockerImage", "name": "quay.io/x/cli@sha256:1111111111111111111111111111111111111111111111111111111111111111"}}`
	isHead = `{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1", "metadata": {"name": "4.18.1"}, `
)

func TestParsePayloadErrors(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"empty", "  \n", "p: file is empty"},
		{"truncated JSON", isHead + `"spec": {"tags": [`, "p: invalid JSON: unexpected end of file"},
		{"JSON syntax", "{\n  \"kind\": \"ImageStream\",\n  \"spec\" {}\n}", `p: line 3, column 11: invalid JSON: invalid character '{' after object key`},
		{"trailing data", isHead + `"spec": {"tags": [` + tagCLI + `]}} {}`, "p: line 1, column 263: unexpected data after the JSON document"},
		{"invalid YAML", "kind: ImageStream\nspec:\n  tags: [\n", "p: invalid YAML: line 3: did not find expected node content"},
		{"YAML duplicate key", "kind: ImageStream\nkind: ImageStream\n", `p: invalid YAML: line 2: key "kind" already set in map`},
		{"not an object", `["cli"]`, "p: the document must be a mapping, got a list"},
		{"wrong kind", `{"kind": "ConfigMap", "apiVersion": "v1"}`, `p: kind "ConfigMap" is not a release payload (want the payload's image-references ImageStream or ` + "`oc adm release info -o json`" + ` output)`},
		{"no kind", `{"apiVersion": "v1"}`, "p: not a release payload: no kind and no references (want the payload's image-references ImageStream or `oc adm release info -o json` output)"},
		{"wrong apiVersion", `{"kind": "ImageStream", "apiVersion": "v1"}`, `p: apiVersion is "v1", want image.openshift.io/v1`},
		{"no version", `{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1", "spec": {"tags": [` + tagCLI + `]}}`, "p: no release version: metadata.name is empty"},
		{"version not semver", `{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1", "metadata": {"name": "nightly"}, "spec": {"tags": [` + tagCLI + `]}}`,
			`p: release version "nightly" is not a semantic version: invalid semantic version`},
		{"no tags", isHead + `"spec": {}}`, "p: spec.tags is empty: the payload names no images"},
		{"tags not a list", isHead + `"spec": {"tags": {"cli": "x"}}}`, "p: spec.tags must be a list, got a mapping"},
		{"tag name not a string", isHead + `"spec": {"tags": [{"name": 7}]}}`, "p: spec.tags.name must be a string, got a number"},
		{"tag without name", isHead + `"spec": {"tags": [{"from": {"kind": "DockerImage", "name": "quay.io/x/y:1"}}]}}`, "p: spec.tags[0]: name is empty"},
		{"tag without from", isHead + `"spec": {"tags": [{"name": "cli"}]}}`, `p: spec.tags[0] "cli": from.name is missing`},
		{"tag from an ImageStreamTag", isHead + `"spec": {"tags": [{"name": "cli", "from": {"kind": "ImageStreamTag", "name": "cli:latest"}}]}}`,
			`p: spec.tags[0] "cli": from.kind is "ImageStreamTag", want DockerImage`},
		{"duplicate tag", isHead + `"spec": {"tags": [` + tagCLI + `, ` + tagCLI + `]}}`, `p: spec.tags[1] "cli": duplicate tag name (also spec.tags[0])`},
		{"invalid reference", isHead + `"spec": {"tags": [{"name": "cli", "from": {"kind": "DockerImage", "name": "quay.io/x/cli@sha256:abc"}}]}}`,
			`p: spec.tags[0] "cli": invalid image reference "quay.io/x/cli@sha256:abc": invalid checksum digest length`},
		{"unqualified reference", isHead + `"spec": {"tags": [{"name": "cli", "from": {"kind": "DockerImage", "name": "cli"}}]}}`,
			`p: spec.tags[0] "cli": invalid image reference "cli": it must name the registry and a tag or digest, e.g. quay.io/org/image@sha256:<64 hex>`},
		{"release info with null references", `{"metadata": {"version": "4.18.1"}, "references": null}`, "p: references is null; want the release's image-references ImageStream"},
		{"release info with a bad ImageStream", `{"metadata": {"version": "4.18.1"}, "references": {"kind": "ImageStream", "apiVersion": "image.openshift.io/v1", "spec": {"tags": []}}}`,
			"p: references.spec.tags is empty: the payload names no images"},
		{"release info tag error", `{"metadata": {"version": "4.18.1"}, "references": {"kind": "ImageStream", "apiVersion": "image.openshift.io/v1", "spec": {"tags": [{"name": "cli"}]}}}`,
			`p: references.spec.tags[0] "cli": from.name is missing`},
		{"release info metadata not an object", `{"metadata": "4.18.1", "references": {}}`, "p: metadata must be a mapping, got a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rebase.ParsePayload("p", []byte(tc.data))
			if got := errString(err); got != tc.want {
				t.Errorf("ParsePayload() = %s\nwant                %s", got, tc.want)
			}
		})
	}
	if _, err := rebase.LoadPayload(testdata("rebase", "payloads", "missing.json")); errString(err) != "payload ../../testdata/rebase/payloads/missing.json does not exist" {
		t.Errorf("LoadPayload(missing) = %v", err)
	}
}

func describeCSV(c *rebase.CSV) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "name %s\nversion %s\n%d images\n", c.Name, c.Version, len(c.Images))
	for _, im := range c.Images {
		fmt.Fprintf(&b, "%s %s\n", im.Name, im.Ref)
	}
	return []byte(b.String())
}

func TestLoadCSVGolden(t *testing.T) {
	for _, tc := range []struct{ file, golden string }{
		{"lvms-operator.v4.18.4.clusterserviceversion.yaml", "csv-lvms-operator.txt"},
		{"servicemeshoperator3.v3.0.0-tp.2.clusterserviceversion.yaml", "csv-servicemeshoperator3.txt"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			c, err := rebase.LoadCSV(testdata("rebase", "csvs", tc.file))
			if err != nil {
				t.Fatalf("LoadCSV() = %v", err)
			}
			golden(t, tc.golden, describeCSV(c))
		})
	}
}

const csvHead = "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: lvms-operator.v4.18.4\nspec:\n  version: 4.18.4\n"

func TestParseCSVErrors(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"invalid YAML", "kind: [", "c: invalid YAML: line 1: did not find expected node content"},
		{"no kind", "apiVersion: v1\n", "c: not a ClusterServiceVersion: no kind"},
		{"wrong kind", "apiVersion: apps/v1\nkind: Deployment\n", `c: kind is "Deployment", want ClusterServiceVersion (the bundle's manifests/*.clusterserviceversion.yaml)`},
		{"wrong apiVersion", "apiVersion: operators.coreos.com/v2\nkind: ClusterServiceVersion\n", `c: apiVersion is "operators.coreos.com/v2", want operators.coreos.com/v1alpha1`},
		{"no relatedImages", csvHead, "c: CSV lvms-operator.v4.18.4 has no spec.relatedImages: the bundle does not list its images (build it with relatedImages, as disconnected installs need)"},
		{"empty relatedImages", csvHead + "  relatedImages: []\n", "c: CSV lvms-operator.v4.18.4 has no spec.relatedImages: the bundle does not list its images (build it with relatedImages, as disconnected installs need)"},
		{"relatedImages not a list", csvHead + "  relatedImages: lvms\n", "c: spec.relatedImages must be a list, got a string"},
		{"image missing", csvHead + "  relatedImages:\n  - name: lvms-operator\n", `c: spec.relatedImages[0] "lvms-operator": image is empty`},
		{"invalid image", csvHead + "  relatedImages:\n  - name: lvms-operator\n    image: lvms:latest\n",
			`c: spec.relatedImages[0] "lvms-operator": invalid image reference "lvms:latest": it must name the registry and a tag or digest, e.g. quay.io/org/image@sha256:<64 hex>`},
		{"name reused for another image", csvHead + "  relatedImages:\n  - name: topolvm\n    image: quay.io/x/a:1\n  - name: topolvm\n    image: quay.io/x/b:1\n",
			`c: spec.relatedImages[1] "topolvm": name also used for quay.io/x/a:1 with another image`},
		{"no named entry", csvHead + "  relatedImages:\n  - image: quay.io/x/a:1\n", "c: CSV lvms-operator.v4.18.4: no spec.relatedImages entry has a name, so no release key can map to one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rebase.ParseCSV("c", []byte(tc.data))
			if got := errString(err); got != tc.want {
				t.Errorf("ParseCSV() = %s\nwant             %s", got, tc.want)
			}
		})
	}
	// The same image listed twice under one name is harmless; unnamed
	// entries are left out.
	c, err := rebase.ParseCSV("c", []byte(csvHead+"  relatedImages:\n  - name: a\n    image: quay.io/x/a:1\n  - name: a\n    image: quay.io/x/a:1\n  - image: quay.io/x/b:1\n"))
	if err != nil || len(c.Images) != 1 || c.Version != "4.18.4" {
		t.Errorf("ParseCSV(duplicate entry) = %+v, %v", c, err)
	}
}
