package installer_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/render/installer"
)

// Keys an ordinary authorized_keys file holds, and the comments and
// options people give them.
var (
	secondKey  = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOh4hu8f3pslWlt7kl0W0zNIHxP5n5RV8aZaIXGGASDl ops@example.com"
	quotedKey  = `command="echo \"hi\" \\ done",no-pty ` + testKey
	unicodeKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGb8dV7c1JHoBOC6kKQsdwITvRoX0uF9mPcQVkIDTmcv José 🦊 #laptop"
)

// ksParse reads kickstarts with pykickstart, the parser Anaconda installs
// with, and returns per file the sshkey entries it holds (user, key) and
// its parse error, if any.
func ksParse(t *testing.T, files []string) map[string]struct {
	Keys  [][2]string
	Error string
} {
	t.Helper()
	lib := testutil.Shared(t, "tools", "pykickstart")
	script := `
import json, sys, warnings
from pykickstart.parser import KickstartParser, preprocessKickstart
from pykickstart.version import makeVersion
from pykickstart.errors import KickstartParseWarning
warnings.filterwarnings(action="error", category=KickstartParseWarning)
out = {}
for f in sys.argv[1:]:
    h = makeVersion("RHEL9")
    try:
        KickstartParser(h).readKickstart(preprocessKickstart(f))
        out[f] = {"Keys": [[k.username, k.key] for k in h.sshkey.sshUserList], "Error": ""}
    except Exception as e:
        out[f] = {"Keys": [], "Error": str(e) or type(e).__name__}
json.dump(out, sys.stdout)
`
	cmd := exec.Command("python3", append([]string{"-c", script}, files...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+lib)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	data, err := cmd.Output()
	if err != nil {
		t.Fatalf("pykickstart: %v\n%s", err, stderr.Bytes())
	}
	var out map[string]struct {
		Keys  [][2]string
		Error string
	}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// ksvalidateAll runs ksvalidator -v RHEL9 once over many kickstarts; on a
// failure, once per file, to name the ones it refuses (it prints its
// messages after all the files).
func ksvalidateAll(t *testing.T, files map[string][]byte) {
	t.Helper()
	tool := testutil.Shared(t, "tools", "ksvalidator")
	dir := t.TempDir()
	var paths []string
	for name, ks := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, ks, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if out, err := exec.Command(tool, append([]string{"-v", "RHEL9"}, paths...)...).CombinedOutput(); err == nil && !strings.Contains(string(out), "rror") {
		return
	}
	for name, ks := range files {
		out, err := exec.Command(tool, "-v", "RHEL9", filepath.Join(dir, name)).CombinedOutput()
		if err != nil || strings.Contains(string(out), "rror") {
			t.Errorf("ksvalidator -v RHEL9 refuses %s: %v\n%s\n--- kickstart:\n%s", name, err, out, ks)
		}
	}
}

// An authorized_keys file of several keys, with quotes, backslashes and
// non-ASCII comments: the kickstart passes ksvalidator, pykickstart reads
// the first key back byte for byte from sshkey (Kickstart takes one per
// user), and %post appends the others exactly.
func TestKickstartSSHKeys(t *testing.T) {
	keys := []string{quotedKey, secondKey, unicodeKey}
	files := map[string][]byte{}
	for i := range keys {
		// Each key first once, so that each goes through sshkey.
		ordered := append(append([]string{}, keys[i:]...), keys[:i]...)
		ks, err := installer.Kickstart(testPlan(), installer.KickstartOptions{Payload: bootcPayload, User: &installer.User{Name: "admin", Keys: ordered}})
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(ks), "\nsshkey "); n != 1 {
			t.Errorf("%d sshkey lines, want 1 (pykickstart refuses a second for a user)", n)
		}
		if !strings.Contains(string(ks), "home=$(getent passwd admin | cut -d: -f6)\ncat >> \"$home/.ssh/authorized_keys\" <<'MICROSHIFT_COMPOSE_EOF'\n"+strings.Join(ordered[1:], "\n")+"\nMICROSHIFT_COMPOSE_EOF\n") {
			t.Errorf("%%post does not append the other keys:\n%s", ks)
		}
		checkSections(t, ks)
		files[fmt.Sprintf("keys-%d.ks", i)] = ks
	}
	ksvalidateAll(t, files)
	dir := t.TempDir()
	var paths []string
	for i := range keys {
		p := filepath.Join(dir, fmt.Sprintf("keys-%d.ks", i))
		os.WriteFile(p, files[fmt.Sprintf("keys-%d.ks", i)], 0o600)
		paths = append(paths, p)
	}
	parsed := ksParse(t, paths)
	for i, p := range paths {
		got := parsed[p]
		if got.Error != "" || len(got.Keys) != 1 || got.Keys[0] != [2]string{"admin", keys[i]} {
			t.Errorf("pykickstart reads %s as %+v, want admin's key %q", filepath.Base(p), got, keys[i])
		}
	}
}

// Every combination of the inputs the kickstart and the
// bootc-image-builder config accept goes through their readers:
// ksvalidator -v RHEL9 for the kickstarts, bootc-image-builder's loader
// and osbuild/images' bootc distro for the disk configs.
func TestInstallerOutputsReadBack(t *testing.T) {
	payloads := map[string]installer.Payload{"ostree": ostreePayload, "bootc": bootcPayload, "body": {},
		"ostree-port": {OSTreeURL: "https://[2001:db8::1]:8443/repo", OSTreeRef: "rhel/9/x86_64/edge"},
		"ostree-file": {OSTreeURL: "file:///run/install/repo", OSTreeRef: "rhel/9/x86_64/edge"}}
	users := map[string]*installer.User{"nouser": nil,
		"onekey":   {Name: "admin", Keys: []string{testKey}},
		"keys":     {Name: "admin", Keys: []string{testKey, secondKey}},
		"oddkeys":  {Name: "ops_1", Keys: []string{quotedKey, unicodeKey, secondKey}},
		"emptykey": {Name: "admin"}}
	disks := map[string][]installer.Filesystem{"nofs": nil,
		"root":  {{Mount: "/", MinSize: 20 << 30}},
		"vols":  {{Mount: "/", MinSize: 20 << 30}, {Mount: "/var/lib/data", MinSize: 5 << 30}, {Mount: "/var/lib/containers.d", MinSize: 512 << 20}},
		"boot":  {{Mount: "/boot", MinSize: 2 << 30}, {Mount: "/var/log", MinSize: 1 << 30}},
		"other": {{Mount: "/data", MinSize: 1 << 30}}} // the kickstart's, not bootc-image-builder's
	vgs := []string{"", "myvg1"}
	plans := map[string]*plan.Plan{"fw": testPlan(), "nofw": func() *plan.Plan { p := testPlan(); p.Firewall = plan.Firewall{}; return p }()}
	// Every payload, user and disk together; the volume group, the
	// firewall and the installer files cycle through theirs, so that each
	// meets each of the others.
	kickstarts := map[string][]byte{}
	bibs := 0
	n := 0
	for _, pn := range sortedKeys(payloads) {
		for _, un := range sortedKeys(users) {
			for _, dn := range sortedKeys(disks) {
				vg, fn, withFiles := vgs[n%len(vgs)], sortedKeys(plans)[n/2%len(plans)], n/4%2 == 1
				n++
				o := installer.KickstartOptions{Payload: payloads[pn], User: users[un], Filesystems: disks[dn], VolumeGroup: vg}
				if withFiles {
					o.Files = allFiles()
				}
				ks, err := installer.Kickstart(plans[fn], o)
				if err != nil {
					t.Fatalf("Kickstart(%s %s %s %q %s files=%v): %v", pn, un, dn, vg, fn, withFiles, err)
				}
				checkSections(t, ks)
				kickstarts[fmt.Sprintf("%s-%s-%s-%s-%s-%v.ks", pn, un, dn, vg, fn, withFiles)] = ks
			}
		}
	}
	for un, user := range users {
		for dn, fss := range disks {
			for _, vg := range vgs {
				for _, size := range []uint64{0, 64 << 30} {
					data, err := installer.EncodeBIBConfig(testPlan(), installer.BIBOptions{User: user, VolumeGroup: vg, Filesystems: fss, DiskSize: size})
					if dn == "other" {
						if err == nil {
							t.Errorf("config.toml with /data: no error")
						}
						continue
					}
					if err != nil {
						t.Fatalf("EncodeBIBConfig(%s %s %q %d): %v", un, dn, vg, size, err)
					}
					bibs++
					if err := blueprints.CheckBIBConfig("config.toml", data, "rhel-9.6", "x86_64"); err != nil {
						t.Errorf("%s %s %q %d: %v\n%s", un, dn, vg, size, err, data)
					}
					loadBIBConfig(t, data)
				}
			}
		}
	}
	t.Logf("%d kickstarts through ksvalidator, %d configs through bootc-image-builder's loader and osbuild/images", len(kickstarts), bibs)
	ksvalidateAll(t, kickstarts)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
