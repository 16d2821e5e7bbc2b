package knowledge_test

import (
	"bufio"
	"errors"
	"fmt"
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
		multusDropIn, cniWarning, cniRedBoot    bool
	}{
		{"4.14.0", "/etc/microshift/config.yaml", "rhel-9.2", "1.27", false, false, false},
		{"4.16.3", "/etc/microshift/config.yaml", "rhel-9.4", "1.29", false, false, false},
		// 4.18's greenboot check waits for OVN-K whatever the config says.
		{"4.18.0", "/etc/microshift/config.yaml", "rhel-9.4", "1.31", false, true, true},
		{"4.18.7", "/etc/microshift/config.yaml", "rhel-9.4", "1.31", false, true, true},
		{"4.19.0", "/etc/microshift/config.d/10-microshift-compose.yaml", "rhel-9.6", "1.32", true, true, false},
		{"4.22.0", "/etc/microshift/config.d/10-microshift-compose.yaml", "rhel-9.8", "1.35", true, true, false},
		{"5.0.0", "/etc/microshift/config.d/10-microshift-compose.yaml", "rhel-9.8", "1.36", true, true, false},
		{"5.1.0", "/etc/microshift/config.d/10-microshift-compose.yaml", "rhel-9.8", "1.36", true, true, false},
		// A release newer than the data: the open-ended ranges apply.
		{"5.2.0", "/etc/microshift/config.d/10-microshift-compose.yaml", "rhel-9.8", "", true, true, false},
		{"5.3.0", "/etc/microshift/config.d/10-microshift-compose.yaml", "rhel-9.8", "", true, true, false},
		{"6.0.0", "/etc/microshift/config.d/10-microshift-compose.yaml", "rhel-9.8", "", true, true, false},
	} {
		t.Run(tc.version, func(t *testing.T) {
			r := factsFor(t, tc.version)
			wantRules, newer := r.Stream(), false
			if tc.kubernetes == "" {
				wantRules, newer = "5.1", true
			}
			if r.Rules != wantRules || r.Newer != newer {
				t.Errorf("rules %q (newer %v), want %q (%v)", r.Rules, r.Newer, wantRules, newer)
			}
			if r.ConfigFile != tc.configFile || r.Distro != tc.distro || r.Kubernetes != tc.kubernetes || r.ConfigFileWhy == "" {
				t.Errorf("config file %q (%q), distro %q, kubernetes %q; want %q, %q, %q", r.ConfigFile, r.ConfigFileWhy, r.Distro, r.Kubernetes, tc.configFile, tc.distro, tc.kubernetes)
			}
			multus := slices.ContainsFunc(r.PackageConfigs, func(pc knowledge.PackageConfig) bool {
				return pc.Package == "microshift-multus" && pc.Settings["network.multus.status"] == "Enabled"
			})
			if multus != tc.multusDropIn {
				t.Errorf("multus RPM drop-in known: %v, want %v", multus, tc.multusDropIn)
			}
			cni, hasCNI := r.MissingCapability("cni")
			csi, hasCSI := r.MissingCapability("csi")
			if hasCNI != tc.cniWarning || (cni.Warning != "") != tc.cniWarning || cni.RedBoot != tc.cniRedBoot || hasCSI {
				t.Errorf("cni: %+v (%v), csi: %+v (%v); want a cni warning %v, red boot %v, no csi warning", cni, hasCNI, csi, hasCSI, tc.cniWarning, tc.cniRedBoot)
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
	const okReleases = "[[config_file]]\nrelease = \">=4.14\"\npath = \"/etc/microshift/config.yaml\"\n[packages]\nmicroshift = \">=4.14\"\n" +
		"[[distro]]\nrelease = \">=4.14\"\nname = \"rhel-9.6\"\ndefault = true\nimage_type = \"edge-commit\"\n[[upgrade]]\nrelease = \">=4.14\"\nmax_skew = 2\n"
	const cfg414 = "[[config_file]]\nrelease = \">=4.14\"\npath = \"/etc/microshift/config.yaml\"\n"
	const up414 = "[[upgrade]]\nrelease = \">=4.14\"\nmax_skew = 2\n"
	for _, tc := range []struct {
		name, releases, config, want string
	}{
		{"fine", okReleases, okConfig, ""},
		{"unknown key", okReleases + "[colors]\nred = 1\n", okConfig, `r.toml: line 14: unknown key "colors"`},
		{"bad constraint", "[[config_file]]\nrelease = \">= four\"\npath = \"/etc/microshift/config.yaml\"\n", okConfig, `r.toml: config_file[0]: release: invalid semver constraint ">= four"`},
		{"empty constraint", "[[distro]]\nrelease = \"\"\nname = \"rhel-9.4\"\n", okConfig, `r.toml: distro[0]: release: invalid semver constraint ""`},
		{"config outside /etc/microshift", "[[config_file]]\nrelease = \">=4.14\"\npath = \"/usr/lib/microshift/config.yaml\"\n", okConfig, `r.toml: config_file[0]: path "/usr/lib/microshift/config.yaml" is not under /etc/microshift/`},
		{"package config of an unknown package", okReleases + "[[package_config]]\npackage = \"microshift-foo\"\nrelease = \">=4.19\"\n", okConfig, `r.toml: package_config[0]: package "microshift-foo" is not in [packages]`},
		{"TOML syntax", "[[config_file]\n", okConfig, `r.toml: line 2: expected end of table array name delimiter`},
		{"key type", okReleases, "[[key]]\npath = \"a\"\nrelease = \">=4.14\"\ntype = \"text\"\n", `c.toml: key[0] "a": unknown type "text" (want one of string, bool, int, uint, duration, list, objects, map, object)`},
		{"key format", okReleases, "[[key]]\npath = \"a\"\nrelease = \">=4.14\"\ntype = \"string\"\nformat = \"email\"\n", `c.toml: key[0] "a": unknown format "email"`},
		{"key zero rule", okReleases, "[[key]]\npath = \"a\"\nrelease = \">=4.14\"\ntype = \"int\"\nzero = \"sometimes\"\n", `c.toml: key[0] "a": unknown zero rule "sometimes"`},
		{"key release", okReleases, "[[key]]\npath = \"a\"\nrelease = \"soon\"\ntype = \"int\"\n", `c.toml: key[0] "a": release: invalid semver constraint "soon"`},
		{"no default distro", cfg414 + up414 + "[[distro]]\nrelease = \">=4.14\"\nname = \"rhel-9.6\"\n", okConfig, `r.toml: release 4.14 has 0 default distros, want exactly one`},
		{"two default distros", cfg414 + up414 + "[[distro]]\nrelease = \">=4.14\"\nname = \"rhel-9.6\"\ndefault = true\n[[distro]]\nrelease = \">=4.16\"\nname = \"rhel-9.4\"\ndefault = true\n", okConfig, `r.toml: release 4.16 has 2 default distros, want exactly one`},
		{"distro twice", cfg414 + up414 + "[[distro]]\nrelease = \">=4.14\"\nname = \"rhel-9.6\"\ndefault = true\n[[distro]]\nrelease = \">=4.18\"\nname = \"rhel-9.6\"\n", okConfig, `r.toml: release 4.18 has distro rhel-9.6 twice`},
		{"distro without name", cfg414 + up414 + "[[distro]]\nrelease = \">=4.14\"\ndefault = true\n", okConfig, `r.toml: distro[0]: name is required`},
		{"bootc base not a reference", cfg414 + up414 + "[[distro]]\nrelease = \">=4.14\"\nname = \"rhel-9.6\"\ndefault = true\nbootc_base = \"Registry/UPPER case\"\n", okConfig, `r.toml: distro[0]: bootc_base "Registry/UPPER case" is not an image reference`},
		{"no upgrade rule", cfg414 + "[[distro]]\nrelease = \">=4.14\"\nname = \"rhel-9.6\"\ndefault = true\n", okConfig, `r.toml: release 4.14 has no upgrade rule`},
		{"upgrade without max_skew", okReleases + "[[upgrade]]\nrelease = \">=5.0\"\n", okConfig, `r.toml: upgrade[1]: max_skew must be set, 0 or more`},
		{"upgrade last_minor not a major", okReleases + "[[upgrade]]\nrelease = \">=5.0\"\nmax_skew = 2\nlast_minor = { four = 22 }\n", okConfig, `r.toml: upgrade[1]: last_minor: "four" is not a major version`},
		{"kubernetes key not a stream", okReleases + "[kubernetes]\n\"4.18.1\" = \"1.31\"\n", okConfig, `r.toml: kubernetes: "4.18.1" is not a release stream (major.minor)`},
		{"missing capability without warning", okReleases + "[[missing_capability]]\ncapability = \"cni\"\nrelease = \">=4.18\"\nred_boot = true\n", okConfig, `r.toml: missing_capability[0]: capability and warning are required`},
		{"missing capability red_boot not a bool", okReleases + "[[missing_capability]]\ncapability = \"cni\"\nrelease = \">=4.18\"\nwarning = \"x\"\nred_boot = \"yes\"\n", okConfig, `r.toml: line 18: key "missing_capability.red_boot": must be a boolean, got a string`},
		{"existing namespace not a name", okReleases + "[[existing_namespaces]]\nrelease = \">=4.14\"\nnames = [\"Kube_System\"]\n", okConfig, `r.toml: existing_namespaces[0]: names: "Kube_System": `},
		{"existing namespace prefix not a name", okReleases + "[[existing_namespaces]]\nrelease = \">=4.14\"\nprefixes = [\"openshift.\"]\n", okConfig, `r.toml: existing_namespaces[0]: prefixes: "openshift." is not the start of a namespace name`},
		{"existing namespaces without release", okReleases + "[[existing_namespaces]]\nnames = [\"default\"]\n", okConfig, `r.toml: existing_namespaces[0]: release: invalid semver constraint ""`},
		{"key unknown field", okReleases, "[[key]]\npath = \"a\"\nrelease = \">=4.14\"\ntype = \"int\"\nmaximum = 3\n", `c.toml: line 5: unknown key "key.maximum"`},
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
// stream has exactly one config file, one default distro and a Kubernetes
// version.
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
			if d.Matches(v) && d.Default {
				distros++
			}
		}
		if files != 1 || distros != 1 {
			t.Errorf("release %s matches %d config_file and %d default distro entries, want one each", stream, files, distros)
		}
	}
}

// The distros and bootc bases of each release, as upstream builds its
// current-release images (test/image-blueprints-bootc/ of each branch).
func TestDistrosAndBootcBases(t *testing.T) {
	type distro struct{ name, base, imageType string }
	for _, tc := range []struct {
		version string
		want    []distro // the default first
	}{
		{"4.14.0", []distro{{"rhel-9.2", "", "edge-commit"}}},
		{"4.15.2", []distro{{"rhel-9.2", "", "edge-commit"}}},
		{"4.16.0", []distro{{"rhel-9.4", "registry.redhat.io/rhel9/rhel-bootc:9.4", "edge-commit"}}},
		{"4.18.7", []distro{{"rhel-9.4", "registry.redhat.io/rhel9-eus/rhel-9.4-bootc:9.4", "edge-commit"}}},
		{"4.20.0", []distro{{"rhel-9.6", "registry.redhat.io/rhel9-eus/rhel-9.6-bootc:9.6", "edge-commit"}}},
		{"4.21.0", []distro{{"rhel-9.6", "registry.redhat.io/rhel9-eus/rhel-9.6-bootc:9.6", "edge-commit"}, {"rhel-10.0", "registry.redhat.io/rhel10/rhel-bootc:10.0", ""}}},
		{"4.22.0", []distro{{"rhel-9.8", "registry.redhat.io/rhel9/rhel-bootc:9.8", "edge-commit"}, {"rhel-10.2", "registry.redhat.io/rhel10/rhel-bootc:10.2", ""}}},
		{"5.0.0", []distro{{"rhel-9.8", "registry.redhat.io/rhel9/rhel-bootc:9.8", "edge-commit"}, {"rhel-10.2", "registry.redhat.io/rhel10/rhel-bootc:10.2", ""}}},
		{"5.1.0", []distro{{"rhel-9.8", "registry.redhat.io/rhel9/rhel-bootc:9.8", "edge-commit"}, {"rhel-10.2", "registry.redhat.io/rhel10/rhel-bootc:10.2", ""}}},
	} {
		t.Run(tc.version, func(t *testing.T) {
			r := factsFor(t, tc.version)
			var got []distro
			for _, d := range r.Distros {
				got = append(got, distro{d.Name, d.BootcBase, d.ImageType})
				if d.BootcOnly() != (d.ImageType == "") || d.BootcOnly() != strings.HasPrefix(d.Name, "rhel-10") {
					t.Errorf("%s: BootcOnly() = %v", d.Name, d.BootcOnly())
				}
			}
			if !slices.Equal(got, tc.want) || r.Distro != tc.want[0].name || !r.Distros[0].Default {
				t.Errorf("distros %v (default %q), want %v", got, r.Distro, tc.want)
			}
		})
	}
}

// Which data each release takes over, by its own rule (upstream
// pkg/admin/prerun/version.go of each branch).
func TestAcceptsDataFrom(t *testing.T) {
	k, err := knowledge.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		from, to string
		distance int
		want     string // "" when accepted, else the error
	}{
		{"4.14.0", "4.14.9", 0, ""},
		{"4.14.3", "4.15.0", 1, ""},
		{"4.14.0", "4.16.0", 2, ""},
		{"4.14.0", "4.15.0", 1, ""},
		{"4.16.0", "4.18.2", 2, ""},
		{"4.21.0", "5.0.0", 2, ""},
		{"4.22.0", "5.0.0", 1, ""},
		{"4.14.0", "4.17.0", 3, "MicroShift 4.17 does not start on data written by 4.14: 4.17 is 3 minor versions newer, and it takes over data at most 2 older; upgrade through 4.16 first"},
		{"4.13.0", "4.15.0", 2, "MicroShift 4.15 does not start on data written by 4.13: 4.15 is 2 minor versions newer, and it takes over data at most 1 older; upgrade through 4.14 first"},
		{"4.16.0", "4.19.0", 3, "MicroShift 4.19 does not start on data written by 4.16: 4.19 is 3 minor versions newer, and it takes over data at most 2 older; upgrade through 4.18 first"},
		{"4.20.0", "5.0.0", 3, "MicroShift 5.0 does not start on data written by 4.20: 5.0 is 3 minor versions newer, and it takes over data at most 2 older; upgrade through 4.22 first"},
		{"4.14.0", "5.0.0", 9, "MicroShift 5.0 does not start on data written by 4.14: 5.0 is 9 minor versions newer, and it takes over data at most 2 older; upgrade through 4.16, 4.18, 4.20 and 4.22 first"},
		{"5.0.0", "4.22.0", -1, "MicroShift 4.22 does not start on data written by 5.0: it never migrates data to an older release"},
		{"4.19.4", "4.18.9", -1, "MicroShift 4.18 does not start on data written by 4.19: it never migrates data to an older release"},
	} {
		t.Run(tc.from+"->"+tc.to, func(t *testing.T) {
			r, err := k.For(semver.MustParse(tc.to))
			if err != nil {
				t.Fatal(err)
			}
			u, err := k.AcceptsDataFrom(r, semver.MustParse(tc.from))
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if u.Err != nil {
				got = u.Err.Error()
			}
			if got != tc.want || u.Distance != tc.distance {
				t.Errorf("AcceptsDataFrom = distance %d, %q; want %d, %q", u.Distance, got, tc.distance, tc.want)
			}
		})
	}
}

// TestNewerWarning: a release newer than the data is built with the newest
// known release's facts, and the warning names them (counted from the facts,
// not written down) and the command that refreshes the data.
func TestNewerWarning(t *testing.T) {
	k, err := knowledge.Default()
	if err != nil {
		t.Fatal(err)
	}
	newest := k.Newest()
	known, err := k.For(newest)
	if err != nil {
		t.Fatal(err)
	}
	if known.NewerWarning() != "" || known.Assumed() != "" {
		t.Errorf("a known release warns: %q", known.NewerWarning())
	}
	next := semver.New(newest.Major(), newest.Minor()+1, 0, "", "")
	facts, err := k.For(next)
	if err != nil {
		t.Fatal(err)
	}
	stream := fmt.Sprintf("%d.%d", newest.Major(), newest.Minor())
	nextStream := fmt.Sprintf("%d.%d", next.Major(), next.Minor())
	var distros []string
	for _, d := range facts.Distros {
		distros = append(distros, d.Name)
	}
	want := fmt.Sprintf("release %s is newer than the releases microshift-compose knows (the newest is %s): built assuming %s's rules: config in %s with %s's %d keys, %s's %d RPMs, distros %s, upgrades from up to %d minors back, its Kubernetes version unknown; refresh the knowledge from upstream's release-%s branch with 'make knowledge' in a microshift-compose source tree and rebuild, or use a microshift-compose that knows %s (--strict-release refuses it)",
		nextStream, stream, stream, known.ConfigFile, stream, len(known.Config.Paths()), stream, len(known.Packages()), strings.Join(distros, ", "), known.Upgrade.MaxSkew, nextStream, nextStream)
	if got := facts.NewerWarning(); got != want {
		t.Errorf("NewerWarning =\n%s\nwant\n%s", got, want)
	}
	if len(known.Config.Paths()) == 0 || len(known.Packages()) == 0 || len(distros) == 0 {
		t.Errorf("the newest release has no config keys, RPMs or distros: the warning would name nothing")
	}
}

// TestNamespaceExists: the namespaces every device has (Kubernetes' own and
// MicroShift's openshift-*) for every release, and no other.
func TestNamespaceExists(t *testing.T) {
	k, err := knowledge.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, stream := range slices.Sorted(maps.Keys(k.Kubernetes)) {
		r, err := k.For(semver.MustParse(stream + ".0"))
		if err != nil {
			t.Fatal(err)
		}
		for ns, want := range map[string]bool{
			"default": true, "kube-system": true, "kube-public": true, "kube-node-lease": true,
			"openshift-dns": true, "openshift-ingress": true, "openshift-cert-manager": true,
			"cert-manager": false, "edge": false, "kube-systems": false, "openshift": false, "my-openshift-app": false,
		} {
			if got := r.NamespaceExists(ns); got != want {
				t.Errorf("%s: NamespaceExists(%q) = %v, want %v", stream, ns, got, want)
			}
		}
	}
}
