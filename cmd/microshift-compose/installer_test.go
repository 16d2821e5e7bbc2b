package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osbuild/images/pkg/bib/blueprintload"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

const testSSHKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGb8dV7c1JHoBOC6kKQsdwITvRoX0uF9mPcQVkIDTmcv admin@example.com\n"

// build --kickstart with every installer option, for the ostree commit and
// the bootc image: microshift.ks passes pykickstart's validator, is 0600
// (it holds the pull secret), and the secret is nowhere else but the
// blueprint; the CA, port and user reach the blueprint, the Containerfile,
// the kickstart and config.toml.
func TestBuildKickstart(t *testing.T) {
	ksvalidator := testutil.Shared(t, "tools", "ksvalidator")
	dir := t.TempDir()
	key := filepath.Join(dir, "admin.pub")
	secretFile := filepath.Join(dir, "pull-secret.json")
	ca := filepath.Join(dir, "corp-ca.pem")
	secret := `{"auths":{"quay.io":{"auth":"c2VjcmV0dXNlcjpzM2NyM3Q="},"registry.redhat.io":{"auth":"c2VjcmV0dXNlcjpzM2NyM3Q="}}}`
	// An ordinary authorized_keys file: two keys, one with options
	// (quotes, a backslash) and a comment in any script.
	otherKey := `command="echo \"hi\" \\ x",no-pty ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOh4hu8f3pslWlt7kl0W0zNIHxP5n5RV8aZaIXGGASDl José 🦊 ops@example.com`
	for f, data := range map[string][]byte{key: []byte(testSSHKey + otherKey + "\n"), secretFile: []byte(secret), ca: testutil.NewCA(t).PEM} {
		if err := os.WriteFile(f, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	common := []string{"build", "--profile", "full", "--arch", "x86_64", "--release", "4.19", "--kickstart",
		"--user", "admin", "--ssh-key", key, "--filesystem", "/=20GiB", "--filesystem", "/var/lib/data=5GiB",
		"--firewall-port", "8443/tcp", "--ca-trust", ca, "--pull-secret", secretFile}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"ostree", []string{"--ostree-url", "http://edge.example.com/repo"}, []string{"ostreesetup --osname=rhel --remote=edge --url=http://edge.example.com/repo --ref=rhel/9/x86_64/edge --nogpg"}},
		{"bootc", []string{"--bootc", "--bib", "--bootc-image", "mirror.example.com/microshift:4.19"}, []string{"ostreecontainer --url=mirror.example.com/microshift:4.19 --transport=registry"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			stdout, stderr, code := runCLI(t, append(append(append([]string{}, common...), tc.args...), "--output", out)...)
			if code != 0 {
				t.Fatalf("build = %d: %s", code, stderr)
			}
			if strings.Contains(stdout+stderr, "c2VjcmV0") {
				t.Error("the pull secret is printed")
			}
			ksFile := filepath.Join(out, "microshift.ks")
			st, err := os.Stat(ksFile)
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("microshift.ks: %v, mode %v; want 0600", err, st)
			}
			ks, _ := os.ReadFile(ksFile)
			for _, w := range append(tc.want, "user --name=admin --groups=wheel", "sshkey --username=admin \""+strings.TrimSuffix(testSSHKey, "\n")+"\"\n",
				"home=$(getent passwd admin | cut -d: -f6)\ncat >> \"$home/.ssh/authorized_keys\" <<'MICROSHIFT_COMPOSE_EOF'\n"+otherKey+"\nMICROSHIFT_COMPOSE_EOF\n", "logvol / --vgname=rhel --fstype=xfs --size=20480 --name=root", "8443:tcp", "update-ca-trust extract", "> /etc/crio/openshift-pull-secret <<", "chmod 0600 /etc/crio/openshift-pull-secret") {
				if !strings.Contains(string(ks), w) {
					t.Errorf("microshift.ks lacks %q", w)
				}
			}
			if res, err := exec.Command(ksvalidator, "-v", "RHEL9", ksFile).CombinedOutput(); err != nil {
				t.Fatalf("ksvalidator -v RHEL9: %v\n%s", err, res)
			}
			snap := snapshot(t, out)
			for name, data := range snap {
				if strings.Contains(data, "c2VjcmV0") && name != "microshift.ks" && name != "blueprint.toml" && name != "config.toml" {
					t.Errorf("%s holds the pull secret", name)
				}
			}
			if !strings.Contains(snap["compose.lock.json"], "/etc/pki/ca-trust/source/anchors/microshift-compose-corp-ca.pem") || !strings.Contains(snap["compose.lock.json"], `"8443:tcp"`) {
				t.Error("the lock does not record the CA trust file and the port")
			}
			if tc.name == "bootc" {
				if !strings.Contains(snap["Containerfile"], "RUN update-ca-trust extract") || !strings.Contains(snap["Containerfile"], "--add-port=8443/tcp") {
					t.Errorf("the Containerfile does not trust the CA or open the port:\n%s", snap["Containerfile"])
				}
				if !strings.Contains(snap["config.toml"], "[customizations.installer.kickstart]") {
					t.Errorf("config.toml holds no kickstart:\n%s", snap["config.toml"])
				}
			} else if !strings.Contains(snap["blueprint.toml"], `"8443:tcp"`) {
				t.Errorf("blueprint.toml lacks the port")
			}
		})
	}
}

// build --bootc --bib without --kickstart: config.toml lays the disk out
// for LVMS (customizations.disk, never customizations.filesystem), with
// the volume group of --lvmd's default device class, and
// bootc-image-builder's loader and osbuild/images' bootc distro build
// every disk type from it without a warning.
func TestBuildBIBDisk(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "admin.pub")
	lvmd := filepath.Join(dir, "lvmd.yaml")
	for f, data := range map[string]string{
		key:  testSSHKey,
		lvmd: "device-classes:\n- name: ssd\n  volume-group: edge-vg\n  default: true\n- name: hdd\n  volume-group: hdd-vg\n",
	} {
		if err := os.WriteFile(f, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out")
	_, stderr, code := runCLI(t, "build", "--profile", "full", "--arch", "aarch64", "--release", "4.19", "--bootc", "--bib", "--lvmd", lvmd,
		"--user", "admin", "--ssh-key", key, "--filesystem", "/=20GiB", "--filesystem", "/var/lib/data=5GiB", "--disk-size", "50GiB", "--output", out)
	if code != 0 {
		t.Fatalf("build = %d: %s", code, stderr)
	}
	bp, err := blueprintload.Load(filepath.Join(out, "config.toml"))
	if err != nil {
		t.Fatalf("bootc-image-builder cannot load config.toml: %v", err)
	}
	c := bp.Customizations
	if c.Filesystem != nil || c.Disk == nil || c.Disk.MinSize != 50<<30 {
		t.Fatalf("config.toml: want customizations.disk of 50 GiB and no filesystem customizations, got %+v", c)
	}
	for _, typ := range blueprints.BIBDiskTypes {
		mf, warnings, err := blueprints.BIBManifest(bp, typ, "rhel-9.6", "aarch64")
		if err != nil || len(warnings) > 0 {
			t.Fatalf("--type %s: %v, warnings %q", typ, err, warnings)
		}
		if !strings.Contains(string(mf), `"type":"org.osbuild.lvm2.create","options":{"volumes":[{"name":"root","size":"21474836480B"},{"name":"var_lib_data","size":"5368709120B"}]}`) ||
			!strings.Contains(string(mf), `"vg_name":"edge-vg"`) {
			t.Errorf("--type %s: no LVM stages for edge-vg with root and var_lib_data", typ)
		}
	}
	lock, _ := os.ReadFile(filepath.Join(out, "compose.lock.json"))
	if !strings.Contains(string(lock), "the disk of config.toml creates volume group edge-vg only; the volume groups hdd-vg of other --lvmd device classes need disks of their own") {
		t.Errorf("the lock does not warn about hdd-vg:\n%s", lock)
	}
}
