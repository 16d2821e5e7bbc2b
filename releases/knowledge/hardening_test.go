package knowledge_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// hardeningBranches are the branches of ../shared/reference/
// microshift-hardening and the release each is.
var hardeningBranches = map[string]string{
	"release-4.16": "4.16.0", "release-4.18": "4.18.0", "release-4.20": "4.20.0", "release-4.22": "4.22.0",
	"release-5.0": "5.0.0", "main": "5.0.0",
}

func TestFIPSFacts(t *testing.T) {
	for _, tc := range []struct {
		version   string
		known     bool
		imageMode bool
		config    bool
		warning   bool
	}{
		{"4.14.0", false, false, false, false},
		{"4.15.3", true, false, false, true},
		{"4.18.0", true, false, false, true},
		{"4.19.0", true, true, true, false},
		{"4.21.2", true, true, true, false},
		{"4.22.0", true, true, true, false},
		{"5.0.0", true, true, false, false},
	} {
		t.Run(tc.version, func(t *testing.T) {
			r := factsFor(t, tc.version)
			f := r.FIPS
			if (f != nil) != tc.known {
				t.Fatalf("FIPS = %+v, want known %t", f, tc.known)
			}
			if f == nil {
				return
			}
			if !slices.Equal(f.Arches, []string{"x86_64"}) {
				t.Errorf("arches = %q, want x86_64 only (upstream skips its FIPS scenarios on aarch64)", f.Arches)
			}
			if f.ImageMode != tc.imageMode || (!f.ImageMode && f.ImageModeWhy == "") {
				t.Errorf("image mode = %t (%q), want %t with a reason when false", f.ImageMode, f.ImageModeWhy, tc.imageMode)
			}
			if (f.Config != nil) != tc.config || (f.Warning != "") != tc.warning {
				t.Errorf("config %v, warning %q; want config %t, warning %t", f.Config, f.Warning, tc.config, tc.warning)
			}
			// What the plan writes must be keys the release reads.
			for path := range f.Config {
				if r.Config.Key(path) == nil {
					t.Errorf("fips config %s is no config key of %s", path, tc.version)
				}
			}
			if ciphers, ok := f.Config["ingress.tlsSecurityProfile.custom.ciphers"].([]any); ok {
				for _, c := range ciphers {
					if c == "TLS_CHACHA20_POLY1305_SHA256" {
						t.Error("the FIPS ingress profile keeps TLS_CHACHA20_POLY1305_SHA256")
					}
				}
			}
		})
	}
}

// The FIPS facts are upstream's: for every branch with a bootc FIPS
// containerfile, the arches it writes fips=1 for are the knowledge's, the
// kargs.d file parses as bootc reads it, and the packages it installs to
// set the crypto policy are the knowledge's for its RHEL major; the
// kickstart include's command is the RHEL 9 %post.
func TestFIPSFactsMatchUpstream(t *testing.T) {
	k, err := knowledge.Default()
	if err != nil {
		t.Fatal(err)
	}
	heredoc := regexp.MustCompile(`(?s)cat > /usr/lib/bootc/kargs.d/01-fips.toml <<'EOF'\n(.*?)\nEOF\n`)
	install := regexp.MustCompile(`dnf install -y ([^&]+)&&`)
	seen := 0
	for branch, version := range hardeningBranches {
		dir := testutil.Shared(t, "reference", "microshift-hardening", branch)
		r := factsFor(t, version)
		files, _ := filepath.Glob(filepath.Join(dir, "test", "image-blueprints-bootc", "*", "*", "*-fips.containerfile"))
		nested, _ := filepath.Glob(filepath.Join(dir, "test", "image-blueprints-bootc", "*", "*", "*", "*-fips.containerfile"))
		for _, file := range append(files, nested...) {
			seen++
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if r.FIPS == nil || !r.FIPS.ImageMode && version != "4.18.0" {
				t.Errorf("%s: upstream builds a FIPS bootc image, the knowledge has no image mode FIPS for %s", file, version)
			}
			m := heredoc.FindSubmatch(data)
			if m == nil {
				t.Fatalf("%s: no kargs.d heredoc", file)
			}
			var kargs struct {
				Kargs              []string `toml:"kargs"`
				MatchArchitectures []string `toml:"match-architectures"`
			}
			if _, err := toml.NewDecoder(bytes.NewReader(m[1])).Decode(&kargs); err != nil {
				t.Fatalf("%s: kargs.d: %v", file, err)
			}
			if !slices.Equal(kargs.Kargs, []string{"fips=1"}) || !slices.Equal(kargs.MatchArchitectures, r.FIPS.Arches) {
				t.Errorf("%s: kargs %q for %q, the knowledge: fips=1 for %q", file, kargs.Kargs, kargs.MatchArchitectures, r.FIPS.Arches)
			}
			major := 9
			if strings.Contains(file, "/el10/") || strings.Contains(filepath.Base(file), "rhel10") {
				major = 10
			}
			os, ok := r.FIPSOS(major)
			if !ok {
				t.Fatalf("no fips_os for RHEL %d", major)
			}
			im := install.FindSubmatch(data)
			if im == nil {
				t.Fatalf("%s: no dnf install", file)
			}
			for _, p := range os.BootcPackages {
				if !slices.Contains(strings.Fields(string(im[1])), p) {
					t.Errorf("%s installs %s, not %s", file, im[1], p)
				}
			}
			if !bytes.Contains(data, []byte("update-crypto-policies --no-reload --set FIPS")) {
				t.Errorf("%s does not set the FIPS crypto policy as the Containerfile will", file)
			}
		}
		post, err := os.ReadFile(filepath.Join(dir, "test", "kickstart-templates", "includes", "post-fips.cfg"))
		if err != nil {
			t.Fatal(err)
		}
		el9, _ := r.FIPSOS(9)
		for _, c := range el9.KickstartPost {
			if !bytes.Contains(post, []byte(c)) {
				t.Errorf("%s post-fips.cfg does not run %q", branch, c)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no FIPS containerfile read")
	}
	if el10, _ := factsFor(t, "5.0.0").FIPSOS(10); len(el10.KickstartPost) != 0 {
		t.Errorf("RHEL 10 runs %q in %%post; fips-mode-setup is deprecated there", el10.KickstartPost)
	}
	if got := k.FIPSFrom(); got != "4.15" {
		t.Errorf("FIPSFrom() = %q", got)
	}
}

// The CIS tailoring is the guide's: per RHEL major, every rule of its
// tables is unselected, unavoidable or the audit rule, the forwarding
// rules of the playbook overrides are exactly the unselected ones, and no
// rule of the knowledge is missing from the guide.
func TestCISMatchesGuide(t *testing.T) {
	guide, err := os.ReadFile(testutil.Shared(t, "reference", "microshift-hardening", "main", "docs", "user", "howto_cis_hardening.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9_]+)` \\|\\s*(x?)\\s*\\|\\s*(x?)\\s*\\|$")
	inGuide := map[int][]string{}
	for _, m := range row.FindAllStringSubmatch(string(guide), -1) {
		if m[2] == "x" {
			inGuide[9] = append(inGuide[9], m[1])
		}
		if m[3] == "x" {
			inGuide[10] = append(inGuide[10], m[1])
		}
	}
	playbook := regexp.MustCompile(`(?s)ansible-role-rhel(\d+)-cis\n\s+vars:\n((?:\s+[a-z0-9_]+: false\n)+)`)
	overrides := map[int][]string{}
	for _, m := range playbook.FindAllStringSubmatch(string(guide), -1) {
		major := 9
		if m[1] == "10" {
			major = 10
		}
		for _, l := range strings.Split(strings.TrimSpace(m[2]), "\n") {
			overrides[major] = append(overrides[major], strings.TrimSuffix(strings.TrimSpace(l), ": false"))
		}
	}
	r := factsFor(t, "5.0.0")
	for _, major := range []int{9, 10} {
		c := r.CIS(major)
		if c == nil {
			t.Fatalf("no CIS tailoring for RHEL %d", major)
		}
		known := slices.Clone(c.Unselect)
		for _, u := range c.Unavoidable {
			known = append(known, u.Rules...)
		}
		known = append(known, c.AuditRule)
		if len(inGuide[major]) < 6 {
			t.Fatalf("read %d rules for RHEL %d from the guide", len(inGuide[major]), major)
		}
		for _, rule := range inGuide[major] {
			if !slices.Contains(known, rule) {
				t.Errorf("RHEL %d: the guide's %s is not in the knowledge", major, rule)
			}
		}
		for _, rule := range known {
			if !slices.Contains(inGuide[major], rule) {
				t.Errorf("RHEL %d: %s is not in the guide", major, rule)
			}
		}
		if a, b := slices.Sorted(slices.Values(c.Unselect)), slices.Sorted(slices.Values(overrides[major])); !slices.Equal(a, b) {
			t.Errorf("RHEL %d: unselect %q, the guide's playbook overrides %q", major, a, b)
		}
	}
	if got := factsFor(t, "4.18.0").CIS(9); got == nil {
		t.Error("no CIS tailoring for 4.18 on RHEL 9")
	}
	if got := r.CIS(8); got != nil {
		t.Errorf("CIS(8) = %+v", got)
	}
}

func TestHardeningParseErrors(t *testing.T) {
	const okConfig = "[[key]]\npath = \"a.b\"\nrelease = \">=4.14\"\ntype = \"string\"\n"
	const okReleases = "[[config_file]]\nrelease = \">=4.14\"\npath = \"/etc/microshift/config.yaml\"\n[packages]\nmicroshift = \">=4.14\"\n" +
		"[[distro]]\nrelease = \">=4.14\"\nname = \"rhel-9.6\"\ndefault = true\nimage_type = \"edge-commit\"\n[[upgrade]]\nrelease = \">=4.14\"\nmax_skew = 2\n"
	for _, tc := range []struct {
		name, releases, want string
	}{
		{"fine", "[[fips]]\nrelease = \">=4.15\"\narches = [\"x86_64\"]\nimage_mode = true\nconfig_why = \"y\"\n[fips.config]\na.b = \"x\"\n[[fips_os]]\nrhel = 9\n[[cis]]\nrelease = \">=4.14\"\nrhel = 9\nunselect = [\"a_b\"]\n", ""},
		{"no arches", "[[fips]]\nrelease = \">=4.15\"\nimage_mode = true\n", `r.toml: fips[0]: arches: list at least one`},
		{"bad arch", "[[fips]]\nrelease = \">=4.15\"\narches = [\"s390x\"]\nimage_mode = true\n", `r.toml: fips[0]: arches: "s390x" is not x86_64 or aarch64`},
		{"no image mode reason", "[[fips]]\nrelease = \">=4.15\"\narches = [\"x86_64\"]\n", `r.toml: fips[0]: image_mode_why: required when image_mode is false`},
		{"config without why", "[[fips]]\nrelease = \">=4.15\"\narches = [\"x86_64\"]\nimage_mode = true\n[fips.config]\na.b = \"x\"\n", `r.toml: fips[0]: config and config_why go together`},
		{"fips bad release", "[[fips]]\nrelease = \"soon\"\narches = [\"x86_64\"]\nimage_mode = true\n", `r.toml: fips[0]: release: invalid semver constraint "soon"`},
		{"fips unknown key", "[[fips]]\nrelease = \">=4.15\"\narches = [\"x86_64\"]\nimage_mode = true\nkargs = [\"fips=1\"]\n", `r.toml: line 18: unknown key "fips.kargs"`},
		{"fips_os package", "[[fips_os]]\nrhel = 9\nbootc_packages = [\"crypto policies\"]\n", `r.toml: fips_os[0]: bootc_packages: "crypto policies" is not a package name`},
		{"fips_os twice", "[[fips_os]]\nrhel = 9\n[[fips_os]]\nrhel = 9\n", `r.toml: fips_os[1]: rhel 9 is listed twice`},
		{"fips_os post section", "[[fips_os]]\nrhel = 9\nkickstart_post = [\"%end\"]\n", `r.toml: fips_os[0]: kickstart_post: "%end" is not one command line`},
		{"cis rule", "[[cis]]\nrelease = \">=4.14\"\nrhel = 9\nunselect = [\"Bad Rule\"]\n", `r.toml: cis[0]: "Bad Rule" is not an SCAP Security Guide rule ID`},
		{"cis unavoidable without why", "[[cis]]\nrelease = \">=4.14\"\nrhel = 9\n[[cis.unavoidable]]\nrules = [\"a\"]\n", `r.toml: cis[0]: unavoidable[0]: rules and why are required`},
		{"cis rhel", "[[cis]]\nrelease = \">=4.14\"\nrhel = 0\n", `r.toml: cis[0]: rhel: 0 is not a RHEL major`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := knowledge.Parse("r.toml", []byte(okReleases+tc.releases), "c.toml", []byte(okConfig))
			if tc.want == "" {
				if err != nil {
					t.Errorf("Parse() = %v", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Parse() = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestDistroMajor(t *testing.T) {
	for name, want := range map[string]int{"rhel-9.6": 9, "rhel-10.2": 10, "centos-10": 10, "rhel-9": 9, "fedora-42": 0, "rhel": 0, "rhel-x.1": 0, "rhel-09.1": 0, "rhel--1": 0} {
		got, ok := knowledge.DistroMajor(name)
		if got != want || ok != (want != 0) {
			t.Errorf("DistroMajor(%q) = %d, %t; want %d", name, got, ok, want)
		}
	}
}
