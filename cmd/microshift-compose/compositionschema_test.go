package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/internal/kernelargs"
	"github.com/microshift-compose/microshift-compose/internal/safetext"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan/request/schema"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/render/installer"
	"github.com/microshift-compose/microshift-compose/render/sbom"
)

// compositionFlagHelp is a flag's help as the commands say it: a matrix
// list's from matrix, the others' from build (or mirror, for its own).
func compositionFlagHelp(flag string, list bool) string {
	if list {
		if f := newMatrixCmd().Flags().Lookup(flag); f != nil {
			return f.Usage
		}
		return ""
	}
	for _, cmd := range []func() *cobra.Command{newBuildCmd, newMatrixCmd, newMirrorCmd} {
		if f := cmd().Flags().Lookup(flag); f != nil {
			return f.Usage
		}
	}
	return ""
}

// compositionFlagValues is the rule of a flag's values as the packages
// that check them say it, for the schema: the catalog's names (with the
// embedded catalog's as examples: --catalog adds others), the arches, the
// SBOM formats, bootc's image modes, and the patterns of kernel arguments,
// firewall ports, user names and installation devices.
func compositionFlagValues(flag string) schema.Values {
	cat, err := components.Default()
	if err != nil {
		panic(err) // the embedded catalog is checked by its own tests
	}
	switch flag {
	case "profile":
		return schema.Values{Pattern: components.NamePattern, Examples: cat.ProfileNames()}
	case "with", "without":
		return schema.Values{Pattern: components.NamePattern, MaxLength: components.MaxNameLength, Examples: slices.Sorted(maps.Keys(cat.Components))}
	case "arch":
		return schema.Values{Enum: releases.ArchSpellings()}
	case "sbom-format":
		var formats []string
		for _, f := range sbom.Formats {
			formats = append(formats, string(f))
		}
		return schema.Values{Enum: formats, MinItems: 1}
	case "bootc-images":
		return schema.Values{Enum: []string{blueprints.BootcImagesMirror, blueprints.BootcImagesPull}}
	case "karg":
		return schema.Values{Pattern: kernelargs.Pattern, MaxLength: kernelargs.MaxArg, Unique: true}
	case "firewall-port":
		return schema.Values{Pattern: installer.FirewallPortPattern}
	case "user":
		return schema.Values{Pattern: installer.UserNamePattern, Not: installer.ReservedUsers()}
	case "installation-device":
		return schema.Values{Pattern: installer.DevicePattern, MaxLength: safetext.MaxPath}
	}
	return schema.Values{}
}

// TestCompositionSchemaUpToDate regenerates the composition file's JSON
// Schema from request.Request and the flags' help and compares it with
// docs/composition.schema.json; -update-docs (make docs) rewrites it.
func TestCompositionSchemaUpToDate(t *testing.T) {
	got, err := schema.Generate(schema.Options{Help: compositionFlagHelp, Values: compositionFlagValues})
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join(root(t), "docs", "composition.schema.json"), got, *updateDocs, "make docs")
}

// compiledCompositionSchema is docs/composition.schema.json compiled by a
// JSON Schema validator (santhosh-tekuri/jsonschema, draft 2020-12, the
// one plan/request/schema's tests use).
func compiledCompositionSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	path := filepath.Join(root(t), "docs", "composition.schema.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(path, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(path)
	if err != nil {
		t.Fatalf("compiling %s: %v", path, err)
	}
	return s
}

// schemaInstance is a composition file as the JSON value an editor
// validates.
func schemaInstance(t *testing.T, data string) any {
	t.Helper()
	var doc map[string]any
	if _, err := toml.Decode(data, &doc); err != nil {
		t.Fatalf("%q: %v", data, err)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCompositionSchemaRefusesWhatTheToolRefuses: every composition file
// here is refused by the tool (-f with --print-file, which checks every
// flag as the build would, or resolve for the catalog's names) and by the
// schema; the files beside them, and the examples, are taken by both.
// What the tool refuses that a schema cannot say (an unknown component of
// the right form, a range of ports that ends below where it starts, a
// health check timeout of no whole seconds) is not here.
func TestCompositionSchemaRefusesWhatTheToolRefuses(t *testing.T) {
	s := compiledCompositionSchema(t)
	dir := t.TempDir()
	fileFixtures(t, dir)
	writeTestFile(t, filepath.Join(dir, "a", "release-x86_64.json"), "{}\n")
	writeTestFile(t, filepath.Join(dir, "b", "release-x86_64.json"), "{}\n")
	writeTestFile(t, filepath.Join(dir, "~ps.json"), "{}\n")
	t.Chdir(dir)
	const device = "profile = 'minimal'\narch = 'x86_64'\n"
	const kickstart = device + "[installer]\nkickstart = true\nostree_url = 'http://edge.example.com/repo'\nssh_key = 'admin.pub'\n"
	var (
		printFile   = []string{"build", "--print-file"}
		resolveFile = []string{"resolve"}
		matrixFile  = []string{"matrix", "--print-file"}
	)
	for _, tc := range []struct {
		name, doc string
		cmd       []string
		tool      string // what the tool's message says
	}{
		{"profile and profiles", "profile = 'full'\nprofiles = ['minimal']\n", printFile, "profile and profiles both given"},
		{"arch and arches", "arch = 'x86_64'\narches = ['aarch64']\n", printFile, "arch and arches both given"},
		{"release and releases", "release = '5.0'\nreleases = ['4.21']\n", printFile, "release and releases both given"},
		{"release_dir and release_dirs", "release_dir = 'a'\nrelease_dirs = ['b']\n", printFile, "release_dir and release_dirs both given"},
		{"arch sparc", "profile = 'minimal'\narch = 'sparc'\n", printFile, `unknown arch "sparc"`},
		{"arches with ppc64le", "profiles = ['minimal']\narches = ['x86_64', 'ppc64le']\n", matrixFile, `unknown arch "ppc64le"`},
		{"arch X86_64", "profile = 'minimal'\narch = 'X86_64'\n", printFile, `unknown arch "X86_64"`},
		{"with a capital", device + "with = ['Multus']\n", resolveFile, `unknown component "Multus"`},
		{"without an empty name", device + "without = ['']\n", resolveFile, `unknown component ""`},
		{"with a name of 64 characters", device + "with = ['" + strings.Repeat("a", 64) + "']\n", resolveFile, "unknown component"},
		{"with an underscore", device + "with = ['storage_lvms']\n", resolveFile, "unknown component"},
		{"profile with a capital", "profile = 'Full'\narch = 'x86_64'\n", resolveFile, `unknown profile "Full"`},
		{"profiles with a space", "profiles = ['full ']\narch = 'x86_64'\n", resolveFile, `unknown profile "full "`},
		{"plugin_timeout without a unit", device + "plugin_timeout = '90'\n", printFile, `"90" is not a duration`},
		{"plugin_timeout 0s", device + "plugin_timeout = '0s'\n", printFile, `must be positive, got "0s"`},
		{"plugin_timeout 0h0m", device + "plugin_timeout = '0h0m'\n", printFile, `must be positive, got "0h0m"`},
		{"health_checks.timeout 0", device + "[health_checks]\ntimeout = '0'\n", printFile, `must be positive, got "0"`},
		{"health_checks.timeout -5m", device + "[health_checks]\ntimeout = '-5m'\n", printFile, `must be positive, got "-5m"`},
		{"health_checks.timeout 1h30", device + "[health_checks]\ntimeout = '1h30'\n", printFile, `"1h30" is not a duration`},
		{"an empty catalog", device + "catalog = ''\n", printFile, "empty path"},
		{"an empty cis", device + "cis = ''\n", printFile, `key "cis" (--cis) is empty`},
		{"an empty distro", device + "distro = ''\n", printFile, `key "distro" (--distro) is empty`},
		{"an empty release", device + "release = ''\n", printFile, `key "release" (--release) is empty`},
		{"an empty mirror registry", device + "[registry]\nmirror = ''\n", printFile, `key "registry.mirror" (--mirror-registry) is empty`},
		{"an empty bootc base", device + "[bootc]\nenabled = true\nbase = ''\n", printFile, `key "bootc.base" (--bootc-base) is empty`},
		{"an empty user", device + "[installer]\nuser = ''\n", printFile, `key "installer.user" (--user) is empty`},
		{"an empty key path", device + "[trust]\nkeys = ['cosign.pub', '']\n", printFile, "empty path"},
		{"a config path with a bell", device + "[microshift]\nconfig = \"a\\u0007b.yaml\"\n", printFile, "holds a control character"},
		{"a pull secret path with a line separator", device + "[registry]\npull_secret = \"ps\\u2028.json\"\n", printFile, "holds a control character"},
		{"a pull secret under ~", device + "[registry]\npull_secret = '~/ps.json'\n", printFile, "starts with ~"},
		{"an output directory ~", device + "[output]\ndir = '~'\n", printFile, "starts with ~"},
		{"kernel_args with a space", device + "kernel_args = ['a b']\n", printFile, "a space in its key"},
		{"kernel_args given twice", device + "kernel_args = ['quiet', 'quiet']\n", printFile, "given twice"},
		{"kernel_args --", device + "kernel_args = ['--']\n", printFile, `"--" ends the kernel's arguments`},
		{"kernel_args with $", device + "kernel_args = ['x=$(id)']\n", printFile, "in its value"},
		{"kernel_args too long", device + "kernel_args = ['a=" + strings.Repeat("b", 300) + "']\n", printFile, "longer than 256 bytes"},
		{"a firewall port with a leading zero", device + "[installer]\nfirewall_ports = ['080/tcp']\n", printFile, `"080" is not a port number`},
		{"a firewall port of sctp", device + "[installer]\nfirewall_ports = ['80/sctp']\n", printFile, "PROTO tcp or udp"},
		{"a firewall port out of range", device + "[installer]\nfirewall_ports = ['65536/tcp']\n", printFile, "out of range"},
		{"the user root", kickstart + "user = 'root'\n", printFile, "is an account of the base system"},
		{"a user with a capital", kickstart + "user = 'Admin'\n", printFile, "is not a user name useradd accepts"},
		{"an installation device without /dev", device + "[installer]\ninstallation_device = 'vda'\n", printFile, "is not a device path"},
		{"an installation device with ..", device + "[installer]\ninstallation_device = '/dev/../vda'\n", printFile, "is not a device path"},
		{"no SBOM format", device + "[output]\nsbom_formats = []\n", printFile, "no format given"},
		{"an SBOM format swid", device + "[output]\nsbom_formats = ['swid']\n", printFile, `"swid": unknown format`},
		{"bootc images copy", device + "[bootc]\nenabled = true\nimages = 'copy'\n", printFile, `unknown mode "copy"`},
		{"a storage class without its class", device + "[[microshift.storage_classes]]\ndevice_class = ''\n", printFile, "device_class is required"},
		{"a storage class with a comma", device + "[[microshift.storage_classes]]\ndevice_class = 'a,b'\n", printFile, "holds ',' or '='"},
		{"a storage class name with =", device + "[[microshift.storage_classes]]\ndevice_class = 'thin'\nname = 'x=y'\n", printFile, "holds ',' or '='"},
		{"a mount point with =", device + "[[installer.filesystems]]\nmountpoint = '/a=b'\nminsize = '1GiB'\n", printFile, "holds '='"},
		{"an empty mount point", device + "[[installer.filesystems]]\nmountpoint = ''\nminsize = '1GiB'\n", printFile, "mountpoint and minsize are required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.Validate(schemaInstance(t, tc.doc)); err == nil {
				t.Errorf("the schema takes %q", tc.doc)
			}
			file := filepath.Join(dir, "c.toml")
			writeTestFile(t, file, tc.doc)
			args := append(slices.Clone(tc.cmd), "-f", file)
			_, stderr, code := runCLI(t, args...)
			if code == exitOK || !strings.Contains(stderr, tc.tool) {
				t.Errorf("%q with %q: exit %d, %q; want it refused with %q", args, tc.doc, code, stderr, tc.tool)
			}
		})
	}
	// What both take: the spellings the tool reads, at the edges of the
	// rules above.
	for _, doc := range []string{
		device + "plugin_timeout = '.5s'\n[health_checks]\ntimeout = '1h0m1s'\n",
		device + "plugin_timeout = '+90s'\n",
		device + "plugin_timeout = '1.5µs'\n",
		"profile = 'minimal'\narch = 'arm64'\n",
		"profiles = ['minimal']\narches = ['amd64']\n",
		device + "with = ['multus', 'storage-lvms']\nkernel_args = ['console=ttyS0,115200n8', 'ip=[::1]']\n",
		device + "[installer]\nfirewall_ports = ['1-65535/udp', '8080:tcp']\ninstallation_device = '/dev/disk/by-path/pci-0000:00:1f.2-ata-1'\n",
		kickstart + "user = '_svc$'\n",
		device + "[registry]\npull_secret = '~ps.json'\n",
		device + "[output]\nsbom_formats = ['cyclonedx', 'spdx']\n",
		device + "[microshift]\nlvmd = 'lvmd.yaml'\n[[microshift.storage_classes]]\ndevice_class = 'thin'\nname = ''\n",
	} {
		if err := s.Validate(schemaInstance(t, doc)); err != nil {
			t.Errorf("the schema refuses %q: %v", doc, err)
		}
		file := filepath.Join(dir, "ok.toml")
		writeTestFile(t, file, doc)
		if _, stderr, code := runCLI(t, "build", "--print-file", "-f", file); code != exitOK {
			t.Errorf("build --print-file -f with %q: exit %d, %q", doc, code, stderr)
		}
	}
}
