package imageref

import (
	"strings"
	"testing"

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
