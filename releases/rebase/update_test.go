package rebase_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/atomicfile"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/rebase"
)

func loadPayload(t testing.TB, file string) *rebase.Payload {
	t.Helper()
	p, err := rebase.LoadPayload(testdata("rebase", "payloads", file))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func loadCSV(t testing.TB, file string) *rebase.CSV {
	t.Helper()
	c, err := rebase.LoadCSV(testdata("rebase", "csvs", file))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// payloads418 are the next 4.18 nightlies, one per arch, in the two
// upstream shapes.
func payloads418(t testing.TB) map[releases.Arch]*rebase.Payload {
	return map[releases.Arch]*rebase.Payload{
		releases.X86_64:  loadPayload(t, "image-references-x86_64.json"),
		releases.AArch64: loadPayload(t, "release-info-aarch64.json"),
	}
}

// prepareAndWrite runs an update on dir and writes it.
func prepareAndWrite(t *testing.T, dir string, o rebase.UpdateOptions) *rebase.Update {
	t.Helper()
	u, err := rebase.Prepare(context.Background(), dir, o)
	if err != nil {
		t.Fatalf("Prepare() = %v", err)
	}
	if err := u.Write(); err != nil {
		t.Fatalf("Write() = %v", err)
	}
	return u
}

// TestUpdateGolden applies the upstream-shaped payloads and CSVs to the real
// 4.18 release files and compares the diff (and, for the payload, every
// resulting file) with golden files.
func TestUpdateGolden(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    func(t *testing.T) rebase.UpdateOptions
		changed []string
	}{
		{"payload-4.18", func(t *testing.T) rebase.UpdateOptions {
			return rebase.UpdateOptions{Payloads: payloads418(t)}
		}, []string{"release-aarch64.json", "release-multus-aarch64.json", "release-multus-x86_64.json", "release-olm-aarch64.json", "release-olm-x86_64.json", "release-x86_64.json"}},
		{"payload-4.18-x86_64-yaml", func(t *testing.T) rebase.UpdateOptions {
			return rebase.UpdateOptions{Payloads: map[releases.Arch]*rebase.Payload{releases.X86_64: loadPayload(t, "image-references-x86_64.yaml")}}
		}, []string{"release-multus-x86_64.json", "release-olm-x86_64.json", "release-x86_64.json"}},
		{"csv-lvms-4.18", func(t *testing.T) rebase.UpdateOptions {
			return rebase.UpdateOptions{CSV: loadCSV(t, "lvms-operator.v4.18.4.clusterserviceversion.yaml"), Map: map[string]string{"lvms_operator": "lvms-operator"}}
		}, []string{"release-aarch64.json", "release-x86_64.json"}},
		{"csv-gateway-api-4.18", func(t *testing.T) rebase.UpdateOptions {
			return rebase.UpdateOptions{CSV: loadCSV(t, "servicemeshoperator3.v3.0.0-tp.2.clusterserviceversion.yaml"), Selection: rebase.Selection{Components: []string{"gateway-api"}}}
		}, []string{"release-gateway-api-aarch64.json", "release-gateway-api-x86_64.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyRelease(t, "release-4.18")
			before := snapshot(t, dir)
			u := prepareAndWrite(t, dir, tc.opts(t))
			var names []string
			for _, f := range u.Changed() {
				names = append(names, f.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.changed, ",") {
				t.Errorf("changed files = %v, want %v", names, tc.changed)
			}
			golden(t, tc.name+".diff", []byte(strings.ReplaceAll(string(u.Diff()), dir, "DIR")))
			after := snapshot(t, dir)
			for name, data := range after {
				if before[name] == data {
					continue
				}
				golden(t, filepath.Join(tc.name, name), []byte(data))
				if _, err := releases.ParseFile(name, name, []byte(data)); err != nil {
					t.Errorf("updated %s does not parse: %v", name, err)
				}
			}
			// Applying the same inputs again changes nothing.
			again, err := rebase.Prepare(context.Background(), dir, tc.opts(t))
			if err != nil || len(again.Changed()) != 0 {
				t.Errorf("second Prepare() = %v, %d changed files; want none", err, len(again.Changed()))
			}
		})
	}
}

// TestUpdateReport checks what an update says about each file: the image
// changes with their source, the keys the payload lacks, the base.
func TestUpdateReport(t *testing.T) {
	dir := copyRelease(t, "release-4.18")
	u, err := rebase.Prepare(context.Background(), dir, rebase.UpdateOptions{Payloads: payloads418(t)})
	if err != nil {
		t.Fatal(err)
	}
	var core *rebase.FileUpdate
	for _, f := range u.Files {
		if f.Name == "release-x86_64.json" {
			core = f
		}
		if f.Component == "gateway-api" {
			t.Errorf("%s was selected; it does not follow the OpenShift release", f.Name)
		}
	}
	if core == nil {
		t.Fatal("release-x86_64.json not selected")
	}
	if core.OldBase != "4.18.0-0.nightly-2026-08-12-221652" || core.NewBase != "4.18.0-0.nightly-2026-09-02-101010" {
		t.Errorf("base %s -> %s", core.OldBase, core.NewBase)
	}
	if strings.Join(core.Kept, ",") != "lvms_operator" {
		t.Errorf("Kept = %v, want [lvms_operator]", core.Kept)
	}
	if len(core.Changes) != 7 {
		t.Fatalf("%d changes, want 7 (pod did not change, lvms_operator is not in the payload): %+v", len(core.Changes), core.Changes)
	}
	c := core.Changes[0]
	want := "payload ../../testdata/rebase/payloads/image-references-x86_64.json (4.18.0-0.nightly-2026-09-02-101010): cli"
	if c.Key != "cli" || c.Source != want || c.Tag != "" || !strings.HasPrefix(c.Old, "quay.io/") || !strings.HasPrefix(c.New, "quay.io/") {
		t.Errorf("first change = %+v, want cli from %q", c, want)
	}
	// The JSON form is stable: every list present, never null.
	data, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "null") {
		t.Errorf("Update JSON has nulls: %s", data)
	}
}

// synthPayload is an image-references ImageStream that says exactly what
// the files already hold: the core file and the files with its base.
func synthPayload(t *testing.T, rel *releases.Release, arch releases.Arch) *rebase.Payload {
	t.Helper()
	return synthPayloadWith(t, rel, arch, nil)
}

// synthPayloadWith is synthPayload with extra tags (name -> image).
func synthPayloadWith(t *testing.T, rel *releases.Release, arch releases.Arch, extra map[string]string) *rebase.Payload {
	t.Helper()
	core := rel.File("", arch)
	type tag struct {
		Name string `json:"name"`
		From struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"from"`
	}
	var tags []tag
	seen := map[string]string{}
	for _, f := range rel.Files() {
		if f.Arch != arch || f.Base != core.Base {
			continue
		}
		for _, im := range f.Images {
			if old, ok := seen[im.Key]; ok {
				if old != im.Ref {
					t.Fatalf("%s: key %s differs between files; the round trip assumes it does not", f.Name, im.Key)
				}
				continue
			}
			seen[im.Key] = im.Ref
			tg := tag{Name: im.Key}
			tg.From.Kind, tg.From.Name = "DockerImage", im.Ref
			tags = append(tags, tg)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		tg := tag{Name: name}
		tg.From.Kind, tg.From.Name = "DockerImage", extra[name]
		tags = append(tags, tg)
	}
	doc := map[string]any{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1",
		"metadata": map[string]any{"name": core.Base}, "spec": map[string]any{"tags": tags}}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	p, err := rebase.ParsePayload("synthetic-"+string(arch), data)
	if err != nil {
		t.Fatalf("ParsePayload(synthetic) = %v", err)
	}
	return p
}

// A payload updates the files of its arch that follow the OpenShift
// release; a file whose images the payload does not carry (the metrics
// files of 5.0: their keys are no payload tags) keeps its old base, and the
// update says so for each, with a --map where a payload tag is spelled
// close to a key.
func TestUpdateSaysWhatItCouldNotUpdate(t *testing.T) {
	dir := copyRelease(t, "main")
	rel := loadRelease(t, dir)
	for _, tc := range []struct {
		name  string
		extra map[string]string
		hint  map[string]string // file -> the end of its reason
	}{
		{"no close tag", nil, map[string]string{
			"release-kube-state-metrics-x86_64.json": "update it from its images' own source (release update --component kube-state-metrics with --csv or --resolve-tags)",
			"release-metrics-server-x86_64.json":     "update it from its images' own source (release update --component metrics-server with --csv or --resolve-tags)",
			"release-node-exporter-x86_64.json":      "update it from its images' own source (release update --component node-exporter with --csv or --resolve-tags)",
		}},
		{"a tag spelled close", map[string]string{"metrics-server": "quay.io/openshift-release-dev/ocp-v5.0-art-dev@sha256:" + strings.Repeat("ab", 32)}, map[string]string{
			"release-kube-state-metrics-x86_64.json": "update it from its images' own source (release update --component kube-state-metrics with --csv or --resolve-tags)",
			"release-metrics-server-x86_64.json":     "if the payload's tag is the image, map it: --map metrics_server=metrics-server",
			"release-node-exporter-x86_64.json":      "update it from its images' own source (release update --component node-exporter with --csv or --resolve-tags)",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := synthPayloadWith(t, rel, releases.X86_64, tc.extra)
			u, err := rebase.Prepare(context.Background(), dir, rebase.UpdateOptions{Payloads: map[releases.Arch]*rebase.Payload{releases.X86_64: p}})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, f := range u.Files {
				if f.NotUpdated == "" {
					continue
				}
				got[f.Name] = f.NotUpdated
				prefix := fmt.Sprintf("payload synthetic-x86_64 (%s) has none of its images (%s), so it stays at release.base %s; ",
					rel.Base(releases.X86_64), strings.Join(imageKeys(rel.File(f.Component, releases.X86_64)), ", "), f.OldBase)
				if !strings.HasPrefix(f.NotUpdated, prefix) || f.NewBase != f.OldBase || f.Changed() {
					t.Errorf("%s: NotUpdated %q, base %s -> %s; want the prefix %q and the old base", f.Name, f.NotUpdated, f.OldBase, f.NewBase, prefix)
				}
			}
			if len(got) != len(tc.hint) {
				t.Errorf("not updated: %v; want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(tc.hint)))
			}
			for name, hint := range tc.hint {
				if !strings.HasSuffix(got[name], hint) {
					t.Errorf("%s: NotUpdated %q, want it to end %q", name, got[name], hint)
				}
				w := filepath.Join(dir, name) + ": not updated: " + got[name]
				if !slices.Contains(u.Warnings, w) {
					t.Errorf("warnings %q lack %q", u.Warnings, w)
				}
			}
		})
	}
}

func imageKeys(f *releases.File) []string {
	var keys []string
	for _, im := range f.Images {
		keys = append(keys, im.Key)
	}
	return keys
}

// synthCSV is a CSV whose relatedImages are exactly one file's images and
// whose version is its base.
func synthCSV(t *testing.T, f *releases.File) *rebase.CSV {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: %s.v%s\nspec:\n  version: %q\n  relatedImages:\n", f.Component, f.Base, f.Base)
	for _, im := range f.Images {
		fmt.Fprintf(&b, "  - name: %q\n    image: %q\n", im.Key, im.Ref)
	}
	c, err := rebase.ParseCSV("synthetic-"+f.Name, []byte(b.String()))
	if err != nil {
		t.Fatalf("ParseCSV(synthetic %s) = %v", f.Name, err)
	}
	return c
}

// TestUpdateRoundTripUpstream runs update with inputs that say what the
// files already hold, over copies of every real upstream release file:
// nothing may change, not one byte.
func TestUpdateRoundTripUpstream(t *testing.T) {
	for _, branch := range []string{"main", "release-4.18"} {
		t.Run(branch, func(t *testing.T) {
			dir := copyRelease(t, branch)
			before := snapshot(t, dir)
			rel := loadRelease(t, dir)
			check := func(t *testing.T, what string, o rebase.UpdateOptions) {
				t.Helper()
				u := prepareAndWrite(t, dir, o)
				if n := len(u.Changed()); n != 0 {
					t.Errorf("%s changed %d files:\n%s", what, n, u.Diff())
				}
				for _, f := range u.Files {
					if len(f.Changes) != 0 || f.OldBase != f.NewBase {
						t.Errorf("%s: %s reports changes %+v, base %s -> %s", what, f.Name, f.Changes, f.OldBase, f.NewBase)
					}
				}
				if d := sameSnapshot(before, snapshot(t, dir)); d != "" {
					t.Fatalf("%s: %s", what, d)
				}
			}
			payloads := map[releases.Arch]*rebase.Payload{}
			for _, a := range rel.Arches() {
				payloads[a] = synthPayload(t, rel, a)
			}
			check(t, "payload", rebase.UpdateOptions{Payloads: payloads})
			for _, f := range rel.Files() {
				check(t, "CSV for "+f.Name, rebase.UpdateOptions{
					CSV:       synthCSV(t, f),
					Selection: rebase.Selection{Arches: []releases.Arch{f.Arch}, Components: []string{rebase.ComponentName(f)}},
				})
			}
			// Every pinned file: resolving tags has nothing to do (and
			// so needs no registry).
			var pinned []string
			for _, f := range rel.Files() {
				all := true
				for _, im := range f.Images {
					all = all && releases.IsDigestPinned(im.Ref)
				}
				if all {
					pinned = append(pinned, rebase.ComponentName(f))
				}
			}
			check(t, "resolve-tags", rebase.UpdateOptions{ResolveTags: true, Selection: rebase.Selection{Components: pinned}})
		})
	}
}

// TestUpdateKeepsFormatting updates a file that is not in MicroShift's
// layout: only the changed values differ afterwards.
func TestUpdateKeepsFormatting(t *testing.T) {
	dir := copyRelease(t, "release-4.18")
	path := filepath.Join(dir, "release-olm-x86_64.json")
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := releases.ParseFile(path, "release-olm-x86_64.json", orig)
	if err != nil {
		t.Fatal(err)
	}
	// Tabs, images before release, no newline at the end.
	var b strings.Builder
	b.WriteString("{\n\t\"images\": {")
	for i, im := range f.Images {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n\t\t%q:%q", im.Key, im.Ref)
	}
	fmt.Fprintf(&b, "\n\t},\n\t\"release\": {\"base\": %q}\n}", f.Base)
	custom := b.String()
	if err := os.WriteFile(path, []byte(custom), 0o644); err != nil {
		t.Fatal(err)
	}
	u := prepareAndWrite(t, dir, rebase.UpdateOptions{Payloads: map[releases.Arch]*rebase.Payload{releases.X86_64: loadPayload(t, "image-references-x86_64.json")}})
	want := custom
	for _, fu := range u.Files {
		if fu.Name != "release-olm-x86_64.json" {
			continue
		}
		want = strings.Replace(want, fu.OldBase, fu.NewBase, 1)
		for _, c := range fu.Changes {
			want = strings.Replace(want, c.Old, c.New, 1)
		}
	}
	if want == custom {
		t.Fatal("the payload changed nothing in release-olm-x86_64.json")
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("updated file:\n%s\nwant (the original with the new values):\n%s", got, want)
	}
}

// TestUpdateAllowTags writes a tag over a digest only when allowed.
func TestUpdateAllowTags(t *testing.T) {
	csv := []byte("apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: lvms-operator.v4.19.0\nspec:\n  version: 4.19.0\n  relatedImages:\n  - name: lvms-operator\n    image: registry.redhat.io/lvms4/lvms-rhel9-operator:v4.19\n")
	c, err := rebase.ParseCSV("lvms.yaml", csv)
	if err != nil {
		t.Fatal(err)
	}
	dir := copyRelease(t, "release-4.18")
	before := snapshot(t, dir)
	o := rebase.UpdateOptions{CSV: c, Map: map[string]string{"lvms_operator": "lvms-operator"}}
	_, err = rebase.Prepare(context.Background(), dir, o)
	want := "refusing to replace a digest with a tag: " + dir + `/release-aarch64.json image "lvms_operator": the digest-pinned registry.redhat.io/lvms4/lvms-rhel9-operator@sha256:be49109ec5be53a783b2de9bc6529db99930a69021577c05cfa0bf1312e06d69 would become the tag registry.redhat.io/lvms4/lvms-rhel9-operator:v4.19 (and 1 more); pass --resolve-tags to pin it to a digest, or --allow-tags to write the tag`
	if errString(err) != want || !errors.Is(err, rebase.ErrDigestToTag) {
		t.Fatalf("Prepare() = %v\nwant %s", err, want)
	}
	if d := sameSnapshot(before, snapshot(t, dir)); d != "" {
		t.Fatalf("a refused update wrote: %s", d)
	}
	o.AllowTags = true
	u := prepareAndWrite(t, dir, o)
	if len(u.Warnings) != 2 || !strings.HasSuffix(u.Warnings[0], "(allowed)") {
		t.Errorf("Warnings = %q, want one per file", u.Warnings)
	}
	r := loadRelease(t, dir)
	if ref, _ := r.File("", releases.X86_64).Lookup("lvms_operator"); ref != "registry.redhat.io/lvms4/lvms-rhel9-operator:v4.19" {
		t.Errorf("lvms_operator = %s after --allow-tags", ref)
	}
}

// TestUpdateErrors: every bad input fails with one exact line and leaves the
// directory as it was.
func TestUpdateErrors(t *testing.T) {
	payload := func(version string, tags ...string) *rebase.Payload {
		var ts []string
		for _, tg := range tags {
			name, ref, _ := strings.Cut(tg, "=")
			ts = append(ts, fmt.Sprintf(`{"name": %q, "from": {"kind": "DockerImage", "name": %q}}`, name, ref))
		}
		p, err := rebase.ParsePayload("p.json", []byte(`{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1", "metadata": {"name": "`+version+`"}, "spec": {"tags": [`+strings.Join(ts, ",")+`]}}`))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	lvms := loadCSV(t, "lvms-operator.v4.18.4.clusterserviceversion.yaml")
	x86 := loadPayload(t, "image-references-x86_64.json")
	arm := loadPayload(t, "release-info-aarch64.json")
	const armPath = "../../testdata/rebase/payloads/release-info-aarch64.json"
	for _, tc := range []struct {
		name  string
		setup func(dir string) // changes the copy of release-4.18 first
		opts  rebase.UpdateOptions
		want  string // DIR stands for the directory
	}{
		{name: "nothing to update", want: "nothing to update: give --payload, --csv or --resolve-tags"},
		{name: "payload and CSV", opts: rebase.UpdateOptions{Payloads: map[releases.Arch]*rebase.Payload{releases.X86_64: x86}, CSV: lvms},
			want: "--payload and --csv cannot be combined; run one update per source"},
		{name: "index digest without resolving", opts: rebase.UpdateOptions{CSV: lvms, IndexDigest: true},
			want: "--index-digest chooses what --resolve-tags writes; add --resolve-tags"},
		{name: "unknown component", opts: rebase.UpdateOptions{ResolveTags: true, Selection: rebase.Selection{Components: []string{"olmm"}}},
			want: `release DIR has no component "olmm"; did you mean "olm"?`},
		{name: "unknown component, no suggestion", opts: rebase.UpdateOptions{ResolveTags: true, Selection: rebase.Selection{Components: []string{"storage"}}},
			want: `release DIR has no component "storage" (it has core, gateway-api, multus, olm)`},
		{name: "arch without files", setup: func(dir string) {
			for _, n := range []string{"release-aarch64.json", "release-olm-aarch64.json", "release-multus-aarch64.json", "release-gateway-api-aarch64.json"} {
				os.Remove(filepath.Join(dir, n))
			}
		}, opts: rebase.UpdateOptions{Payloads: map[releases.Arch]*rebase.Payload{releases.AArch64: arm}},
			want: "payload " + armPath + " is for aarch64, but DIR has no release-aarch64.json to say which files follow the OpenShift release; name them with --component"},
		{name: "payload for an unselected arch", opts: rebase.UpdateOptions{Payloads: map[releases.Arch]*rebase.Payload{releases.AArch64: arm}, Selection: rebase.Selection{Arches: []releases.Arch{releases.X86_64}}},
			want: "payload " + armPath + " is for aarch64, but no aarch64 file is selected"},
		{name: "payload of the wrong arch", opts: rebase.UpdateOptions{Payloads: map[releases.Arch]*rebase.Payload{releases.X86_64: arm}},
			want: "payload " + armPath + ": release 4.18.0-0.nightly-arm64-2026-09-02-094512 is for arm64, not x86_64 (amd64); pass it as --payload aarch64=" + armPath},
		{name: "payload without any key", opts: rebase.UpdateOptions{Payloads: map[releases.Arch]*rebase.Payload{releases.X86_64: payload("4.18.5", "console=quay.io/x/console:1", "tools=quay.io/x/tools:1")}},
			want: `payload p.json (4.18.5) has none of the image keys of release-multus-x86_64.json, release-olm-x86_64.json, release-x86_64.json; is it the right input? (--map KEY=NAME maps differently named keys; it has "console", "tools")`},
		{name: "CSV without mapping", opts: rebase.UpdateOptions{CSV: lvms},
			want: `CSV ../../testdata/rebase/csvs/lvms-operator.v4.18.4.clusterserviceversion.yaml (lvms-operator.v4.18.4): nothing to update: map release keys to its relatedImages with --map KEY=NAME, or name the components it feeds with --component to match keys by name (it has "lvms-operator", "lvms-must-gather", "csi-node-driver-registrar", "csi-livenessprobe", "csi-external-resizer" (and 3 more))`},
		{name: "mapping to a missing name", opts: rebase.UpdateOptions{CSV: lvms, Map: map[string]string{"lvms_operator": "lvms-operatr"}},
			want: `mapping lvms_operator=lvms-operatr: CSV ../../testdata/rebase/csvs/lvms-operator.v4.18.4.clusterserviceversion.yaml (lvms-operator.v4.18.4) has no relatedImages entry "lvms-operatr"; did you mean "lvms-operator"?`},
		{name: "mapping a missing key", opts: rebase.UpdateOptions{CSV: lvms, Map: map[string]string{"lvms-operator": "lvms-operator"}},
			want: `mapping lvms-operator=lvms-operator: no selected release file has the image key "lvms-operator"; did you mean "lvms_operator"?`},
		{name: "mapping to a missing payload tag", opts: rebase.UpdateOptions{Payloads: map[releases.Arch]*rebase.Payload{releases.X86_64: x86}, Map: map[string]string{"cli": "oc"}},
			want: `mapping cli=oc: payload ../../testdata/rebase/payloads/image-references-x86_64.json (4.18.0-0.nightly-2026-09-02-101010) has no tag "oc"`},
		{name: "versions disagree", opts: rebase.UpdateOptions{Payloads: map[releases.Arch]*rebase.Payload{releases.X86_64: payload("4.19.0-0.nightly-2026-09-02-101010", "cli=quay.io/x/cli@sha256:1111111111111111111111111111111111111111111111111111111111111111")}},
			want: "the updated files would not form a release: DIR: core files disagree on the release: release-aarch64.json says 4.18.0, release-x86_64.json says 4.19.0"},
		{name: "tag over digest", opts: rebase.UpdateOptions{Payloads: map[releases.Arch]*rebase.Payload{releases.X86_64: payload("4.18.5", "cli=quay.io/x/cli:4.18", "pod=quay.io/x/pod:4.18")}},
			want: `refusing to replace a digest with a tag: DIR/release-x86_64.json image "cli": the digest-pinned quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:ccd7b96a5b2a92709415bcd8a1629f2608b6b286ece37873b59965f906303c75 would become the tag quay.io/x/cli:4.18 (and 1 more); pass --resolve-tags to pin it to a digest, or --allow-tags to write the tag`},
		{name: "broken file in the directory", setup: func(dir string) {
			os.WriteFile(filepath.Join(dir, "release-olm-x86_64.json"), []byte(`{"release": {"base": "4.18.0"}, "images": {"a": 1}}`), 0o644)
		}, opts: rebase.UpdateOptions{ResolveTags: true},
			want: `DIR/release-olm-x86_64.json: line 1, column 49: image "a" must be a string, got a number`},
		{name: "missing directory", setup: func(dir string) { os.RemoveAll(dir) }, opts: rebase.UpdateOptions{ResolveTags: true},
			want: "release dir DIR does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyRelease(t, "release-4.18")
			if tc.setup != nil {
				tc.setup(dir)
			}
			var before map[string]string
			if _, err := os.Stat(dir); err == nil {
				before = snapshot(t, dir)
			}
			_, err := rebase.Prepare(context.Background(), dir, tc.opts)
			if want := strings.ReplaceAll(tc.want, "DIR", dir); errString(err) != want {
				t.Errorf("Prepare() = %s\nwant        %s", errString(err), want)
			}
			if before != nil {
				if d := sameSnapshot(before, snapshot(t, dir)); d != "" {
					t.Errorf("a failed update changed the directory: %s", d)
				}
			}
		})
	}
}

// A read-only release file: Prepare succeeds, Write fails before anything
// is replaced, and leaves no temporary file behind.
func TestUpdateReadOnlyFile(t *testing.T) {
	dir := copyRelease(t, "release-4.18")
	ro := filepath.Join(dir, "release-x86_64.json")
	if err := os.Chmod(ro, 0o444); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	u, err := rebase.Prepare(context.Background(), dir, rebase.UpdateOptions{Payloads: payloads418(t)})
	if err != nil {
		t.Fatal(err)
	}
	err = u.Write()
	want := ro + ": file is read-only (mode 0444); make it writable (chmod u+w) to update it"
	if errString(err) != want || !errors.Is(err, atomicfile.ErrReadOnly) {
		t.Fatalf("Write() = %v\nwant %s", err, want)
	}
	if d := sameSnapshot(before, snapshot(t, dir)); d != "" {
		t.Errorf("a failed write changed the directory (it must write all files or none): %s", d)
	}
}
