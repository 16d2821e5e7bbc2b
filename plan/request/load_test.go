package request

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
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
		PluginTimeout: Duration(90 * time.Second), UpgradeFrom: "4.19",
		Registry:     DeviceRegistry{PullSecret: FilePath(filepath.Join(files, "ps.json")), Mirror: "mirror.example.com/ms", MirrorCA: FilePath(filepath.Join(files, "ca.crt"))},
		Trust:        Trust{Keys: []FilePath{FilePath(filepath.Join(dir, "shared", "key.pub"))}},
		MicroShift:   MicroShift{StorageClasses: StorageClasses{{DeviceClass: "thin", FSType: "ext4"}}},
		Installer:    Installer{Filesystems: Filesystems{{Mountpoint: "/", MinSize: "20GiB"}}},
		HealthChecks: HealthChecks{Timeout: Duration(15 * time.Minute)},
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
	if _, err := r.Single(nil); err == nil || err.Error() != "arches lists 2 values, which is a matrix: run 'microshift-compose matrix' with it, or choose one with the flag" {
		t.Fatalf("Single = %v", err)
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
