package registryclient_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
)

// TestConfigFilesThroughTheGate: the files containers/image would read for
// us (--cert-dir certificates, --registries-conf or
// $CONTAINERS_REGISTRIES_CONF, --authfile or $REGISTRY_AUTH_FILE) are
// refused at once when they are not regular files or too large, naming
// the file, instead of being read for ever.
func TestConfigFilesThroughTheGate(t *testing.T) {
	fifo := func(t *testing.T, p string) string {
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := func(t *testing.T, p string) string {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, registryclient.MaxConfigFile+1); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		opts func(t *testing.T, dir string) (registryclient.Options, string)
		want string
	}{
		{"cert-dir ca.crt is /dev/zero", func(t *testing.T, dir string) (registryclient.Options, string) {
			p := filepath.Join(dir, "ca.crt")
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
			return registryclient.Options{CertDir: dir}, p
		}, "is not a regular file (a character device)"},
		{"cert-dir ca.crt is a named pipe", func(t *testing.T, dir string) (registryclient.Options, string) {
			p := fifo(t, filepath.Join(dir, "ca.crt"))
			return registryclient.Options{CertDir: dir}, p
		}, "is not a regular file (a named pipe)"},
		{"cert-dir client.key is too large", func(t *testing.T, dir string) (registryclient.Options, string) {
			os.WriteFile(filepath.Join(dir, "client.cert"), []byte("x"), 0o644)
			p := big(t, filepath.Join(dir, "client.key"))
			return registryclient.Options{CertDir: dir}, p
		}, "file is larger than"},
		{"registries-conf is a named pipe", func(t *testing.T, dir string) (registryclient.Options, string) {
			p := fifo(t, filepath.Join(dir, "registries.conf"))
			return registryclient.Options{RegistriesConf: p}, p
		}, "is not a regular file (a named pipe)"},
		{"CONTAINERS_REGISTRIES_CONF is /dev/zero", func(t *testing.T, dir string) (registryclient.Options, string) {
			t.Setenv("CONTAINERS_REGISTRIES_CONF", "/dev/zero")
			return registryclient.Options{}, "/dev/zero"
		}, "$CONTAINERS_REGISTRIES_CONF /dev/zero is not a regular file (a character device)"},
		{"registries-conf is too large", func(t *testing.T, dir string) (registryclient.Options, string) {
			p := big(t, filepath.Join(dir, "registries.conf"))
			return registryclient.Options{RegistriesConf: p}, p
		}, "file is larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			o, named := tc.opts(t, dir)
			_, err := o.Prepare()
			if err == nil || !strings.Contains(err.Error(), named) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Prepare() = %v, want an error naming %s that says %q", err, named, tc.want)
			}
		})
	}
	t.Run("authfile", func(t *testing.T) {
		p := fifo(t, filepath.Join(t.TempDir(), "auth.json"))
		if _, err := registryclient.ResolveAuthFile(p); err == nil || !strings.Contains(err.Error(), p+" is not a regular file (a named pipe)") {
			t.Errorf("ResolveAuthFile(fifo) = %v", err)
		}
		t.Setenv("REGISTRY_AUTH_FILE", "/dev/zero")
		if _, err := registryclient.ResolveAuthFile(""); err == nil || !strings.Contains(err.Error(), "$REGISTRY_AUTH_FILE /dev/zero is not a regular file") {
			t.Errorf("ResolveAuthFile with $REGISTRY_AUTH_FILE=/dev/zero = %v", err)
		}
	})
}
