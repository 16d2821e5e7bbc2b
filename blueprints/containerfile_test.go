package blueprints_test

import (
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/compose/plan"
)

// TestContainerfileGeneric checks that the Containerfile copies whatever
// device files the plan has, at the output paths the caller maps them to,
// and leaves out the sections a plan does not need.
func TestContainerfileGeneric(t *testing.T) {
	p := &plan.Plan{
		Release:  plan.Release{Stream: "5.0"},
		Arch:     "aarch64",
		Profile:  "edge",
		Packages: []plan.Package{{Name: "microshift", Version: "5.0.*"}, {Name: "lvm2"}},
		Files: []plan.File{
			{Path: "/etc/microshift/config.d/10-microshift-compose.yaml", Mode: "0644"},
			{Path: "/etc/microshift/manifests.d/010-storage/kustomization.yaml", Mode: "0644"},
			{Path: "/etc/crio/crio.conf.d/99-x.conf", Mode: "0600"},
		},
	}
	mapPath := func(device string) string { return "out" + device }
	got := string(blueprints.Containerfile(p, "images.txt", mapPath))
	for _, want := range []string{
		"#   podman build --platform linux/arm64 -t microshift-edge:5.0 -f Containerfile .\n",
		"        'microshift-5.0.*' \\\n        lvm2 \\\n    && dnf clean all\n",
		"COPY --chmod=0644 out/etc/microshift/config.d/10-microshift-compose.yaml /etc/microshift/config.d/10-microshift-compose.yaml\n",
		"COPY --chmod=0644 out/etc/microshift/manifests.d/010-storage/kustomization.yaml /etc/microshift/manifests.d/010-storage/kustomization.yaml\n",
		"COPY --chmod=0600 out/etc/crio/crio.conf.d/99-x.conf /etc/crio/crio.conf.d/99-x.conf\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Containerfile lacks %q:\n%s", want, got)
		}
	}
	for _, absent := range []string{"firewall-offline-cmd", "systemctl", "skopeo", "COPY images/"} {
		if strings.Contains(got, absent) {
			t.Errorf("Containerfile of a plan without images, services or firewall has %q:\n%s", absent, got)
		}
	}
	if again := string(blueprints.Containerfile(p, "images.txt", mapPath)); again != got {
		t.Errorf("Containerfile is not deterministic")
	}
}
