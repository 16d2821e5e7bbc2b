package registryclient_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
)

// writeAuth writes an auth.json giving host the user "from-<label>".
func writeAuth(t *testing.T, path, host, label string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	auth := base64.StdEncoding.EncodeToString([]byte("from-" + label + ":secret-" + label))
	data, _ := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{"auth": auth}}})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// home is the HOME of this test binary: containers/storage reads HOME once
// per process, so every test shares it (and cleans up after itself).
var home string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "registryclient-home-")
	if err != nil {
		panic(err)
	}
	home = dir
	os.Setenv("HOME", home)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cleanHome empties HOME for a test and again after it.
func cleanHome(t *testing.T) {
	t.Helper()
	clean := func() {
		entries, _ := os.ReadDir(home)
		for _, e := range entries {
			os.RemoveAll(filepath.Join(home, e.Name()))
		}
	}
	clean()
	t.Cleanup(clean)
}

// TestKeychainLookupOrder checks the containers lookup order, file by
// file, with an isolated HOME and runtime directory.
func TestKeychainLookupOrder(t *testing.T) {
	const host = "registry.example.com:5000"
	for _, tc := range []struct {
		name string
		// files are the auth files written, label -> path under the test's root.
		files []string
		// env and flag set REGISTRY_AUTH_FILE and --authfile (paths under root).
		env, flag string
		noXDG     bool
		want      string // the label whose credentials win, "" for anonymous
	}{
		{name: "nothing", want: ""},
		{name: "docker config alone", files: []string{"docker"}, want: "docker"},
		{name: "DOCKER_CONFIG", files: []string{"dockerconfig"}, want: "dockerconfig"},
		{name: "containers auth.json before docker", files: []string{"docker", "xdgconfig"}, want: "xdgconfig"},
		{name: "XDG_RUNTIME_DIR before the others", files: []string{"docker", "xdgconfig", "runtime"}, want: "runtime"},
		// The bug: REGISTRY_AUTH_FILE is the only file read, even
		// when ~/.docker/config.json exists.
		{name: "REGISTRY_AUTH_FILE wins over docker config", files: []string{"docker", "env"}, env: "env", want: "env"},
		{name: "REGISTRY_AUTH_FILE without an entry is not a fallthrough", files: []string{"docker", "empty"}, env: "empty", want: ""},
		{name: "--authfile wins over REGISTRY_AUTH_FILE", files: []string{"env", "flag"}, env: "env", flag: "flag", want: "flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			cleanHome(t)
			paths := map[string]string{
				"docker":       filepath.Join(home, ".docker", "config.json"),
				"dockerconfig": filepath.Join(root, "dockercfgdir", "config.json"),
				"xdgconfig":    filepath.Join(home, ".config", "containers", "auth.json"),
				"runtime":      filepath.Join(root, "run", "containers", "auth.json"),
				"env":          filepath.Join(root, "env.json"),
				"flag":         filepath.Join(root, "flag.json"),
				"empty":        filepath.Join(root, "empty.json"),
			}
			t.Setenv("XDG_CONFIG_HOME", "")
			t.Setenv("XDG_RUNTIME_DIR", filepath.Join(root, "run"))
			t.Setenv("DOCKER_CONFIG", "")
			t.Setenv(registryclient.AuthFileEnv, "")
			os.MkdirAll(filepath.Join(root, "run"), 0o700)
			for _, f := range tc.files {
				switch f {
				case "dockerconfig":
					t.Setenv("DOCKER_CONFIG", filepath.Dir(paths[f]))
				case "empty":
					writeAuth(t, paths[f], "other.example.com", f)
					continue
				}
				writeAuth(t, paths[f], host, f)
			}
			if tc.env != "" {
				t.Setenv(registryclient.AuthFileEnv, paths[tc.env])
			}
			flag := ""
			if tc.flag != "" {
				flag = paths[tc.flag]
			}
			authFile, err := registryclient.ResolveAuthFile(flag)
			if err != nil {
				t.Fatal(err)
			}
			o := registryclient.Options{AuthFile: authFile}
			repo, _ := name.NewRepository(host + "/org/app")
			a, err := registryclient.Keychain(o.SystemContext()).Resolve(repo)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := a.Authorization()
			if err != nil {
				t.Fatal(err)
			}
			got := strings.TrimPrefix(cfg.Username, "from-")
			if got != tc.want {
				t.Errorf("credentials from %q, want %q", got, tc.want)
			}
			if tc.want != "" && cfg.Password != "secret-"+tc.want {
				t.Errorf("password %q, want the one of %s", cfg.Password, tc.want)
			}
			if tc.want == "" && a != authn.Anonymous {
				t.Errorf("Resolve() = %v, want anonymous", a)
			}
		})
	}
}

// TestKeychainDockerHub maps go-containerregistry's index.docker.io to the
// docker.io key auth files use.
func TestKeychainDockerHub(t *testing.T) {
	cleanHome(t)
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	t.Setenv("DOCKER_CONFIG", "")
	writeAuth(t, filepath.Join(home, ".docker", "config.json"), "https://index.docker.io/v1/", "hub")
	repo, _ := name.NewRepository("docker.io/library/busybox")
	a, err := registryclient.Keychain(registryclient.Options{}.SystemContext()).Resolve(repo)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, _ := a.Authorization(); cfg.Username != "from-hub" {
		t.Errorf("Docker Hub credentials = %+v, want from-hub", cfg)
	}
}

// TestKeychainBrokenFile: a malformed auth file is an error that names the
// file and never quotes it.
func TestKeychainBrokenFile(t *testing.T) {
	root := t.TempDir()
	const password = "hunter2-planted-Pa55word"
	path := filepath.Join(root, "auth.json")
	if err := os.WriteFile(path, []byte(`{"auths": {"r.example.com": {"auth": "`+password+`"`), 0o600); err != nil {
		t.Fatal(err)
	}
	repo, _ := name.NewRepository("r.example.com/x")
	_, err := registryclient.Keychain(registryclient.Options{AuthFile: path}.SystemContext()).Resolve(repo)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Resolve() with a broken auth file = %v, want an error naming %s", err, path)
	}
	if strings.Contains(err.Error(), password) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("the error quotes the auth file: %v", err)
	}
}

func TestResolveAuthFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(registryclient.AuthFileEnv, "")
	if got, err := registryclient.ResolveAuthFile(""); got != "" || err != nil {
		t.Errorf("ResolveAuthFile() = %q, %v; want the default lookup", got, err)
	}
	missing := filepath.Join(dir, "nope.json")
	if _, err := registryclient.ResolveAuthFile(missing); err == nil || err.Error() != "--authfile "+missing+": no such file or directory" {
		t.Errorf("ResolveAuthFile(missing) = %v", err)
	}
	t.Setenv(registryclient.AuthFileEnv, missing)
	if _, err := registryclient.ResolveAuthFile(""); err == nil || err.Error() != "$REGISTRY_AUTH_FILE "+missing+": no such file or directory" {
		t.Errorf("ResolveAuthFile with a missing $REGISTRY_AUTH_FILE = %v", err)
	}
	if _, err := registryclient.ResolveAuthFile(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("ResolveAuthFile(dir) = %v", err)
	}
}
