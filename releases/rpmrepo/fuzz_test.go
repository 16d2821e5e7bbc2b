package rpmrepo_test

import (
	"os"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases/rpmrepo"
)

// FuzzReadPackage: any bytes give a package or one error line, never a
// panic (go-rpmutils indexes header data by declared offsets) or an
// allocation the file does not pay for.
func FuzzReadPackage(f *testing.F) {
	for _, payload := range []string{"w19.zstdio", "w2.xzdio", "w9.gzdio"} {
		p := testutil.BuildRPM(f, f.TempDir(), testutil.RPM{Name: "microshift-olm-release-info", Version: "4.18.7", Payload: payload,
			Files: map[string][]byte{"/usr/share/microshift/release/release-olm-x86_64.json": []byte(`{"release": {"base": "4.18.7"}, "images": {}}`)}})
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{0xed, 0xab, 0xee, 0xdb})
	f.Fuzz(func(t *testing.T, data []byte) {
		pkg, err := rpmrepo.ReadPackage("fuzz.rpm", data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "fuzz.rpm") {
				t.Fatalf("error %q: not one line naming the file", err)
			}
			return
		}
		if len(pkg.Files) == 0 || !rpmrepo.IsReleaseInfo(pkg.NEVRA.Name) {
			t.Fatalf("accepted %s with %d release files", pkg.NEVRA, len(pkg.Files))
		}
	})
}

// FuzzParseRepoFile: any .repo file parses or gives one error naming it.
func FuzzParseRepoFile(f *testing.F) {
	f.Add("[rhocp-$basearch]\nbaseurl = https://cdn/$basearch/os\n  file:///srv/x\nsslclientcert = c.pem\nenabled = 1\n")
	f.Add("[a]\nmirrorlist = https://m\n[b]\nbaseurl=${releasever}\n")
	f.Fuzz(func(t *testing.T, data string) {
		repos, err := rpmrepo.ParseRepoFile("f.repo", []byte(data), rpmrepo.NewVars("x86_64", "9"))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.repo") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, r := range repos {
			if len(r.BaseURLs) == 0 || r.ID == "" {
				t.Fatalf("repository %q without a baseurl or ID", r.ID)
			}
		}
	})
}
