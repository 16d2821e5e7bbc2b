package lvmdconfig_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

const good = `# Two device classes: thick on rhel, thin on a pool.
socket-name: /run/lvmd/lvmd.socket
device-classes:
- name: default
  volume-group: rhel
  spare-gb: 10
  default: true
- name: thin
  volume-group: data
  type: thin
  thin-pool:
    name: pool0
    overprovision-ratio: 5.5
  stripe: 2
  stripe-size: 64k
  lvcreate-options: ["--type=raid1"]
`

func TestParse(t *testing.T) {
	c, err := lvmdconfig.Parse("lvmd.yaml", []byte(good))
	if err != nil {
		t.Fatalf("Parse() = %v", err)
	}
	ten, two := uint64(10), uint64(2)
	want := []lvmdconfig.DeviceClass{
		{Name: "default", VolumeGroup: "rhel", SpareGB: &ten, Default: true},
		{Name: "thin", VolumeGroup: "data", Type: "thin", ThinPool: &lvmdconfig.ThinPool{Name: "pool0", OverprovisionRatio: 5.5},
			Stripe: &two, StripeSize: "64k", LVCreateOptions: []string{"--type=raid1"}},
	}
	if !reflect.DeepEqual(c.DeviceClasses, want) {
		t.Errorf("DeviceClasses = %+v\nwant %+v", c.DeviceClasses, want)
	}
	if c.SocketName != "/run/lvmd/lvmd.socket" || c.Source != "lvmd.yaml" || string(c.Data) != good || c.Default().Name != "default" {
		t.Errorf("Parse() = socket %q source %q default %q; data kept: %v", c.SocketName, c.Source, c.Default().Name, string(c.Data) == good)
	}
}

// MicroShift's own lvmd.yaml documents every key with its default; with
// those uncommented (a minimal edit a user makes) it must pass.
func TestReferenceKeys(t *testing.T) {
	data, err := os.ReadFile(testutil.Shared(t, "reference", "microshift-config", "lvmd.yaml.release-4.18"))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		l = strings.TrimPrefix(l, "#")
		l = strings.TrimPrefix(l, "- ")
		if k, _, ok := strings.Cut(l, ":"); ok && !strings.Contains(k, " ") && k != "" {
			keys = append(keys, k)
		}
	}
	wantKeys := []string{"socket-name", "device-classes", "name", "volume-group", "spare-gb", "default", "stripe", "stripe-size", "lvcreate-options"}
	if !reflect.DeepEqual(keys, wantKeys) {
		t.Fatalf("reference lvmd.yaml keys = %v, want %v (has MicroShift's schema changed?)", keys, wantKeys)
	}
	doc := "socket-name: /run/lvmd/lvmd.socket\ndevice-classes:\n- name: default\n  volume-group: rhel\n  spare-gb: 0\n  default: true\n  stripe: 1\n  stripe-size: 64k\n  lvcreate-options:\n  - --type=raid1\n"
	if _, err := lvmdconfig.Parse("lvmd.yaml", []byte(doc)); err != nil {
		t.Errorf("Parse(every reference key set) = %v", err)
	}
}

// A file without a document is no parse error: what MicroShift does with
// it depends on the release, so the plan refuses it (compose), with that
// reason. A document with an empty list is an error here.
func TestParseEmpty(t *testing.T) {
	for _, doc := range []string{"", "\n\n", "# nothing\n", "  # indented comment\n\n# more\n", "null\n", "---\n", "~\n"} {
		c, err := lvmdconfig.Parse("lvmd.yaml", []byte(doc))
		if err != nil || !c.Empty || len(c.DeviceClasses) != 0 || string(c.Data) != doc {
			t.Errorf("Parse(%q) = %+v, %v; want an Empty config", doc, c, err)
		}
	}
	c, err := lvmdconfig.Parse("lvmd.yaml", []byte(good))
	if err != nil || c.Empty {
		t.Errorf("Parse(good) = Empty %v, %v", c != nil && c.Empty, err)
	}
}

func TestParseErrors(t *testing.T) {
	dc := func(extra string) string {
		return "device-classes:\n- name: ssd\n  volume-group: rhel\n  default: true\n" + extra
	}
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"invalid YAML", "device-classes:\n- name: a\n   volume-group: b\n", "invalid YAML: yaml: line 3: mapping values are not allowed in this context"},
		{"duplicate key", "device-classes:\n- name: a\n  name: b\n", `invalid YAML: yaml: unmarshal errors: line 3: key "name" already set in map`},
		{"top-level list", "- name: a\n", "the document must be a mapping, got a list"},
		{"camelCase from the proposal", "deviceClasses:\n- name: a\n", `unknown key "deviceClasses"; did you mean "device-classes"?`},
		{"unknown top-level key", "device-classes: []\nlvcreate-option-classes: []\n", `unknown key "lvcreate-option-classes" (want socket-name, device-classes)`},
		{"socket-name relative", "socket-name: lvmd.sock\n" + dc(""), `socket-name: "lvmd.sock" must be an absolute path`},
		{"socket-name a number", "socket-name: 5\n" + dc(""), "socket-name: must be a string, got a number"},
		{"device-classes a mapping", "device-classes:\n  name: a\n", "device-classes: must be a list, got a mapping"},
		{"device-classes empty", "device-classes: []\n", "device-classes: must list at least one device class"},
		{"entry a string", "device-classes:\n- ssd\n", "device-classes[0]: must be a mapping, got a string"},
		{"unknown key with suggestion", dc("  volumegroup: data\n"), `device-classes[0]: unknown key "volumegroup"; did you mean "volume-group"?`},
		{"unknown key", dc("  encrypted: true\n"), `device-classes[0]: unknown key "encrypted" (want name, volume-group, default, spare-gb, type, thin-pool, stripe, stripe-size, lvcreate-options)`},
		{"name missing", "device-classes:\n- volume-group: rhel\n  default: true\n", "device-classes[0].name: required"},
		{"name empty", "device-classes:\n- name: \"\"\n  volume-group: rhel\n", "device-classes[0].name: required"},
		{"name with space", "device-classes:\n- name: fast ssd\n  volume-group: rhel\n", `device-classes[0].name: "fast ssd" must be at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit (it becomes part of the node annotation capacity.topolvm.io/<name>)`},
		{"name a number", "device-classes:\n- name: 1\n  volume-group: rhel\n", "device-classes[0].name: must be a string, got a number"},
		{"volume-group missing", "device-classes:\n- name: ssd\n  default: true\n", "device-classes[0].volume-group: required"},
		{"volume-group starts with dash", "device-classes:\n- name: ssd\n  volume-group: -rhel\n", `device-classes[0].volume-group: "-rhel" is not an LVM volume group name (letters, digits and +_.-, not starting with '-')`},
		{"volume-group with slash", "device-classes:\n- name: ssd\n  volume-group: dev/rhel\n", `device-classes[0].volume-group: "dev/rhel" is not an LVM volume group name (letters, digits and +_.-, not starting with '-')`},
		{"default a string", "device-classes:\n- name: ssd\n  volume-group: rhel\n  default: \"yes\"\n", "device-classes[0].default: must be true or false, got a string"},
		{"spare-gb negative", dc("  spare-gb: -1\n"), "device-classes[0].spare-gb: must be a whole number of GiB >= 0, got -1"},
		{"spare-gb fraction", dc("  spare-gb: 1.5\n"), "device-classes[0].spare-gb: must be a whole number of GiB >= 0, got 1.5"},
		{"spare-gb a string", dc("  spare-gb: \"10\"\n"), "device-classes[0].spare-gb: must be a whole number of GiB >= 0, got a string"},
		{"stripe zero", dc("  stripe: 0\n"), "device-classes[0].stripe: must be a whole number >= 1, got 0"},
		{"stripe empty string as in the reference comment", dc("  stripe: \"\"\n"), "device-classes[0].stripe: must be a whole number >= 1, got a string"},
		{"stripe-size with unit word", dc("  stripe-size: 64 KiB\n"), `device-classes[0].stripe-size: "64 KiB" is not a size such as 64k or 1m (lvcreate --stripesize)`},
		{"lvcreate-options a string", dc("  lvcreate-options: --type=raid1\n"), "device-classes[0].lvcreate-options: must be a list of strings, got a string"},
		{"lvcreate-options entry a number", dc("  lvcreate-options: [\"-i\", 2]\n"), "device-classes[0].lvcreate-options[1]: must be a string, got a number"},
		{"type misspelt", dc("  type: thinn\n"), `device-classes[0].type: "thinn" must be thin or thick; did you mean "thin"?`},
		{"type capitalised", dc("  type: Thick\n"), `device-classes[0].type: "Thick" must be thin or thick; did you mean "thick"?`},
		{"thin without thin-pool", "device-classes:\n- name: a\n  volume-group: rhel\n  default: true\n- name: b\n  volume-group: rhel\n  type: thin\n", "device-classes[1].thin-pool: required when type is thin"},
		{"thick with thin-pool", dc("  type: thick\n  thin-pool:\n    name: p\n    overprovision-ratio: 2\n"), "device-classes[0].thin-pool: not allowed when type is thick (set type: thin)"},
		{"default type with thin-pool", dc("  thin-pool:\n    name: p\n    overprovision-ratio: 2\n"), "device-classes[0].thin-pool: not allowed when type is thick (the default; set type: thin)"},
		{"thin-pool not a mapping", dc("  type: thin\n  thin-pool: pool0\n"), "device-classes[0].thin-pool: must be a mapping, got a string"},
		{"thin-pool name missing", dc("  type: thin\n  thin-pool:\n    overprovision-ratio: 2\n"), "device-classes[0].thin-pool.name: required"},
		{"thin-pool ratio missing", dc("  type: thin\n  thin-pool:\n    name: p\n"), "device-classes[0].thin-pool.overprovision-ratio: required (a number >= 1.0)"},
		{"thin-pool ratio below one", dc("  type: thin\n  thin-pool:\n    name: p\n    overprovision-ratio: 0.5\n"), "device-classes[0].thin-pool.overprovision-ratio: must be a number >= 1.0, got 0.5"},
		{"thin-pool ratio a string", dc("  type: thin\n  thin-pool:\n    name: p\n    overprovision-ratio: \"10\"\n"), "device-classes[0].thin-pool.overprovision-ratio: must be a number >= 1.0, got a string"},
		{"thin-pool unknown key", dc("  type: thin\n  thin-pool:\n    name: p\n    overprovisionRatio: 10\n"), `device-classes[0].thin-pool: unknown key "overprovisionRatio"; did you mean "overprovision-ratio"?`},
		{"duplicate names", "device-classes:\n- name: ssd\n  volume-group: rhel\n  default: true\n- name: ssd\n  volume-group: data\n", `device-classes[1].name: "ssd" is already used by device-classes[0]`},
		{"no default", "device-classes:\n- name: a\n  volume-group: rhel\n- name: b\n  volume-group: data\n", "device-classes: exactly one device class must have default: true, found none"},
		{"two defaults", "device-classes:\n- name: a\n  volume-group: rhel\n  default: true\n- name: b\n  volume-group: data\n- name: c\n  volume-group: data\n  default: true\n", "device-classes[2].default: only one device class may be the default (device-classes[0] is)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := lvmdconfig.Parse("cfg/lvmd.yaml", []byte(tc.doc))
			if err == nil {
				t.Fatalf("Parse() = %+v, nil; want error", c)
			}
			if want := "cfg/lvmd.yaml: " + tc.want; err.Error() != want {
				t.Errorf("Parse() error:\n got: %s\nwant: %s", err, want)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(strings.Repeat("#", lvmdconfig.MaxSize+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	for _, tc := range []struct{ path, want string }{
		{missing, "lvmd config " + missing + " does not exist"},
		{dir, "lvmd config " + dir + " is not a regular file (a directory)"},
		{big, big + ": file is larger than 1048576 bytes"},
	} {
		if _, err := lvmdconfig.Load(tc.path); err == nil || err.Error() != tc.want {
			t.Errorf("Load(%s) = %v, want %q", tc.path, err, tc.want)
		}
	}
}
