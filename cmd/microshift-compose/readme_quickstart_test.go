package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/osbuild/blueprint/pkg/blueprint"
	"github.com/osbuild/images/pkg/bib/blueprintload"
	shexpand "mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/internal/distros"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/render/installer"
)

// quickstartHeading is the README section whose commands
// TestREADMEQuickstart runs.
const quickstartHeading = "## From zero to a device"

// TestREADMEQuickstart runs the shell blocks of the README's "From zero to
// a device", each in a directory of its own, with a real shell parser and
// interpreter (mvdan.cc/sh): pipes, quoting and builtins such as printf run
// as bash runs them, and every program a line starts reaches one handler
// below, by name, with its arguments as the shell expanded them. A program
// without a handler fails the test, so a command added to the section
// untested fails it too; the test also counts the section's commands and
// fails when fewer ran.
//
// What runs for real: microshift-compose (the binary), mkdir, install and
// tee, skopeo on what mirror wrote, and podman build, push and pull. What
// cannot run here (composer-cli, systemctl, image-builder, tar of a
// commit composer made, the HTTP server) is checked against what the
// earlier lines wrote: the files they name exist and are ours, the names,
// refs, URLs, ports and image types agree with the build's, and the
// image-builder config loads with its loader and gives osbuild/images'
// manifest without a warning.
//
// Substituted, and why:
//   - build gets --release-dir with a synthetic 5.0 release whose images
//     are in a local registry (TLS from a test CA, htpasswd): the embedded
//     release names quay.io images, which mirror cannot reach offline. The
//     user's pull-secret.json holds that registry's credentials, and the
//     user's certs.d its CA.
//   - registry.example.com is that registry (podman push and pull; they
//     also get --cert-dir and --authfile, podman's own flags, since its CA
//     and user are the test's).
//   - podman build gets --build-arg BASE_IMAGE= a base made of this
//     machine's skopeo and stand-ins for dnf, systemctl and
//     firewall-offline-cmd (TestBootcImageBuild's), since the RHEL bootc
//     base is not reachable; podman runs on a store of its own with chroot
//     isolation; "root's storage" (sudo podman pull) is a second store.
//   - sudo is dropped; absolute paths of commands that change the host
//     (/etc/osbuild-worker, /var/www) are under a directory standing for /.
//   - the block ends with wait (for the line run with &).
func TestREADMEQuickstart(t *testing.T) {
	t.Parallel() // see parallelE2E
	blocks := quickstartBlocks(t)
	if len(blocks) != 2 {
		t.Fatalf("README %q: %d sh blocks, want 2 (bootc, rpm-ostree)", quickstartHeading, len(blocks))
	}
	bin := e2eBinary(t)
	const user, password = "robot", "quickstart-pass"
	reg := newSecureRegistry(t, user, password, true)
	for i, block := range blocks {
		name := []string{"bootc", "rpm-ostree"}[i]
		t.Run(name, func(t *testing.T) {
			q := newQuickstart(t, bin, reg, user, password)
			q.run(block)
			switch name {
			case "bootc":
				q.ranAll("microshift-compose build", "microshift-compose mirror", "podman build", "podman push", "podman pull", "mkdir", "podman run")
			case "rpm-ostree":
				q.ranAll("microshift-compose build", "install", "tee", "systemctl restart", "composer-cli blueprints push", "composer-cli compose start-ostree",
					"composer-cli compose image", "mkdir", "tar", "python3")
				if q.served == "" || !slices.Equal(q.started, []string{"edge-commit", "edge-installer"}) {
					t.Errorf("the block serves %q and composes %q: want the commit served, an edge-commit and then its edge-installer", q.served, q.started)
				}
			}
		})
	}
}

// quickstartBlocks returns the ```sh blocks of the README section.
func quickstartBlocks(t *testing.T) []string {
	t.Helper()
	readme := string(mustReadFile(t, filepath.Join("..", "..", "README.md")))
	start := strings.Index(readme, "\n"+quickstartHeading+"\n")
	if start < 0 {
		t.Fatalf("README has no section %q", quickstartHeading)
	}
	section := readme[start+1:]
	if end := strings.Index(section[len(quickstartHeading):], "\n## "); end >= 0 {
		section = section[:len(quickstartHeading)+end]
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?ms)^```sh\n(.*?)^```$").FindAllStringSubmatch(section, -1) {
		blocks = append(blocks, m[1])
	}
	if n := strings.Count(section, "```"); n != 2*len(blocks) {
		t.Errorf("README %q has %d fences, %d of them sh blocks: a block of another language is not run", quickstartHeading, n, 2*len(blocks))
	}
	return blocks
}

// quickstart is a user's directory and what the commands run so far did,
// which later commands must agree with.
type quickstart struct {
	t                   *testing.T
	bin                 string
	reg                 *secureRegistry
	env                 *userEnv
	work, root, certDir string
	pullSecret          []byte

	mu   sync.Mutex
	ran  []string // "program subcommand" of every command run
	last *quickstartBuild

	pm, rootPM  *podman
	built       map[string]string // tag (as written) -> image ID
	rootImages  map[string]bool   // tags pulled into root's storage
	dirs        map[string]bool   // directories mkdir made, as written
	blueprints  map[string]string // pushed blueprint name -> file
	started     []string          // image types of start-ostree, in order
	composes    map[string]string // compose image UUID -> image type
	extracted   string            // tar's -C directory
	served      string            // the http.server's directory
	workerReady bool              // the worker restarted with its pull secret
}

type quickstartBuild struct {
	out                              string
	plan                             plan.Plan
	bootc, bib, kickstart            bool
	pullSecret, imageType, ostreeURL string
}

func newQuickstart(t *testing.T, bin string, reg *secureRegistry, user, password string) *quickstart {
	q := &quickstart{t: t, bin: bin, reg: reg, env: newUserEnv(t), work: t.TempDir(), root: t.TempDir(),
		built: map[string]string{}, rootImages: map[string]bool{}, dirs: map[string]bool{}, blueprints: map[string]string{}, composes: map[string]string{}}
	q.env.trust(t, reg.CA, reg.Host)
	q.certDir = filepath.Join(reg.CA.WriteCertsD(t, t.TempDir(), reg.Host), reg.Host)
	// What the user brings: the pull secret and the SSH key.
	q.pullSecret = authJSON(user, password, reg.Host)
	writeFileMode(t, filepath.Join(q.work, "pull-secret.json"), q.pullSecret, 0o600)
	writeFileMode(t, filepath.Join(q.work, "admin.pub"), []byte(testSSHKey), 0o644)
	return q
}

// run interprets a block with set -e, every program through q.exec.
func (q *quickstart) run(block string) {
	t := q.t
	file, err := syntax.NewParser().Parse(strings.NewReader("set -e\n"+block+"wait\n"), "README.md")
	if err != nil {
		t.Fatalf("the README block does not parse as shell: %v\n%s", err, block)
	}
	var commands []string
	syntax.Walk(file, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			if name := c.Args[0].Lit(); !interp.IsBuiltin(name) {
				commands = append(commands, name)
			}
		}
		return true
	})
	var stderr bytes.Buffer
	r, err := interp.New(interp.Dir(q.work), interp.Env(shexpand.ListEnviron("PATH=/nonexistent", "HOME="+q.env.Home)),
		interp.StdIO(nil, io.Discard, &stderr), interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc { return q.exec }))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background(), file); err != nil {
		t.Fatalf("the README block stopped: %v\n%s", err, stderr.String())
	}
	if len(q.ran) != len(commands) {
		t.Errorf("%d commands in the block, %d ran: %q", len(commands), len(q.ran), q.ran)
	}
}

// ranAll fails unless each of the commands ran.
func (q *quickstart) ranAll(want ...string) {
	for _, w := range want {
		if !slices.Contains(q.ran, w) {
			q.t.Errorf("the README block does not run %s; ran %q", w, q.ran)
		}
	}
}

// exec runs or checks one program of the block. A failed check is an
// error of the test and exit status 1, which stops the block (set -e).
func (q *quickstart) exec(ctx context.Context, args []string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	hc := interp.HandlerCtx(ctx)
	sudo := false
	if args[0] == "sudo" {
		sudo, args = true, args[1:]
	}
	what := args[0]
	if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
		what += " " + args[1]
		if args[0] == "composer-cli" && len(args) > 2 {
			what += " " + args[2]
		}
	}
	q.ran = append(q.ran, what)
	func() {
		defer func() {
			if r := recover(); r != nil {
				q.t.Errorf("%s: %v", what, r)
			}
		}()
		q.dispatch(what, args, sudo, hc.Stdin)
	}()
	if q.t.Failed() {
		return interp.ExitStatus(1)
	}
	return nil
}

func (q *quickstart) errorf(format string, a ...any) { q.t.Errorf(format, a...) }

func (q *quickstart) dispatch(what string, args []string, sudo bool, stdin io.Reader) {
	switch what {
	case "microshift-compose build":
		q.build(args[2:])
	case "microshift-compose mirror":
		q.mirror(args[2:])
	case "podman build":
		q.podmanBuild(args[2:])
	case "podman push":
		q.podmanPush(args[2:])
	case "podman pull":
		q.podmanPull(args[2:], sudo)
	case "podman run":
		q.imageBuilder(args[2:], sudo)
	case "mkdir":
		for _, a := range args[1:] {
			if !strings.HasPrefix(a, "-") {
				q.dirs[filepath.Clean(a)] = true
			}
		}
		q.host("mkdir", args[1:], nil)
	case "install":
		q.installPullSecret(args[1:], sudo)
	case "tee":
		q.host("tee", args[1:], stdin)
	case "systemctl restart":
		q.restartWorker(args[1:], sudo)
	case "composer-cli blueprints push":
		q.blueprintsPush(args[3:])
	case "composer-cli compose start-ostree":
		q.startOSTree(args[3:])
	case "composer-cli compose image":
		q.composeImage(args[3:])
	case "tar":
		q.extractCommit(args[1:])
	case "python3":
		q.serveCommit(args[1:])
	default:
		q.errorf("the README runs %q, which TestREADMEQuickstart neither runs nor checks: add a handler", strings.Join(args, " "))
	}
}

// flags splits arguments into flags (with the flags in valued taking the
// next argument; --flag=value either way) and positional arguments.
func flags(args []string, valued ...string) (map[string][]string, []string) {
	f := map[string][]string{}
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "-") && strings.Contains(a, "="):
			k, v, _ := strings.Cut(a, "=")
			f[k] = append(f[k], v)
		case slices.Contains(valued, a) && i+1 < len(args):
			f[a] = append(f[a], args[i+1])
			i++
		case strings.HasPrefix(a, "-"):
			f[a] = append(f[a], "")
		default:
			pos = append(pos, a)
		}
	}
	return f, pos
}

// build runs microshift-compose build with the synthetic release and
// checks what it wrote for the flags the README gives.
func (q *quickstart) build(args []string) {
	t := q.t
	cmd := newRootCmd(io.Discard, io.Discard)
	c, rest, err := cmd.Find(append([]string{"build"}, args...))
	if err == nil {
		err = c.ParseFlags(rest)
	}
	if err != nil {
		q.errorf("build %q: %v", args, err)
		return
	}
	str := func(name string) string { v, _ := c.Flags().GetString(name); return v }
	boolean := func(name string) bool { v, _ := c.Flags().GetBool(name); return v }
	r := q.env.exec(t, q.work, q.bin, append(append([]string{"build"}, args...), "--release-dir", q.reg.release)...)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "wrote "+str("output")+": profile full, release 5.0, x86_64: ") {
		q.errorf("build: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		return
	}
	b := &quickstartBuild{out: filepath.Clean(str("output")), bootc: boolean("bootc"), bib: boolean("bib"), kickstart: boolean("kickstart"),
		pullSecret: str("pull-secret"), imageType: str("image-type"), ostreeURL: str("ostree-url")}
	out := filepath.Join(q.work, b.out)
	b.plan = checkOutputDir(t, out, "full", "x86_64", "5.0")
	if b.pullSecret == "" || !bytes.Equal(mustReadFile(t, filepath.Join(q.work, b.pullSecret)), q.pullSecret) {
		q.errorf("build: --pull-secret %q is not the user's pull secret", b.pullSecret)
	}
	want := map[string]bool{"Containerfile": b.bootc, installer.BIBConfigFile: b.bib, "microshift.ks": b.kickstart, "installer.toml": b.imageType == "edge-installer"}
	for file, wanted := range want {
		if _, err := os.Stat(filepath.Join(out, file)); (err == nil) != wanted {
			q.errorf("build %q: %s written %v, want %v", args, file, err == nil, wanted)
		}
	}
	if b.bootc {
		cf := string(mustReadFile(t, filepath.Join(out, "Containerfile")))
		for _, line := range []string{"ARG BASE_IMAGE=", "FROM ${BASE_IMAGE}", "COPY images/ /usr/lib/microshift-compose/images/", "RUN --mount=type=secret,id=pullsecret "} {
			if !strings.Contains(cf, "\n"+line) {
				q.errorf("the Containerfile has no line %q, which the README's podman build relies on", line)
			}
		}
	}
	q.last = b
}

// mirror runs mirror and checks every image of images.txt is where the
// Containerfile copies it from.
func (q *quickstart) mirror(args []string) {
	b := q.needBuild("mirror")
	f, _ := flags(args, "--lock", "--to", "--authfile")
	images := filepath.Join(b.out, "images")
	if first(f["--lock"]) != filepath.Join(b.out, "compose.lock.json") || first(f["--to"]) != "dir:"+images {
		q.errorf("mirror %q: want --lock %s/compose.lock.json --to dir:%s (the Containerfile's COPY images/)", args, b.out, images)
		return
	}
	if r := q.env.exec(q.t, q.work, q.bin, append([]string{"mirror"}, args...)...); r.code != 0 {
		q.errorf("mirror: exit %d: %s", r.code, r.stderr)
		return
	}
	for _, ref := range nonEmptyLines(string(mustReadFile(q.t, filepath.Join(q.work, b.out, "images.txt")))) {
		runSkopeo(q.t, "inspect", "--raw", "dir:"+filepath.Join(q.work, images, airgap.DirName(ref)))
	}
}

// podmanBuild builds the Containerfile as the README says, on the test
// base.
func (q *quickstart) podmanBuild(args []string) {
	t := q.t
	b := q.needBuild("podman build")
	f, pos := flags(args, "--platform", "--authfile", "--secret", "-t", "-f", "--build-arg")
	if first(f["-f"]) != filepath.Join(b.out, "Containerfile") || len(pos) != 1 || filepath.Clean(pos[0]) != b.out {
		q.errorf("podman build %q: want -f %s/Containerfile and the context %s/", args, b.out, b.out)
	}
	if first(f["--secret"]) != "id=pullsecret,src="+b.pullSecret {
		q.errorf("podman build --secret %q: want id=pullsecret,src=%s (the build's --pull-secret)", first(f["--secret"]), b.pullSecret)
	}
	if first(f["--platform"]) != "linux/amd64" || b.plan.Arch != "x86_64" {
		q.errorf("podman build --platform %q for a build of %s", first(f["--platform"]), b.plan.Arch)
	}
	tag := first(f["-t"])
	if q.pm == nil {
		q.pm = newPodman(t, needTool(t, "podman", "podman"))
		q.rootPM = newPodman(t, q.pm.bin)
	}
	base := q.pm.testBase(t, needTool(t, "skopeo", "skopeo"), q.reg)
	q.podman(q.pm, append([]string{"build", "--isolation", "chroot", "--cap-add", "all", "--network", "host", "--build-arg", "BASE_IMAGE=" + base}, q.substitute(args)...)...)
	q.built[tag] = strings.TrimSpace(q.podman(q.pm, "image", "inspect", "--format", "{{.Id}}", q.substitute([]string{tag})[0]))
}

// podman runs podman on a store in the user's directory, where the
// README's relative paths are.
func (q *quickstart) podman(pm *podman, args ...string) string {
	q.t.Helper()
	cmd := pm.cmd(args...)
	cmd.Dir = q.work
	out, err := cmd.CombinedOutput()
	if err != nil {
		q.t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// podmanPush pushes to the test registry and reads the manifest back.
func (q *quickstart) podmanPush(args []string) {
	t := q.t
	if len(args) != 1 || q.built[args[0]] == "" {
		q.errorf("podman push %q: not an image the README built", args)
		return
	}
	digestFile := filepath.Join(t.TempDir(), "digest")
	ref := q.substitute(args)[0]
	q.podman(q.pm, "push", "--authfile", filepath.Join(q.work, "pull-secret.json"), "--cert-dir", q.certDir, "--digestfile", digestFile, ref)
	raw, err := exec.Command(needTool(t, "skopeo", "skopeo"), "inspect", "--raw", "--authfile", filepath.Join(q.work, "pull-secret.json"), "--cert-dir", q.certDir, "docker://"+ref).Output()
	if err != nil {
		q.errorf("skopeo inspect docker://%s after podman push: %v", ref, err)
		return
	}
	if sum := sha256.Sum256(raw); "sha256:"+hex.EncodeToString(sum[:]) != strings.TrimSpace(string(mustReadFile(t, digestFile))) {
		q.errorf("the registry's manifest of %s is not the one podman pushed", ref)
	}
}

// podmanPull pulls into "root's storage", the store image-builder reads.
func (q *quickstart) podmanPull(args []string, sudo bool) {
	if !sudo || len(args) != 1 || q.built[args[0]] == "" {
		q.errorf("podman pull %q (sudo %v): want sudo podman pull of the image the README built and pushed", args, sudo)
		return
	}
	ref := q.substitute(args)[0]
	q.podman(q.rootPM, "pull", "--authfile", filepath.Join(q.work, "pull-secret.json"), "--cert-dir", q.certDir, ref)
	if id := strings.TrimSpace(q.podman(q.rootPM, "image", "inspect", "--format", "{{.Id}}", ref)); id != q.built[args[0]] {
		q.errorf("root's storage has %s as %s, podman build made %s", ref, id, q.built[args[0]])
	}
	q.rootImages[args[0]] = true
}

// imageBuilderRe finds the image-builder image config.toml's header names.
var imageBuilderRe = regexp.MustCompile(`(?m)^#.* (\S+/image-builder-cli)\S* \\$`)

// imageBuilder checks the image-builder command (image-builder-cli's
// container, `build --bootc-ref IMAGE --blueprint CONFIG --output-dir DIR
// TYPE`): its mounts name the config.toml build wrote and directories that
// exist, the image is the one pulled into root's storage, and the config
// loads with the blueprint loader image-builder and bootc-image-builder
// share and makes osbuild/images' manifest for the type without a warning.
func (q *quickstart) imageBuilder(args []string, sudo bool) {
	t := q.t
	b := q.needBuild("image-builder")
	f, pos := flags(args, "-v", "--security-opt", "--bootc-ref", "--blueprint", "--output-dir")
	if !sudo || len(pos) != 3 || pos[1] != "build" {
		q.errorf("podman run %q: want sudo podman run ... IMAGE-BUILDER build --bootc-ref IMAGE --blueprint CONFIG --output-dir DIR TYPE", args)
		return
	}
	bibImage, image, typ := pos[0], first(f["--bootc-ref"]), pos[2]
	mounts := map[string]string{}
	for _, v := range f["-v"] {
		parts := strings.Split(v, ":")
		mounts[parts[1]] = parts[0]
		if !strings.HasPrefix(parts[0], "/") {
			if _, err := os.Stat(filepath.Join(q.work, parts[0])); err != nil {
				q.errorf("podman run -v %s: %v", v, err)
			}
		}
	}
	config := first(f["--blueprint"])
	if src := mounts[config]; filepath.Clean(src) != filepath.Join(b.out, installer.BIBConfigFile) {
		q.errorf("--blueprint %s is mounted from %q, not the %s build wrote", config, src, filepath.Join(b.out, installer.BIBConfigFile))
	}
	if out := first(f["--output-dir"]); !q.dirs[filepath.Clean(mounts[out])] {
		q.errorf("--output-dir %s is mounted from %q, which the README does not create", out, mounts[out])
	}
	if mounts["/var/lib/containers/storage"] != "/var/lib/containers/storage" || !q.rootImages[image] {
		q.errorf("image-builder builds %s from root's storage, but the README did not sudo podman pull it", image)
	}
	data := mustReadFile(t, filepath.Join(q.work, b.out, installer.BIBConfigFile))
	if m := imageBuilderRe.FindSubmatch(data); m == nil || strings.Split(bibImage, ":")[0] != string(m[1]) {
		q.errorf("the README runs %s; config.toml says to run %s", bibImage, m)
	}
	bp, err := blueprintload.Load(filepath.Join(q.work, b.out, installer.BIBConfigFile))
	if err != nil {
		q.errorf("image-builder cannot load config.toml: %v", err)
		return
	}
	if bp.Customizations.Installer != nil && bp.Customizations.Installer.Kickstart != nil {
		if typ != "anaconda-iso" {
			q.errorf("config.toml holds a kickstart, for anaconda-iso; the README builds %s", typ)
		}
		return
	}
	if !slices.Contains(blueprints.BIBDiskTypes, typ) || bp.Customizations.Disk == nil || len(bp.Customizations.User) == 0 {
		q.errorf("%s with config.toml's customizations %+v: want a disk type, the disk and the user", typ, bp.Customizations)
		return
	}
	if _, warnings, err := blueprints.BIBManifest(bp, typ, b.plan.Target.Distro, releases.Arch(b.plan.Arch)); err != nil || len(warnings) > 0 {
		q.errorf("osbuild/images' bootc distro, %s: %v, warnings %q", typ, err, warnings)
	}
}

// host runs a program that changes the host with its absolute paths under
// q.root.
func (q *quickstart) host(prog string, args []string, stdin io.Reader) {
	for i, a := range args {
		if strings.HasPrefix(a, "/") {
			args[i] = filepath.Join(q.root, a)
		}
	}
	var stderr bytes.Buffer
	cmd := exec.Command(prog, args...)
	cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = q.work, stdin, io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		q.errorf("%s %q: %v: %s", prog, args, err, stderr.String())
	}
}

// installPullSecret places the pull secret where the worker's config will
// name it.
func (q *quickstart) installPullSecret(args []string, sudo bool) {
	b := q.needBuild("install")
	_, pos := flags(args, "-m")
	if !sudo || len(pos) != 2 || pos[0] != b.pullSecret {
		q.errorf("install %q: want sudo install of the build's --pull-secret %s", args, b.pullSecret)
		return
	}
	q.host("install", args, nil)
}

// workerConfig is the part of osbuild-worker.toml the README writes.
type workerConfig struct {
	Containers struct {
		AuthFilePath string `toml:"auth_file_path"`
	} `toml:"containers"`
}

// restartWorker checks, when the README restarts the worker, that its
// config names an auth file holding the pull secret, 0600.
func (q *quickstart) restartWorker(args []string, sudo bool) {
	if !sudo || !slices.Equal(args, []string{"restart", "osbuild-worker@1"}) {
		q.errorf("systemctl %q: want sudo systemctl restart osbuild-worker@1", args)
		return
	}
	var c workerConfig
	md, err := toml.DecodeFile(filepath.Join(q.root, "etc/osbuild-worker/osbuild-worker.toml"), &c)
	if err != nil || len(md.Undecoded()) > 0 || !filepath.IsAbs(c.Containers.AuthFilePath) {
		q.errorf("/etc/osbuild-worker/osbuild-worker.toml: %v, undecoded %v, auth_file_path %q", err, md.Undecoded(), c.Containers.AuthFilePath)
		return
	}
	path := filepath.Join(q.root, c.Containers.AuthFilePath)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 || !bytes.Equal(mustReadFile(q.t, path), q.pullSecret) {
		q.errorf("auth_file_path %s: %v; want the pull secret, 0600", c.Containers.AuthFilePath, err)
		return
	}
	q.workerReady = true
}

// blueprintsPush checks the file is a blueprint the build wrote.
func (q *quickstart) blueprintsPush(args []string) {
	b := q.needBuild("blueprints push")
	if len(args) != 1 || (args[0] != filepath.Join(b.out, "blueprint.toml") && args[0] != filepath.Join(b.out, "installer.toml")) {
		q.errorf("composer-cli blueprints push %q: not a blueprint the build wrote", args)
		return
	}
	var bp blueprint.Blueprint
	if _, err := toml.DecodeFile(filepath.Join(q.work, args[0]), &bp); err != nil || bp.Name == "" {
		q.errorf("%s: %v (name %q)", args[0], err, bp.Name)
		return
	}
	q.blueprints[bp.Name] = args[0]
}

// startOSTree checks a compose: a pushed blueprint, the image type build
// validated it for, osbuild's ref for it, and for the installer the URL
// the commit is served at.
func (q *quickstart) startOSTree(args []string) {
	b := q.needBuild("start-ostree")
	f, pos := flags(args, "--ref", "--url", "--parent", "--size")
	if len(pos) != 2 || q.blueprints[pos[0]] == "" {
		q.errorf("compose start-ostree %q: want BLUEPRINT TYPE, a blueprint pushed before", args)
		return
	}
	file, typ := q.blueprints[pos[0]], pos[1]
	distro, arch := b.plan.Target.Distro, releases.Arch(b.plan.Arch)
	if _, err := distros.ImageType(distro, typ, arch); err != nil {
		q.errorf("compose start-ostree ... %s: %v", typ, err)
	}
	ref, err := blueprints.CommitRef(distro, typ, arch)
	if err != nil || first(f["--ref"]) != ref {
		q.errorf("compose start-ostree --ref %q: osbuild's ref for %s %s is %q (%v)", first(f["--ref"]), distro, typ, ref, err)
	}
	if ks := string(mustReadFile(q.t, filepath.Join(q.work, b.out, "microshift.ks"))); !strings.Contains(ks, " --ref="+first(f["--ref"])+" ") {
		q.errorf("microshift.ks installs another ref than %s", first(f["--ref"]))
	}
	if !q.workerReady {
		q.errorf("compose start-ostree before the worker has the pull secret: it cannot pull blueprint.toml's [[containers]]")
	}
	switch filepath.Base(file) {
	case "blueprint.toml":
		if typ != b.plan.Target.ImageType || len(f["--url"]) > 0 {
			q.errorf("compose start-ostree of blueprint.toml as %s (--url %q): build validated it as %s, a first commit has no parent", typ, f["--url"], b.plan.Target.ImageType)
		}
	case "installer.toml":
		var bp blueprint.Blueprint
		toml.DecodeFile(filepath.Join(q.work, file), &bp)
		if typ != b.imageType || len(bp.Packages) > 0 || bp.Customizations == nil || bp.Customizations.Installer == nil {
			q.errorf("compose start-ostree of installer.toml as %s: want --image-type %s, no packages, the kickstart", typ, b.imageType)
		}
		// The server runs in the background (&): whether it serves the
		// commit is checked once the block has run.
		if first(f["--url"]) != b.ostreeURL {
			q.errorf("compose start-ostree --url %q: want the build's --ostree-url %s", first(f["--url"]), b.ostreeURL)
		}
	}
	q.started = append(q.started, typ)
}

// composeImage names the last compose's UUID placeholder.
func (q *quickstart) composeImage(args []string) {
	if len(args) != 1 || len(q.started) == 0 {
		q.errorf("composer-cli compose image %q: not after a start-ostree", args)
		return
	}
	q.composes[args[0]] = q.started[len(q.started)-1]
}

// extractCommit checks tar unpacks the commit's tar (UUID-commit.tar)
// into a directory the README made.
func (q *quickstart) extractCommit(args []string) {
	f, pos := flags(args, "-xf", "-C")
	file := first(f["-xf"])
	uuid, ok := strings.CutSuffix(file, "-commit.tar")
	if !ok || len(pos) > 0 || q.composes[uuid] != "edge-commit" || !q.dirs[first(f["-C"])] {
		q.errorf("tar %q: want -xf UUID-commit.tar of the edge-commit compose -C a directory made before", args)
		return
	}
	q.extracted = first(f["-C"])
}

// serveCommit checks the server serves the extracted repo/ where
// --ostree-url says.
func (q *quickstart) serveCommit(args []string) {
	b := q.needBuild("python3")
	f, pos := flags(args, "-m", "--directory")
	u, err := url.Parse(b.ostreeURL)
	if err != nil || first(f["-m"]) != "http.server" || len(pos) != 1 || first(f["--directory"]) != q.extracted {
		q.errorf("python3 %q: want -m http.server PORT --directory %s", args, q.extracted)
		return
	}
	if pos[0] != u.Port() || u.Scheme != "http" || u.Path != "/repo" {
		q.errorf("python3 -m http.server %s serves the tar's repo/ at http://HOST:%s/repo; --ostree-url is %s", pos[0], pos[0], b.ostreeURL)
		return
	}
	q.served = first(f["--directory"])
}

func (q *quickstart) needBuild(what string) *quickstartBuild {
	if q.last == nil {
		panic(fmt.Sprintf("%s before microshift-compose build", what))
	}
	return q.last
}

// substitute replaces the README's registry with the test's.
func (q *quickstart) substitute(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "registry.example.com", q.reg.Host)
	}
	return out
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// TestDocsHostileCounts holds the hostile suite's figures in
// docs/development.md ("Tests") to the suite as TestHostileInputs runs it:
// the cases, the classes, round three's cases (trust/*, refs/*,
// rough/round3) and chart classes, and issue 34's fetching, decompression
// and size classes.
func TestDocsHostileCounts(t *testing.T) {
	doc := strings.Join(strings.Fields(string(mustReadFile(t, filepath.Join("..", "..", "docs", "development.md")))), " ")
	classes := map[string]bool{}
	var round3, charts, fetching int
	cases := allHostileCases()
	for _, tc := range cases {
		classes[tc.class] = true
		switch tc.class {
		case "fetch/credentials", "bounds/decompression", "sizes/overflow", "messages/round4":
			fetching++
		}
		switch {
		case strings.HasPrefix(tc.class, "trust/"), strings.HasPrefix(tc.class, "refs/"), tc.class == "rough/round3":
			round3++
		case strings.HasPrefix(tc.class, "chart/"):
			charts++
		}
	}
	for _, want := range []string{
		fmt.Sprintf("`TestHostileInputs`): %d cases in %d classes", len(cases), len(classes)),
		fmt.Sprintf("Round three (issue 25) adds %d of them", round3+charts),
		fmt.Sprintf("(%d cases: `trust/*`, `refs/*`, `rough/round3`)", round3),
		fmt.Sprintf("the Helm chart classes (%d)", charts),
		fmt.Sprintf("Round four's airgap part (issue 34) adds %d", len(round4AirgapCases())),
		fmt.Sprintf("Round four's fetching part (issue 34) adds %d (`fetch/credentials`, `bounds/decompression`, `sizes/overflow`, `messages/round4`)", fetching),
		fmt.Sprintf("Round four's rules part (issue 34) adds %d", len(round4RulesCases())),
		fmt.Sprintf("Round four's operators part (issue 35) adds %d", len(round4OperatorCases())),
		fmt.Sprintf("Round four's words part (issue 37) adds %d", len(round4WordsCases())),
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/development.md does not say %q", want)
		}
	}
}
