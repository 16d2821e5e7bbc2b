package knowledge_test

import (
	"bufio"
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// referenceBranches are the upstream branches in ../shared/reference and
// the release each is.
var referenceBranches = map[string]string{
	"release-4.14": "4.14.0", "release-4.15": "4.15.0", "release-4.16": "4.16.0", "release-4.17": "4.17.0",
	"release-4.18": "4.18.0", "release-4.19": "4.19.0", "release-4.20": "4.20.0", "release-4.21": "4.21.0",
	"release-4.22": "4.22.0", "main": "5.0.0",
}

func factsFor(t *testing.T, version string) *knowledge.Release {
	t.Helper()
	k, err := knowledge.Default()
	if err != nil {
		t.Fatalf("Default() = %v", err)
	}
	r, err := k.For(semver.MustParse(version))
	if err != nil {
		t.Fatalf("For(%s) = %v", version, err)
	}
	return r
}

// The RPMs the knowledge says each release builds are exactly the ones
// that branch's microshift.spec builds.
func TestPackagesMatchEachBranch(t *testing.T) {
	for branch, version := range referenceBranches {
		t.Run(branch, func(t *testing.T) {
			f, err := os.Open(testutil.Shared(t, "reference", "microshift-packaging", "rpm-packages."+branch+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var want []string
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if l := strings.TrimSpace(sc.Text()); l != "" {
					want = append(want, l)
				}
			}
			slices.Sort(want)
			r := factsFor(t, version)
			if got := r.Packages(); !slices.Equal(got, want) {
				t.Errorf("packages of %s:\n got %q\nwant %q", version, got, want)
			}
			for _, p := range want {
				if !r.HasPackage(p) {
					t.Errorf("HasPackage(%s) = false", p)
				}
			}
		})
	}
}

// The config keys the knowledge says each release accepts are exactly the
// keys of that branch's own default config.yaml, which MicroShift generates
// from its Config struct: no key missing, none invented.
func TestConfigKeysMatchEachBranch(t *testing.T) {
	for branch, version := range referenceBranches {
		t.Run(branch, func(t *testing.T) {
			data, err := os.ReadFile(testutil.Shared(t, "reference", "microshift-config", "config.yaml."+branch))
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := yaml.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			rules := factsFor(t, version).Config
			var inFile []string
			var walk func(prefix string, m map[string]any)
			walk = func(prefix string, m map[string]any) {
				for k, v := range m {
					p := strings.TrimPrefix(prefix+"."+k, ".")
					key := rules.Key(p)
					switch x := v.(type) {
					case map[string]any:
						if key != nil && (key.Type == knowledge.TypeMap || key.Type == knowledge.TypeObject) {
							inFile = append(inFile, p)
							continue
						}
						walk(p, x)
					case []any:
						inFile = append(inFile, p)
						for _, e := range x {
							if em, ok := e.(map[string]any); ok {
								walk(p+"[]", em)
							}
						}
					default:
						inFile = append(inFile, p)
					}
				}
			}
			walk("", doc)
			slices.Sort(inFile)
			inFile = slices.Compact(inFile)
			if got := rules.Paths(); !slices.Equal(got, inFile) {
				missing, extra := diff(inFile, got), diff(got, inFile)
				t.Errorf("release %s: keys in the default config.yaml but not in the knowledge: %q; in the knowledge but not in the file: %q", version, missing, extra)
			}
		})
	}
}

func diff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func TestFor(t *testing.T) {
	for _, tc := range []struct {
		version, configFile, distro, kubernetes string
		multusDropIn, cniWarning                bool
	}{
		{"4.14.0", "/etc/microshift/config.yaml", "rhel-9.2", "1.27", false, false},
		{"4.16.3", "/etc/microshift/config.yaml", "rhel-9.4", "1.29", false, false},
		{"4.18.0", "/etc/microshift/config.yaml", "rhel-9.4", "1.31", false, true},
		{"4.19.0", "/etc/microshift/config.d/10-microshift-compose.yaml", "rhel-9.6", "1.32", true, true},
		{"4.22.0", "/etc/microshift/config.d/10-microshift-compose.yaml", "rhel-9.8", "1.35", true, true},
		{"5.0.0", "/etc/microshift/config.d/10-microshift-compose.yaml", "rhel-9.8", "1.36", true, true},
		// A release newer than the data: the open-ended ranges apply.
		{"5.2.0", "/etc/microshift/config.d/10-microshift-compose.yaml", "rhel-9.8", "", true, true},
	} {
		t.Run(tc.version, func(t *testing.T) {
			r := factsFor(t, tc.version)
			if r.ConfigFile != tc.configFile || r.Distro != tc.distro || r.Kubernetes != tc.kubernetes || r.ConfigFileWhy == "" {
				t.Errorf("config file %q (%q), distro %q, kubernetes %q; want %q, %q, %q", r.ConfigFile, r.ConfigFileWhy, r.Distro, r.Kubernetes, tc.configFile, tc.distro, tc.kubernetes)
			}
			multus := slices.ContainsFunc(r.PackageConfigs, func(pc knowledge.PackageConfig) bool {
				return pc.Package == "microshift-multus" && pc.Settings["network.multus.status"] == "Enabled"
			})
			if multus != tc.multusDropIn {
				t.Errorf("multus RPM drop-in known: %v, want %v", multus, tc.multusDropIn)
			}
			if (r.MissingCapabilityWarning("cni") != "") != tc.cniWarning || r.MissingCapabilityWarning("csi") != "" {
				t.Errorf("cni warning %q, csi warning %q", r.MissingCapabilityWarning("cni"), r.MissingCapabilityWarning("csi"))
			}
		})
	}
	k, _ := knowledge.Default()
	_, err := k.For(semver.MustParse("4.12.0"))
	if !errors.Is(err, knowledge.ErrUnsupported) || !strings.HasPrefix(err.Error(), "MicroShift 4.12: release is not supported: microshift-compose knows releases >=4.14") {
		t.Errorf("For(4.12) = %v, want ErrUnsupported naming the known releases", err)
	}
}

func TestParseErrors(t *testing.T) {
	const okConfig = "[[key]]\npath = \"a.b\"\nrelease = \">=4.14\"\ntype = \"string\"\n"
	const okReleases = "[[config_file]]\nrelease = \">=4.14\"\npath = \"/etc/microshift/config.yaml\"\n[packages]\nmicroshift = \">=4.14\"\n"
	for _, tc := range []struct {
		name, releases, config, want string
	}{
		{"fine", okReleases, okConfig, ""},
		{"unknown key", okReleases + "[colors]\nred = 1\n", okConfig, `r.toml: unknown key "colors"`},
		{"bad constraint", "[[config_file]]\nrelease = \">= four\"\npath = \"/etc/microshift/config.yaml\"\n", okConfig, `r.toml: config_file[0]: release: invalid semver constraint ">= four"`},
		{"empty constraint", "[[distro]]\nrelease = \"\"\nname = \"rhel-9.4\"\n", okConfig, `r.toml: distro[0]: release: invalid semver constraint ""`},
		{"config outside /etc/microshift", "[[config_file]]\nrelease = \">=4.14\"\npath = \"/usr/lib/microshift/config.yaml\"\n", okConfig, `r.toml: config_file[0]: path "/usr/lib/microshift/config.yaml" is not under /etc/microshift/`},
		{"package config of an unknown package", okReleases + "[[package_config]]\npackage = \"microshift-foo\"\nrelease = \">=4.19\"\n", okConfig, `r.toml: package_config[0]: package "microshift-foo" is not in [packages]`},
		{"TOML syntax", "[[config_file]\n", okConfig, `r.toml: toml: line 2: expected end of table array name delimiter`},
		{"key type", okReleases, "[[key]]\npath = \"a\"\nrelease = \">=4.14\"\ntype = \"text\"\n", `c.toml: key[0] "a": unknown type "text" (want one of string, bool, int, uint, duration, list, objects, map, object)`},
		{"key format", okReleases, "[[key]]\npath = \"a\"\nrelease = \">=4.14\"\ntype = \"string\"\nformat = \"email\"\n", `c.toml: key[0] "a": unknown format "email"`},
		{"key zero rule", okReleases, "[[key]]\npath = \"a\"\nrelease = \">=4.14\"\ntype = \"int\"\nzero = \"sometimes\"\n", `c.toml: key[0] "a": unknown zero rule "sometimes"`},
		{"key release", okReleases, "[[key]]\npath = \"a\"\nrelease = \"soon\"\ntype = \"int\"\n", `c.toml: key[0] "a": release: invalid semver constraint "soon"`},
		{"key unknown field", okReleases, "[[key]]\npath = \"a\"\nrelease = \">=4.14\"\ntype = \"int\"\nmaximum = 3\n", `c.toml: unknown key "key.maximum"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := knowledge.Parse("r.toml", []byte(tc.releases), "c.toml", []byte(tc.config))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Parse() = %v", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Errorf("Parse() = %v, want %q", err, tc.want)
			case err != nil && strings.ContainsAny(err.Error(), "\n"):
				t.Errorf("Parse() error spans lines: %q", err)
			}
		})
	}
}

// Every release range of the embedded data is covered once: each known
// stream has exactly one config file, distro and a Kubernetes version.
func TestDefaultCoversEveryStream(t *testing.T) {
	k, err := knowledge.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, stream := range slices.Sorted(maps.Keys(k.Kubernetes)) {
		v := semver.MustParse(stream + ".0")
		var files, distros int
		for _, f := range k.ConfigFiles {
			if f.Matches(v) {
				files++
			}
		}
		for _, d := range k.Distros {
			if d.Matches(v) {
				distros++
			}
		}
		if files != 1 || distros != 1 {
			t.Errorf("release %s matches %d config_file and %d distro entries, want one each", stream, files, distros)
		}
	}
}
