package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
)

// signedImage pushes an image and a sigstore attachment beside it
// (sha256-<hex>.sig, one simple-signing layer with a signature annotation,
// as cosign writes them) and returns the image's digest reference: what
// makes containers/image evaluate a sigstoreSigned rule, and so read the
// files it names.
func signedImage(t *testing.T, host string) string {
	t.Helper()
	p := &testutil.Pusher{Host: host}
	ref, err := p.PushImage("app/signed", "amd64", []testutil.Layer{testutil.NewLayer(7, 4096)})
	if err != nil {
		t.Fatal(err)
	}
	digest := ref[strings.LastIndex(ref, "@")+1:]
	payload := []byte(fmt.Sprintf(`{"critical":{"identity":{"docker-reference":"%s/app/signed"},"image":{"docker-manifest-digest":"%s"},"type":"cosign container image signature"},"optional":null}`, host, digest))
	const payloadType = "application/vnd.dev.cosign.simplesigning.v1+json"
	config := testutil.Raw{Data: []byte("{}"), Type: types.OCIConfigJSON}
	for _, b := range []testutil.Raw{{Data: payload, Type: payloadType}, config} {
		if err := p.Blob("app/signed", b.Data, b.Type); err != nil {
			t.Fatal(err)
		}
	}
	layer := testutil.Raw{Data: payload, Type: payloadType}.Descriptor(nil)
	layer.Annotations = map[string]string{"dev.cosignproject.cosign/signature": "MEUCIQDx3rF4f3bK3e0Q0Xx0AAAAAAAAAAAAAAAAAAAAAAAAAAIgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}
	m, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": types.OCIManifestSchema1, "config": config.Descriptor(nil), "layers": []any{layer}})
	if _, err := p.Manifest("app/signed", testutil.Raw{Data: m, Type: types.OCIManifestSchema1}, strings.Replace(digest, ":", "-", 1)+".sig"); err != nil {
		t.Fatal(err)
	}
	return ref
}

// peakRSS runs bin under GNU time, killed after limit, with its address
// space bounded (so that a build that reads /dev/zero, as main did, fails
// rather than takes the machine's memory), and returns its result and
// peak RSS in KiB.
func peakRSS(t *testing.T, dir string, limit time.Duration, bin string, args ...string) (result, int64) {
	t.Helper()
	timeBin := needTool(t, "/usr/bin/time", "time")
	out := filepath.Join(t.TempDir(), "rss")
	script := `ulimit -v 4000000; exec timeout -s KILL "$0" "$@"`
	cmd := exec.Command(timeBin, append([]string{"-o", out, "-f", "%M", "bash", "-c", script, strconv.Itoa(int(limit.Seconds())), bin}, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	kib, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	if err != nil {
		t.Fatalf("GNU time wrote %q", data)
	}
	return result{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}, kib
}

// TestTrustFilesRSS: the files a policy names are read through the input
// gate before any registry is asked, so a named pipe, /dev/zero or a huge
// file there is one line at once, in little memory, against a registry
// serving a signed image (where containers/image reads them); a policy
// with a CA bundle named by many scopes loads within the accepted budget.
// The peak RSS of each is logged for make bench rss; TRUST_RSS_BIN=<binary>
// measures another build (main's) and checks nothing.
func TestTrustFilesRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary against a registry")
	}
	bin, measureOnly := os.Getenv("TRUST_RSS_BIN"), true
	if bin == "" {
		bin, measureOnly = e2eBinary(t), false
	}
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	ref := signedImage(t, host)

	work := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(work, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lock := plan.Plan{Schema: plan.Schema, Arch: "x86_64", Profile: "trust", Images: []plan.Image{{Ref: ref, Pinned: true, Uses: []plan.ImageUse{{Component: "test", Key: "signed"}}}}}
	data, err := lockfile.Encode(&lock)
	if err != nil {
		t.Fatal(err)
	}
	lockFile := write("lock.json", data)
	relDir := filepath.Join(work, "rel")
	if err := os.MkdirAll(relDir, 0o755); err != nil {
		t.Fatal(err)
	}
	write("rel/release-x86_64.json", []byte(`{"release": {"base": "5.0.0"}, "images": {"signed": "`+ref+`"}}`))

	tm := newTrustMaterial()
	pub := write("cosign.pub", tm.pub)
	fifo := filepath.Join(work, "fifo.pub")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := write("big.pub", nil)
	if err := os.Truncate(big, 2<<30); err != nil {
		t.Fatal(err)
	}
	bundle := write("bundle.pem", bytes.Repeat(tm.cert, (1<<20-4096)/len(tm.cert)))
	policy := func(name, keyPath string, extraScopes int) string {
		rule := func(key string) []any {
			return []any{map[string]any{"type": "sigstoreSigned", "keyPath": key, "signedIdentity": map[string]any{"type": "matchRepository"}}}
		}
		scopes := map[string]any{host: rule(keyPath)}
		for i := range extraScopes {
			scopes[fmt.Sprintf("quay.io/r%d", i)] = []any{map[string]any{"type": "sigstoreSigned", "rekorPublicKeyPath": pub, "signedIdentity": map[string]any{"type": "matchRepository"},
				"fulcio": map[string]any{"caPath": bundle, "oidcIssuer": "https://issuer.example.com", "subjectEmail": "a@example.com"}}}
		}
		data, _ := json.Marshal(map[string]any{"default": []any{map[string]any{"type": "reject"}}, "transports": map[string]any{"docker": scopes}})
		return write(name, data)
	}
	mirror := func(p string) []string {
		return []string{"mirror", "--lock", lockFile, "--policy", p, "--to", "oci:" + filepath.Join(t.TempDir(), "layout"), "--timeout", "10s", "--retries", "1", "--insecure-registry", host}
	}
	verify := func(p string) []string {
		return []string{"release", "verify", relDir, "--policy", p, "--timeout", "10s", "--retries", "1", "--insecure-registry", host}
	}
	build := func(p string) []string {
		return []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", filepath.Join(t.TempDir(), "out"), "--policy", p}
	}
	const refusedBudget, acceptedBudget = 100 * 1000 * 1000 / 1024, 150 * 1000 * 1000 / 1024
	for _, tc := range []struct {
		label  string
		args   []string
		want   string // in the one error line
		budget int64
	}{
		{"mirror --policy: keyPath /dev/zero (refused)", mirror(policy("zero.json", "/dev/zero", 0)), "key /dev/zero is not a regular file (a character device)", refusedBudget},
		{"mirror --policy: keyPath a named pipe (refused)", mirror(policy("fifo.json", fifo, 0)), "is not a regular file (a named pipe)", refusedBudget},
		{"mirror --policy: keyPath a 2 GiB file (refused)", mirror(policy("big.json", big, 0)), "file is larger than 65536 bytes", refusedBudget},
		{"release verify --policy: keyPath /dev/zero (refused)", verify(policy("zero.json", "/dev/zero", 0)), "key /dev/zero is not a regular file", refusedBudget},
		{"build --policy: keyPath /dev/zero (refused)", build(policy("zero.json", "/dev/zero", 0)), "key /dev/zero is not a regular file", refusedBudget},
		{"mirror --policy: a key and a 1 MiB CA bundle in 3 scopes (policy accepted, the unsigned image refused)", mirror(policy("bundle.json", pub, 3)), "refused by the trust policy", acceptedBudget},
		{"mirror --policy: a 1 MiB CA bundle in 5 scopes, over the files' 4 MiB (refused)", mirror(policy("bundles.json", pub, 5)), "add up to more than 4194304 bytes", refusedBudget},
	} {
		t.Run(tc.label, func(t *testing.T) {
			start := time.Now()
			r, rss := peakRSS(t, work, 60*time.Second, bin, tc.args...)
			took := time.Since(start)
			t.Logf("%-100s peak RSS %6.1f MB, %5.1fs, exit %d: %.120s", tc.label, float64(rss)*1024/1e6, took.Seconds(), r.code, strings.TrimSpace(r.stderr))
			if measureOnly {
				return
			}
			if r.code != exitError || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 1 and one line with %q", r.code, r.stderr, tc.want)
			}
			if rss <= 0 || rss >= tc.budget {
				t.Errorf("peak RSS %d KiB, want under %d KiB", rss, tc.budget)
			}
		})
	}
}
