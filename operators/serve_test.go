package operators_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/operators"
	"github.com/microshift-compose/microshift-compose/operators/operatorstest"
	"github.com/microshift-compose/microshift-compose/releases"
)

// runIn builds a Containerfile FROM image whose one step runs args in it
// (podman build, chroot isolation: no OCI runtime needed) on a store of
// the test's own, and returns its error and output.
func runIn(t *testing.T, podman, store, image string, args []string) (string, error) {
	t.Helper()
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = strconv.Quote(a)
	}
	dir := t.TempDir()
	testutil.WriteFile(t, filepath.Join(dir, "Containerfile"), []byte("FROM "+image+"\nRUN ["+strings.Join(quoted, ", ")+"]\n"))
	cmd := exec.Command(podman, "--root", filepath.Join(store, "root"), "--runroot", filepath.Join(store, "run"), "--storage-driver", "vfs",
		"build", "--isolation", "chroot", "--network", "host", "--pull=never", "-f", filepath.Join(dir, "Containerfile"), dir)
	cmd.Env = append(os.Environ(), "BUILDAH_ISOLATION=chroot")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestFilteredCatalogServes runs opm in catalog images as the device's
// CatalogSource pod does, with podman: the image's base layer holds the
// pinned opm and its command serves the configs with the cache built with
// the image (opm serve --cache-dir), here one that does not match the
// configs, as an original's cache never matches the filtered configs. opm
// refuses the original's cache where the command enforces it (the
// default with --cache-dir); in the filtered image, its layers and
// whiteouts applied by podman, the command with
// --cache-enforce-integrity=false builds its cache from the filtered
// configs.
func TestFilteredCatalogServes(t *testing.T) {
	podman := testutil.NeedTool(t, "podman", "podman")
	skopeo := operatorstest.Skopeo(t)
	opm, err := os.ReadFile(operatorstest.Opm(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	img := operatorstest.Image("amd64", operatorstest.ImageOptions{
		Files: operatorstest.Sample().PerPackage(false), Cache: true,
		Base: map[string][]byte{"bin/opm": opm, "tmp/": nil},
	})
	dir := t.TempDir()
	original := filepath.Join(dir, "original")
	ref, err := operators.ParseRef(operatorstest.WriteImageLayout(t, original, img))
	if err != nil {
		t.Fatal(err)
	}
	c, err := operators.Load(ctx, ref, releases.X86_64, operators.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Filter(ctx, mustChoices(t, "prometheus"), operators.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	filtered := filepath.Join(dir, "filtered")
	writeLayout(t, c, res.Filtered, filtered)
	// The device runs the image's command; the step runs it with
	// --cache-only, which builds opm's cache (checking it, when enforced)
	// and exits instead of serving.
	store := t.TempDir()
	for _, tc := range []struct {
		name, layout, ref string
		cmd               []string
		ok                bool
	}{
		{"original", original, operatorstest.SampleRepository + ":v1", []string{"serve", "/configs", "--cache-dir=/tmp/cache", "--cache-enforce-integrity=true"}, false},
		{"filtered", filtered, res.Filtered.Ref, res.Filtered.Cmd, true},
		// The same step refuses the filtered image's cache if it had one.
		{"filtered with integrity enforced", filtered, res.Filtered.Ref, []string{"serve", "/configs", "--cache-dir=/tmp/cache", "--cache-enforce-integrity=true"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			local := "localhost/microshift-compose-test-catalog:" + strings.ReplaceAll(strings.ReplaceAll(tc.name, ",", ""), " ", "-")
			cmd := exec.Command(skopeo, "copy", "oci:"+tc.layout+":"+tc.ref, "containers-storage:[vfs@"+filepath.Join(store, "root")+"+"+filepath.Join(store, "run")+"]"+local)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("skopeo copy: %v\n%s", err, out)
			}
			out, err := runIn(t, podman, store, local, append(append([]string{"/bin/opm"}, tc.cmd...), "--cache-only"))
			if (err == nil) != tc.ok || (!tc.ok && !strings.Contains(out, "cache")) {
				t.Errorf("opm %s --cache-only in the %s image: %v, want success %v (or opm refusing its cache)\n%s", strings.Join(tc.cmd, " "), tc.name, err, tc.ok, out)
			}
			t.Logf("%s", out)
		})
	}
}
