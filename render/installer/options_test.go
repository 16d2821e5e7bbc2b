package installer_test

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/render/installer"
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

// FuzzFirewallPortPattern: FirewallPortPattern takes what
// ParseFirewallPort takes, and refuses nothing else but a range that ends
// at or below where it starts (which the schema cannot say).
func FuzzFirewallPortPattern(f *testing.F) {
	for _, s := range []string{"8080/tcp", "5353/udp", "30000-32767/tcp", "8080:tcp", "0/tcp", "65535/udp", "65536/tcp", "80/sctp", "80", "http/tcp", "+80/tcp", "080/tcp", "90-80/tcp", "1-65535/udp", "80:tcp/udp", "9999/tcp", "10000/tcp", "59999/tcp", "64999/tcp", "65499/tcp", "65529/tcp"} {
		f.Add(s)
	}
	pattern := regexp.MustCompile(installer.FirewallPortPattern)
	f.Fuzz(func(t *testing.T, s string) {
		_, err := installer.ParseFirewallPort(s)
		match := pattern.MatchString(s)
		if (err == nil) != match && !(match && strings.Contains(err.Error(), "ends at or below")) {
			t.Fatalf("FirewallPortPattern matches %q: %v; ParseFirewallPort: %v", s, match, err)
		}
	})
}

// FuzzUserNamePattern: UserNamePattern without ReservedUsers is
// CheckUserName's rule.
func FuzzUserNamePattern(f *testing.F) {
	for _, s := range []string{"admin", "_svc", "ops-1", "a", "root", "Admin", "1admin", "-x", "ad min", "", strings.Repeat("a", 33), "adm\nin", "a$", "a$b"} {
		f.Add(s)
	}
	pattern := regexp.MustCompile(installer.UserNamePattern)
	f.Fuzz(func(t *testing.T, s string) {
		want := installer.CheckUserName(s) == nil
		if got := pattern.MatchString(s) && !slices.Contains(installer.ReservedUsers(), s); got != want {
			t.Fatalf("the pattern takes %q: %v; CheckUserName: %v", s, got, want)
		}
	})
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
	// Options with quotes and backslashes, and comments in any script,
	// are kept as they are: the kickstart quotes them.
	keys, err = installer.ReadSSHKeys(write("odd.pub", quotedKey+"\n"+unicodeKey+"\n"))
	if err != nil || len(keys) != 2 || keys[0] != quotedKey || keys[1] != unicodeKey {
		t.Fatalf("ReadSSHKeys = %q, %v", keys, err)
	}
	for _, tc := range []struct{ name, data, err string }{
		{"notakey", "hello secretword\n", "line 1 is not an SSH public key"},
		{"private", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----\n", "private key"},
		{"empty", "# nothing\n", "no SSH public key"},
		{"second", testKey + "\nssh-ed25519 secretword!\n", "line 2"},
		{"line separator", testKey + "\n" + testKey + " secretword\u2028x\n", "line 2 holds a control, format or line-separator character"},
		{"paragraph separator", testKey + " a\u2029secretword\n", "line 1 holds a control"},
		{"next line", testKey + " a\u0085secretword\n", "line 1 holds a control"},
		{"invalid UTF-8", testKey + " secretword\xff\n", "invalid UTF-8"},
		{"escape sequence", testKey + " \x1b[2Jsecretword\n", "line 1 holds a control"},
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

func TestCheckOSTreeURL(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{in: "http://edge.example.com/repo"},
		{in: "https://edge.example.com:8443/repo"},
		{in: "http://10.0.0.1/repo"},
		{in: "http://[2001:db8::1]:8080/repo"},
		{in: "file:///run/install/repo"},
		{in: "http://admin:hunter2@edge.example.com/repo", err: "--ostree-url holds credentials"},
		{in: "http://token@edge.example.com/repo", err: "--ostree-url holds credentials"},
		{in: "https://edge.example.com/repo?access_token=hunter2", err: "--ostree-url holds credentials"},
		{in: "https://edge.example.com/repo?", err: "--ostree-url holds credentials"},
		{in: "http://admin:hunter2@edge.example.com:99999/a b", err: "--ostree-url holds credentials"},
		{in: "http://edge.example.com:99999/repo", err: "port 99999 is out of range (1-65535)"},
		{in: "http://edge.example.com:0/repo", err: "port 0 is out of range"},
		{in: "http://edge.example.com:/repo", err: `"" is not a port number`},
		{in: "http://edge.example.com:08080/repo", err: `"08080" is not a port number`},
		{in: "http://edge_.example.com/repo", err: "is not a host name or IP address"},
		{in: "http://edge$(id).example.com/repo", err: "is not"},
		{in: "http://[::1/repo", err: "is not an http, https or file URL"},
		{in: "http://[10.0.0.1]/repo", err: "is not"},
		{in: "http:///repo", err: "is not a host name or IP address"},
		{in: "ftp://edge.example.com/repo", err: "is not an http, https or file URL"},
		{in: "http://edge.example.com/repo#frag", err: "is not an http, https or file URL"},
		{in: "file://host/repo", err: "a file URL names a local path"},
		{in: " http://edge.example.com/repo", err: "is not an http"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			err := installer.CheckOSTreeURL(tc.in)
			if tc.err == "" {
				if err != nil {
					t.Fatalf("CheckOSTreeURL(%q) = %v", tc.in, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("CheckOSTreeURL(%q) = %v, want an error with %q", tc.in, err, tc.err)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error prints the credentials: %v", err)
			}
		})
	}
}

func TestCheckInstallationDevice(t *testing.T) {
	for dev, ok := range map[string]bool{
		"/dev/vda": true, "/dev/nvme0n1": true, "/dev/sda": true, "/dev/mapper/mpatha": true,
		"/dev/disk/by-id/wwn-0x5000c500a1b2c3d4": true, "/dev/disk/by-path/pci-0000:00:1f.2-ata-1": true,
		"/dev/disk/by-id/nvme-Samsung_SSD_970_EVO_1TB_S467NX0M123456": true,
		"/dev/vda init=/bin/sh": false, "/dev/vda\tinit=/bin/sh": false, "/dev/vda\ninit=/bin/sh": false,
		"/dev/vda rd.break": false, `/dev/vda"`: false, "/dev/vda;reboot": false, "/dev/vda$(id)": false,
		"/dev/": false, "/dev": false, "vda": false, "/dev/../etc/passwd": false, "/dev//vda": false,
		"/dev/vda/": false, "/etc/vda": false, "/dev/vda\u00a0x": false, "/dev/vda\u2028x": false,
		"/dev/-vda": false, "/dev/vda=1": false, "/dev/v\\x20da": false,
	} {
		err := installer.CheckInstallationDevice(dev)
		if (err == nil) != ok {
			t.Errorf("CheckInstallationDevice(%q) = %v, want ok=%v", dev, err, ok)
		}
		if err != nil && (!strings.HasPrefix(err.Error(), "--installation-device ") || strings.Contains(err.Error(), "\n")) {
			t.Errorf("error %q is not one line naming the flag", err)
		}
	}
}

// FuzzInstallationDevice: an accepted device is one word of a kernel
// command line, under /dev.
func FuzzInstallationDevice(f *testing.F) {
	for _, s := range []string{"/dev/vda", "/dev/vda init=/bin/sh", "/dev/disk/by-path/pci-0000:00:1f.2-ata-1", "/dev/../x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if installer.CheckInstallationDevice(s) != nil {
			return
		}
		if len(strings.Fields(s)) != 1 || strings.ContainsAny(s, "\"'\\=;$`&|<>()") || !strings.HasPrefix(s, "/dev/") || strings.Contains(s, "..") {
			t.Fatalf("accepted %q", s)
		}
	})
}

// FuzzOSTreeURL: an accepted URL carries no credentials, has a port in
// range, and is one bare kickstart argument.
func FuzzOSTreeURL(f *testing.F) {
	for _, s := range []string{"http://edge.example.com/repo", "http://u:p@x/repo", "http://x:99999/r", "https://[::1]:1/r?x", "file:///run/install/repo"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if installer.CheckOSTreeURL(s) != nil {
			return
		}
		u, err := url.Parse(s)
		if err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(s, " \t\"'\\#?") {
			t.Fatalf("accepted %q", s)
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				t.Fatalf("accepted port %q in %q", p, s)
			}
		}
		ks, err := installer.Kickstart(testPlan(), installer.KickstartOptions{Payload: installer.Payload{OSTreeURL: s, OSTreeRef: "rhel/9/x86_64/edge"}})
		if err != nil || !strings.Contains(string(ks), "\nostreesetup --osname=rhel --remote=edge --url="+s+" --ref=rhel/9/x86_64/edge --nogpg\n") {
			t.Fatalf("the kickstart does not take %q: %v", s, err)
		}
	})
}
