package knowledge_test

import (
	"os"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// FuzzParse feeds the knowledge parser mutated data files: it never
// panics, errors are one line naming a file, and what parses answers For
// for every release without panicking.
func FuzzParse(f *testing.F) {
	rel, err := os.ReadFile("data/releases.toml")
	if err != nil {
		f.Fatal(err)
	}
	cfg, err := os.ReadFile("data/config.toml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(rel, cfg)
	f.Add([]byte("[[config_file]]\nrelease = \">=4.14\"\npath = \"/etc/microshift/config.yaml\"\n"), []byte("[[key]]\npath = \"a\"\nrelease = \"4.x\"\ntype = \"int\"\nmin = 3\n"))
	f.Fuzz(func(t *testing.T, rel, cfg []byte) {
		k, err := knowledge.Parse("r.toml", rel, "c.toml", cfg)
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") || !(strings.HasPrefix(msg, "r.toml: ") || strings.HasPrefix(msg, "c.toml: ")) {
				t.Fatalf("error is not one line naming a file: %q", msg)
			}
			return
		}
		for _, v := range []string{"4.14.0", "4.18.0", "5.0.0", "9.99.0"} {
			if r, err := k.For(semver.MustParse(v)); err == nil {
				_ = r.Config.Paths()
				_ = r.Packages()
			}
		}
	})
}

// FuzzParseBuilds feeds the builds parser mutated data: it never panics,
// errors are one line naming the file, and what parses answers ForBuild
// for every build and release without panicking.
func FuzzParseBuilds(f *testing.F) {
	data, err := os.ReadFile("data/builds.toml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte("[[build]]\nname = \"x\"\ndefault = true\ntitle = \"t\"\ndescription = \"d\"\nregistries = [\"q/\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := knowledge.Default()
		if err != nil {
			t.Fatal(err)
		}
		cp := *k
		if err := cp.ParseBuilds("b.toml", data); err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "b.toml: ") {
				t.Fatalf("error is not one line naming the file: %q", msg)
			}
			return
		}
		for _, b := range cp.Builds {
			for _, v := range []string{"4.14.0", "4.21.0", "5.0.0", "9.99.0"} {
				if r, err := cp.ForBuild(semver.MustParse(v), b.Name); err == nil {
					_, _ = r.Lacking(knowledge.Needs{Packages: []string{"microshift"}, ImageKeys: []string{"pod"}, Repositories: []string{"https://x/"}})
					_ = b.OwnsImage("quay.io/okd/x:1")
				}
			}
		}
	})
}
