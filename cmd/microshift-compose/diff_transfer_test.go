package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/internal/transfer"
)

// layoutBlobs lists a layout's blobs/sha256: name -> size.
func layoutBlobs(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "blobs", "sha256"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = info.Size()
	}
	return out
}

// TestDiffTransfer: what going from networking-only to full moves, read
// from the two layouts mirror wrote and from the registry, is what the new
// layout holds that the old one does not, file for file; per component
// the rows add up to it.
func TestDiffTransfer(t *testing.T) {
	host, rel := syntheticRelease(t)
	work := t.TempDir()
	outs := map[string]string{}
	layouts := map[string]string{}
	for _, profile := range []string{"networking-only", "full"} {
		out := filepath.Join(work, profile)
		mustRun(t, "build", "--profile", profile, "--arch", "x86_64", "--release-dir", rel, "--output", out)
		layout := filepath.Join(work, profile+"-images")
		mustRun(t, "mirror", "--lock", filepath.Join(out, "compose.lock.json"), "--quiet", "--to", "oci:"+layout)
		outs[profile], layouts[profile] = out, layout
	}
	// The independent answer: the files of the new layout the old lacks.
	old, cur := layoutBlobs(t, layouts["networking-only"]), layoutBlobs(t, layouts["full"])
	var want, full transfer.Bytes
	for name, size := range cur {
		full.Count++
		full.Bytes += size
		if _, ok := old[name]; !ok {
			want.Count++
			want.Bytes += size
		}
	}
	if want.Count == 0 || want.Bytes >= full.Bytes {
		t.Fatalf("fixture: the full layout adds %+v of %+v", want, full)
	}

	type diffJSON struct {
		Transfer *transfer.Report `json:"transfer"`
	}
	read := func(args ...string) *transfer.Report {
		t.Helper()
		var d diffJSON
		if err := json.Unmarshal([]byte(mustRun(t, append([]string{"diff", outs["networking-only"], outs["full"], "-o", "json"}, args...)...)), &d); err != nil {
			t.Fatal(err)
		}
		if d.Transfer == nil {
			t.Fatalf("diff %v: no transfer section", args)
		}
		return d.Transfer
	}
	fromLayouts := read("--from", "oci:"+layouts["networking-only"], "--from", "oci:"+layouts["full"])
	if fromLayouts.Total != want || fromLayouts.Full != full {
		t.Errorf("diff --from: total %+v, full %+v; want %+v of %+v (the new layout's files the old lacks)", fromLayouts.Total, fromLayouts.Full, want, full)
	}
	sum := fromLayouts.SharedBetweenComponents.Bytes + fromLayouts.Manifests.Bytes
	byName := map[string]transfer.Component{}
	for _, c := range fromLayouts.Components {
		sum += c.Bytes
		byName[c.Name] = c
	}
	if sum != fromLayouts.Total.Bytes {
		t.Errorf("components + shared + manifests = %d bytes, total %d", sum, fromLayouts.Total.Bytes)
	}
	// full adds storage-lvms and snapshot-controller, one image each; core
	// and networking-ovnk are unchanged.
	for name, images := range map[string]int{"core": 0, "networking-ovnk": 0, "storage-lvms": 1, "snapshot-controller": 1} {
		c, ok := byName[name]
		if !ok || c.NewImages != images || (images == 0) != (c.Bytes == 0) {
			t.Errorf("component %s: %+v, want %d new images", name, c, images)
		}
	}
	if fromLayouts.NewImages != 2 {
		t.Errorf("new images = %d, want 2", fromLayouts.NewImages)
	}
	// The registry says the same.
	if fromRegistry := read("--resolve-sizes"); !sameReport(fromRegistry, fromLayouts) {
		t.Errorf("diff --resolve-sizes = %+v\ndiff --from = %+v", fromRegistry, fromLayouts)
	}
	// One archive holding both sides works too.
	md := mustRun(t, "diff", outs["networking-only"], outs["full"], "--from", "oci:"+layouts["full"], "--from", "oci:"+layouts["networking-only"])
	t.Logf("$ microshift-compose diff networking-only/ full/ --from oci:full-images --from oci:networking-only-images\n%s", md)
	for _, re := range []string{
		`(?m)^#### Update transfer$`,
		`(?m)^\| storage-lvms \| 1 \| \d+ \| [0-9.]+ KiB \|$`,
		`(?m)^\| manifests \| \| \d+ \| [0-9.]+ KiB \|$`,
		`(?m)^\| \*\*total\*\* \| 2 \| ` + regexp.QuoteMeta(itoa(want.Count)) + ` \| ` + regexp.QuoteMeta(transfer.Human(want.Bytes)) + ` \|$`,
		`(?m)^` + regexp.QuoteMeta(transfer.Human(want.Bytes)+" of the "+transfer.Human(full.Bytes)+" a full bundle of the new images holds ("),
	} {
		if !regexp.MustCompile(re).MatchString(md) {
			t.Errorf("diff Markdown has no match for %s:\n%s", re, md)
		}
	}
	for _, row := range strings.Split(md, "\n") {
		if strings.HasPrefix(row, "| ") && strings.Contains(md, "#### Update transfer") && strings.Contains(row, "KiB") {
			if n := testutil.MarkdownCells(row); n != 5 { // four cells, five pipes
				t.Errorf("row %q has %d pipes, want 5", row, n)
			}
		}
	}

	// A layout that lacks the old side's images: one line naming one.
	_, stderr, code := runCLI(t, "diff", outs["networking-only"], outs["full"], "--from", "oci:"+layouts["full"]+"-missing")
	if code != exitError || !strings.HasPrefix(stderr, "error: opening oci:"+layouts["full"]+"-missing: no such file or directory") {
		t.Errorf("diff --from a missing layout: exit %d, %q", code, stderr)
	}
	_, stderr, code = runCLI(t, "diff", outs["full"], outs["networking-only"], "--from", "oci:"+layouts["networking-only"])
	if code != exitError || strings.Count(stderr, "\n") != 1 || !regexp.MustCompile(`^error: reading the x86_64 manifests from oci:\S+: `+regexp.QuoteMeta(host)+`/\S+: not in the image layout oci:\S+\n$`).MatchString(stderr) {
		t.Errorf("diff --from a layout without the old images: exit %d, %q", code, stderr)
	}
}

func sameReport(a, b *transfer.Report) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func itoa(n int) string {
	data, _ := json.Marshal(n)
	return string(data)
}

// TestReleaseDiffTransfer: a release whose pod image is rebuilt on the
// same base moves that image's manifest, config and own layer, read from
// the registry; the base layer stays.
func TestReleaseDiffTransfer(t *testing.T) {
	host, rel := syntheticRelease(t)
	newRel := t.TempDir()
	own := testutil.NewLayer(777, 12<<10)
	p := &testutil.Pusher{Host: host}
	ref, err := p.PushImage("openshift-release-dev/ocp-v5.0-art-dev", "amd64", []testutil.Layer{testutil.NewLayer(1, 96<<10), own})
	if err != nil {
		t.Fatal(err)
	}
	data := regexp.MustCompile(`"pod": "[^"]+"`).ReplaceAllString(string(mustReadFile(t, filepath.Join(rel, "release-x86_64.json"))), `"pod": "`+ref+`"`)
	writeFileMode(t, filepath.Join(newRel, "release-x86_64.json"), []byte(data), 0o644)
	cfg, m := testutil.Image("amd64", []testutil.Layer{testutil.NewLayer(1, 96<<10), own})
	want := transfer.Bytes{Count: 3, Bytes: own.Desc.Size + int64(len(cfg.Data)) + int64(len(m.Data))}

	var d struct {
		Transfer []*transfer.Report `json:"transfer"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "release", "diff", rel, newRel, "--resolve-sizes", "--arch", "x86_64", "-o", "json")), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Transfer) != 1 || d.Transfer[0].Arch != "x86_64" {
		t.Fatalf("release diff transfer = %+v, want one x86_64 report", d.Transfer)
	}
	r := d.Transfer[0]
	if r.Total != want || r.NewImages != 1 || r.Components[0].Name != "core" || r.Components[0].Bytes != own.Desc.Size+int64(len(cfg.Data)) {
		t.Errorf("release diff transfer = %+v, want total %+v (the pod image's manifest, config and layer)", *r, want)
	}
	md := mustRun(t, "release", "diff", rel, newRel, "--resolve-sizes")
	if !strings.Contains(md, "\n#### Update transfer (x86_64)\n") || !strings.Contains(md, "| **total** | 1 | 3 | "+transfer.Human(want.Bytes)+" |") {
		t.Errorf("release diff Markdown:\n%s", md)
	}
	// --arch without a way to read sizes is a usage error.
	if _, stderr, code := runCLI(t, "release", "diff", rel, newRel, "--arch", "x86_64"); code != exitUsage || !strings.Contains(stderr, "--arch chooses the arches whose transfer --resolve-sizes or --from reports") {
		t.Errorf("release diff --arch alone: exit %d, %q", code, stderr)
	}
}
