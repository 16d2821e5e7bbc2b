package compose_test

import (
	"context"
	"crypto/sha256"
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
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// moduleRoot is the directory holding go.mod.
func moduleRoot(t testing.TB) string { return testutil.Root(t) }

// testdataDir is the module's top-level testdata directory, relative to the
// package directory so that paths in error messages are stable.
func testdataDir(t testing.TB, elem ...string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, filepath.Join(moduleRoot(t), "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(append([]string{rel}, elem...)...)
}

// upstreamDir is one of the real upstream release directories
// ("main" = 5.0, "release-4.18"), laid out as the microshift-release-info
// RPMs install them.
func upstreamDir(t testing.TB, branch string) string { return testutil.ReleaseDir(t, branch) }

// upstreamBranch maps a stream to its directory under microshift-release,
// for the streams whose embedded bundle is that directory (5.0 comes from
// release-5.0 now, which ../shared/reference does not hold; its "main" is
// main before the fork).
var upstreamBranch = map[string]string{
	"4.14": "release-4.14", "4.15": "release-4.15", "4.16": "release-4.16", "4.17": "release-4.17", "4.18": "release-4.18",
	"4.19": "release-4.19", "4.20": "release-4.20", "4.21": "release-4.21", "4.22": "release-4.22",
}

func defaultCatalog(t testing.TB) *components.Catalog {
	t.Helper()
	cat, err := components.Default()
	if err != nil {
		t.Fatalf("components.Default() = %v", err)
	}
	return cat
}

func embeddedRelease(t testing.TB, stream string) *releases.Release {
	t.Helper()
	rels, err := releases.Embedded()
	if err != nil {
		t.Fatalf("releases.Embedded() = %v", err)
	}
	rel, err := releases.Select(rels, stream)
	if err != nil {
		t.Fatalf("releases.Select(%q) = %v", stream, err)
	}
	if rel.Stream() != stream {
		t.Fatalf("releases.Select(%q) picked %s", stream, rel.Stream())
	}
	return rel
}

func mustResolve(t testing.TB, cat *components.Catalog, rel *releases.Release, req compose.Request) *plan.Plan {
	t.Helper()
	p, err := compose.Resolve(context.Background(), cat, rel, req)
	if err != nil {
		t.Fatalf("Resolve(%s %s %+v) = %v", rel.Stream(), req.Arch, req, err)
	}
	return p
}

func mustBuild(t testing.TB, p *plan.Plan) *compose.Output {
	t.Helper()
	out, err := compose.Build(context.Background(), p, compose.BuildOptions{})
	if err != nil {
		t.Fatalf("Build(%s %s %s) = %v", p.Release.Stream, p.Profile, p.Arch, err)
	}
	return out
}

func outputFile(t testing.TB, out *compose.Output, path string) []byte {
	t.Helper()
	f := out.File(path)
	if f == nil {
		var have []string
		for _, f := range out.Files {
			have = append(have, f.Path)
		}
		t.Fatalf("output has no %s (have %s)", path, strings.Join(have, ", "))
	}
	return f.Data
}

// upstreamImages computes, independently of the catalog, the image
// references a selection needs: the upstream release files are read with
// encoding/json and every key is assigned to its component by what the key
// is (upstream's assets name where each is used): OVN-K, LVMS (TopoLVM and
// its sidecars before 4.17, the LVMS operator after) and the snapshot
// controller own their keys of the core file, core owns the rest; an
// optional component owns every key of its release-<component>-<arch>.json.
// The result is sorted and unique.
func upstreamImages(t testing.TB, dir string, arch releases.Arch, selected []string) []string {
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
			data, err := os.ReadFile(filepath.Join(moduleRoot(t), "components", "data", "components", c, "release", "release-"+c+"-"+string(arch)+".json"))
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

// lines splits a newline-terminated file into its lines.
func lines(data []byte) []string {
	s := strings.TrimSuffix(string(data), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// upstreamTagOnly lists, sorted, the references of an upstream 5.0 release
// file that are not pinned by digest.
func upstreamTagOnly(t testing.TB, name string) []string {
	t.Helper()
	var doc struct {
		Images map[string]string `json:"images"`
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(upstreamDir(t, "main"), name)), &doc); err != nil {
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

// deviceWarnings are the plan's warnings but the one every plan of a
// nightly release has first (its RPMs pinned to the stream), which tests
// of other warnings look past; TestVersionPin checks that one.
func deviceWarnings(p *plan.Plan) []string {
	if p.Release.Pin == plan.PinStream && len(p.Warnings) > 0 && strings.HasPrefix(p.Warnings[0], "release base ") {
		return p.Warnings[1:]
	}
	return p.Warnings
}

// lockSum is the lock digest an SBOM's comment names.
var lockSum = regexp.MustCompile(`compose\.lock\.json sha256 ([0-9a-f]{64})`)

// checkListedFiles walks what the lock and the SBOM of a build name by
// digest: every device file and chart archive of the lock, every file of
// an SBOM package, and the lock the SBOM is of, must be among the build's
// files (output path -> bytes) with that digest.
func checkListedFiles(t testing.TB, files map[string][]byte) {
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
	lock, ok := files[compose.LockFile]
	if !ok {
		t.Errorf("no %s among %d files", compose.LockFile, len(files))
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
		check("the lock", compose.OutputPath(f.Path), f.SHA256)
	}
	for _, c := range l.Charts {
		check("the lock", c.File, c.SHA256)
	}
	bom, ok := files[compose.SBOMFile]
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
		check("the SBOM", compose.LockFile, m[1])
	}
	for _, p := range s.Packages {
		if p.FileName == "" {
			continue
		}
		for _, c := range p.Checksums {
			if c.Algorithm == "SHA256" {
				check("the SBOM", p.FileName, c.Value)
			}
		}
	}
}

// outputFiles maps a build's output paths to their bytes.
func outputFiles(out *compose.Output) map[string][]byte {
	files := map[string][]byte{}
	for _, f := range out.Files {
		files[f.Path] = f.Data
	}
	return files
}

// stepCatalog is a small catalog for the tests of Resolve's steps: core
// (MicroShift's RPM, the image "pod", a service and a port), two providers
// of the capability "cni" (net-a its default, net-b), and app, which needs
// a CNI, conflicts with net-b and installs an RPM from a repository of its
// own. Profile minimal is core; full is core, net-a and app.
func stepCatalog() *components.Catalog {
	return &components.Catalog{
		Components: map[string]*components.Component{
			"core": {Name: "core", Description: "core", Order: 0, Packages: []string{compose.MicroShiftPackage},
				Images:   components.Images{Keys: []string{"pod"}},
				Services: components.Services{Enabled: []string{"microshift.service"}},
				Firewall: components.Firewall{Ports: []string{"6443:tcp"}}},
			"net-a": {Name: "net-a", Description: "net-a", Order: 1, Provides: []string{"cni"}, Requires: []string{"core"},
				Images: components.Images{Keys: []string{"net-a"}}, Firewall: components.Firewall{Ports: []string{"4789:udp"}}},
			"net-b": {Name: "net-b", Description: "net-b", Order: 2, Provides: []string{"cni"}, Requires: []string{"core"}},
			"app": {Name: "app", Description: "app", Order: 5, Requires: []string{"core", "cni"}, Conflicts: []string{"net-b"},
				Packages:     []string{"app-tools"},
				Repositories: []components.Repository{{ID: "app-$basearch", Name: "app", BaseURL: "https://example.com/app/$basearch/", Packages: []string{"app-tools"}}},
				Services:     components.Services{Disabled: []string{"microshift.service", "app-cleanup.service"}}},
		},
		Capabilities: map[string]*components.Capability{"cni": {Name: "cni", Default: "net-a", Description: "a CNI"}},
		Profiles: map[string]*components.Profile{
			"minimal": {Name: "minimal", Description: "minimal", Components: []string{"core"}},
			"full":    {Name: "full", Description: "full", Components: []string{"core", "net-a", "app"}},
		},
	}
}

// stepRelease is a release for stepCatalog: x86_64 only, with base (a
// shipped version such as 5.0.0, or a nightly), and the images "pod"
// (pinned) and "net-a" (pinned, or by tag with tagOnly).
func stepRelease(t testing.TB, base string, tagOnly bool) *releases.Release {
	t.Helper()
	netA := `quay.io/x/net-a@sha256:` + strings.Repeat("b", 64)
	if tagOnly {
		netA = "quay.io/x/net-a:1.0"
	}
	data := `{"release": {"base": "` + base + `"}, "images": {"pod": "quay.io/x/pod@sha256:` + strings.Repeat("a", 64) + `", "net-a": "` + netA + `"}}`
	f, err := releases.ParseFile("release-x86_64.json", "release-x86_64.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := releases.New("steps", []*releases.File{f})
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// selectedPlan is a plan so far whose selection is names, each with the
// reason of the profile.
func selectedPlan(profile string, names ...string) *plan.Plan {
	p := &plan.Plan{Profile: profile, Arch: string(releases.X86_64), Capabilities: map[string]string{}}
	for _, n := range names {
		p.Components = append(p.Components, plan.Component{Name: n, Reasons: []plan.Reason{{Kind: plan.ReasonProfile, Profile: profile}}})
	}
	return p
}

// runStep runs Resolve's step name alone on p, with the inputs of cat
// (stepCatalog when nil), rel and req (on x86_64 unless it says).
func runStep(t testing.TB, name string, cat *components.Catalog, rel *releases.Release, req compose.Request, p *plan.Plan) (*plan.Plan, error) {
	t.Helper()
	if cat == nil {
		cat = stepCatalog()
	}
	if req.Arch == "" {
		req.Arch = releases.X86_64
	}
	out, _, err := compose.RunStep(context.Background(), name, cat, rel, req, p, nil)
	return out, err
}

// checkStepErr fails unless err's message is want ("" = no error).
func checkStepErr(t testing.TB, err error, want string) bool {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("error = %v, want none", err)
	case want != "" && err == nil:
		t.Fatalf("no error, want %q", want)
	case want != "" && err.Error() != want:
		t.Fatalf("error = %q\nwant    %q", err, want)
	}
	return err == nil
}
