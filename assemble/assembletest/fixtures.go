package assembletest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// lockSum is the lock digest an SBOM's comment names.
var lockSum = regexp.MustCompile(`compose\.lock\.json sha256 ([0-9a-f]{64})`)

// UpstreamBranch maps a stream to its directory under microshift-release,
// for the streams whose embedded bundle is that directory (5.0 comes from
// release-5.0 now, which ../shared/reference does not hold; its "main" is
// main before the fork).
var UpstreamBranch = map[string]string{
	"4.14": "release-4.14", "4.15": "release-4.15", "4.16": "release-4.16", "4.17": "release-4.17", "4.18": "release-4.18",
	"4.19": "release-4.19", "4.20": "release-4.20", "4.21": "release-4.21", "4.22": "release-4.22",
}

// UpstreamImages computes, independently of the catalog, the image
// references a selection needs: the upstream release files are read with
// encoding/json and every key is assigned to its component by what the key
// is (upstream's assets name where each is used): OVN-K, LVMS (TopoLVM and
// its sidecars before 4.17, the LVMS operator after) and the snapshot
// controller own their keys of the core file, core owns the rest; an
// optional component owns every key of its release-<component>-<arch>.json.
// The result is sorted and unique.
func UpstreamImages(t testing.TB, dir string, arch releases.Arch, selected []string) []string {
	t.Helper()
	coreOwner := func(key string) string {
		switch {
		case key == "ovn-kubernetes-microshift":
			return "networking-ovnk"
		case key == "lvms_operator", strings.HasPrefix(key, "topolvm_"), key == "csi-external-snapshotter", key == "openssl":
			return "storage-lvms"
		case key == "csi-snapshot-controller", key == "csi-snapshot-validation-webhook":
			return "snapshot-controller"
		}
		return "core"
	}
	read := func(name string) map[string]string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("reading upstream release file: %v", err)
		}
		var doc struct {
			Images map[string]string `json:"images"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("parsing %s: %v", name, err)
		}
		return doc.Images
	}
	set := map[string]bool{}
	for _, c := range selected {
		switch c {
		case "core", "networking-ovnk", "storage-lvms", "snapshot-controller":
			for key, ref := range read("release-" + string(arch) + ".json") {
				if coreOwner(key) == c {
					set[ref] = true
				}
			}
		case "low-latency", "observability":
			// Host packages: no images.
		case "storage-hostpath":
			// Upstream ships no release file for it: the component brings
			// its own (components/data/components/<name>/release/).
			data, err := os.ReadFile(filepath.Join(testutil.Root(t), "components", "data", "components", c, "release", "release-"+c+"-"+string(arch)+".json"))
			if err != nil {
				t.Fatalf("reading component release file: %v", err)
			}
			var doc struct {
				Images map[string]string `json:"images"`
			}
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			for _, ref := range doc.Images {
				set[ref] = true
			}
		default:
			for _, ref := range read("release-" + c + "-" + string(arch) + ".json") {
				set[ref] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for ref := range set {
		out = append(out, ref)
	}
	sort.Strings(out)
	return out
}

// UpstreamTagOnly lists, sorted, the references of an upstream 5.0 release
// file that are not pinned by digest.
func UpstreamTagOnly(t testing.TB, name string) []string {
	t.Helper()
	var doc struct {
		Images map[string]string `json:"images"`
	}
	if err := json.Unmarshal(testutil.ReadFile(t, filepath.Join(testutil.ReleaseDir(t, "main"), name)), &doc); err != nil {
		t.Fatalf("parsing %s: %v", name, err)
	}
	var out []string
	for _, ref := range doc.Images {
		if !strings.Contains(ref, "@sha256:") {
			out = append(out, ref)
		}
	}
	sort.Strings(out)
	return out
}

// DeviceWarnings are the plan's warnings but the one every plan of a
// nightly release has first (its RPMs pinned to the stream), which tests
// of other warnings look past; TestVersionPin checks that one.
func DeviceWarnings(p *plan.Plan) []string {
	if p.Release.Pin == plan.PinStream && len(p.Warnings) > 0 && strings.HasPrefix(p.Warnings[0], "release base ") {
		return p.Warnings[1:]
	}
	return p.Warnings
}

// CheckListedFiles walks what the lock and the SBOM of a build name by
// digest: every device file and chart archive of the lock, every file of
// an SBOM package but the release-info RPMs the release was read from, and
// the lock the SBOM is of, must be among the build's files (output path ->
// bytes) with that digest.
func CheckListedFiles(t testing.TB, files map[string][]byte) {
	t.Helper()
	check := func(who, path, sum string) {
		data, ok := files[path]
		if !ok {
			t.Errorf("%s names %s (sha256 %s), which the build does not write", who, path, sum)
			return
		}
		if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s names %s with sha256 %s; the file has %x", who, path, sum, got)
		}
	}
	lock, ok := files[output.LockFile]
	if !ok {
		t.Errorf("no %s among %d files", output.LockFile, len(files))
		return
	}
	var l struct {
		Files []struct {
			Path   string `json:"path"`
			SHA256 string `json:"sha256"`
			Secret bool   `json:"secret"`
		} `json:"files"`
		Charts []struct {
			File   string `json:"file"`
			SHA256 string `json:"sha256"`
		} `json:"charts"`
	}
	if err := json.Unmarshal(lock, &l); err != nil {
		t.Fatalf("decoding the lock: %v", err)
	}
	for _, f := range l.Files {
		if f.Secret {
			continue // in the blueprint only, by design
		}
		check("the lock", output.Path(f.Path), f.SHA256)
	}
	for _, c := range l.Charts {
		check("the lock", c.File, c.SHA256)
	}
	bom, ok := files[output.SBOMFile]
	if !ok {
		return
	}
	var s struct {
		Comment  string `json:"comment"`
		Packages []struct {
			FileName  string `json:"packageFileName"`
			Checksums []struct {
				Algorithm string `json:"algorithm"`
				Value     string `json:"checksumValue"`
			} `json:"checksums"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(bom, &s); err != nil {
		t.Fatalf("decoding the SBOM: %v", err)
	}
	if m := lockSum.FindStringSubmatch(s.Comment); m == nil {
		t.Errorf("the SBOM names no lock digest: %q", s.Comment)
	} else {
		check("the SBOM", output.LockFile, m[1])
	}
	for _, p := range s.Packages {
		// A release-info RPM's file is what the release was read from,
		// not an output of the build.
		if p.FileName == "" || strings.HasSuffix(p.FileName, ".rpm") {
			continue
		}
		for _, c := range p.Checksums {
			if c.Algorithm == "SHA256" {
				check("the SBOM", p.FileName, c.Value)
			}
		}
	}
}

// Planted is a password no output, log, lock or error may ever show.
const Planted = "Pl4nted-pa55w0rd-never-shown"

// PullSecret writes an auth file with credentials for hosts, each
// holding Planted.
func PullSecret(t testing.TB, hosts ...string) string {
	t.Helper()
	var entries []string
	for _, h := range hosts {
		entries = append(entries, `"`+h+`": {"auth": "`+base64.StdEncoding.EncodeToString([]byte("robot:"+Planted))+`"}`)
	}
	p := filepath.Join(t.TempDir(), "pull-secret.json")
	testutil.WriteFile(t, p, []byte(`{"auths": {`+strings.Join(entries, ", ")+`}}`))
	return p
}

// ManifestsCatalog is the catalog of testdata/catalogs/manifests:
// components with manifests, plugins and charts.
func ManifestsCatalog(t testing.TB) *components.Catalog {
	t.Helper()
	cat, err := components.Load(testutil.TestdataDir(t, "catalogs", "manifests"))
	if err != nil {
		t.Fatalf("components.Load(manifests fixture) = %v", err)
	}
	return cat
}

// ClassChoices parses --storage-class values.
func ClassChoices(t testing.TB, flags ...string) []lvmdconfig.ClassChoice {
	t.Helper()
	var out []lvmdconfig.ClassChoice
	for _, f := range flags {
		c, err := lvmdconfig.ParseClassChoice(f)
		if err != nil {
			t.Fatalf("ParseClassChoice(%q) = %v", f, err)
		}
		out = append(out, c)
	}
	return out
}

// FullPlan is the plan of the full profile of the embedded 5.0 for x86_64.
func FullPlan(t testing.TB) *plan.Plan {
	t.Helper()
	return Plan(t, Catalog(t), Release(t, "5.0"), compose.Request{Profile: "full", Arch: releases.X86_64})
}

// MicroShiftIOTopoLVMDigest is the digest the microshift-io fixtures'
// TopoLVM tag resolved to.
const MicroShiftIOTopoLVMDigest = "sha256:7f3c0d7b2a4e8f1e6b5d9c3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e"

// MicroShiftIO is microshift-io's build of the upstream reference release
// of branch (testutil.MicroShiftIORelease) as release fetch stores it: its
// release-info RPMs recorded (testutil.MicroShiftIOVersion, release
// 1.el9) and its TopoLVM tag resolved to MicroShiftIOTopoLVMDigest,
// loaded as the per-user store's ("fetched").
func MicroShiftIO(t testing.TB, branch string) *releases.Release {
	t.Helper()
	return MicroShiftIODist(t, branch, "el9")
}

// MicroShiftIODist is MicroShiftIO of RPMs built for dist (release
// 1.<dist>): "el10" is a CentOS Stream 10 build.
func MicroShiftIODist(t testing.TB, branch, dist string) *releases.Release {
	t.Helper()
	src := t.TempDir()
	files := testutil.MicroShiftIORelease(t, testutil.ReleaseDir(t, branch), src)
	rel, err := releases.LoadDir(src)
	if err != nil {
		t.Fatalf("LoadDir(microshift-io's %s) = %v", branch, err)
	}
	version := testutil.MicroShiftIOVersion(rel.Version.String())
	var rpms []releases.RPM
	for _, pkg := range []string{"microshift-release-info", "microshift-kindnet-release-info", "microshift-multus-release-info", "microshift-olm-release-info", "microshift-topolvm-release-info"} {
		sum := sha256.Sum256([]byte(pkg + version))
		rpms = append(rpms, releases.RPM{NEVRA: pkg + "-" + version + "-1." + dist + ".noarch", SHA256: hex.EncodeToString(sum[:])})
	}
	tag := "ghcr.io/topolvm/topolvm-with-sidecar:" + testutil.MicroShiftIOTopoLVMTag
	dir := filepath.Join(t.TempDir(), rel.Version.String())
	rec := releases.Record{RPMs: rpms, Resolved: map[string]string{tag: "ghcr.io/topolvm/topolvm-with-sidecar@" + MicroShiftIOTopoLVMDigest}}
	if _, err := releases.WriteRecorded(dir, files, rec, false); err != nil {
		t.Fatalf("WriteRecorded() = %v", err)
	}
	if rel, err = releases.LoadDir(dir); err != nil {
		t.Fatalf("LoadDir() = %v", err)
	}
	rel.Source = releases.FetchedSource
	return rel
}
