package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
)

// writeTestLock writes a compose.lock.json of refs for x86_64.
func writeTestLock(t *testing.T, path string, refs []string) {
	t.Helper()
	lock := plan.Plan{Schema: plan.Schema, Arch: "x86_64", Profile: "test"}
	for _, r := range refs {
		lock.Images = append(lock.Images, plan.Image{Ref: r, Pinned: true, Uses: []plan.ImageUse{{Component: "test"}}})
	}
	data, err := lockfile.Encode(&lock)
	if err != nil {
		t.Fatal(err)
	}
	writeFileMode(t, path, data, 0o644)
}

// TestPruneCommand runs prune as a site would, with the real binary: a
// layout that took two releases and an OS image is pruned to the second
// release and the OS image (a dry run first, which changes nothing), and
// skopeo reads every kept image back; a prune killed while it removes
// blobs leaves the kept images whole and a rerun finishes; no --keep, and
// a layout a mirror is writing, are refused in one line.
func TestPruneCommand(t *testing.T) {
	t.Parallel() // see parallelE2E
	bin := e2eBinary(t)
	skopeoBin := needTool(t, "skopeo", "skopeo")
	reg := testutil.StartRegistry(t)
	p := &testutil.Pusher{Host: reg.Host}
	base := testutil.NewLayer(1, 256<<10)
	push := func(repo string, seed uint64) string {
		ref, err := p.PushImage(repo, "amd64", []testutil.Layer{base, testutil.NewLayer(seed, 64<<10)})
		if err != nil {
			t.Fatal(err)
		}
		return ref
	}
	day1 := []string{push("app/api", 10), push("app/web", 11), push("app/db", 12)}
	day2 := []string{push("app/api", 20), push("app/web", 21), day1[2]}
	osImage := push("example/microshift-os", 30)
	work := t.TempDir()
	writeTestLock(t, filepath.Join(work, "day1.lock.json"), day1)
	writeTestLock(t, filepath.Join(work, "day2.lock.json"), day2)
	e := newUserEnv(t)
	run, must := e.toolRunner(t, work, bin)
	must("mirror", "--lock", "day1.lock.json", "--quiet", "--to", "oci:site")
	must("mirror", "--lock", "day2.lock.json", "--image", osImage, "--quiet", "--to", "oci:site")
	site := filepath.Join(work, "site")
	before := layoutBlobs(t, site)
	index := string(mustReadFile(t, filepath.Join(site, "index.json")))

	keep := []string{"prune", "--keep", "day2.lock.json", "--image", osImage}
	out := must(append(keep, "oci:site")...)
	// Kept: 4 manifests, 4 configs, 4 layers and the shared base; day 1's
	// api and web go: a manifest, a config and a layer each.
	if !regexp.MustCompile(`(?m)^oci:site: kept 4 images and 0 attachments \(0 signatures; 13 blobs, [0-9.]+ KiB\); would remove 2 images and 6 blobs: would free [0-9.]+ KiB$`).MatchString(out) ||
		strings.Count(out, "would remove image ") != 2 || !strings.Contains(out, "would remove image "+day1[0]+" ("+strings.SplitN(day1[0], "@", 2)[1]+")") {
		t.Errorf("dry run printed %q", out)
	}
	if !maps.Equal(layoutBlobs(t, site), before) || string(mustReadFile(t, filepath.Join(site, "index.json"))) != index {
		t.Fatal("the dry run changed the layout")
	}
	var rep airgap.PruneReport
	if err := json.Unmarshal([]byte(must(append(keep, "--output", "json", "oci:site")...)), &rep); err != nil || rep.Applied || len(rep.Blobs) != 6 {
		t.Errorf("dry run, json: %+v, %v", rep, err)
	}
	out = must(append(keep, "--apply", "oci:site")...)
	after := layoutBlobs(t, site)
	var freed int64
	for f, n := range before {
		if _, ok := after[f]; !ok {
			freed += n
		}
	}
	if len(after) != len(before)-6 || freed != rep.Freed || !strings.Contains(out, "; removed 2 images and 6 blobs: freed "+humanBytes(freed)+"\n") {
		t.Errorf("prune --apply printed %q and removed %d blobs (%d bytes); the dry run said 6 (%d bytes)", out, len(before)-len(after), freed, rep.Freed)
	}
	kept := len(after)
	readBack := func() {
		t.Helper()
		for _, ref := range append(day2, osImage) {
			e.must(t, skopeoBin, "--insecure-policy", "copy", "oci:"+site+":"+ref, "oci:"+filepath.Join(t.TempDir(), "c")+":x")
		}
	}
	readBack()

	// Killed while it removes blobs: day 1 mirrored back, and a thousand
	// blobs nothing reaches beside it, so that the removal takes a while.
	must("mirror", "--lock", "day1.lock.json", "--quiet", "--to", "oci:site")
	for i := range 3000 {
		data := []byte(fmt.Sprintf("unreachable %d", i))
		sum := sha256.Sum256(data)
		writeFileMode(t, filepath.Join(site, "blobs", "sha256", hex.EncodeToString(sum[:])), data, 0o644)
	}
	all := layoutBlobs(t, site)
	first := ""
	for f := range all {
		if _, ok := after[f]; !ok && (first == "" || f < first) {
			first = f
		}
	}
	cmd := exec.Command(bin, append(keep, "--apply", "oci:site")...)
	cmd.Dir, cmd.Env = work, e.environ()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Blobs go in digest order: once the first is gone, kill.
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Lstat(filepath.Join(site, "blobs", "sha256", first)); os.IsNotExist(err) {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	left := len(layoutBlobs(t, site))
	t.Logf("killed with %d of the %d blobs to remove left", left-kept, len(all)-kept)
	if left <= kept || left >= len(all) {
		t.Errorf("the kill did not land while blobs were removed: %d blobs left, %d before, %d kept", left, len(all), kept)
	}
	readBack()
	out = must(append(keep, "--apply", "oci:site")...)
	if !strings.Contains(out, "; removed 0 images and ") || !maps.Equal(layoutBlobs(t, site), after) {
		t.Errorf("the rerun printed %q and left %d blobs, want %d", out, len(layoutBlobs(t, site)), kept)
	}
	readBack()

	// A registry is reported on: every kept image there, nothing tagged
	// beyond them (mirror pushes by digest); --apply is refused; a kept
	// image the registry lacks fails the report.
	siteReg := testutil.StartRegistry(t)
	must("mirror", "--from", "oci:site", "--quiet", "--to", "docker://"+siteReg.Host+"/site")
	out = must(append(keep, "docker://"+siteReg.Host+"/site")...)
	// What it cannot see is said: untagged manifests are not listed.
	if !strings.HasPrefix(out, "docker://"+siteReg.Host+"/site: 4 kept images, 0 missing; 0 repositories hold what no kept image is; 0 B only their tags reach; untagged manifests are not listed by the registry API, so images no kept lock names that were pushed by digest (as mirror pushes) may remain in the ") ||
		!strings.HasSuffix(out, " repositories scanned, uncounted; nothing was removed\n") {
		t.Errorf("registry report printed %q", out)
	}
	if r := run(append(keep, "--apply", "docker://"+siteReg.Host+"/site")...); r.code != 2 || !strings.Contains(r.stderr, "prune reports on a registry and removes nothing from it") {
		t.Errorf("prune --apply of a registry: exit %d, %q", r.code, r.stderr)
	}
	other := push("app/other", 40)
	writeTestLock(t, filepath.Join(work, "other.lock.json"), []string{other})
	r := run("prune", "--keep", "other.lock.json", "docker://"+siteReg.Host+"/site")
	if lines := nonEmptyLines(r.stderr); r.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "lacks 1 of the 1 kept images, "+other+" first") || !strings.Contains(r.stdout, "missing kept image "+other) {
		t.Errorf("registry report with a missing kept image: exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}

	// Refused: no --keep (a usage error), and a layout being written.
	r = run("prune", "--apply", "oci:site")
	if lines := nonEmptyLines(r.stderr); r.code != 2 || r.stdout != "" || len(lines) != 1 || !strings.Contains(lines[0], "nothing to keep: give --keep compose.lock.json") {
		t.Errorf("prune without --keep: exit %d, %q", r.code, r.stderr)
	}
	lock, err := os.Open(filepath.Join(site, "oci-layout"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	must("mirror", "--lock", "day1.lock.json", "--quiet", "--to", "oci:"+filepath.Join(work, "elsewhere"))
	r = run(append(keep, "--apply", "oci:site")...)
	if lines := nonEmptyLines(r.stderr); r.code != 1 || r.stdout != "" || len(lines) != 1 || !strings.Contains(lines[0], "another process is writing it") {
		t.Errorf("prune of a locked layout: exit %d, %q", r.code, r.stderr)
	}
}
