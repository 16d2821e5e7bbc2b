package main

import (
	"archive/tar"
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// TestDay2SiteFlow runs a site's life with the tool's own parts and the
// real binary (issue 34): day 1 is mirrored from the registry into a
// layout for the plan's arch only; day 2's bundle is made against day 1's
// lock into an archive (every platform) and applied to that layout
// (it needs only the blobs the layout holds); skopeo reads every image
// back; serve offers the layout, and prune docker:// reports on it (the
// catalog and tags of serve's registry), keeping day 2's images; prune
// --apply then removes day 1's.
func TestDay2SiteFlow(t *testing.T) {
	t.Parallel() // see parallelE2E
	bin := e2eBinary(t)
	skopeoBin := needTool(t, "skopeo", "skopeo")
	reg := testutil.StartRegistry(t)
	p := &testutil.Pusher{Host: reg.Host}
	shared := testutil.NewLayer(41, 96<<10)
	sharedArm := testutil.NewLayer(42, 64<<10)
	index := func(repo string, seed uint64) string {
		ref, _, err := p.PushIndex(repo, []string{"amd64", "arm64"}, map[string][]testutil.Layer{
			"amd64": {shared, testutil.NewLayer(seed, 32<<10)},
			"arm64": {sharedArm, testutil.NewLayer(seed+1, 32<<10)},
		})
		if err != nil {
			t.Fatal(err)
		}
		return ref
	}
	single := func(repo string, seed uint64) string {
		ref, err := p.PushImage(repo, "amd64", []testutil.Layer{shared, testutil.NewLayer(seed, 16<<10)})
		if err != nil {
			t.Fatal(err)
		}
		return ref
	}
	day1 := []string{index("ocp/release", 100), single("app/api", 110)}
	day2 := []string{index("ocp/release", 200), single("app/api", 210), day1[1]}
	work := t.TempDir()
	writeTestLock(t, filepath.Join(work, "day1.lock.json"), day1)
	writeTestLock(t, filepath.Join(work, "day2.lock.json"), day2)
	e := newUserEnv(t)
	run, must := e.toolRunner(t, work, bin)

	// A tagged image beside day 1 (what --image REPO:TAG carries), which
	// no kept lock names.
	cfg, m := testutil.Image("amd64", []testutil.Layer{shared})
	if err := p.Blob("app/tools", cfg.Data, cfg.Type); err != nil {
		t.Fatal(err)
	}
	if err := p.Blob("app/tools", shared.Data, shared.Desc.MediaType); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Manifest("app/tools", m, "1.0"); err != nil {
		t.Fatal(err)
	}
	tools := reg.Host + "/app/tools:1.0"

	// Day 1: the plan's arch only (the index keeps its digest).
	must("mirror", "--lock", "day1.lock.json", "--image", tools, "--allow-unpinned", "--quiet", "--to", "oci:site")
	// Day 2: a bundle against day 1's lock, into an archive (every
	// platform), applied to the layout: the arm64 blobs day 2 shares with
	// day 1 travel in the bundle, the layout never held them.
	must("mirror", "--lock", "day2.lock.json", "--since", "day1.lock.json", "--quiet", "--to", "oci-archive:day2.tar")
	out := must("mirror", "--from", "oci-archive:day2.tar", "--quiet", "--to", "oci:site")
	if !strings.HasPrefix(out, "applied a differential bundle of 3 images") {
		t.Errorf("applying day 2 printed %q", out)
	}
	for _, ref := range append(day1, day2...) {
		e.must(t, skopeoBin, "--insecure-policy", "--override-arch", "amd64", "copy", "oci:"+filepath.Join(work, "site")+":"+ref, "oci:"+filepath.Join(t.TempDir(), "c")+":x")
	}

	// The site serves the layout; prune reports on serve's registry.
	host := freeHost(t)
	srv := startServe(t, bin, "--listen", host, "--prefix", "site", "--log-level", "error", "oci:"+filepath.Join(work, "site"))
	r := run("prune", "--keep", "day2.lock.json", "docker://"+host+"/site")
	if r.code != 0 || !regexp.MustCompile(`(?m)^docker://`+regexp.QuoteMeta(host)+`/site: 3 kept images, 0 missing; 1 repositories hold what no kept image is; [0-9.]+ (B|KiB) only their tags reach`).MatchString(r.stdout) ||
		!strings.Contains(r.stdout, "site/app/tools (no kept image lives in it): 1 tag no kept image has: 1.0\n") {
		t.Errorf("prune docker:// against serve: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	srv.interrupt(t)

	out = must("prune", "--keep", "day2.lock.json", "--apply", "oci:site")
	if !strings.Contains(out, "removed image "+day1[0]) || !strings.Contains(out, "removed image "+tools) || !strings.Contains(out, "; removed 2 images and ") {
		t.Errorf("prune --apply printed %q", out)
	}
}

// TestArchiveMemoryBounded: an archive of 200 entries with ~1 MB PAX
// names (which mirror --from and serve used to index whole, ~250 MB) is
// refused at its first such header, and the refusal stays under 100 MB
// of peak RSS (GNU time, the real binary).
func TestArchiveMemoryBounded(t *testing.T) {
	t.Parallel() // see parallelE2E
	bin := e2eBinary(t)
	dir := t.TempDir()
	archive := filepath.Join(dir, "names.tar")
	f, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	tw := tar.NewWriter(bw)
	write := func(name, data string) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(data))
	}
	write("oci-layout", `{"imageLayoutVersion":"1.0.0"}`)
	write("index.json", `{"schemaVersion":2,"manifests":[]}`)
	for i := range 200 {
		write("blobs/sha256/"+strings.Repeat(string(rune('a'+i%26)), 1000_000-100)+strings.Repeat("0", i%10), "x")
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	bw.Flush()
	f.Close()
	e := newUserEnv(t)
	for _, args := range [][]string{
		{"mirror", "--quiet", "--from", "oci-archive:" + archive, "--to", "oci:" + filepath.Join(dir, "copy")},
		{"serve", "--listen", "127.0.0.1:0", "oci-archive:" + archive},
	} {
		r, kib := e.execPeakRSS(t, bin, args...)
		t.Logf("%s: peak RSS %d KiB", args[0], kib)
		if lines := nonEmptyLines(r.stderr); r.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "longer than any path of an OCI layout") {
			t.Errorf("%s of an archive of 1 MB names: exit %d, %q", args[0], r.code, r.stderr)
		}
		if kib > 100<<10 {
			t.Errorf("%s of an archive of 1 MB names: peak RSS %d KiB, want under 100 MiB", args[0], kib)
		}
	}
}
