package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	shexpand "mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"
)

// communityHeading is the README section whose block TestREADMECommunity
// runs.
const communityHeading = "## Without a subscription: microshift-io's build"

// TestREADMECommunity runs the README's path for a person without a
// subscription, with a real shell interpreter as TestREADMEQuickstart
// does: every program reaches a handler below, which runs it for real or
// fails the test.
//
// What is built for it, and substituted:
//   - microshift-io's build of 4.21.0 for x86_64, as its RPMs would hold
//     it (the reference files' keys, OKD's images replaced by images pushed
//     to a registry of the test, lvms_operator left as Red Hat's, kindnet,
//     kube-proxy and a TopoLVM file naming its image by tag), in
//     release-info RPMs versioned as microshift-io versions them, beside the
//     MicroShift RPMs the Containerfile installs, all made a repository with
//     createrepo_c and served over HTTP: rpms.example.com is that server.
//   - the registry (TLS from a test CA the user's certs.d trusts, no
//     credentials: the build needs no pull secret) holds the images.
//   - podman build gets --build-arg BASE_IMAGE= the test base (this
//     machine's skopeo, stand-ins for dnf, systemctl and
//     firewall-offline-cmd), since the CentOS Stream bootc base is not
//     reachable; its dnf shows the repositories the step enabled and the
//     packages asked for, and each package asked for is checked to be in the
//     repository the .repo file names, at exactly that version-release.
func TestREADMECommunity(t *testing.T) {
	t.Parallel() // see parallelE2E
	block := readmeBlock(t, communityHeading)
	bin := e2eBinary(t)
	c := newCommunity(t, bin)
	block = strings.ReplaceAll(block, "http://rpms.example.com/microshift-io/", c.rpms.URL+"/")
	c.run(block)
	for _, want := range []string{"microshift-compose release", "microshift-compose build", "microshift-compose mirror", "podman build"} {
		if !slices.Contains(c.ran, want) {
			t.Errorf("the README block does not run %s; ran %q", want, c.ran)
		}
	}
}

// readmeBlock returns the one ```sh block of a README section.
func readmeBlock(t *testing.T, heading string) string {
	t.Helper()
	readme := string(mustReadFile(t, filepath.Join("..", "..", "README.md")))
	start := strings.Index(readme, "\n"+heading+"\n")
	if start < 0 {
		t.Fatalf("README has no section %q", heading)
	}
	section := readme[start+1:]
	if end := strings.Index(section[len(heading):], "\n## "); end >= 0 {
		section = section[:len(heading)+end]
	}
	blocks := regexp.MustCompile("(?ms)^```sh\n(.*?)^```$").FindAllStringSubmatch(section, -1)
	if len(blocks) != 1 || strings.Count(section, "```") != 2 {
		t.Fatalf("README %q: want exactly one sh block, have %d of %d fences", heading, len(blocks), strings.Count(section, "```"))
	}
	return blocks[0][1]
}

// community is the user's directory and what the README's commands did.
type community struct {
	t        *testing.T
	bin      string
	env      *userEnv
	reg      *testutil.Registry
	rpms     *httptest.Server
	work     string
	version  string // the build's RPM version-release
	topolvm  string // the digest the TopoLVM tag names
	ran      []string
	lock     *plan.Plan
	out      string
	repoFile string // the --repo-file build was given
}

func newCommunity(t *testing.T, bin string) *community {
	c := &community{t: t, bin: bin, env: newUserEnv(t), work: t.TempDir()}
	c.reg = testutil.StartSecureRegistry(t, testutil.RegistryOptions{TLS: testutil.NewCA(t)})
	c.env.trust(t, c.reg.CA, c.reg.Host)

	// The images: each key its own image, under the repositories
	// microshift-io's references use, on the test's registry.
	push := func(path string, seed uint64) string {
		ref, err := c.reg.Pusher.PushImage(path, "amd64", []testutil.Layer{testutil.NewLayer(seed, 4096+int64(seed)*64)})
		if err != nil {
			t.Fatal(err)
		}
		return ref
	}
	src := testutil.MicroShiftIORelease(t, testutil.ReleaseDir(t, "release-4.21"), "")
	rel := t.TempDir()
	seed := uint64(100)
	for _, name := range slices.Sorted(maps.Keys(src)) {
		if !strings.HasSuffix(name, "-x86_64.json") {
			continue
		}
		var doc struct {
			Release map[string]string `json:"release,omitempty"`
			Images  map[string]string `json:"images"`
		}
		if err := json.Unmarshal(src[name], &doc); err != nil {
			t.Fatal(err)
		}
		for _, key := range slices.Sorted(maps.Keys(doc.Images)) {
			ref := doc.Images[key]
			seed++
			switch {
			case strings.HasPrefix(ref, "registry.redhat.io/"):
				// lvms_operator: microshift-io leaves it as Red Hat's.
			case strings.Contains(ref, "topolvm-with-sidecar:"):
				// By tag, as microshift-io's file names it.
				layer := testutil.NewLayer(seed, 8192)
				cfg, m := testutil.Image("amd64", []testutil.Layer{layer})
				if err := c.reg.Pusher.Blob("topolvm/topolvm-with-sidecar", layer.Data, layer.Desc.MediaType); err != nil {
					t.Fatal(err)
				}
				if err := c.reg.Pusher.Blob("topolvm/topolvm-with-sidecar", cfg.Data, cfg.Type); err != nil {
					t.Fatal(err)
				}
				digestRef, err := c.reg.Pusher.Manifest("topolvm/topolvm-with-sidecar", m, testutil.MicroShiftIOTopoLVMTag)
				if err != nil {
					t.Fatal(err)
				}
				c.topolvm = digestRef
				doc.Images[key] = c.reg.Host + "/topolvm/topolvm-with-sidecar:" + testutil.MicroShiftIOTopoLVMTag
			case strings.HasPrefix(ref, "docker.io/kindest/"):
				doc.Images[key] = push("kindest/kindnetd", seed)
			default:
				doc.Images[key] = push("okd/scos-content", seed)
			}
		}
		data, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		writeFileMode(t, filepath.Join(rel, name), append(data, '\n'), 0o644)
	}

	// The repository: the release-info RPMs and the RPMs the
	// Containerfile installs, of one build.
	version := testutil.MicroShiftIOVersion("4.21.0")
	c.version = version + "-1.el9"
	repo := t.TempDir()
	pkgs := filepath.Join(repo, "Packages")
	testutil.MicroShiftIORPMs(t, pkgs, rel, version, "1.el9")
	for _, n := range []string{"microshift", "microshift-greenboot", "microshift-networking", "microshift-selinux", "microshift-kindnet", "microshift-topolvm"} {
		testutil.BuildRPM(t, pkgs, testutil.RPM{Name: n, Version: version, Release: "1.el9", Arch: "x86_64",
			Files: map[string][]byte{"/usr/share/doc/" + n + "/README": []byte(n + "\n")}})
	}
	testutil.CreateRepo(t, repo)
	c.rpms = httptest.NewServer(http.FileServer(http.Dir(repo)))
	t.Cleanup(c.rpms.Close)
	return c
}

// run interprets the block with set -e, every program through exec.
func (c *community) run(block string) {
	t := c.t
	file, err := syntax.NewParser().Parse(strings.NewReader("set -e\n"+block), "README.md")
	if err != nil {
		t.Fatalf("the README block does not parse as shell: %v\n%s", err, block)
	}
	var stderr bytes.Buffer
	r, err := interp.New(interp.Dir(c.work), interp.Env(shexpand.ListEnviron("PATH=/nonexistent", "HOME="+c.env.Home)),
		interp.StdIO(nil, io.Discard, &stderr), interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc { return c.exec }))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background(), file); err != nil {
		t.Fatalf("the README block stopped: %v\n%s", err, stderr.String())
	}
}

func (c *community) exec(_ context.Context, args []string) error {
	what := args[0]
	if len(args) > 1 {
		what += " " + args[1]
	}
	c.ran = append(c.ran, what)
	switch what {
	case "microshift-compose release":
		c.fetch(args[1:])
	case "microshift-compose build":
		c.build(args[1:])
	case "microshift-compose mirror":
		c.mirror(args[1:])
	case "podman build":
		c.podmanBuild(args[2:])
	default:
		c.t.Errorf("the README runs %q, which TestREADMECommunity neither runs nor checks: add a handler", strings.Join(args, " "))
	}
	if c.t.Failed() {
		return interp.ExitStatus(1)
	}
	return nil
}

// fetch runs release fetch: the newest microshift-io build of 4.21.0,
// its TopoLVM tag resolved to the digest the registry has for it.
func (c *community) fetch(args []string) {
	t := c.t
	r := c.env.exec(t, c.work, c.bin, args...)
	if r.code != 0 {
		t.Errorf("release fetch: exit %d\n%s", r.code, r.stderr)
		return
	}
	tag := c.reg.Host + "/topolvm/topolvm-with-sidecar:" + testutil.MicroShiftIOTopoLVMTag
	for _, want := range []string{
		"stored release 4.21.0 (stream 4.21, nightly, microshift-io's build, OKD " + testutil.MicroShiftIOOKDTag + ")",
		"  microshift-release-info-" + c.version + ".noarch  sha256:",
		"  resolved " + tag + " to " + c.topolvm + "\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("release fetch printed\n%s\nwant %q", r.stdout, want)
		}
	}
	list := c.env.exec(t, c.work, c.bin, "release", "list", "--release", "4.21.0", "-o", "json")
	var rels []releaseJSON
	if err := json.Unmarshal([]byte(list.stdout), &rels); err != nil || len(rels) != 1 || rels[0].Build != "microshift-io" || rels[0].Resolved[tag] != c.topolvm {
		t.Errorf("release list --release 4.21.0: %v %+v", err, rels)
	}
}

// build runs build and checks what makes it microshift-io's: the RPMs
// pinned to the build, CentOS Stream 9's bootc base, no pull secret, the
// repositories enabled for the dnf step, the TopoLVM image by digest and
// named by its tag.
func (c *community) build(args []string) {
	t := c.t
	f, _ := flags(args[1:], "--release", "--distro", "--profile", "--arch", "--output", "--repo-file")
	r := c.env.exec(t, c.work, c.bin, args...)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "wrote "+first(f["--output"])+": profile full, release 4.21, x86_64: ") {
		t.Errorf("build: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		return
	}
	if strings.Contains(r.stderr, "pull secret") || strings.Contains(r.stdout, "pull secret") {
		t.Errorf("build speaks of a pull secret:\n%s%s", r.stdout, r.stderr)
	}
	c.out, c.repoFile = filepath.Join(c.work, first(f["--output"])), first(f["--repo-file"])
	var p plan.Plan
	if err := json.Unmarshal(mustReadFile(t, filepath.Join(c.out, "compose.lock.json")), &p); err != nil {
		t.Fatal(err)
	}
	c.lock = &p
	if b := p.Release.Build; b == nil || b.Name != "microshift-io" || b.Version != c.version || b.PullSecret || p.Release.Source != "fetched" {
		t.Errorf("lock release %+v", p.Release)
	}
	if got := p.ComponentNames(); !slices.Equal(got, []string{"core", "kindnet", "topolvm", "snapshot-controller"}) {
		t.Errorf("components %v", got)
	}
	if p.Target.Distro != "centos-stream-9" || p.Target.BootcBase != "quay.io/centos-bootc/centos-bootc:stream9" {
		t.Errorf("target %+v", p.Target)
	}
	for _, pkg := range p.Packages {
		if strings.HasPrefix(pkg.Name, "microshift") && pkg.Version != c.version {
			t.Errorf("package %s pinned to %q, want %s", pkg.Name, pkg.Version, c.version)
		}
	}
	tagged := slices.IndexFunc(p.Images, func(im plan.Image) bool { return im.Tag != "" })
	if tagged < 0 || p.Images[tagged].Ref != c.topolvm {
		t.Errorf("no image pinned to the TopoLVM tag's digest %s: %+v", c.topolvm, p.Images)
	}
	for _, f := range p.Files {
		if f.Secret {
			t.Errorf("the plan places a secret: %s", f.Path)
		}
	}
	cf := string(mustReadFile(t, filepath.Join(c.out, "Containerfile")))
	for _, line := range []string{"ARG BASE_IMAGE=quay.io/centos-bootc/centos-bootc:stream9", "FROM ${BASE_IMAGE}", "COPY images/ /usr/lib/microshift-compose/images/",
		"        > /etc/yum.repos.d/microshift-compose.repo && \\", "    && rm -f /etc/yum.repos.d/microshift-compose.repo \\"} {
		if !strings.Contains(cf, "\n"+line+"\n") {
			t.Errorf("the Containerfile has no line %q", line)
		}
	}
	// The device's TopoLVM manifests pull the tag: the loaded image is
	// named by it, in the image and by osbuild.
	if tagged >= 0 {
		tag := p.Images[tagged].Tag
		if want := "containers-storage:" + tag; !strings.Contains(cf, want) {
			t.Errorf("the Containerfile does not name the TopoLVM image %s", want)
		}
		if bp := string(mustReadFile(t, filepath.Join(c.out, "blueprint.toml"))); !strings.Contains(bp, fmt.Sprintf("source = %q\nname = %q\n", p.Images[tagged].Ref, tag)) {
			t.Errorf("blueprint.toml does not name the TopoLVM container %s", tag)
		}
	}
	if strings.Contains(cf, "pullsecret") || strings.Contains(cf, "rhocp") {
		t.Errorf("the Containerfile asks for a pull secret or Red Hat's repositories:\n%s", cf)
	}
}

// mirror runs mirror and checks every image of images.txt is where the
// Containerfile copies it from.
func (c *community) mirror(args []string) {
	t := c.t
	if r := c.env.exec(t, c.work, c.bin, args...); r.code != 0 {
		t.Errorf("mirror: exit %d: %s", r.code, r.stderr)
		return
	}
	for _, ref := range nonEmptyLines(string(mustReadFile(t, filepath.Join(c.out, "images.txt")))) {
		runSkopeo(t, "inspect", "--raw", "dir:"+filepath.Join(c.out, "images", airgap.DirName(ref)))
	}
}

// dnfStandIn shows what the dnf step enabled and asked for: the .repo
// files, then its arguments.
const dnfStandIn = `#!/bin/sh
for f in /etc/yum.repos.d/*.repo; do
    [ -e "$f" ] || continue
    echo "== repo file $f"
    cat "$f"
    echo "== end"
done
echo "== dnf $*"
`

// podmanBuild builds the Containerfile on the test base and checks the dnf
// step: the repositories it enabled are the build's (the dependencies
// mirror, and --repo-file's, whose URL serves each MicroShift package asked
// for at exactly its version-release), gone after the step.
func (c *community) podmanBuild(args []string) {
	t := c.t
	f, pos := flags(args, "--platform", "-t", "-f")
	if first(f["-f"]) != "out/Containerfile" || len(pos) != 1 || first(f["--platform"]) != "linux/amd64" {
		t.Errorf("podman build %q: want --platform linux/amd64 -f out/Containerfile out/", args)
		return
	}
	pm := newPodman(t, needTool(t, "podman", "podman"))
	base := pm.testBase(t, needTool(t, "skopeo", "skopeo"), &secureRegistry{Registry: c.reg}, map[string][]byte{
		"/usr/bin/dnf": []byte(dnfStandIn),
		// The base's own repositories, as CentOS Stream's has them.
		"/etc/yum.repos.d/centos.repo": []byte("[baseos]\nname=CentOS Stream $releasever - BaseOS\nmetalink=https://mirrors.centos.org/metalink?repo=centos-baseos-$stream&arch=$basearch\n"),
	})
	cmd := pm.cmd(append([]string{"build", "--isolation", "chroot", "--cap-add", "all", "--network", "host", "--build-arg", "BASE_IMAGE=" + base}, args...)...)
	cmd.Dir = c.work
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("podman build: %v\n%s", err, out)
	}
	log := string(out)
	repo := regexp.MustCompile(`(?s)== repo file /etc/yum.repos.d/microshift-compose.repo\n(.*?)== end\n`).FindStringSubmatch(log)
	dnf := regexp.MustCompile(`== dnf install -y (.*)\n`).FindStringSubmatch(log)
	if repo == nil || dnf == nil {
		t.Fatalf("the dnf step saw no repository or ran no install:\n%s", log)
	}
	baseURLs := regexp.MustCompile(`(?m)^baseurl=(\S+)$`).FindAllStringSubmatch(repo[1], -1)
	if len(baseURLs) != 2 || !strings.Contains(baseURLs[0][1], "mirror.openshift.com/pub/openshift-v4/x86_64/dependencies/rpms/4.21-el9-beta/") || baseURLs[1][1] != c.rpms.URL+"/" {
		t.Fatalf("the dnf step enabled %q, want the dependencies mirror and %s:\n%s", baseURLs, c.rpms.URL, repo[1])
	}
	have := primaryPackages(t, c.rpms.URL)
	asked := 0
	for _, spec := range strings.Fields(dnf[1]) {
		if !strings.HasPrefix(spec, "microshift") {
			continue
		}
		asked++
		if !have[spec] {
			t.Errorf("dnf install %s: the repository %s has no such name-version-release (it has %q)", spec, c.rpms.URL, slices.Sorted(maps.Keys(have)))
		}
	}
	if asked != len(slices.DeleteFunc(slices.Clone(c.lock.Packages), func(p plan.Package) bool { return !strings.HasPrefix(p.Name, "microshift") })) || asked == 0 {
		t.Errorf("dnf installs %d MicroShift packages, the lock has others: %s", asked, dnf[1])
	}
	if strings.Count(log, "== repo file /etc/yum.repos.d/microshift-compose.repo") != 1 {
		t.Errorf("the repository file outlives the dnf step")
	}
}

// primaryPackages reads a repository's primary metadata over HTTP, as dnf
// would, and returns its packages as name-version-release.
func primaryPackages(t *testing.T, base string) map[string]bool {
	t.Helper()
	get := func(u string) []byte {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
		}
		return data
	}
	var md struct {
		Data []struct {
			Type     string `xml:"type,attr"`
			Location struct {
				Href string `xml:"href,attr"`
			} `xml:"location"`
		} `xml:"data"`
	}
	if err := xml.Unmarshal(get(base+"/repodata/repomd.xml"), &md); err != nil {
		t.Fatal(err)
	}
	for _, d := range md.Data {
		if d.Type != "primary" {
			continue
		}
		zr, err := gzip.NewReader(bytes.NewReader(get(base + "/" + d.Location.Href)))
		if err != nil {
			t.Fatal(err)
		}
		var primary struct {
			Packages []struct {
				Name    string `xml:"name"`
				Version struct {
					Ver string `xml:"ver,attr"`
					Rel string `xml:"rel,attr"`
				} `xml:"version"`
			} `xml:"package"`
		}
		if err := xml.NewDecoder(zr).Decode(&primary); err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, p := range primary.Packages {
			out[fmt.Sprintf("%s-%s-%s", p.Name, p.Version.Ver, p.Version.Rel)] = true
		}
		return out
	}
	t.Fatalf("%s has no primary metadata", base)
	return nil
}
