package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/sigverify"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/render/registry"
	"github.com/microshift-compose/microshift-compose/render/trust"
)

// nextRelease pushes the next release of pushRelease's: cli and
// haproxy-router get new images (the same base layer, a new layer of
// their own), the other keys stay; it returns its release directory.
func nextRelease(t *testing.T, p *testutil.Pusher, prev string) string {
	t.Helper()
	var rel struct {
		Release map[string]string `json:"release"`
		Images  map[string]string `json:"images"`
	}
	if err := json.Unmarshal(mustReadFile(t, filepath.Join(prev, "release-x86_64.json")), &rel); err != nil {
		t.Fatal(err)
	}
	base := testutil.NewLayer(1, 96<<10) // pushRelease's amd64 base
	for i, key := range []string{"cli", "haproxy-router"} {
		ref, err := p.PushImage("openshift-release-dev/ocp-v5.0-art-dev", "amd64", []testutil.Layer{base, testutil.NewLayer(uint64(900+i), 12<<10)})
		if err != nil {
			t.Fatal(err)
		}
		rel.Images[key] = ref
	}
	rel.Release["base"] = "5.0.1-0.test-2026-12-01"
	data, err := json.MarshalIndent(rel, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFileMode(t, filepath.Join(dir, "release-x86_64.json"), data, 0o644)
	return dir
}

// docBlocks returns the shell code blocks of the section heading (to the
// next "## ") of doc, a file named from the repository's root (README.md,
// docs/day2.md), each as its lines with backslash continuations joined and
// indented blocks of a list included.
func docBlocks(t *testing.T, doc, heading string) [][]string {
	t.Helper()
	text := string(mustReadFile(t, filepath.Join("..", "..", filepath.FromSlash(doc))))
	start := strings.Index(text, "\n"+heading+"\n")
	if start < 0 {
		t.Fatalf("%s has no section %q", doc, heading)
	}
	text = text[start+len(heading)+2:]
	if end := strings.Index(text, "\n## "); end >= 0 {
		text = text[:end]
	}
	var blocks [][]string
	var cur []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && trimmed == "```sh":
			in, cur = true, nil
		case in && trimmed == "```":
			in = false
			blocks = append(blocks, cur)
		case in && len(cur) > 0 && strings.HasSuffix(cur[len(cur)-1], "\\"):
			cur[len(cur)-1] = strings.TrimSuffix(cur[len(cur)-1], "\\") + trimmed
		case in:
			cur = append(cur, trimmed)
		}
	}
	return blocks
}

// docCommand finds the one line of block (of docBlocks) that starts with
// prefix and returns its words after the prefix, with replace applied to
// each.
func docCommand(t *testing.T, block []string, prefix string, replace *strings.Replacer) []string {
	t.Helper()
	var found []string
	for _, line := range block {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			if found != nil {
				t.Fatalf("the documented block has two lines starting with %q", prefix)
			}
			found = []string{}
			if before, _, ok := strings.Cut(rest, " #"); ok {
				rest = before
			}
			for _, w := range strings.Fields(rest) {
				found = append(found, replace.Replace(w))
			}
		}
	}
	if found == nil {
		t.Fatalf("the documented block has no line starting with %q in %q", prefix, block)
	}
	return found
}

// TestDay2AcrossTheAirGap runs docs/day2.md's "Day 2" commands with real parts:
// two releases of the plan's images and two builds of a bootc OS image,
// all signed with cosign, in a source registry; day 1 carried whole into a
// site registry; day 2 built, carried as a differential bundle in parts
// with the OS image, the source stopped, applied to the site registry
// (twice); then, configured as the device that build describes (its
// registries.conf.d drop-in, trust policy and registries.d), skopeo and
// podman pull the new OS image through the site registry, and refuse an
// unsigned one. Bad input on the way is refused in one line.
func TestDay2AcrossTheAirGap(t *testing.T) {
	t.Parallel() // see parallelE2E
	bin := e2eBinary(t)
	skopeoBin := needTool(t, "skopeo", "skopeo")
	podmanBin := needTool(t, "podman", "podman")
	s := newSigner(t)
	priv, pub := s.keyPair(t, "release")
	src := testutil.StartRegistry(t)
	p := &testutil.Pusher{Host: src.Host}
	rel1 := pushRelease(t, p, false)
	rel2 := nextRelease(t, p, rel1)
	osBase := testutil.NewLayer(500, 1<<20)
	os1, err := p.PushImage("example/microshift-os", "amd64", []testutil.Layer{osBase, testutil.NewLayer(501, 256<<10)})
	if err != nil {
		t.Fatal(err)
	}
	os2, err := p.PushImage("example/microshift-os", "amd64", []testutil.Layer{osBase, testutil.NewLayer(502, 1536<<10)})
	if err != nil {
		t.Fatal(err)
	}
	osRepo := src.Host + "/example/microshift-os"
	site := testutil.StartRegistry(t)
	mirrorLoc := site.Host + "/microshift"
	e := newUserEnv(t)
	work := t.TempDir()
	run, must := e.toolRunner(t, work, bin)
	// refused checks one error line, exit 1, no stdout.
	refused := func(r procResult, want string) {
		t.Helper()
		lines := nonEmptyLines(r.stderr)
		if r.code != 1 || r.stdout != "" || len(lines) != 1 || !strings.Contains(lines[0], want) {
			t.Errorf("exit %d, stdout %q, stderr %q: want one error line with %q", r.code, r.stdout, r.stderr, want)
		}
	}
	build := func(rel, out string) []string {
		must("build", "--profile", "full", "--arch", "x86_64", "--release-dir", rel, "--bootc",
			"--bootc-image", osRepo+":4.19", "--verify-key", pub, "--mirror-registry", mirrorLoc, "--mirror-insecure", "--output", out)
		return nonEmptyLines(string(mustReadFile(t, filepath.Join(out, "images.txt"))))
	}

	// Connected side: both builds; every image signed.
	day1, day2 := filepath.Join(work, "day1"), filepath.Join(work, "day2")
	refs1, refs2 := build(rel1, day1), build(rel2, day2)
	signed := map[string]bool{}
	var toSign []string
	for _, ref := range append(append(append([]string{}, refs1...), refs2...), os1, os2) {
		if !signed[ref] {
			toSign = append(toSign, ref)
			signed[ref] = true
		}
	}
	s.sign(t, priv, toSign...)

	// Day 1, whole, loaded into the site registry.
	must("mirror", "--lock", "day1/compose.lock.json", "--image", os1, "--verify-key", pub, "--quiet", "--to", "oci-archive:day1.tar")
	must("mirror", "--from", "oci-archive:day1.tar", "--quiet", "--to", "docker://"+mirrorLoc)

	// Day 2: a lock for another arch is no base.
	other := bytes.Replace(mustReadFile(t, filepath.Join(day1, "compose.lock.json")), []byte(`"arch": "x86_64"`), []byte(`"arch": "aarch64"`), 1)
	writeFileMode(t, filepath.Join(work, "aarch64.lock.json"), other, 0o644)
	refused(run("mirror", "--lock", "day2/compose.lock.json", "--since", "aarch64.lock.json", "--quiet", "--to", "oci-archive:wrong.tar"), "a base for another arch: it is a plan for aarch64, this bundle is for x86_64")
	if _, err := os.Stat(filepath.Join(work, "wrong.tar")); !os.IsNotExist(err) {
		t.Errorf("a refused bundle was written")
	}

	// docs/day2.md's commands, with its names replaced by the test's; parts
	// of 1 MiB, as the test's images are small.
	blocks := docBlocks(t, "docs/day2.md", "## Day 2 across the air gap: bundles, parts, the OS image, prune")
	if len(blocks) < 3 {
		t.Fatalf("docs/day2.md's day 2 section has %d code blocks, want the flow, a layout and rpm-ostree", len(blocks))
	}
	names := strings.NewReplacer(
		"registry.example.com/microshift-os@sha256:…day1", os1,
		"registry.example.com/microshift-os@sha256:…", os2,
		"cosign.pub", pub,
		"mirror.example.com:5000/microshift", mirrorLoc,
		"4GiB", "1MiB",
		"/var/srv/site", filepath.Join(work, "site-layout"))
	carry := docCommand(t, blocks[0], "microshift-compose mirror --lock ", names)
	farSide := docCommand(t, blocks[0], "microshift-compose mirror --from ", names)
	switchTo := docCommand(t, blocks[0], "sudo bootc switch ", names)
	if len(switchTo) != 1 || switchTo[0] != os2 {
		t.Fatalf("docs/day2.md's bootc switch names %q, want the OS image mirror --image carried", switchTo)
	}

	// Day 2: only what changed, the OS image included, in parts: exactly
	// the full archive's blob bytes less those left out.
	out := must(append(append([]string{"mirror", "--lock"}, carry...), "--quiet", "--output", "json")...)
	full := must("mirror", "--lock", "day2/compose.lock.json", "--image", os2, "--verify-key", pub, "--to", "oci-archive:day2-full.tar", "--quiet", "--output", "json")
	var fullSum, bundleSum airgap.Summary
	if err := json.Unmarshal([]byte(full), &fullSum); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &bundleSum); err != nil {
		t.Fatal(err)
	}
	// The day-1 OS image as a base: the OS layer both share stays behind.
	if bundleSum.Bundle != airgap.BundleWritten || bundleSum.Fetched+bundleSum.OmittedBytes != fullSum.Fetched || bundleSum.Parts < 2 || bundleSum.ArchiveBytes+osBase.Desc.Size > fullSum.ArchiveBytes {
		t.Errorf("bundle %+v, full archive %+v: want the full archive's blob bytes less those left out, the OS base layer (%d bytes) among them, in parts", bundleSum, fullSum, osBase.Desc.Size)
	}
	t.Logf("day 2: differential bundle %d bytes in %d parts (%d blob bytes, %d left out), full archive %d bytes: %.1f%%",
		bundleSum.ArchiveBytes, bundleSum.Parts, bundleSum.Fetched, bundleSum.OmittedBytes, fullSum.ArchiveBytes, 100*float64(bundleSum.ArchiveBytes)/float64(fullSum.ArchiveBytes))
	// A rerun writes no part.
	out = must(append(append([]string{"mirror", "--lock"}, carry...), "--quiet")...)
	if !regexp.MustCompile(`^wrote a differential bundle of 10 images and 10 signatures \(\d+ blobs, \d+ manifests\) to oci-archive:day2.tar: 0 B fetched, [0-9.]+ [KM]iB already present; \d+ blobs \([0-9.]+ [KM]iB\) left out, held by the base; [0-9.]+ [KM]iB in \d parts, 0 written, in`).MatchString(out) {
		t.Errorf("bundle rerun summary = %q", out)
	}

	// The air gap.
	src.Stop()

	// Far side: a site without the base refuses the bundle; a part lost
	// on the way is named.
	empty := testutil.StartRegistry(t)
	refused(run("mirror", "--from", "oci-archive:day2.tar.001", "--quiet", "--to", "docker://"+empty.Host+"/microshift"), "the destination lacks the bundle's base: blob sha256:")
	lost := filepath.Join(work, "lost")
	if err := os.MkdirAll(lost, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"day2.tar.001", "day2.tar" + airgap.PartsSuffix} {
		writeFileMode(t, filepath.Join(lost, f), mustReadFile(t, filepath.Join(work, f)), 0o644)
	}
	refused(run("mirror", "--from", "oci-archive:lost/day2.tar.001", "--quiet", "--to", "docker://"+mirrorLoc), fmt.Sprintf("part 2 of %d (day2.tar.002) is missing", bundleSum.Parts))

	// Far side: applied as docs/day2.md says, then applied again (nothing moves).
	out = must(append(append([]string{"mirror", "--from"}, farSide...), "--quiet")...)
	if !strings.HasPrefix(out, "applied a differential bundle of 10 images and 10 signatures") {
		t.Errorf("apply summary = %q", out)
	}
	out = must("mirror", "--from", "oci-archive:day2.tar", "--to", "docker://"+mirrorLoc, "--quiet")
	if !strings.Contains(out, ": 0 B uploaded in 0 blobs, 0 B mounted from other repositories in 0 blobs,") {
		t.Errorf("applying again moved something: %q", out)
	}

	// Without a registry: docs/day2.md's second block, day 1 and the bundle into
	// a layout, and the OS image read from it as bootc switch
	// --transport oci names it.
	for _, line := range blocks[1] {
		if rest, ok := strings.CutPrefix(line, "microshift-compose mirror --from "); ok {
			must(append(append([]string{"mirror", "--from"}, docCommand(t, []string{rest}, "", names)...), "--quiet")...)
		}
	}
	layoutRef := docCommand(t, blocks[1], "sudo bootc switch --transport oci ", names)
	if len(layoutRef) != 1 || layoutRef[0] != filepath.Join(work, "site-layout")+":"+os2 {
		t.Fatalf("docs/day2.md's bootc switch --transport oci names %q", layoutRef)
	}
	raw := newUserEnv(t).must(t, skopeoBin, "--insecure-policy", "inspect", "--raw", "oci:"+layoutRef[0])
	if !strings.HasSuffix(os2, "@sha256:"+sha256Hex([]byte(raw))) {
		t.Errorf("skopeo read %s out of the layout with another digest", layoutRef[0])
	}
	newUserEnv(t).must(t, skopeoBin, "--insecure-policy", "copy", "oci:"+layoutRef[0], "oci:"+filepath.Join(t.TempDir(), "os")+":os")

	// The device, as build describes it: the drop-in sends the source
	// registry to the site; the policy needs the key's signature for the
	// plan's repositories and the OS image's. Debian's skopeo and podman
	// are built without sigstore, so the policy is evaluated with
	// containers/image in process (sigverify, as TestSignedMirror), through
	// the drop-in and the device's registries.d.
	files := filepath.Join(day2, "files")
	conf := filepath.Join(files, registry.MirrorConfPath)
	policy := filepath.Join(work, "device-policy.json")
	writeFileMode(t, policy, bytes.ReplaceAll(mustReadFile(t, filepath.Join(files, trust.PolicyPath)), []byte(`"`+trust.SigstoreKeyDir), []byte(`"`+filepath.Join(files, trust.SigstoreKeyDir))), 0o644)
	if !strings.Contains(string(mustReadFile(t, policy)), `"`+osRepo+`"`) {
		t.Fatalf("the device policy has no rule for the OS image's repository %s", osRepo)
	}
	// An OS image nobody signed, put straight into the site registry.
	unsigned, err := (&testutil.Pusher{Host: site.Host}).PushImage("microshift/example/microshift-os", "amd64", []testutil.Layer{osBase, testutil.NewLayer(503, 64<<10)})
	if err != nil {
		t.Fatal(err)
	}
	os3 := osRepo + "@" + strings.SplitN(unsigned, "@", 2)[1]
	policyTrust, err := sigverify.LoadPolicy(policy)
	if err != nil {
		t.Fatal(err)
	}
	policyTrust.RegistriesDir = filepath.Join(files, filepath.Dir(trust.RegistriesDPath))
	results, err := sigverify.Verify(context.Background(), policyTrust, []string{switchTo[0], refs2[0], os3}, registryclient.Options{RegistriesConf: conf})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results[:2] {
		if r.Err != nil {
			t.Errorf("the device policy refuses %s, signed, through the site registry: %v", r.Ref, r.Err)
		}
	}
	if r := results[2]; r.Err == nil || !strings.Contains(r.Err.Error(), "A signature was required, but no signature exists") || !strings.Contains(r.Rule, osRepo) {
		t.Errorf("the device policy takes the unsigned OS image: rule %s, %v", r.Rule, r.Err)
	}

	// skopeo and podman, configured as the device (the drop-in as
	// registries.conf), pull the new OS image and a plan image by their
	// source references, the source being down.
	accept := filepath.Join(work, "accept.json")
	writeFileMode(t, accept, []byte(`{"default": [{"type": "insecureAcceptAnything"}]}`), 0o644)
	device := newUserEnv(t)
	for _, ref := range []string{os2, refs2[0]} {
		raw := device.must(t, skopeoBin, "--registries-conf", conf, "--policy", accept, "inspect", "--raw", "docker://"+ref)
		if !strings.HasSuffix(ref, "@sha256:"+sha256Hex([]byte(raw))) {
			t.Errorf("skopeo through the drop-in read %s with another digest", ref)
		}
	}
	device.set("CONTAINERS_REGISTRIES_CONF", conf)
	store := t.TempDir()
	device.must(t, podmanBin, "--root", filepath.Join(store, "root"), "--runroot", filepath.Join(store, "run"), "--storage-driver", "vfs",
		"pull", "--quiet", "--signature-policy", accept, os2)
}
