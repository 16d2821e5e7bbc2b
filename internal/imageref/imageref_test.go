package imageref

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/containers/image/v5/docker/reference"
	"github.com/google/go-containerregistry/pkg/name"
)

const digest = "@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

func TestCheck(t *testing.T) {
	for _, tc := range []struct{ ref, want string }{
		{"quay.io/org/repo" + digest, ""},
		{"quay.io/org/repo:v1", ""},
		{"127.0.0.1:5000/a/b:tag", ""},
		{"localhost:5000/a.b/c_d/e-f__g" + digest, ""},
		{"quay.io/../../v2/_catalog" + digest, `path segment ".." in the repository`},
		{"quay.io/org/../x:v1", `path segment ".."`},
		{"quay.io/./x:v1", `path segment "."`},
		{"quay.io/a//b:v1", "empty path segment"},
		{"quay.io/a/:v1", "empty path segment"},
		{"localhost:5000/..:v1", `path segment ".."`},
		{"quay.io/a..b/c:v1", "not a reference containers/image takes"},
		{"quay.io/-a/c:v1", "not a reference containers/image takes"},
	} {
		err := Check(tc.ref)
		if tc.want == "" {
			if err != nil {
				t.Errorf("Check(%q) = %v, want nil", tc.ref, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%q) = %v, want %q", tc.ref, err, tc.want)
		}
	}
}

// FuzzCheck: a reference Check takes, go-containerregistry parses to the
// same repository, with no "." or ".." segment.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"quay.io/a/b" + digest, "quay.io/../b:v", "a:5000/b/./c:d", "x.io/a..b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		if Check(ref) != nil {
			return
		}
		r, err := name.ParseReference(ref, name.StrictValidation)
		if err != nil {
			return // Check leaves the registry, tag and digest to the parser
		}
		for _, seg := range strings.Split(r.Context().RepositoryStr(), "/") {
			if seg == "." || seg == ".." || seg == "" {
				t.Fatalf("Check(%q) = nil, but the repository %q has segment %q", ref, r.Context().RepositoryStr(), seg)
			}
		}
	})
}

// podmanTakes reports whether podman takes ref as a reference a flag of
// the tool names: containers/image's docker/reference grammar, the
// registry written out (ParseNamed: no docker.io/library normalization),
// and a tag or a digest.
func podmanTakes(ref string) bool {
	n, err := reference.ParseNamed(ref)
	if err != nil {
		return false
	}
	_, tagged := n.(reference.Tagged)
	_, digested := n.(reference.Digested)
	return tagged || digested
}

// TestParseReference: a reference the tool takes (Check, then
// ParseReference with StrictValidation, as checkImageFlag does) is one
// podman takes, a repository of one character included, which
// go-containerregistry alone refuses; the rows where the two differ say
// why.
func TestParseReference(t *testing.T) {
	const sha = "sha256:" + "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	for _, tc := range []struct {
		ref          string
		tool, podman bool
		// registry, repository and identifier of what the tool takes.
		reg, repo, id string
	}{
		{ref: "registry.example.com/m:5.0", tool: true, podman: true, reg: "registry.example.com", repo: "m", id: "5.0"},
		{ref: "registry.example.com/m@" + sha, tool: true, podman: true, reg: "registry.example.com", repo: "m", id: sha},
		{ref: "registry.example.com/m:5.0@" + sha, tool: true, podman: true, reg: "registry.example.com", repo: "m", id: sha},
		{ref: "registry.example.com:5000/0:latest", tool: true, podman: true, reg: "registry.example.com:5000", repo: "0", id: "latest"},
		{ref: "127.0.0.1:5000/m:1", tool: true, podman: true, reg: "127.0.0.1:5000", repo: "m", id: "1"},
		{ref: "quay.io/m/x:1", tool: true, podman: true, reg: "quay.io", repo: "m/x", id: "1"},
		{ref: "quay.io/a/b/c:1", tool: true, podman: true, reg: "quay.io", repo: "a/b/c", id: "1"},
		{ref: "quay.io/mm:1", tool: true, podman: true, reg: "quay.io", repo: "mm", id: "1"},
		// Refused by both.
		{ref: "registry.example.com/M:5.0"},
		{ref: "registry.example.com/-:5.0"},
		{ref: "registry.example.com/_:5.0"},
		{ref: "registry.example.com/.:5.0"},
		{ref: "registry.example.com/:5.0"},
		{ref: "registry.example.com/m"},
		{ref: "registry.example.com/m:"},
		{ref: "registry.example.com/m:-5.0"},
		{ref: "registry.example.com/m:5.0 "},
		{ref: "registry.example.com/m@sha256:abc"},
		{ref: "registry.example.com/m/:1"},
		{ref: "registry.example.com/a..b:1"},
		// Where they differ: a reference without its registry is
		// docker.io/library/... to both, which the tool wants written
		// out; podman reads localhost as a registry, go-containerregistry
		// as a Docker Hub repository (give localhost's port).
		{ref: "m:5.0"},
		{ref: "docker.io/m:5.0"},
		{ref: "docker.io/library/m:5.0", tool: true, podman: true, reg: "index.docker.io", repo: "library/m", id: "5.0"},
		{ref: "localhost/m:5.0", podman: true},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			if got := podmanTakes(tc.ref); got != tc.podman {
				t.Errorf("podman takes %q: %v, want %v", tc.ref, got, tc.podman)
			}
			r, err := ParseReference(tc.ref, name.StrictValidation)
			if got := err == nil && Check(tc.ref) == nil; got != tc.tool {
				t.Fatalf("the tool takes %q: %v (%v, %v), want %v", tc.ref, got, err, Check(tc.ref), tc.tool)
			}
			if !tc.tool {
				return
			}
			if r.Context().RegistryStr() != tc.reg || r.Context().RepositoryStr() != tc.repo || r.Identifier() != tc.id {
				t.Errorf("ParseReference(%q) = %s, %s, %s; want %s, %s, %s", tc.ref, r.Context().RegistryStr(), r.Context().RepositoryStr(), r.Identifier(), tc.reg, tc.repo, tc.id)
			}
			// What it names parses back to itself.
			again, err := ParseReference(r.Name(), name.StrictValidation)
			if err != nil || again.Name() != r.Name() {
				t.Errorf("ParseReference(%q) = %v, %v; want %s", r.Name(), again, err, r.Name())
			}
		})
	}
}

// TestNewRepository: a repository of one character (a mirror registry's
// prefix: --mirror-registry registry.example.com/m), and the tag and
// digest forms, as podman takes them.
func TestNewRepository(t *testing.T) {
	for _, tc := range []struct {
		repo string
		ok   bool
	}{
		{"registry.example.com/m", true},
		{"registry.example.com:5000/7", true},
		{"registry.example.com/mirror", true},
		{"registry.example.com/M", false},
		{"registry.example.com/-", false},
		{"registry.example.com/", false},
		{"m", false}, // docker.io/library/m: strict wants it written out
	} {
		r, err := NewRepository(tc.repo, name.StrictValidation)
		if (err == nil) != tc.ok {
			t.Errorf("NewRepository(%q) = %v, %v; want ok %v", tc.repo, r, err, tc.ok)
			continue
		}
		if tc.ok && r.Name() != tc.repo {
			t.Errorf("NewRepository(%q) = %s", tc.repo, r.Name())
		}
	}
	if tag, err := NewTag("registry.example.com/m:5.0", name.StrictValidation); err != nil || tag.RepositoryStr() != "m" || tag.TagStr() != "5.0" {
		t.Errorf("NewTag = %v, %v", tag, err)
	}
	if _, err := NewTag("registry.example.com/m:bad tag", name.StrictValidation); err == nil || strings.Contains(err.Error(), "between 2 and 255") {
		t.Errorf("NewTag of a bad tag = %v, want the tag named, not the repository's length", err)
	}
	d := "registry.example.com/m@sha256:" + strings.Repeat("c", 64)
	if dig, err := NewDigest(d, name.StrictValidation); err != nil || dig.Name() != d {
		t.Errorf("NewDigest = %v, %v", dig, err)
	}
}

// FuzzParseReference: never a panic; what it takes names a reference it
// takes again, in the same repository.
func FuzzParseReference(f *testing.F) {
	for _, s := range []string{"registry.example.com/m:5.0", "r.io/m@sha256:" + strings.Repeat("a", 64), "m:1", "a.b/c", "x:1/m:2", "a.io/m:1@sha256:x", "a.io/M:1", ":/m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		for _, opts := range [][]name.Option{nil, {name.StrictValidation}} {
			r, err := ParseReference(ref, opts...)
			if err != nil {
				continue
			}
			again, err := ParseReference(r.Name(), opts...)
			if err != nil || again.Context().Name() != r.Context().Name() {
				t.Fatalf("ParseReference(%q) = %s, which parses as %v, %v", ref, r.Name(), again, err)
			}
		}
	})
}

// TestOneDoor: the tool parses references through this package only, so
// that every flag, file and registry request takes what podman takes (a
// repository of one character included): no other code calls
// go-containerregistry's parsers.
func TestOneDoor(t *testing.T) {
	parsers := regexp.MustCompile(`\bname\.(ParseReference|NewTag|NewDigest|NewRepository)\(`)
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == filepath.Join(root, "internal", "imageref") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, loc := range parsers.FindAllIndex(data, -1) {
			line := 1 + bytes.Count(data[:loc[0]], []byte("\n"))
			t.Errorf("%s:%d calls %s: call imageref's, which takes a repository of one character", path, line, data[loc[0]:loc[1]-1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
