package installer_test

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/render/installer"
)

var update = flag.Bool("update", false, "rewrite golden files")

const (
	testKey    = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGb8dV7c1JHoBOC6kKQsdwITvRoX0uF9mPcQVkIDTmcv admin@example.com"
	testSecret = `{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}` + "\n"
	testCA     = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"
	mirrorConf = "[[registry]]\nprefix = \"quay.io\"\nlocation = \"quay.io\"\n\n[[registry.mirror]]\nlocation = \"mirror.example.com:5000/ms\"\n"
)

// testPlan is a small plan with a firewall; files are the kickstart's.
func testPlan() *plan.Plan {
	return &plan.Plan{
		Schema:     plan.Schema,
		Release:    plan.Release{Version: "4.19.0", Stream: "4.19", Base: "4.19.0", Source: "embedded"},
		Arch:       "x86_64",
		Profile:    "full",
		Components: []plan.Component{{Name: "core"}, {Name: "networking-ovnk", Order: 5}, {Name: "storage-lvms", Order: 10}},
		Firewall: plan.Firewall{
			Ports:          []string{"6443:tcp", "80:tcp", "30000-32767:tcp"},
			Services:       []string{"mdns"},
			TrustedSources: []string{"10.42.0.0/16", "169.254.169.1"},
		},
	}
}

// allFiles are the installer files of a plan with every registry input.
func allFiles() []plan.File {
	return []plan.File{
		{Path: "/etc/containers/certs.d/mirror.example.com:5000/ca.crt", Mode: "0644", Data: []byte(testCA)},
		{Path: "/etc/containers/registries.conf.d/90-microshift-compose-mirror.conf", Mode: "0644", Data: []byte(mirrorConf)},
		{Path: "/etc/crio/openshift-pull-secret", Mode: "0600", Secret: true, Data: []byte(testSecret)},
		{Path: installer.CATrustDir + "/microshift-compose-corp.pem", Mode: "0644", Data: []byte(testCA)},
	}
}

func allOptions(payload installer.Payload) installer.KickstartOptions {
	return installer.KickstartOptions{
		Payload:     payload,
		VolumeGroup: "myvg1",
		Filesystems: []installer.Filesystem{{Mount: "/", MinSize: 20 << 30}, {Mount: "/var/lib/data", MinSize: 5 << 30}},
		User:        &installer.User{Name: "admin", Keys: []string{testKey}},
		Files:       allFiles(),
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, filepath.Join(testutil.Root(t), "testdata", "golden", "installer", name), got, *update, "go test ./render/installer -update")
}

// ksvalidate runs pykickstart's own validator for RHEL 9 on a kickstart.
func ksvalidate(t *testing.T, ks []byte) {
	t.Helper()
	tool := testutil.Shared(t, "tools", "ksvalidator")
	file := filepath.Join(t.TempDir(), "microshift.ks")
	if err := os.WriteFile(file, ks, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, "-v", "RHEL9", file).CombinedOutput()
	if err != nil || strings.Contains(string(out), "rror") {
		t.Fatalf("ksvalidator -v RHEL9 refuses the kickstart: %v\n%s\n--- kickstart:\n%s", err, out, ks)
	}
}
