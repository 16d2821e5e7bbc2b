package request

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fixture is a directory holding a composition file's neighbours:
// dir/files/{ps.json,ca.crt}, dir/release/, dir/shared/key.pub beside
// dir/files, and the file at dir/files/device.toml.
func fixture(t testing.TB) (dir, file string) {
	t.Helper()
	dir = t.TempDir()
	for _, p := range []string{"files/ps.json", "files/ca.crt", "shared/key.pub", "files/release/release-x86_64.json"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, filepath.Join(dir, "files", "device.toml")
}

func TestParse(t *testing.T) {
	dir, file := fixture(t)
	data := `#:schema ../docs/composition.schema.json
profile = "full"
with = ["multus"]
release_dir = "release"
plugin_timeout = "90s"
upgrade_from = "4.19"

[registry]
pull_secret = "ps.json"
mirror = "mirror.example.com/ms"
mirror_ca = "` + filepath.Join(dir, "files", "ca.crt") + `"

[trust]
keys = ["../shared/key.pub"]

[[microshift.storage_classes]]
device_class = "thin"
fstype = "ext4"

[installer]
filesystems = [{mountpoint = "/", minsize = "20GiB"}]

[health_checks]
timeout = "15m"

[output]
dir = "out/{id}"
`
	got, err := Parse(file, []byte("\ufeff"+data))
	if err != nil {
		t.Fatal(err)
	}
	files := filepath.Join(dir, "files")
	want := Request{
		Profile: "full", With: []string{"multus"}, ReleaseDir: DirPath(filepath.Join(files, "release")),
		PluginTimeout: "90s", UpgradeFrom: "4.19",
		Registry:     DeviceRegistry{PullSecret: FilePath(filepath.Join(files, "ps.json")), Mirror: "mirror.example.com/ms", MirrorCA: FilePath(filepath.Join(files, "ca.crt"))},
		Trust:        Trust{Keys: []FilePath{FilePath(filepath.Join(dir, "shared", "key.pub"))}},
		MicroShift:   MicroShift{StorageClasses: StorageClasses{{DeviceClass: "thin", FSType: "ext4"}}},
		Installer:    Installer{Filesystems: Filesystems{{Mountpoint: "/", MinSize: "20GiB"}}},
		HealthChecks: HealthChecks{Timeout: "15m"},
		Output:       Output{Dir: OutputPath(filepath.Join(files, "out", "{id}"))},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Parse =\n%+v\nwant\n%+v", got, want)
	}
	if v := got.MicroShift.StorageClasses.FlagValues(); !reflect.DeepEqual(v, []string{"thin,fstype=ext4"}) {
		t.Errorf("storage class flag values = %q", v)
	}
	if v := got.Installer.Filesystems.FlagValues(); !reflect.DeepEqual(v, []string{"/=20GiB"}) {
		t.Errorf("filesystem flag values = %q", v)
	}

	// Encode writes what Parse reads back (paths as they are: absolute).
	enc, err := Encode(got)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(file, enc)
	if err != nil {
		t.Fatalf("Parse(Encode) = %v:\n%s", err, enc)
	}
	if !reflect.DeepEqual(again, got) {
		t.Fatalf("Parse(Encode(r)) =\n%+v\nwant\n%+v\nfile:\n%s", again, got, enc)
	}
	if !strings.HasPrefix(string(enc), SchemaDirective+"\n") {
		t.Errorf("Encode does not start with the schema directive:\n%s", enc)
	}
}

// TestParseErrors: every refusal is one line naming the file, and the line
// and key where the decoder knows them.
func TestParseErrors(t *testing.T) {
	dir, file := fixture(t)
	for _, tc := range []struct{ name, data, want string }{
		{"unknown key", "profile = 'full'\nwtih = ['multus']\n", `device.toml: line 2: unknown key "wtih"; did you mean "with"?`},
		{"unknown section key", "[registry]\npull_secert = 'ps.json'\n", `device.toml: line 2: unknown key "registry.pull_secert"; did you mean "registry.pull_secret"?`},
		{"unknown section", "[hardening]\nfips = true\n", `device.toml: line 1: unknown key "hardening"`},
		{"wrong type", "profile = 'full'\nwith = 'multus'\n", `device.toml: line 2: key "with": must be an array, got a string`},
		{"wrong type in a section", "[bootc]\nenabled = 'yes'\n", `device.toml: line 2: key "bootc.enabled": must be a boolean, got a string`},
		{"release as a number", "release = 4.18\n", `device.toml: line 1: key "release": must be a string, got a number`},
		{"missing file", "[registry]\npull_secret = 'pull-secret.json'\n", `device.toml: line 2: key "registry.pull_secret": "pull-secret.json" (` + filepath.Join(dir, "files", "pull-secret.json") + `, relative to the file) does not exist`},
		{"missing file outside the file's directory", "[trust]\nkeys = ['../other/key.pub']\n", `device.toml: line 2: key "trust.keys": "../other/key.pub" (` + filepath.Join(dir, "other", "key.pub") + `, relative to the file) does not exist`},
		{"missing absolute file", "[microshift]\nconfig = '/nonexistent/config.yaml'\n", `device.toml: line 2: key "microshift.config": "/nonexistent/config.yaml" does not exist`},
		{"directory for a file", "[installer]\nssh_key = 'release'\n", `device.toml: line 2: key "installer.ssh_key": "release" (` + filepath.Join(dir, "files", "release") + `, relative to the file) is a directory, not a file`},
		{"file for a directory", "release_dir = 'ps.json'\n", `device.toml: line 1: key "release_dir": "ps.json" (` + filepath.Join(dir, "files", "ps.json") + `, relative to the file) is not a directory`},
		{"tilde", "catalog = '~/catalog'\n", `device.toml: line 1: key "catalog": path "~/catalog" starts with ~, which no shell expands here`},
		{"empty path", "[registry]\nmirror_ca = ''\n", `device.toml: line 2: key "registry.mirror_ca": empty path: leave the key out instead`},
		{"control character", "[registry]\nmirror_ca = \"ca\\u001b.crt\"\n", `device.toml: line 2: key "registry.mirror_ca": path "ca\x1b.crt" holds a control character`},
		{"upgrade from neither", "upgrade_from = 'four'\n", `device.toml: line 1: key "upgrade_from": neither a release (4.16, 4.16.3) nor a lock file or build output`},
		{"bad duration", "[health_checks]\ntimeout = '10 minutes'\n", `device.toml: line 2: key "health_checks.timeout": "10 minutes" is not a duration (e.g. 90s, 10m, 1h30m)`},
		{"single and list", "profile = 'full'\nprofiles = ['minimal']\n", `device.toml: profile and profiles both given: give profile for one value, profiles for a matrix`},
		{"storage class without class", "[[microshift.storage_classes]]\nname = 'fast'\n", `device.toml: microshift.storage_classes[0]: device_class is required`},
		{"filesystem without size", "[installer]\nfilesystems = [{mountpoint = '/'}]\n", `device.toml: installer.filesystems[0]: mountpoint and minsize are required`},
		{"syntax", "profile = 'full\n", `device.toml: line 1:`},
		{"key twice", "profile = 'full'\nprofile = 'minimal'\n", `device.toml: line 2: key "profile": Key 'profile' has already been defined.`},
		{"a newline in a path", "[microshift]\nconfig = \"conf\\nRUN touch /tmp/p\\n#.yaml\"\n", `device.toml: line 2: key "microshift.config": path "conf\nRUN touch /tmp/p\n#.yaml" holds a control character, which no path given to microshift-compose may hold: rename it`},
		{"a line separator in a path", "catalog = \"cat\u2028alog\"\n", `key "catalog": path "cat\u2028alog" holds a control character`},
		{"a tab in a list's path", "[trust]\nkeys = [\"key\\t.pub\"]\n", `key "trust.keys": path "key\t.pub" holds a control character`},
		{"an empty single key and its list", "profile = ''\nprofiles = ['minimal']\n", `device.toml: profile and profiles both given`},
		{"a single key and an empty list", "arch = 'x86_64'\narches = []\n", `device.toml: arch and arches both given`},
		{"a storage class name with a comma", "[[microshift.storage_classes]]\ndevice_class = 'thin'\nname = 'fast,fstype=ext4'\n", `device.toml: microshift.storage_classes[0]: name "fast,fstype=ext4" holds ',' or '='`},
		{"a device class with '='", "[[microshift.storage_classes]]\ndevice_class = 'thin=fast'\n", `microshift.storage_classes[0]: device_class "thin=fast" holds ',' or '='`},
		{"a mount point with '='", "[installer]\nfilesystems = [{mountpoint = '/a=b', minsize = '1GiB'}]\n", `installer.filesystems[0]: mountpoint "/a=b" holds '='`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(file, []byte(tc.data))
			if err == nil {
				t.Fatal("Parse = nil, want an error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, file+": ") {
				t.Fatalf("error %q does not start with the file", msg)
			}
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("Parse = %q, want %q in it", msg, tc.want)
			}
			if strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error %q is more than one line", msg)
			}
		})
	}
}

// TestCheckPath: the rule every path keeps, from a flag or a key.
func TestCheckPath(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"config.yaml", ""},
		{"/etc/edge/my \"agent\" it's $HOME.conf", ""},
		{"~/x", ""},            // a flag's "~" is the shell's business; a file's is refused by join
		{"out\xff\xfe", ""},    // invalid UTF-8 is a file name's right
		{"ünïcode/✓.yaml", ""}, // so is UTF-8
		{"", "empty path"},
		{"a\nb.yaml", `path "a\nb.yaml" holds a control character, which no path given to microshift-compose may hold: rename it`},
		{"a\rb", "holds a control character"},
		{"a\tb", "holds a control character"},
		{"a\x1b[2Jb", "holds a control character"},
		{"a\x00b", "holds a control character"},
		{"a\x7fb", "holds a control character"},
		{"a\u0085b", "holds a control character"},
		{"a\u2028b", "holds a control character"},
		{"a\u2029b", "holds a control character"},
		{"a\u202eb", "holds a control character"},
		{"a\u200bb", "holds a control character"},
	} {
		err := CheckPath(tc.in)
		if tc.err == "" {
			if err != nil {
				t.Errorf("CheckPath(%q) = %v, want nil", tc.in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) || strings.ContainsAny(err.Error(), "\n\r") {
			t.Errorf("CheckPath(%q) = %v, want one line with %q", tc.in, err, tc.err)
		}
	}
}

// TestSourceWrites: a key written with its zero value is written; a
// single key a matrix spans and its list count as one.
func TestSourceWrites(t *testing.T) {
	_, file := fixture(t)
	content := "cis = ''\nfips = false\nwith = []\nprofiles = ['full']\n[health_checks]\ntimeout = '0s'\n"
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	r, src, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	// The zero duration is kept as written, for its flag to refuse.
	if !reflect.DeepEqual(normal(r), normal(Request{Profiles: []string{"full"}, HealthChecks: HealthChecks{Timeout: "0s"}})) {
		t.Fatalf("Load = %+v", r)
	}
	for key, want := range map[string]bool{
		"cis": true, "fips": true, "with": true, "health_checks.timeout": true, "health_checks": true,
		"profiles": true, "profile": true, // the pair
		"arch": false, "arches": false, "release": false, "health_checks.disabled": false, "timeout": false, "installer.user": false,
	} {
		if got := src.Writes(key); got != want {
			t.Errorf("Writes(%q) = %t, want %t", key, got, want)
		}
	}
	if (Source{}).Writes("cis") {
		t.Error("the zero Source writes cis")
	}
}

func TestLoad(t *testing.T) {
	_, file := fixture(t)
	content := "profile = 'minimal'\n"
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	r, src, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(content))
	if r.Profile != "minimal" || src.Path != file || src.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("Load = %+v, %+v", r, src)
	}
	if _, _, err := Load(filepath.Join(filepath.Dir(file), "absent.toml")); err == nil || !strings.Contains(err.Error(), "composition file "+filepath.Join(filepath.Dir(file), "absent.toml")+" does not exist") {
		t.Fatalf("Load(absent) = %v", err)
	}
	if _, _, err := Load(filepath.Dir(file)); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Load(dir) = %v", err)
	}
}

func TestSingleAndLists(t *testing.T) {
	r := Request{Profiles: []string{"full"}, Arches: []string{"x86_64", "aarch64"}, ReleaseDirs: []DirPath{"rel"}}
	// Every list of more than one value is named at once, with the flags
	// that choose one; a flag given drops its list.
	for _, tc := range []struct {
		name  string
		r     Request
		given string
		want  string
	}{
		{"one list", r, "", "arches lists 2 values, which is a matrix: run 'microshift-compose matrix' with it, or choose one with --arch"},
		{"two lists", Request{Profiles: []string{"minimal", "full"}, Arches: []string{"x86_64", "aarch64"}}, "",
			"profiles (2 values) and arches (2 values) each list several values, which is a matrix: run 'microshift-compose matrix' with it, or choose one of each with --profile and --arch"},
		{"every list", Request{Profiles: []string{"a", "b"}, Arches: []string{"x86_64", "aarch64"}, Releases: []string{"4.18", "4.19", "5.0"}, ReleaseDirs: []DirPath{"a", "b"}}, "",
			"profiles (2 values), arches (2 values), releases (3 values) and release_dirs (2 values) each list several values, which is a matrix: run 'microshift-compose matrix' with it, or choose one of each with --profile, --arch, --release and --release-dir"},
		{"a flag drops its list", Request{Profiles: []string{"minimal", "full"}, Arches: []string{"x86_64", "aarch64"}, Releases: []string{"4.18", "4.19"}}, "arch",
			"profiles (2 values) and releases (2 values) each list several values, which is a matrix: run 'microshift-compose matrix' with it, or choose one of each with --profile and --release"},
	} {
		_, err := tc.r.Single(func(flag string) bool { return flag == tc.given })
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: Single = %v, want %q", tc.name, err, tc.want)
		}
	}
	s, err := r.Single(func(flag string) bool { return flag == "arch" })
	if err != nil {
		t.Fatal(err)
	}
	if want := (Request{Profile: "full", ReleaseDir: "rel"}); !reflect.DeepEqual(s, want) {
		t.Fatalf("Single = %+v, want %+v", s, want)
	}
	if r.Profile != "" || len(r.Profiles) != 1 {
		t.Fatal("Single changed its receiver")
	}
	l := Request{Profile: "full", Release: "4.19", Arches: []string{"x86_64"}}.Lists()
	if want := (Request{Profiles: []string{"full"}, Releases: []string{"4.19"}, Arches: []string{"x86_64"}}); !reflect.DeepEqual(l, want) {
		t.Fatalf("Lists = %+v, want %+v", l, want)
	}
}

// FuzzParse: any input is a request or one line naming the file; never a
// panic. A request encodes to a file that parses to the same request.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"profile = 'full'\nwith = ['multus']\n",
		"[registry]\npull_secret = 'ps.json'\nmirror = 'm.example.com'\n",
		"profiles = ['a', 'b']\narches = ['x86_64']\n[[microshift.storage_classes]]\ndevice_class = 'x'\n",
		"[installer]\nfilesystems = [{mountpoint = '/', minsize = '1GiB'}]\n[health_checks]\ntimeout = '1m'\n",
		"upgrade_from = '4.19'\nplugin_timeout = '1h'\n[trust]\nkeys = ['../shared/key.pub']\n",
		"[output]\ndir = 'out/{id}'\n",
		"[[microshift.storage_classes]]\ndevice_class = 'thin'\nname = 'fast'\nfstype = 'xfs'\n",
		"[microshift]\nconfig = \"a\\u2028b\"\n",
	} {
		f.Add([]byte(s))
	}
	_, file := fixture(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(file, data)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, file+": ") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error %q is not one line naming the file", msg)
			}
			return
		}
		enc, err := Encode(r)
		if err != nil {
			t.Fatalf("Encode(%+v) = %v", r, err)
		}
		again, err := Parse(file, enc)
		if err != nil {
			t.Fatalf("Parse(Encode(r)) = %v\n%s", err, enc)
		}
		if !reflect.DeepEqual(normal(again), normal(r)) {
			t.Fatalf("Parse(Encode(r)) =\n%+v\nwant\n%+v", again, r)
		}
		// The tables reach the command as their flags' values: what the
		// flag reads back is the table.
		var classes StorageClasses
		if err := classes.SetFlagValues(r.MicroShift.StorageClasses.FlagValues()); err != nil || !reflect.DeepEqual(classes, append(StorageClasses{}, r.MicroShift.StorageClasses...)) {
			t.Fatalf("--storage-class of %+v reads back %+v, %v", r.MicroShift.StorageClasses, classes, err)
		}
		var filesystems Filesystems
		if err := filesystems.SetFlagValues(r.Installer.Filesystems.FlagValues()); err != nil || !reflect.DeepEqual(filesystems, append(Filesystems{}, r.Installer.Filesystems...)) {
			t.Fatalf("--filesystem of %+v reads back %+v, %v", r.Installer.Filesystems, filesystems, err)
		}
		// No path holds what CheckPath refuses.
		var paths func(v reflect.Value)
		paths = func(v reflect.Value) {
			switch v.Kind() {
			case reflect.Struct:
				for i := range v.NumField() {
					if v.Type().Field(i).IsExported() {
						paths(v.Field(i))
					}
				}
			case reflect.Slice:
				for i := range v.Len() {
					paths(v.Index(i))
				}
			case reflect.String:
				switch v.Interface().(type) {
				case FilePath, DirPath, OutputPath:
					if err := CheckPath(v.String()); err != nil && v.String() != "" {
						t.Fatalf("Parse took a path CheckPath refuses: %v", err)
					}
				}
			}
		}
		paths(reflect.ValueOf(r))
	})
}

// normal treats empty and nil lists alike (TOML writes neither).
func normal(r Request) Request {
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Field(i)
			switch {
			case f.Kind() == reflect.Slice && f.Len() == 0:
				f.Set(reflect.Zero(f.Type()))
			case f.Kind() == reflect.Struct:
				walk(f)
			}
		}
	}
	walk(reflect.ValueOf(&r).Elem())
	return r
}
