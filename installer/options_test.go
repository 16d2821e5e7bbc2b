package installer_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/installer"
)

func TestParseFilesystem(t *testing.T) {
	for _, tc := range []struct {
		in, mount string
		size      uint64
		err       string
	}{
		{in: "/=20GiB", mount: "/", size: 20 << 30},
		{in: "/var/lib/data=512 MiB", mount: "/var/lib/data", size: 512 << 20},
		{in: "/var=10GB", mount: "/var", size: 10_000_000_000},
		{in: "/var=10", err: "smaller than 1 MiB"},
		{in: "/var=ten", err: `"ten" is not a size`},
		{in: "/var=-1GiB", err: "is not a size"},
		{in: "/var", err: "want MOUNT=SIZE"},
		{in: "var=1GiB", err: "must be absolute"},
		{in: "/etc=1GiB", err: "osbuild does not allow mount point /etc"},
		{in: "/home=1GiB", err: "symlink on ostree"},
		{in: "/var/a b=1GiB", err: "holds a character"},
		{in: "/var/a+b=1GiB", err: "holds a character"}, // osbuild cannot name its mount unit
		{in: "/var/=1GiB", err: "absolute and clean"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			fs, err := installer.ParseFilesystem(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseFilesystem(%q) = %v, want an error with %q", tc.in, err, tc.err)
				}
				if !strings.HasPrefix(err.Error(), "--filesystem ") || strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q is not one line naming the flag", err)
				}
				return
			}
			if err != nil || fs.Mount != tc.mount || fs.MinSize != tc.size {
				t.Fatalf("ParseFilesystem(%q) = %+v, %v; want %s %d", tc.in, fs, err, tc.mount, tc.size)
			}
		})
	}
}

func TestParseFirewallPort(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "8080/tcp", want: "8080:tcp"},
		{in: "5353/udp", want: "5353:udp"},
		{in: "30000-32767/tcp", want: "30000-32767:tcp"},
		{in: "8080:tcp", want: "8080:tcp"},
		{in: "0/tcp", err: "out of range"},
		{in: "65536/tcp", err: "out of range"},
		{in: "80/sctp", err: "tcp or udp"},
		{in: "80", err: "want PORT/PROTO"},
		{in: "http/tcp", err: "not a port number"},
		{in: "+80/tcp", err: "not a port number"},
		{in: "080/tcp", err: "not a port number"},
		{in: "90-80/tcp", err: "ends at or below"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := installer.ParseFirewallPort(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseFirewallPort(%q) = %q, %v; want an error with %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseFirewallPort(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestCheckUserName(t *testing.T) {
	for name, ok := range map[string]bool{
		"admin": true, "_svc": true, "ops-1": true, "a": true,
		"root": false, "Admin": false, "1admin": false, "-x": false, "ad min": false, "": false,
		strings.Repeat("a", 33): false, "adm\nin": false,
	} {
		if err := installer.CheckUserName(name); (err == nil) != ok {
			t.Errorf("CheckUserName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

func TestReadSSHKeys(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	keys, err := installer.ReadSSHKeys(write("ok.pub", "# keys\n\n"+testKey+"\r\n"+testKey+"\n"))
	if err != nil || len(keys) != 2 || keys[0] != testKey {
		t.Fatalf("ReadSSHKeys = %q, %v", keys, err)
	}
	for _, tc := range []struct{ name, data, err string }{
		{"notakey", "hello secretword\n", "line 1 is not an SSH public key"},
		{"private", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----\n", "private key"},
		{"empty", "# nothing\n", "no SSH public key"},
		{"second", testKey + "\nssh-ed25519 secretword!\n", "line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := installer.ReadSSHKeys(write(tc.name, tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("ReadSSHKeys = %v, want an error with %q", err, tc.err)
			}
			if strings.Contains(err.Error(), "secretword") || strings.Contains(err.Error(), "b3Blbn") {
				t.Errorf("the error prints the key file's content: %v", err)
			}
		})
	}
	if _, err := installer.ReadSSHKeys(dir); err == nil || !strings.Contains(err.Error(), "--ssh-key") {
		t.Errorf("a directory: %v", err)
	}
}
