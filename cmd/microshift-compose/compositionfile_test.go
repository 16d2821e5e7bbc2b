package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/operators/operatorstest"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/plan/request"
)

// fileFixtures writes the files the composition file tests name into dir:
// each a real input its flag accepts.
func fileFixtures(t *testing.T, dir string) {
	t.Helper()
	copyFile := func(from, to string) {
		t.Helper()
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		writeTestFile(t, filepath.Join(dir, to), string(data))
	}
	ex := filepath.Join(root(t), "examples")
	copyFile(filepath.Join(ex, "factory-iso", "config.yaml"), "config.yaml")
	copyFile(filepath.Join(ex, "factory-iso", "lvmd.yaml"), "lvmd.yaml")
	copyFile(filepath.Join(ex, "factory-iso", "factory.pub"), "admin.pub")
	copyFile(filepath.Join(ex, "factory-iso", "factory-ca.crt"), "corp-ca.crt")
	copyFile(filepath.Join(ex, "bootc-fleet", "mirror-ca.crt"), "mirror-ca.crt")
	copyFile(filepath.Join(ex, "bootc-fleet", "pull-secret.json"), "pull-secret.json")
	copyFile(filepath.Join(ex, "bootc-fleet", "release-signing.pub"), "cosign.pub")
	writeTestFile(t, filepath.Join(dir, "policy.json"), `{"default": [{"type": "reject"}], "transports": {"docker": {"quay.io": [{"type": "insecureAcceptAnything"}], "registry.redhat.io": [{"type": "insecureAcceptAnything"}]}}}`+"\n")
	if err := os.Symlink(filepath.Join(root(t), "testdata", "catalogs", "manifests"), filepath.Join(dir, "catalog")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(referenceDir(t, "release-4.19"), filepath.Join(dir, "release-4.19")); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, "prev", "compose.lock.json"), "{}\n")
	writeTestFile(t, filepath.Join(dir, "io.repo"), "[microshift-io]\nbaseurl=https://rpms.example.com/microshift-io/$basearch/\ngpgcheck=0\n")
	operatorstest.Layout(t, filepath.Join(dir, "operator-catalog"), operatorstest.Sample(), "amd64")
}

func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fileCase is one field of the request: the flags that set it (paths
// under D/, the fixture directory), the same as composition file keys
// (paths relative to the file, which sits in D), and what building it
// shows.
type fileCase struct {
	name  string
	flags []string
	toml  string
	// covers are the flags whose keys the case checks, besides those in
	// flags (a prerequisite such as --bootc is covered by its own case).
	covers []string
	// noBuild: the value needs what a build here has not (a registry),
	// or is no part of build (the matrix lists); its request is compared.
	noBuild bool
	// fails: the build fails, with the same error from file and flags.
	fails bool
}

// fileCases cover every key of a composition file that build has a flag
// for: TestCompositionFileCoversEveryKey checks that none is missing.
var fileCases = []fileCase{
	{name: "profile and arch", flags: []string{"--profile", "minimal", "--arch", "aarch64"}, toml: "profile = 'minimal'\narch = 'aarch64'\n"},
	{name: "catalog", flags: []string{"--catalog", "D/catalog"}, toml: "catalog = 'catalog'\n"},
	{name: "release", flags: []string{"--release", "4.19"}, toml: "release = '4.19'\n"},
	{name: "release dir", flags: []string{"--release-dir", "D/release-4.19"}, toml: "release_dir = 'release-4.19'\n"},
	{name: "with", flags: []string{"--with", "multus,olm"}, toml: "with = ['multus', 'olm']\n"},
	{name: "without", flags: []string{"--without", "snapshot-controller"}, toml: "without = ['snapshot-controller']\n"},
	{name: "distro", flags: []string{"--distro", "rhel-10.2", "--bootc"}, toml: "distro = 'rhel-10.2'\nbootc.enabled = true\n"},
	{name: "image type", flags: []string{"--image-type", "edge-installer", "--ostree-url", "http://edge.example.com/repo"}, toml: "image_type = 'edge-installer'\ninstaller.ostree_url = 'http://edge.example.com/repo'\n"},
	{name: "allow unpinned", flags: []string{"--allow-unpinned"}, toml: "allow_unpinned = true\n"},
	{name: "allow red boot", flags: []string{"--release", "4.18", "--profile", "minimal", "--allow-red-boot"}, toml: "release = '4.18'\nprofile = 'minimal'\nallow_red_boot = true\n"},
	{name: "exact version", flags: []string{"--exact-version"}, toml: "exact_version = true\n", fails: true},
	{name: "strict release", flags: []string{"--strict-release"}, toml: "strict_release = true\n"},
	{name: "upgrade from a release", flags: []string{"--upgrade-from", "4.19", "--release", "4.21"}, toml: "upgrade_from = '4.19'\nrelease = '4.21'\n"},
	{name: "upgrade from a lock", flags: []string{"--upgrade-from", "D/prev"}, toml: "upgrade_from = 'prev'\n", noBuild: true},
	{name: "plugin timeout", flags: []string{"--plugin-timeout", "45s"}, toml: "plugin_timeout = '45s'\n"},
	{name: "config", flags: []string{"--config", "D/config.yaml"}, toml: "microshift.config = 'config.yaml'\n"},
	{name: "lvmd and storage classes", flags: []string{"--lvmd", "D/lvmd.yaml", "--storage-class", "thin=snapshots,fstype=ext4"}, toml: "[microshift]\nlvmd = 'lvmd.yaml'\n[[microshift.storage_classes]]\ndevice_class = 'thin'\nname = 'snapshots'\nfstype = 'ext4'\n"},
	{name: "bootc base and images", flags: []string{"--bootc", "--bootc-base", "quay.io/example/rhel-bootc:9.8", "--bootc-images", "pull"}, toml: "[bootc]\nenabled = true\nbase = 'quay.io/example/rhel-bootc:9.8'\nimages = 'pull'\n"},
	{name: "repo files", flags: []string{"--bootc", "--repo-file", "D/io.repo"}, toml: "[bootc]\nenabled = true\nrepo_files = ['io.repo']\n"},
	{name: "pull secret", flags: []string{"--pull-secret", "D/pull-secret.json"}, toml: "registry.pull_secret = 'pull-secret.json'\n"},
	{name: "mirror", flags: []string{"--mirror-registry", "mirror.example.com:5000/microshift", "--mirror-ca", "D/mirror-ca.crt", "--mirror-insecure"}, toml: "[registry]\nmirror = 'mirror.example.com:5000/microshift'\nmirror_ca = 'mirror-ca.crt'\nmirror_insecure = true\n"},
	{name: "policy", flags: []string{"--policy", "D/policy.json"}, toml: "trust.policy = 'policy.json'\n"},
	{name: "verify keys", flags: []string{"--verify-key", "D/cosign.pub"}, toml: "trust.keys = ['cosign.pub']\n"},
	{name: "kickstart from ostree", flags: []string{"--kickstart", "--ostree-url", "http://edge.example.com/repo", "--ostree-ref", "rhel/9/x86_64/edge"}, toml: "[installer]\nkickstart = true\nostree_url = 'http://edge.example.com/repo'\nostree_ref = 'rhel/9/x86_64/edge'\n"},
	{name: "kickstart of a bootc image", flags: []string{"--bootc", "--kickstart", "--bootc-image", "quay.io/example/microshift:5.0"}, toml: "bootc.enabled = true\n[installer]\nkickstart = true\nbootc_image = 'quay.io/example/microshift:5.0'\n"},
	{name: "bib disk", flags: []string{"--bootc", "--bib", "--disk-size", "60GiB", "--filesystem", "/=20GiB", "--filesystem", "/var/lib/data=5GiB"}, toml: "bootc.enabled = true\n[installer]\nbib = true\ndisk_size = '60GiB'\nfilesystems = [{mountpoint = '/', minsize = '20GiB'}, {mountpoint = '/var/lib/data', minsize = '5GiB'}]\n"},
	{name: "user", flags: []string{"--kickstart", "--ostree-url", "http://edge.example.com/repo", "--user", "admin", "--ssh-key", "D/admin.pub"}, toml: "[installer]\nkickstart = true\nostree_url = 'http://edge.example.com/repo'\nuser = 'admin'\nssh_key = 'admin.pub'\n"},
	{name: "firewall and CA trust", flags: []string{"--firewall-port", "8443/tcp", "--firewall-port", "30000-30100/udp", "--ca-trust", "D/corp-ca.crt"}, toml: "[installer]\nfirewall_ports = ['8443/tcp', '30000-30100/udp']\nca_trust = ['corp-ca.crt']\n"},
	{name: "installation device", flags: []string{"--image-type", "edge-simplified-installer", "--ostree-url", "http://edge.example.com/repo", "--installation-device", "/dev/vda"}, toml: "image_type = 'edge-simplified-installer'\n[installer]\nostree_url = 'http://edge.example.com/repo'\ninstallation_device = '/dev/vda'\n"},
	{name: "no health checks", flags: []string{"--no-health-checks"}, toml: "health_checks.disabled = true\n"},
	{name: "operators", flags: []string{"--operator-catalog", "oci:D/operator-catalog", "--operator", "etcd:stable@>=0.9.2, <1.0.0,approval=Manual", "--operator", "hello-microshift-operator,namespace=hello"},
		toml: "operator_catalog = 'oci:operator-catalog'\n[[operators]]\npackage = 'etcd'\nchannel = 'stable'\nversions = '>=0.9.2, <1.0.0'\napproval = 'Manual'\n[[operators]]\npackage = 'hello-microshift-operator'\nnamespace = 'hello'\n"},
	{name: "health check timeout", flags: []string{"--health-check-timeout", "15m"}, toml: "health_checks.timeout = '15m'\n"},
	{name: "fips", flags: []string{"--fips", "--kickstart", "--ostree-url", "http://edge.example.com/repo"}, toml: "fips = true\n[installer]\nkickstart = true\nostree_url = 'http://edge.example.com/repo'\n"},
	{name: "kernel args", flags: []string{"--karg", "console=ttyS0,115200n8", "--karg", "audit=1", "--bootc"}, toml: "kernel_args = ['console=ttyS0,115200n8', 'audit=1']\nbootc.enabled = true\n"},
	{name: "cis", flags: []string{"--cis", "level2", "--image-type", "qcow2"}, toml: "cis = 'level2'\nimage_type = 'qcow2'\n"},
	{name: "keyless identity", flags: []string{"--certificate-identity", "release@example.com", "--certificate-oidc-issuer", "https://issuer.example.com", "--fulcio-ca", "D/corp-ca.crt", "--rekor-key", "D/cosign.pub"}, toml: "[trust]\ncertificate_identity = 'release@example.com'\ncertificate_oidc_issuer = 'https://issuer.example.com'\nfulcio_ca = 'corp-ca.crt'\nrekor_key = 'cosign.pub'\n"},
	{name: "pki identity", flags: []string{"--certificate-identity", "release@example.com", "--ca-roots", "D/corp-ca.crt", "--ca-intermediates", "D/mirror-ca.crt"}, toml: "[trust]\ncertificate_identity = 'release@example.com'\nca_roots = 'corp-ca.crt'\nca_intermediates = 'mirror-ca.crt'\n"},
	{name: "sbom formats", flags: []string{"--sbom-format", "spdx,cyclonedx"}, toml: "output.sbom_formats = ['spdx', 'cyclonedx']\n"},
	{name: "output", flags: []string{"--output", "D/out-{id}", "--resolve-sizes"}, toml: "[output]\ndir = 'out-{id}'\nresolve_sizes = true\n", noBuild: true},
}

// fixturePaths puts the fixture directory for D/ in flags.
func fixturePaths(dir string, flags []string) []string {
	out := make([]string, len(flags))
	for i, f := range flags {
		out[i] = strings.ReplaceAll(f, "D/", dir+"/")
	}
	return out
}

// parsedRequest is the request a command parses from args: the flags, and
// -f's file applied as the command applies it.
func parsedRequest(t *testing.T, newCmd func() *cobra.Command, matrix bool, args ...string) (request.Request, error) {
	t.Helper()
	cmd := newCmd()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("parsing %q: %v", args, err)
	}
	file := fileOptions{Path: cmd.Flags().Lookup("file").Value.String()}
	if err := file.apply(cmd, matrix); err != nil {
		return request.Request{}, err
	}
	return requestFromFlags(cmd)
}

// TestCompositionFileRequest checks, key by key, that a composition file
// and the flags it stands for decode into the same request.
func TestCompositionFileRequest(t *testing.T) {
	dir := t.TempDir()
	fileFixtures(t, dir)
	for _, tc := range fileCases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".toml")
			writeTestFile(t, path, tc.toml)
			fromFlags, err := parsedRequest(t, newBuildCmd, false, fixturePaths(dir, tc.flags)...)
			if err != nil {
				t.Fatal(err)
			}
			fromFile, err := parsedRequest(t, newBuildCmd, false, "-f", path)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fromFile, fromFlags) {
				t.Errorf("request from the file:\n%+v\nfrom the flags:\n%+v", fromFile, fromFlags)
			}
			if reflect.DeepEqual(fromFile, request.Request{}) {
				t.Error("the file set nothing")
			}
		})
	}
}

// TestCompositionFileCoversEveryKey checks that fileCases cover every key
// build has a flag for, and the matrix test every list.
func TestCompositionFileCoversEveryKey(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range fileCases {
		for _, f := range append(slices.Clone(tc.flags), tc.covers...) {
			if strings.HasPrefix(f, "--") {
				covered[strings.TrimPrefix(f, "--")] = true
			}
		}
	}
	for _, c := range []struct {
		cmd  *cobra.Command
		seen map[string]bool
	}{
		{newBuildCmd(), covered},
		// The matrix's lists: TestCompositionFileMatrix.
		{newMatrixCmd(), map[string]bool{"profile": true, "arch": true, "release": true, "release-dir": true}},
	} {
		var keys int
		err := walkRequest(c.cmd, &request.Request{}, func(f *pflag.Flag, v reflect.Value, _ string) error {
			keys++
			if c.cmd.Name() == "matrix" && v.Kind() != reflect.Slice {
				return nil
			}
			if c.cmd.Name() == "matrix" && !slices.Contains([]string{"profile", "arch", "release", "release-dir"}, f.Name) {
				return nil
			}
			if !c.seen[f.Name] {
				t.Errorf("%s: no case of fileCases sets --%s from a composition file", c.cmd.Name(), f.Name)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if keys < 10 {
			t.Fatalf("%s: only %d keys map to flags", c.cmd.Name(), keys)
		}
	}
	// Every field of request.Request names a flag some command has.
	var fields func(t reflect.Type) []string
	fields = func(rt reflect.Type) []string {
		var out []string
		for i := range rt.NumField() {
			f := rt.Field(i)
			if n := f.Tag.Get("flag"); n != "" {
				out = append(out, n)
			} else if f.Type.Kind() == reflect.Struct {
				out = append(out, fields(f.Type)...)
			}
		}
		return out
	}
	commands := []*cobra.Command{newBuildCmd(), newMatrixCmd(), newMirrorCmd()}
	for _, name := range fields(reflect.TypeFor[request.Request]()) {
		found := false
		for _, c := range commands {
			found = found || c.Flags().Lookup(name) != nil
		}
		if !found {
			t.Errorf("request.Request names --%s, which no command has", name)
		}
	}
}

// buildID builds args into a fresh output directory and returns the
// composition ID, or the error line.
func buildID(t *testing.T, args ...string) (id, errLine string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := runCLI(t, append(args, "--output", out, "--format", "json")...)
	if code != exitOK {
		return "", strings.TrimSpace(withoutStreamPinWarning(stderr))
	}
	var s struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(stdout), &s); err != nil || s.ID == "" {
		t.Fatalf("build %q: summary %q: %v", args, stdout, err)
	}
	return s.ID, ""
}

// TestCompositionFileSameID builds every case from a composition file and
// from the flags: the composition IDs are equal, and, when the key changes
// what is built, another ID than the build without it.
func TestCompositionFileSameID(t *testing.T) {
	dir := t.TempDir()
	fileFixtures(t, dir)
	base := []string{"--profile", "full", "--arch", "x86_64"}
	baseTOML := "profile = 'full'\narch = 'x86_64'\n"
	baseID, e := buildID(t, append([]string{"build"}, base...)...)
	if e != "" {
		t.Fatal(e)
	}
	// Keys that change no byte of a build that succeeds.
	// Checks that pass, and which SBOM formats are written beside the lock,
	// are no part of the composition.
	sameAsBase := map[string]bool{"allow unpinned": true, "strict release": true, "plugin timeout": true, "sbom formats": true}
	for _, tc := range fileCases {
		if tc.noBuild {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".toml")
			// The case's keys after the base's: a case giving profile or
			// arch overrides them, and TOML refuses a key given twice, so
			// the base's are dropped then.
			var head []string
			for _, l := range strings.Split(baseTOML, "\n") {
				k, _, _ := strings.Cut(l, " =")
				if l != "" && !strings.Contains(tc.toml, "\n"+k+" =") && !strings.HasPrefix(tc.toml, k+" =") {
					head = append(head, l)
				}
			}
			writeTestFile(t, path, strings.Join(head, "\n")+"\n"+tc.toml)
			fileID, fileErr := buildID(t, "build", "-f", path)
			flagID, flagErr := buildID(t, append(append([]string{"build"}, base...), fixturePaths(dir, tc.flags)...)...)
			if tc.fails {
				if flagErr == "" || fileErr != flagErr {
					t.Fatalf("want the same failure; from the file: %q, from the flags: %q", fileErr, flagErr)
				}
				return
			}
			if fileErr != "" || flagErr != "" {
				t.Fatalf("from the file: %s; from the flags: %s", fileErr, flagErr)
			}
			if fileID != flagID {
				t.Fatalf("composition ID from the file %s, from the flags %s", fileID, flagID)
			}
			if got := fileID == baseID; got != sameAsBase[tc.name] {
				t.Fatalf("ID %s equal to the base's: %v, want %v", fileID, got, sameAsBase[tc.name])
			}
		})
	}
}

// TestCompositionFileLock checks that the lock records the file's path
// and content hash, and that the flags' lock has none.
func TestCompositionFileLock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "device.toml")
	content := "profile = 'minimal'\narch = 'x86_64'\n"
	writeTestFile(t, path, content)
	out := filepath.Join(dir, "out")
	runWarned(t, "build", "-f", path, "--output", out)
	data, err := os.ReadFile(filepath.Join(out, "compose.lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p plan.Plan
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	if p.CompositionFile == nil || p.CompositionFile.Path != path || p.CompositionFile.SHA256 != sha256Hex([]byte(content)) {
		t.Fatalf("lock composition_file = %+v, want %s with sha256 %s", p.CompositionFile, path, sha256Hex([]byte(content)))
	}
	flagsOut := filepath.Join(dir, "out-flags")
	runWarned(t, "build", "--profile", "minimal", "--arch", "x86_64", "--output", flagsOut)
	data, err = os.ReadFile(filepath.Join(flagsOut, "compose.lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "composition_file") {
		t.Fatal("the lock of a build from flags names a composition file")
	}
}

// TestCompositionFilePrintFile round-trips flags through --print-file: the
// file build prints, saved in the working directory and built with -f,
// has the ID of the flags; durations are printed as given (900s, not
// 15m0s), and give the ID of the same duration spelled another way;
// matrix's prints its lists.
func TestCompositionFilePrintFile(t *testing.T) {
	dir := t.TempDir()
	fileFixtures(t, dir)
	t.Chdir(dir)
	flags := []string{"--profile", "full", "--arch", "x86_64", "--with", "multus", "--lvmd", "lvmd.yaml",
		"--storage-class", "thin=snapshots,fstype=ext4", "--config", "config.yaml", "--pull-secret", "pull-secret.json",
		"--mirror-registry", "mirror.example.com:5000/microshift", "--mirror-ca", "mirror-ca.crt", "--verify-key", "cosign.pub",
		"--kickstart", "--ostree-url", "http://edge.example.com/repo", "--user", "admin", "--ssh-key", "admin.pub",
		"--filesystem", "/=20GiB", "--firewall-port", "8443/tcp", "--ca-trust", "corp-ca.crt", "--health-check-timeout", "900s", "--plugin-timeout", "90s"}
	stdout, stderr, code := runCLI(t, append([]string{"build", "--print-file", "--jobs", "2"}, flags...)...)
	if code != exitOK {
		t.Fatalf("build --print-file: exit %d: %s", code, stderr)
	}
	if want := "warning: --jobs is no key of a composition file: pass it on the command line with -f\n"; stderr != want {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
	for _, want := range []string{request.SchemaDirective + "\n", "profile = \"full\"\n", "[[microshift.storage_classes]]\ndevice_class = \"thin\"\nname = \"snapshots\"\nfstype = \"ext4\"\n", "[registry]\npull_secret = \"pull-secret.json\"\n", "plugin_timeout = \"90s\"\n", "[health_checks]\ntimeout = \"900s\"\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("printed file lacks %q:\n%s", want, stdout)
		}
	}
	writeTestFile(t, filepath.Join(dir, "device.toml"), stdout)
	fileID, fileErr := buildID(t, "build", "-f", "device.toml")
	flagID, flagErr := buildID(t, append([]string{"build"}, flags...)...)
	if fileErr != "" || flagErr != "" || fileID != flagID {
		t.Fatalf("ID from the printed file %s (%s), from the flags %s (%s)", fileID, fileErr, flagID, flagErr)
	}
	respelled := append(slices.Clone(flags[:len(flags)-4]), "--health-check-timeout", "15m", "--plugin-timeout", "1m30s")
	if id, e := buildID(t, append([]string{"build"}, respelled...)...); e != "" || id != fileID {
		t.Fatalf("ID with the durations spelled 15m and 1m30s = %s (%s), want %s", id, e, fileID)
	}
	// The file and more flags print the merged request, the flags winning.
	again := mustRun(t, "build", "-f", "device.toml", "--arch", "aarch64", "--print-file")
	if !strings.Contains(again, "arch = \"aarch64\"\n") || strings.Contains(again, "x86_64") || !strings.Contains(again, "pull_secret = \"pull-secret.json\"") {
		t.Errorf("build -f device.toml --arch aarch64 --print-file:\n%s", again)
	}
	// matrix prints its lists.
	m := mustRun(t, "matrix", "--profile", "minimal,full", "--arch", "x86_64,aarch64", "--release", "4.21,5.0", "--bootc", "--print-file")
	for _, want := range []string{"profiles = [\"minimal\", \"full\"]\n", "arches = [\"x86_64\", \"aarch64\"]\n", "releases = [\"4.21\", \"5.0\"]\n", "[bootc]\nenabled = true\n"} {
		if !strings.Contains(m, want) {
			t.Errorf("matrix --print-file lacks %q:\n%s", want, m)
		}
	}
}

// TestCompositionFileMatrix builds the bootc fleet example with matrix -f
// and with the flags it stands for: every cell has the same ID.
func TestCompositionFileMatrix(t *testing.T) {
	ex := filepath.Join(root(t), "examples", "bootc-fleet")
	cells := func(args ...string) map[string]string {
		t.Helper()
		stdout := runWarned(t, append(args, "--output", filepath.Join(t.TempDir(), "out"))...)
		var sum struct {
			Cells []struct {
				Cell, ID, Status string
			}
		}
		if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
			t.Fatal(err)
		}
		ids := map[string]string{}
		for _, c := range sum.Cells {
			if c.Status != "ok" {
				t.Fatalf("cell %s: %s", c.Cell, c.Status)
			}
			ids[c.Cell] = c.ID
		}
		return ids
	}
	fromFile := cells("matrix", "-f", filepath.Join(ex, "fleet.toml"))
	fromFlags := cells("matrix", "--release", "5.0", "--profile", "minimal,full", "--arch", "x86_64,aarch64", "--with", "multus",
		"--bootc", "--bootc-images", "pull", "--pull-secret", filepath.Join(ex, "pull-secret.json"),
		"--mirror-registry", "mirror.example.com:5000/microshift", "--mirror-ca", filepath.Join(ex, "mirror-ca.crt"),
		"--verify-key", filepath.Join(ex, "release-signing.pub"))
	if len(fromFile) != 4 || !reflect.DeepEqual(fromFile, fromFlags) {
		t.Fatalf("cells from the file %v, from the flags %v", fromFile, fromFlags)
	}
	// A flag narrows the file's list.
	narrowed := cells("matrix", "-f", filepath.Join(ex, "fleet.toml"), "--arch", "aarch64")
	if len(narrowed) != 2 || narrowed["5.0-full-aarch64"] != fromFile["5.0-full-aarch64"] {
		t.Fatalf("matrix -f --arch aarch64 = %v", narrowed)
	}
	// A key matrix has no flag for is named, not silently dropped.
	withInstaller := filepath.Join(t.TempDir(), "fleet.toml")
	writeTestFile(t, withInstaller, "profiles = ['minimal']\narches = ['x86_64']\n[installer]\nfirewall_ports = ['30443/tcp']\n")
	_, stderr, code := runCLI(t, "matrix", "-f", withInstaller, "--output", filepath.Join(t.TempDir(), "out"))
	if want := "warning: " + withInstaller + ": installer.firewall_ports is not used by matrix, which has no --firewall-port\n"; code != exitOK || !strings.HasPrefix(withoutStreamPinWarning(stderr), want) {
		t.Fatalf("matrix -f with installer keys: exit %d, stderr %q, want it to start with %q", code, stderr, want)
	}
	// build takes a list of one, and refuses longer ones, every one named
	// in one line.
	if _, stderr, code := runCLI(t, "build", "-f", filepath.Join(ex, "fleet.toml"), "--output", t.TempDir()); code != exitError ||
		stderr != "error: "+filepath.Join(ex, "fleet.toml")+": profiles (2 values) and arches (2 values) each list several values, which is a matrix: run 'microshift-compose matrix' with it, or choose one of each with --profile and --arch\n" {
		t.Fatalf("build -f fleet.toml: exit %d, %q", code, stderr)
	}
	if _, stderr, code := runCLI(t, "build", "-f", filepath.Join(ex, "fleet.toml"), "--arch", "aarch64", "--output", t.TempDir()); code != exitError || !strings.Contains(stderr, "fleet.toml: profiles lists 2 values, which is a matrix: run 'microshift-compose matrix' with it, or choose one with --profile\n") {
		t.Fatalf("build -f fleet.toml --arch aarch64: exit %d, %q", code, stderr)
	}
	id, e := buildID(t, "build", "-f", filepath.Join(ex, "fleet.toml"), "--profile", "full", "--arch", "aarch64")
	if e != "" || id != fromFile["5.0-full-aarch64"] {
		t.Fatalf("build -f fleet.toml --profile full --arch aarch64 = %s (%s), want the cell's %s", id, e, fromFile["5.0-full-aarch64"])
	}
}

// TestExampleOutputsIgnored: what build -f (or matrix -f) writes for an
// example by default, its output.dir, is ignored by git: building an
// example leaves the work tree clean. Each example names its output (no
// default: build needs one).
func TestExampleOutputsIgnored(t *testing.T) {
	top := root(t)
	if _, err := os.Stat(filepath.Join(top, ".git")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI runs in a git work tree: %v", err)
		}
		t.Skip("not a git work tree (a source archive): nothing to ignore")
	}
	files, err := filepath.Glob(filepath.Join(top, "examples", "*", "*.toml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("examples: %v, %v", files, err)
	}
	placeholders := strings.NewReplacer("{id}", "0123456789ab", "{profile}", "full", "{arch}", "x86_64", "{release}", "5.0")
	for _, f := range files {
		req, _, err := request.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if req.Output.Dir == "" {
			t.Errorf("%s has no output.dir", f)
			continue
		}
		rel, err := filepath.Rel(top, placeholders.Replace(string(req.Output.Dir)))
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("%s writes %s, outside the repository (%v)", f, req.Output.Dir, err)
			continue
		}
		// A file in it stands for what build writes there.
		cmd := exec.Command("git", "-C", top, "check-ignore", "--no-index", "-q", filepath.Join(rel, "compose.lock.json"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s writes %s, which git does not ignore: add it to .gitignore (git check-ignore: %v %s)", f, rel, err, out)
		}
	}
}

// TestExamples builds every example and compares the composition IDs
// with testdata/golden/cli/examples.txt.
func TestExamples(t *testing.T) {
	ex := filepath.Join(root(t), "examples")
	var got strings.Builder
	id, e := buildID(t, "build", "-f", filepath.Join(ex, "factory-iso", "microshift.toml"))
	if e != "" {
		t.Fatalf("build -f examples/factory-iso/microshift.toml: %s", e)
	}
	got.WriteString("examples/factory-iso/microshift.toml " + id + "\n")
	fips := filepath.Join(t.TempDir(), "fips")
	stdout, stderr, code := runCLI(t, "build", "-f", filepath.Join(ex, "fips-device", "microshift.toml"), "--output", fips, "--format", "json")
	var fipsSum struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(stdout), &fipsSum); code != exitOK || err != nil {
		t.Fatalf("build -f examples/fips-device/microshift.toml: exit %d: %s", code, stderr)
	}
	got.WriteString("examples/fips-device/microshift.toml " + fipsSum.ID + "\n")
	// What makes it a FIPS device, in the files the device is built from.
	for file, want := range map[string]string{
		"Containerfile": "update-crypto-policies --no-reload --set FIPS",
		"microshift.ks": `bootloader --append="fips=1 console=ttyS0,115200n8"`,
	} {
		if data, err := os.ReadFile(filepath.Join(fips, file)); err != nil || !strings.Contains(string(data), want) {
			t.Errorf("examples/fips-device: %s lacks %q (%v)", file, want, err)
		}
	}
	stdout = runWarned(t, "matrix", "-f", filepath.Join(ex, "bootc-fleet", "fleet.toml"), "--output", filepath.Join(t.TempDir(), "out"))
	var sum struct{ Cells []struct{ Cell, ID string } }
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatal(err)
	}
	for _, c := range sum.Cells {
		got.WriteString("examples/bootc-fleet/fleet.toml " + c.Cell + " " + c.ID + "\n")
	}
	testutil.Golden(t, filepath.Join(root(t), "testdata", "golden", "cli", "examples.txt"), []byte(got.String()), updateGolden,
		"UPDATE_GOLDEN=1 go test ./cmd/microshift-compose -run TestExamples")
}
