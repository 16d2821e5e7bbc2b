package repo_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"sigs.k8s.io/yaml"
)

// TestGoreleaser checks .goreleaser.yaml with `goreleaser check`, then
// makes a snapshot release (nothing published) from a copy of the
// checkout and checks what users install: an archive per arch with the
// man pages, completions, LICENSE, the README and the docs it links to;
// an RPM and a DEB per arch with the binary, the man pages, completions
// and docs at the standard paths and a maintainer with an address (read
// back by rpm and dpkg-deb); checksums of them all; a container image per
// arch (run where it is this machine's); and a binary whose --version is
// the release's, in the form the README shows.
func TestGoreleaser(t *testing.T) {
	if testing.Short() {
		t.Skip("a snapshot release builds the binary for two arches")
	}
	testutil.ReleaseTest(t)
	// Builds and podman image stores of its own: it runs beside TestImage.
	t.Parallel()
	root := testutil.Root(t)
	guides := docGuides(t, root)
	// Pinned by the Makefile (GORELEASER_VERSION); on a fresh machine
	// it builds here, while the other packages test.
	gr := testutil.PinnedTool(t, "goreleaser")
	dpkgDeb := testutil.NeedTool(t, "dpkg-deb", "dpkg")
	rpm := testutil.NeedTool(t, "rpm", "rpm")
	src := copyCheckout(t, root)
	// goreleaser's dockers run `docker build`: podman's, on a store of the
	// test's own (no docker engine runs here).
	store := newPodmanStore(t)
	env := append(os.Environ(), "GOFLAGS=", "MAKEFLAGS=", "PATH="+store.dockerShim(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	run := func(dir string, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(src, gr, "check")
	run(src, gr, "release", "--snapshot", "--clean", "--skip=publish")
	dist := filepath.Join(src, "dist")
	commit := strings.TrimSpace(run(src, "git", "rev-parse", "HEAD"))

	// Checksums of every archive and package.
	sums := map[string]string{}
	f, err := os.Open(filepath.Join(dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sum, name, ok := strings.Cut(sc.Text(), "  "); ok {
			sums[name] = sum
		}
	}
	f.Close()
	var archives, debs, rpms []string
	for name, sum := range sums {
		data, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Errorf("checksums.txt names %s: %v", name, err)
			continue
		}
		got := sha256.Sum256(data)
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: sha256 %x, checksums.txt says %s", name, got, sum)
		}
		switch {
		case strings.HasSuffix(name, ".tar.gz"):
			archives = append(archives, name)
		case strings.HasSuffix(name, ".deb"):
			debs = append(debs, name)
		case strings.HasSuffix(name, ".rpm"):
			rpms = append(rpms, name)
		}
	}
	if len(archives) != 2 || len(debs) != 2 || len(rpms) != 2 {
		t.Fatalf("checksums.txt lists archives %v, DEBs %v, RPMs %v: want two of each (amd64, arm64)", archives, debs, rpms)
	}

	manPages := []string{"microshift-compose.1.gz", "microshift-compose-build.1.gz", "microshift-compose-version.1.gz"}
	for _, a := range archives {
		names := tarNames(t, filepath.Join(dist, a))
		want := []string{"microshift-compose", "LICENSE", "README.md", "completions/microshift-compose.bash", "completions/_microshift-compose", "completions/microshift-compose.fish", "docs/cli/microshift-compose_build.md"}
		for _, g := range guides {
			want = append(want, "docs/"+g)
		}
		for _, m := range manPages {
			want = append(want, "manpages/"+m)
		}
		for _, w := range want {
			if !slices.Contains(names, w) {
				t.Errorf("%s has no %s", a, w)
			}
		}
		// The man pages name the release, as its binary does, and
		// each is titled by its command.
		page := gunzip(t, tarFile(t, filepath.Join(dist, a), "manpages/microshift-compose-build.1.gz"))
		if th := `.TH "MICROSHIFT-COMPOSE-BUILD" "1" "Jan 2025" "microshift-compose v0.0.1-next" "microshift-compose manual"`; !strings.Contains(page, th+"\n") {
			t.Errorf("%s: microshift-compose-build.1 has no %s:\n%.300s", a, th, page)
		}
	}
	pkgFiles := []string{"/usr/bin/microshift-compose", "/usr/share/bash-completion/completions/microshift-compose", "/usr/share/fish/vendor_completions.d/microshift-compose.fish",
		"/usr/share/doc/microshift-compose/README.md"}
	for _, g := range guides {
		pkgFiles = append(pkgFiles, "/usr/share/doc/microshift-compose/docs/"+g)
	}
	// Debian policy: Maintainer is "Name <address>".
	maintainer := regexp.MustCompile(`^[^<>]+ <[^<>@\s]+@[^<>@\s]+\.[a-z]+>$`)
	for _, m := range manPages {
		pkgFiles = append(pkgFiles, "/usr/share/man/man1/"+m)
	}
	for _, d := range debs {
		list := run(dist, dpkgDeb, "-c", d)
		for _, w := range append(slices.Clone(pkgFiles), "/usr/share/zsh/vendor-completions/_microshift-compose", "/usr/share/doc/microshift-compose/copyright") {
			if !strings.Contains(list, "."+w+"\n") {
				t.Errorf("%s has no %s:\n%s", d, w, list)
			}
		}
		if m := strings.TrimSpace(run(dist, dpkgDeb, "-f", d, "Maintainer")); !maintainer.MatchString(m) {
			t.Errorf("%s: Maintainer %q has no address", d, m)
		}
	}
	for _, r := range rpms {
		list := strings.Split(run(dist, rpm, "-qlp", r), "\n")
		for _, w := range append(slices.Clone(pkgFiles), "/usr/share/zsh/site-functions/_microshift-compose", "/usr/share/licenses/microshift-compose/LICENSE") {
			if !slices.Contains(list, w) {
				t.Errorf("%s has no %s:\n%s", r, w, strings.Join(list, "\n"))
			}
		}
		docs := strings.Split(run(dist, rpm, "-qdp", r), "\n")
		for _, g := range guides {
			if !slices.Contains(docs, "/usr/share/doc/microshift-compose/docs/"+g) {
				t.Errorf("%s: docs/%s is not %%doc: %q", r, g, docs)
			}
		}
		if m := strings.TrimSpace(run(dist, rpm, "-qp", "--qf", "%{PACKAGER}", r)); !maintainer.MatchString(m) {
			t.Errorf("%s: Packager %q has no address", r, m)
		}
	}

	// The container images, one per arch, each with the arch's binary;
	// the one of this machine's arch runs and says which release it is.
	for _, arch := range []string{"amd64", "arm64"} {
		im := store.unpack(t, "ghcr.io/microshift-compose/microshift-compose:0.0.1-next-"+arch)
		checkImage(t, im, arch)
		if v := im.config.Config.Labels["org.opencontainers.image.version"]; v != "0.0.1-next" {
			t.Errorf("%s image: version label %q", arch, v)
		}
		if arch != runtime.GOARCH {
			continue
		}
		out, stderr, code := im.run(t, "--version")
		if code != 0 || !strings.HasPrefix(out, "microshift-compose v0.0.1-next (commit "+commit[:12]+", ") {
			t.Errorf("--version in the snapshot's %s image = %q (exit %d, %s), want v0.0.1-next and commit %s", arch, out, code, stderr, commit[:12])
		}
	}

	// The binary says which release and commit it is.
	if runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" {
		bins, _ := filepath.Glob(filepath.Join(dist, "microshift-compose_linux_"+runtime.GOARCH+"*", "microshift-compose"))
		if len(bins) != 1 {
			t.Fatalf("no linux/%s binary in %s: %v", runtime.GOARCH, dist, bins)
		}
		out := run(src, bins[0], "--version")
		if !strings.HasPrefix(out, "microshift-compose v0.0.1-next (commit "+commit[:12]+", ") || strings.Contains(out, "(devel)") {
			t.Errorf("--version of the snapshot = %q, want its version v0.0.1-next and commit %s", out, commit[:12])
		}
		// The README shows a release's --version; the snapshot's has its form.
		readme, err := os.ReadFile(filepath.Join(root, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		form := regexp.MustCompile(`microshift-compose v[0-9]+\.[0-9]+\.[0-9]+(-next)? \(commit [0-9a-f]{12}, [0-9TZ:-]+, go[0-9.]+ linux/(amd64|arm64)\)`)
		shown := regexp.MustCompile(`(?m)^# (microshift-compose v\S+ \(commit .*\))$`).FindSubmatch(readme)
		if shown == nil || !form.Match(shown[1]) {
			t.Errorf("the README shows no --version line of the form %s: %q", form, shown)
		}
		if !form.MatchString(strings.TrimSpace(out)) {
			t.Errorf("--version of the snapshot = %q, not of the form the README shows (%s)", out, form)
		}
		t.Logf("snapshot: %s", strings.TrimSpace(out))
	}
}

// copyCheckout copies the files git tracks or would track (not ignored)
// into a new repository with one commit, so that a release build runs on
// what is checked in and leaves the checkout alone.
func copyCheckout(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): no release to build", err)
	}
	dst := filepath.Join(t.TempDir(), "src")
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		from := filepath.Join(root, filepath.FromSlash(f))
		st, err := os.Lstat(from)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		to := filepath.Join(dst, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, data, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "snapshot"},
		// goreleaser reads the remote's URL first; without one it gives
		// up on the git state (commit "none") in a snapshot. Nothing is
		// fetched from it.
		{"remote", "add", "origin", "https://github.com/microshift-compose/microshift-compose.git"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dst
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2025-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2025-01-02T03:04:05Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return dst
}

func tarNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		names = append(names, h.Name)
	}
	return names
}

// tarFile returns the contents of the file name in the .tar.gz at path.
func tarFile(t *testing.T, path, name string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			t.Fatalf("%s has no %s", path, name)
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h.Name == name {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatalf("%s: %s: %v", path, name, err)
			}
			return data
		}
	}
}

// gunzip decompresses data.
func gunzip(t *testing.T, data []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// docGuides returns the names of the Markdown guides and references under
// root/docs (docs/*.md), which the README links to and the releases ship.
func docGuides(t *testing.T, root string) []string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(found) == 0 {
		t.Fatalf("no docs/*.md in %s (%v)", root, err)
	}
	var names []string
	for _, f := range found {
		names = append(names, filepath.Base(f))
	}
	return names
}

// goreleaserDocs is the part of .goreleaser.yaml that says which files the
// archives and packages carry.
type goreleaserDocs struct {
	Archives []struct {
		Files []string `json:"files"`
	} `json:"archives"`
	NFPMs []struct {
		Contents []nfpmContent `json:"contents"`
	} `json:"nfpms"`
}

// nfpmContent is one file a package installs.
type nfpmContent struct {
	Src      string `json:"src"`
	Dst      string `json:"dst"`
	Packager string `json:"packager"`
	Type     string `json:"type"`
}

// shippedGuideProblems says which guides (docs/*.md names) the release
// configuration cfg leaves out of an archive, or of the RPM (as %doc) or
// the DEB at /usr/share/doc/microshift-compose/docs/.
func shippedGuideProblems(cfg []byte, guides []string) ([]string, error) {
	var c goreleaserDocs
	if err := yaml.Unmarshal(cfg, &c); err != nil {
		return nil, err
	}
	var problems []string
	if len(c.Archives) == 0 || len(c.NFPMs) == 0 {
		return []string{"no archives or nfpms"}, nil
	}
	for _, g := range guides {
		for i, a := range c.Archives {
			if !slices.ContainsFunc(a.Files, func(p string) bool { ok, _ := filepath.Match(p, "docs/"+g); return ok }) {
				problems = append(problems, fmt.Sprintf("archives[%d] does not carry docs/%s", i, g))
			}
		}
		for i, n := range c.NFPMs {
			for _, pk := range []string{"rpm", "deb"} {
				if !slices.ContainsFunc(n.Contents, func(e nfpmContent) bool {
					return path.Clean(e.Src) == "docs/"+g && e.Dst == "/usr/share/doc/microshift-compose/docs/"+g && e.Packager == pk && (pk != "rpm" || e.Type == "doc")
				}) {
					problems = append(problems, fmt.Sprintf("nfpms[%d] does not install docs/%s into the %s (/usr/share/doc/microshift-compose/docs/%s%s)", i, g, pk, g, map[string]string{"rpm": ", type doc"}[pk]))
				}
			}
		}
	}
	return problems, nil
}

// TestGoreleaserShipsGuides holds .goreleaser.yaml to docs/: every guide
// the README links to is in the archives and in both packages, so that the
// installed README's links lead somewhere (TestGoreleaser reads them back
// from a snapshot; this says it without building one).
func TestGoreleaserShipsGuides(t *testing.T) {
	root := testutil.Root(t)
	cfg, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	guides := docGuides(t, root)
	problems, err := shippedGuideProblems(cfg, guides)
	if err != nil {
		t.Fatalf("reading .goreleaser.yaml: %v", err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	// A guide the configuration does not name is found.
	problems, err = shippedGuideProblems(cfg, append(slices.Clone(guides), "unlisted.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{
		"nfpms[0] does not install docs/unlisted.md into the rpm (/usr/share/doc/microshift-compose/docs/unlisted.md, type doc)",
		"nfpms[0] does not install docs/unlisted.md into the deb (/usr/share/doc/microshift-compose/docs/unlisted.md)",
	}; !slices.Equal(problems, want) {
		t.Errorf("a guide .goreleaser.yaml does not list: problems %q, want %q", problems, want)
	}
}
