package installer_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/safetext"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/render/installer"
)

var (
	ostreePayload = installer.Payload{OSTreeURL: "http://edge.example.com/repo", OSTreeRef: "rhel/9/x86_64/edge"}
	bootcPayload  = installer.Payload{BootcImage: "mirror.example.com:5000/microshift/full:4.19"}
)

func TestKickstartGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts installer.KickstartOptions
	}{
		{"ostree-minimal.ks", installer.KickstartOptions{Payload: ostreePayload}},
		{"ostree-all.ks", allOptions(ostreePayload)},
		{"bootc-minimal.ks", installer.KickstartOptions{Payload: bootcPayload}},
		{"bootc-all.ks", allOptions(bootcPayload)},
		{"body-all.ks", allOptions(installer.Payload{})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // ksvalidator is a Python process each
			ks, err := installer.Kickstart(testPlan(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := installer.Kickstart(testPlan(), tc.opts)
			if !bytes.Equal(ks, again) {
				t.Fatal("two kickstarts of the same inputs differ")
			}
			golden(t, tc.name, ks)
			ksvalidate(t, ks)
		})
	}
}

func TestKickstartContent(t *testing.T) {
	ks, err := installer.Kickstart(testPlan(), allOptions(ostreePayload))
	if err != nil {
		t.Fatal(err)
	}
	s := string(ks)
	for _, want := range []string{
		"volgroup myvg1 pv.01\n",
		"logvol / --vgname=myvg1 --fstype=xfs --size=20480 --name=root\n",
		"logvol /var/lib/data --vgname=myvg1 --fstype=xfs --size=5120 --name=var_lib_data\n",
		"ostreesetup --osname=rhel --remote=edge --url=http://edge.example.com/repo --ref=rhel/9/x86_64/edge --nogpg\n",
		"user --name=admin --groups=wheel\n",
		`sshkey --username=admin "` + testKey + `"` + "\n",
		"firewall --enabled --port=6443:tcp,80:tcp,30000-32767:tcp --service=mdns\n",
		"chmod 0600 /etc/crio/openshift-pull-secret\n",
		"update-ca-trust extract\n",
		"firewall-offline-cmd --zone=trusted --add-source=10.42.0.0/16\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("kickstart lacks %q", want)
		}
	}
	if n := strings.Count(s, testSecret); n != 1 {
		t.Errorf("the ostree kickstart holds the pull secret %d times, want once (in %%post)", n)
	}
	if strings.Contains(s, "ostreecontainer") || strings.Contains(s, "%pre-install") {
		t.Error("the ostree kickstart installs a container")
	}

	ks, err = installer.Kickstart(testPlan(), allOptions(bootcPayload))
	if err != nil {
		t.Fatal(err)
	}
	s = string(ks)
	if !strings.Contains(s, "ostreecontainer --url=mirror.example.com:5000/microshift/full:4.19 --transport=registry\n") || strings.Contains(s, "ostreesetup") {
		t.Errorf("the bootc kickstart does not install the image with ostreecontainer only:\n%s", s)
	}
	if !strings.Contains(s, "cat > /etc/ostree/auth.json <<") {
		t.Error("the bootc kickstart gives the installer no credentials for the image")
	}
	if n := strings.Count(s, testSecret); n != 2 {
		t.Errorf("the bootc kickstart holds the pull secret %d times, want twice (installer auth, CRI-O)", n)
	}

	ks, err = installer.Kickstart(testPlan(), installer.KickstartOptions{Payload: ostreePayload})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(ks); !strings.Contains(s, "volgroup rhel pv.01\n") || !strings.Contains(s, "--size=10240 --name=root") || strings.Contains(s, "%post") && strings.Contains(s, "umask") {
		t.Errorf("defaults: want volume group rhel, a 10 GiB root and no files:\n%s", s)
	}
}

// A /boot size is a partition of its own: neither Anaconda nor the boot
// loader takes /boot on LVM, and reqpart then adds only the platform's
// partitions.
func TestKickstartBootPartition(t *testing.T) {
	ks, err := installer.Kickstart(testPlan(), installer.KickstartOptions{Payload: bootcPayload, Filesystems: []installer.Filesystem{{Mount: "/boot", MinSize: 2 << 30}, {Mount: "/var/lib/data", MinSize: 5 << 30}}})
	if err != nil {
		t.Fatal(err)
	}
	s := string(ks)
	if !strings.Contains(s, "\nreqpart\npart /boot --fstype=xfs --size=2048\npart pv.01 --grow\n") || strings.Contains(s, "--add-boot") || strings.Contains(s, "logvol /boot") {
		t.Errorf("/boot is not a 2 GiB partition beside the volume group:\n%s", s)
	}
	ksvalidate(t, ks)
}

// Files a here-document cannot carry are written base64-encoded, so no
// content can end the section or the here-document.
func TestKickstartHostileFiles(t *testing.T) {
	var files []plan.File
	for i, data := range []string{
		"%end\nrootpw --plaintext x\n",
		"no trailing newline",
		"MICROSHIFT_COMPOSE_EOF\nrm -rf /\n",
		"\x00binary\xff\n",
		"  %post\n",
		"",
	} {
		files = append(files, plan.File{Path: fmt.Sprintf("/etc/x%d.conf", i), Mode: "0644", Data: []byte(data)})
	}
	ks, err := installer.Kickstart(testPlan(), installer.KickstartOptions{Payload: ostreePayload, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.Contains(string(ks), "base64 -d > "+f.Path+" <<'MICROSHIFT_COMPOSE_EOF'\n") {
			t.Errorf("%q is not written base64-encoded:\n%s", f.Data, ks)
		}
	}
	checkSections(t, ks)
	ksvalidate(t, ks)
}

func TestKickstartErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts installer.KickstartOptions
		want string
	}{
		{"two payloads", installer.KickstartOptions{Payload: installer.Payload{OSTreeURL: "http://x/repo", OSTreeRef: "a/b", BootcImage: "quay.io/a/b:1"}}, "choose one"},
		{"url without ref", installer.KickstartOptions{Payload: installer.Payload{OSTreeURL: "http://x/repo"}}, "without a ref"},
		{"bad volume group", installer.KickstartOptions{VolumeGroup: "-vg"}, `volume group "-vg" is not an LVM name`},
		{"bad user", installer.KickstartOptions{User: &installer.User{Name: "Root!"}}, "not a user name"},
		{"key with a line separator", installer.KickstartOptions{User: &installer.User{Name: "admin", Keys: []string{"ssh-ed25519 AAAA a\u2028b"}}}, "line-separator character"},
		{"key with NEL", installer.KickstartOptions{User: &installer.User{Name: "admin", Keys: []string{"ssh-ed25519 AAAA a\u0085b"}}}, "line-separator character"},
		{"key with invalid UTF-8", installer.KickstartOptions{User: &installer.User{Name: "admin", Keys: []string{"ssh-ed25519 AAAA a\xffb"}}}, "invalid UTF-8"},
		{"ostree url with a password", installer.KickstartOptions{Payload: installer.Payload{OSTreeURL: "http://u:hunter2@x/repo", OSTreeRef: "a/b"}}, "holds credentials"},
		{"ostree url with a port out of range", installer.KickstartOptions{Payload: installer.Payload{OSTreeURL: "http://x:99999/repo", OSTreeRef: "a/b"}}, "port 99999 is out of range"},
		{"bootc image with credentials", installer.KickstartOptions{Payload: installer.Payload{BootcImage: "u:hunter2@quay.io/a/b:1"}}, "holds credentials"},
		{"url with a space", installer.KickstartOptions{Payload: installer.Payload{OSTreeURL: "http://x/a b", OSTreeRef: "a/b"}}, "holds a space"},
		{"two volumes named alike", installer.KickstartOptions{Filesystems: []installer.Filesystem{{Mount: "/var/a-b", MinSize: 1 << 30}, {Mount: "/var/a_b", MinSize: 1 << 30}}}, "one logical volume var_a_b"},
		{"a volume name LVM reserves", installer.KickstartOptions{Filesystems: []installer.Filesystem{{Mount: "/snapshots", MinSize: 1 << 30}}}, "starts with a prefix LVM reserves"},
		{"a reserved volume suffix", installer.KickstartOptions{Filesystems: []installer.Filesystem{{Mount: "/var/lib/x_rimage", MinSize: 1 << 30}}}, "holds _rimage"},
		{"/usr", installer.KickstartOptions{Filesystems: []installer.Filesystem{{Mount: "/usr", MinSize: 1 << 30}}}, "/usr is the read-only image"},
		{"file path", installer.KickstartOptions{Files: []plan.File{{Path: "etc/x", Mode: "0644"}}}, "must be absolute"},
		{"file mode", installer.KickstartOptions{Files: []plan.File{{Path: "/etc/x", Mode: "rw"}}}, "is not octal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ks, err := installer.Kickstart(testPlan(), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Kickstart = %v, want an error with %q", err, tc.want)
			}
			if ks != nil {
				t.Error("a kickstart was returned with the error")
			}
		})
	}
}

// checkSections asserts that every line starting with % is one of the
// kickstart's own section lines.
func checkSections(t testing.TB, ks []byte) {
	t.Helper()
	allowed := map[string]bool{
		"%pre-install --erroronfail":                                   true,
		"%post --log=/var/log/anaconda/post-install.log --erroronfail": true,
		"%end": true,
	}
	inDoc := false
	for _, line := range strings.Split(string(ks), "\n") {
		switch {
		case inDoc:
			if line == "MICROSHIFT_COMPOSE_EOF" {
				inDoc = false
			}
		case strings.HasSuffix(line, "<<'MICROSHIFT_COMPOSE_EOF'"):
			inDoc = true
		case strings.HasPrefix(strings.TrimSpace(line), "%") && !allowed[line]:
			t.Fatalf("kickstart line %q starts a section of its own:\n%s", line, ks)
		}
	}
	if inDoc {
		t.Fatalf("a here-document is not closed:\n%s", ks)
	}
}

// FuzzKickstart writes kickstarts from hostile file contents, paths,
// payloads and user keys: an input the writer accepts must never add a
// section or leave a here-document open, its sshkey argument must read
// back (as pykickstart's shlex does) as the first key, and the payload
// must carry no credentials; what it refuses is an error.
func FuzzKickstart(f *testing.F) {
	f.Add("/etc/x.conf", "a = 1\n", "http://edge.example.com/repo", "rhel/9/x86_64/edge", "", testKey, secondKey)
	f.Add("/etc/crio/openshift-pull-secret", "%end\n%post\nrm -rf /\n", "", "", "quay.io/a/b:1", "ssh-rsa AAAA x", "")
	f.Add("/etc/x", "MICROSHIFT_COMPOSE_EOF\n", "file:///run/install/repo", "a/b", "", quotedKey, unicodeKey)
	f.Add("/etc/x", "", "http://u:p@x:99999/repo?t=1", "a/b", "u:p@quay.io/a/b", "a\u2028b", "%end")
	f.Fuzz(func(t *testing.T, path, data, url, ref, image, key, key2 string) {
		o := installer.KickstartOptions{
			Payload: installer.Payload{OSTreeURL: url, OSTreeRef: ref, BootcImage: image},
			Files:   []plan.File{{Path: path, Mode: "0600", Secret: true, Data: []byte(data)}},
		}
		if key != "" {
			o.User = &installer.User{Name: "admin", Keys: []string{key}}
			if key2 != "" {
				o.User.Keys = append(o.User.Keys, key2)
			}
		}
		ks, err := installer.Kickstart(testPlan(), o)
		if err != nil {
			return
		}
		checkSections(t, ks)
		if safetext.URLCredentials(url) || safetext.RegistryCredentials(image) {
			t.Fatalf("a payload with credentials was written: %q %q", url, image)
		}
		sshkeys := 0
		for _, line := range strings.Split(string(ks), "\n") {
			if strings.HasPrefix(line, "ostreesetup ") || strings.HasPrefix(line, "ostreecontainer ") {
				if strings.ContainsAny(line, "\"'\\") {
					t.Fatalf("quotes in %q", line)
				}
			}
			if arg, ok := strings.CutPrefix(line, "sshkey --username=admin "); ok {
				sshkeys++
				if got, ok := shlexWord(arg); !ok || got != key {
					t.Fatalf("sshkey argument %q reads back as %q (%v), want %q", arg, got, ok, key)
				}
			}
		}
		if key != "" && sshkeys != 1 {
			t.Fatalf("%d sshkey lines, want 1", sshkeys)
		}
	})
}

// shlexWord reads one double-quoted word as Python's shlex (POSIX mode)
// does: inside double quotes a backslash escapes a double quote or a
// backslash, and is kept before anything else.
func shlexWord(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\'):
			b.WriteByte(s[i+1])
			i++
		case c == '"':
			return b.String(), i == len(s)-1
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}
