package repo_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/matrix"
)

// podmanStore is a podman container store of the test's own, so that the
// images the tests build stay out of the machine's.
type podmanStore struct {
	bin  string
	args []string
}

func newPodmanStore(t *testing.T) *podmanStore {
	t.Helper()
	dir := t.TempDir()
	return &podmanStore{
		bin:  testutil.NeedTool(t, "podman", "podman"),
		args: []string{"--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "run"), "--storage-driver", "vfs"},
	}
}

// command is podman with the store, as one shell word list (make's
// PODMAN, a docker command).
func (p *podmanStore) command() string {
	return p.bin + " " + strings.Join(p.args, " ")
}

// dockerShim is a directory holding a docker command that is podman on
// the store, as podman-docker's docker is podman on the machine's: what
// goreleaser's dockers run builds into the store.
func (p *podmanStore) dockerShim(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeExecutable(t, filepath.Join(dir, "docker"), "#!/bin/sh\nexec "+p.command()+` "$@"`+"\n")
	return dir
}

func writeExecutable(t *testing.T, p, script string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// image is an image saved from the store and unpacked.
type image struct {
	config *v1.ConfigFile
	rootfs string
}

// unpack saves ref from the store as an OCI layout (podman save) and
// unpacks its filesystem, with modes, with go-containerregistry.
func (p *podmanStore) unpack(t *testing.T, ref string) image {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "oci")
	cmd := exec.Command(p.bin, append(slicesClone(p.args), "save", "--format", "oci-dir", "-o", dir, ref)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("podman save %s: %v\n%s", ref, err, out)
	}
	lp, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) != 1 {
		t.Fatalf("podman save %s: %d manifests (%v)", ref, len(im.Manifests), err)
	}
	img, err := lp.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	rootfs := filepath.Join(t.TempDir(), "rootfs")
	rc := mutate.Extract(img)
	defer rc.Close()
	if err := untar(rc, rootfs); err != nil {
		t.Fatalf("unpacking %s: %v", ref, err)
	}
	return image{config: cfg, rootfs: rootfs}
}

// untar writes the regular files and directories of a flattened image
// filesystem under dir, with their modes.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean("/" + h.Name)
		target := filepath.Join(dir, filepath.FromSlash(name))
		mode := fs.FileMode(h.Mode).Perm()
		if h.Mode&04000 != 0 || h.Mode&02000 != 0 {
			return errors.New(h.Name + ": set-id bits in the image")
		}
		if h.Mode&01000 != 0 {
			mode |= fs.ModeSticky
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			if err := os.Chmod(target, mode); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, tr); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		default:
			return errors.New(h.Name + ": not a file or directory")
		}
	}
}

// run runs the image's entrypoint with args as a container runtime would
// (no runtime runs here): chrooted into its filesystem, as its user, with
// its environment, from its working directory. It needs root, which CI
// has.
func (im image) run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	if os.Geteuid() != 0 {
		msg := "running an image's binary in its filesystem (chroot) needs root"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	c := im.config.Config
	if len(c.Entrypoint) == 0 {
		t.Fatalf("the image has no entrypoint")
	}
	return im.exec(t, append(slicesClone(c.Entrypoint), args...)...)
}

// exec runs argv[0] (a path in the image, or a name found on the image's
// PATH) as run does.
func (im image) exec(t *testing.T, argv ...string) (stdout, stderr string, code int) {
	t.Helper()
	c := im.config.Config
	prog := argv[0]
	if !strings.Contains(prog, "/") {
		for _, kv := range c.Env {
			if dirs, ok := strings.CutPrefix(kv, "PATH="); ok {
				for _, d := range filepath.SplitList(dirs) {
					if st, err := os.Stat(filepath.Join(im.rootfs, d, prog)); err == nil && st.Mode().IsRegular() {
						prog = path.Join(d, prog)
						break
					}
				}
			}
		}
		if !strings.Contains(prog, "/") {
			t.Fatalf("%s is not on the image's PATH (%v)", argv[0], c.Env)
		}
	}
	uid, gid := userOf(t, c.User)
	cmd := exec.Command(prog, argv[1:]...)
	// exec resolves the path outside the chroot; Path is then used in it.
	cmd.Path = prog
	cmd.Env = c.Env
	cmd.Dir = c.WorkingDir
	if cmd.Dir == "" {
		cmd.Dir = "/"
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: im.rootfs, Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("running %s in the image: %v", argv, err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// userOf reads a numeric USER uid:gid.
func userOf(t *testing.T, user string) (uint32, uint32) {
	t.Helper()
	u, g, _ := strings.Cut(user, ":")
	uid, err1 := strconv.ParseUint(u, 10, 32)
	gid, err2 := strconv.ParseUint(g, 10, 32)
	if err1 != nil || err2 != nil {
		t.Fatalf("image user %q is not uid:gid", user)
	}
	return uint32(uid), uint32(gid)
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// checkImage checks what every image of the tool must be: its binary at
// the entrypoint, run as RunnerUser (the Tekton pods' fsGroup), with the
// build host's CA bundle and a /tmp anyone can write (sticky) as HOME,
// for arch.
func checkImage(t *testing.T, im image, arch string) {
	t.Helper()
	c := im.config.Config
	if im.config.Architecture != arch || im.config.OS != "linux" {
		t.Errorf("image platform %s/%s, want linux/%s", im.config.OS, im.config.Architecture, arch)
	}
	if want := strconv.Itoa(matrix.RunnerUser) + ":" + strconv.Itoa(matrix.RunnerUser); c.User != want {
		t.Errorf("image user %q, want %s", c.User, want)
	}
	if len(c.Entrypoint) != 1 || c.Entrypoint[0] != "/usr/bin/microshift-compose" {
		t.Errorf("image entrypoint %q", c.Entrypoint)
	}
	bundle, err := os.ReadFile(filepath.Join(im.rootfs, "etc", "ssl", "certs", "ca-certificates.crt"))
	host, herr := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil || herr != nil || !bytes.Equal(bundle, host) || !bytes.Contains(bundle, []byte("-----BEGIN CERTIFICATE-----")) {
		t.Errorf("the image's CA bundle (%v) is not the host's (%v)", err, herr)
	}
	if st, err := os.Stat(filepath.Join(im.rootfs, "tmp")); err != nil || st.Mode().Perm() != 0o777 || st.Mode()&fs.ModeSticky == 0 {
		t.Errorf("the image's /tmp: %v, %v; want 1777", st.Mode(), err)
	}
	if !strings.Contains(strings.Join(c.Env, " "), "HOME=/tmp") {
		t.Errorf("image environment %q: HOME is not /tmp", c.Env)
	}
}

// TestImage builds the container image as a user does (`make image`, from
// a copy of the checkout, with podman, no base image), then runs the
// image's binary, in the image's filesystem as its user: `version` names
// the commit, and a Tekton task that the image's own `matrix --emit
// tekton` describes, run as Tekton runs it (its workspace writable through
// the fsGroup), composes the planned ID.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and an image")
	}
	testutil.ReleaseTest(t)
	// Builds and a podman image store of its own: it runs beside
	// TestGoreleaser.
	t.Parallel()
	root := testutil.Root(t)
	store := newPodmanStore(t)
	src := copyCheckout(t, root)
	const ref = "localhost/microshift-compose:test"
	cmd := exec.Command("make", "image", "IMAGE="+ref, "PODMAN="+store.command())
	cmd.Dir, cmd.Env = src, append(os.Environ(), "GOFLAGS=", "MAKEFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	commit, err := exec.Command("git", "-C", src, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	im := store.unpack(t, ref)
	checkImage(t, im, runtime.GOARCH)
	if rev := im.config.Config.Labels["org.opencontainers.image.revision"]; rev != strings.TrimSpace(string(commit)) {
		t.Errorf("image revision label %q, want %s", rev, commit)
	}

	stdout, stderr, code := im.run(t, "version")
	if want := "microshift-compose v0.0.0-20250102030405-" + string(commit[:12]) + " (commit " + string(commit[:12]) + ", 2025-01-02T03:04:05Z, "; code != 0 || !strings.HasPrefix(stdout, want) {
		t.Fatalf("the image's version: exit %d, %q (stderr %q); want %q...", code, stdout, stderr, want)
	}

	// A Tekton task of a matrix, planned by the image's own binary.
	stdout, stderr, code = im.run(t, "matrix", "--profile", "minimal", "--arch", runtimeArch(), "--release", "5.0",
		"--emit", "tekton", "--runner-image", ref, "--output-claim", "compositions")
	if code != 0 {
		t.Fatalf("matrix --emit tekton in the image: exit %d\n%s", code, stderr)
	}
	argv, params := tektonTask(t, []byte(stdout), "microshift-compose-matrix-x7k2p", "/workspace/output")
	// The claim's volume as Tekton mounts it with the PipelineRun's fsGroup.
	ws := filepath.Join(im.rootfs, "workspace", "output")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(ws, 0, matrix.RunnerUser); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ws, 0o2775); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = im.exec(t, argv...)
	var summary struct {
		ID     string `json:"id"`
		Output string `json:"output"`
	}
	if err := json.Unmarshal([]byte(stdout), &summary); code != 0 || err != nil || summary.ID != params["id"] {
		t.Fatalf("the Tekton task %q in the image: exit %d, summary %+v (%v), want ID %s\n%s", argv, code, summary, err, params["id"], stderr)
	}
	lock, err := os.ReadFile(filepath.Join(im.rootfs, summary.Output, "compose.lock.json"))
	if err != nil || !bytes.Contains(lock, []byte(`"id": "`+params["id"]+`"`)) {
		t.Errorf("the task's lock at %s: %v", summary.Output, err)
	}
	t.Logf("Tekton task %s in the image reproduces its ID %s", params["cell"], summary.ID)
}

// runtimeArch is this machine's arch as MicroShift's release files name it.
func runtimeArch() string {
	if runtime.GOARCH == "arm64" {
		return "aarch64"
	}
	return "x86_64"
}

// tektonVariable is a Tekton variable: $(params.id).
var tektonVariable = regexp.MustCompile(`\$\(([a-zA-Z.]+)\)`)

// tektonTask is the command line of the PipelineRun's first task with
// Tekton's variables replaced: its parameters, the PipelineRun's name, the
// workspace's path.
func tektonTask(t *testing.T, data []byte, run, workspace string) (argv []string, params map[string]string) {
	t.Helper()
	var pr struct {
		Spec struct {
			PipelineSpec struct {
				Tasks []struct {
					Params []struct {
						Name  string `json:"name"`
						Value string `json:"value"`
					} `json:"params"`
					TaskSpec struct {
						Steps []struct {
							Command []string `json:"command"`
							Args    []string `json:"args"`
						} `json:"steps"`
					} `json:"taskSpec"`
				} `json:"tasks"`
			} `json:"pipelineSpec"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &pr); err != nil || len(pr.Spec.PipelineSpec.Tasks) == 0 {
		t.Fatalf("no PipelineRun with tasks (%v):\n%s", err, data)
	}
	task := pr.Spec.PipelineSpec.Tasks[0]
	vars := map[string]string{"context.pipelineRun.name": run, "workspaces.output.path": workspace}
	params = map[string]string{}
	replace := func(s string) string {
		return tektonVariable.ReplaceAllStringFunc(s, func(v string) string {
			val, ok := vars[v[2:len(v)-1]]
			if !ok {
				t.Fatalf("no value for %s", v)
			}
			return val
		})
	}
	for _, p := range task.Params {
		if p.Name == "image" {
			continue // the pipeline's parameter; the step's image is not run here
		}
		params[p.Name] = replace(p.Value)
		vars["params."+p.Name] = params[p.Name]
	}
	step := task.TaskSpec.Steps[0]
	for _, a := range append(slicesClone(step.Command), step.Args...) {
		argv = append(argv, replace(a))
	}
	return argv, params
}
