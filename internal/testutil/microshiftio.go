package testutil

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// MicroShiftIOOKDTag is the OKD tag of the microshift-io fixtures.
const MicroShiftIOOKDTag = "4.21.0-okd-scos.6"

// MicroShiftIOTopoLVMTag is the tag the fixtures' TopoLVM release file
// names, as microshift-io's own does (src/topolvm/release).
const MicroShiftIOTopoLVMTag = "0.36.2"

// microshiftIORemoved are the components whose RPMs microshift-io removes
// from MicroShift's spec (src/image/modify-spec.py): no release file.
var microshiftIORemoved = []string{"ai-model-serving", "cert-manager", "gateway-api", "sriov", "observability", "low-latency"}

// microshiftIOReplaced are the component files whose images microshift-io
// replaces with OKD's (src/image/prebuild.sh); other component files keep
// their images.
var microshiftIOReplaced = []string{"olm", "multus"}

// MicroShiftIOImage is the fixture reference of an OKD image of arch
// ("quay.io/okd/scos-content@sha256:..." for x86_64, under
// ghcr.io/microshift-io/okd for aarch64, as microshift-io builds OKD for
// arm64 itself), its digest derived from the key: a fixture, not a real
// image.
func MicroShiftIOImage(arch, key string) string {
	repo := "quay.io/okd/scos-content"
	if arch == "aarch64" {
		repo = "ghcr.io/microshift-io/okd/okd-content"
	}
	return repo + "@" + fakeDigest("okd", arch, key)
}

func fakeDigest(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

var releaseFileRe = regexp.MustCompile(`^release-(?:(.+)-)?(x86_64|aarch64)\.json$`)

// MicroShiftIORelease writes into dst the release files microshift-io's
// build of the upstream release directory src installs, as this test suite
// understands its sources (our own fixture, no file of theirs): every
// image of the core file replaced by an OKD image but lvms_operator, which
// keeps Red Hat's; OLM's (release.base "upstream") and Multus's images
// replaced; the files of the RPMs it removes dropped; other component
// files (the 5.0 metrics) as they are; and its own release-kindnet,
// release-kube-proxy and release-topolvm files, which name no release,
// TopoLVM's image by tag. It returns the files by name.
func MicroShiftIORelease(t testing.TB, src, dst string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	arches := map[string]bool{}
	for _, e := range entries {
		m := releaseFileRe.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		comp, arch := m[1], m[2]
		if slices.Contains(microshiftIORemoved, comp) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Release map[string]string `json:"release"`
			Images  map[string]string `json:"images"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		switch {
		case comp == "":
			arches[arch] = true
			for k := range doc.Images {
				if k != "lvms_operator" {
					doc.Images[k] = MicroShiftIOImage(arch, k)
				}
			}
		case slices.Contains(microshiftIOReplaced, comp):
			for k := range doc.Images {
				doc.Images[k] = MicroShiftIOImage(arch, k)
			}
			if comp == "olm" {
				doc.Release = map[string]string{"base": "upstream"}
			}
		}
		out[e.Name()] = releaseJSON(doc.Release, doc.Images)
	}
	for arch := range arches {
		out["release-kindnet-"+arch+".json"] = releaseJSON(nil, map[string]string{"kindnet": "docker.io/kindest/kindnetd@" + fakeDigest("kindnet", arch)})
		out["release-kube-proxy-"+arch+".json"] = releaseJSON(nil, map[string]string{"kube-proxy": MicroShiftIOImage(arch, "kube-proxy")})
		out["release-topolvm-"+arch+".json"] = releaseJSON(nil, map[string]string{"topolvm-with-sidecar": "ghcr.io/topolvm/topolvm-with-sidecar:" + MicroShiftIOTopoLVMTag})
	}
	if dst != "" {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		for n, data := range out {
			if err := os.WriteFile(filepath.Join(dst, n), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// releaseJSON writes a release file: "release" only when base is given,
// images sorted by key.
func releaseJSON(release, images map[string]string) []byte {
	var b bytes.Buffer
	b.WriteString("{\n")
	if release != nil {
		base, _ := json.Marshal(release["base"])
		b.WriteString("  \"release\": {\n    \"base\": " + string(base) + "\n  },\n")
	}
	b.WriteString("  \"images\": {")
	keys := make([]string, 0, len(images))
	for k := range images {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kj, _ := json.Marshal(k)
		vj, _ := json.Marshal(images[k])
		b.WriteString("\n    " + string(kj) + ": " + string(vj))
	}
	if len(keys) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("}\n}\n")
	return b.Bytes()
}

// MicroShiftIOVersion is the RPM version of the fixtures' microshift-io
// build of MicroShift version (X.Y.Z): built 2025-11-20, commit a9cd00b34,
// OKD MicroShiftIOOKDTag.
func MicroShiftIOVersion(version string) string {
	return version + "_202511200000_ga9cd00b34_" + strings.ReplaceAll(MicroShiftIOOKDTag, "-", "_")
}
