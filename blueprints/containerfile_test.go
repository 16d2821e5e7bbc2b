package blueprints_test

import (
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/plan"
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
			{Path: "/etc/crio/crio.conf.d/99-x.conf", Mode: "0600"},
			{Path: "/etc/microshift/config.d/10-microshift-compose.yaml", Mode: "0644"},
			{Path: "/etc/microshift/manifests.d/010-storage/kustomization.yaml", Mode: "0644"},
			{Path: "/etc/microshift/manifests.d/010-storage/v1_namespace_storage.yaml", Mode: "0644"},
			{Path: "/etc/microshift/manifests.d/020-app/kustomization.yaml", Mode: "0644"},
			{Path: "/etc/microshift/manifests.d/020-app/run.sh", Mode: "0755"},
			{Path: "/etc/microshift/manifests.d/030-deep/base/a.yaml", Mode: "0600"},
			{Path: "/etc/microshift/manifests.d/030-deep/kustomization.yaml", Mode: "0644"},
			{Path: "/etc/microshift/manifests.d/030-deep/z.yaml", Mode: "0644"},
		},
	}
	// The mapping build uses: config.d/ and manifests.d/ at the top, the
	// rest under files/.
	mapPath := func(device string) string {
		for _, d := range []string{"config.d/", "manifests.d/"} {
			if _, rest, ok := strings.Cut(device, "/etc/microshift/"+d); ok {
				return d + rest
			}
		}
		return "files" + device
	}
	got := string(blueprints.Containerfile(p, "images.txt", mapPath, blueprints.BootcOptions{}))
	for _, want := range []string{
		"#   podman build --platform linux/arm64 -t microshift-edge:5.0 -f Containerfile .\n",
		"        'microshift-5.0.*' \\\n        lvm2 \\\n    && dnf clean all\n",
		// One file per step, a whole kustomization per step when the
		// directory holds just it with one mode.
		"COPY --chmod=0600 files/etc/crio/crio.conf.d/99-x.conf /etc/crio/crio.conf.d/99-x.conf\n" +
			"COPY --chmod=0644 config.d/10-microshift-compose.yaml /etc/microshift/config.d/10-microshift-compose.yaml\n" +
			"COPY --chmod=0644 manifests.d/010-storage/ /etc/microshift/manifests.d/010-storage/\n" +
			"COPY --chmod=0644 manifests.d/020-app/kustomization.yaml /etc/microshift/manifests.d/020-app/kustomization.yaml\n" +
			"COPY --chmod=0755 manifests.d/020-app/run.sh /etc/microshift/manifests.d/020-app/run.sh\n" +
			// A directory with a subdirectory is copied file by file: a
			// directory COPY would give base/a.yaml the wrong mode.
			"COPY --chmod=0600 manifests.d/030-deep/base/a.yaml /etc/microshift/manifests.d/030-deep/base/a.yaml\n" +
			"COPY --chmod=0644 manifests.d/030-deep/kustomization.yaml /etc/microshift/manifests.d/030-deep/kustomization.yaml\n" +
			"COPY --chmod=0644 manifests.d/030-deep/z.yaml /etc/microshift/manifests.d/030-deep/z.yaml\n",
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
	if again := string(blueprints.Containerfile(p, "images.txt", mapPath, blueprints.BootcOptions{})); again != got {
		t.Errorf("Containerfile is not deterministic")
	}
}

// TestContainerfileImageModes checks both ways images get into the image:
// copied from the dir: layout mirror writes, or pulled during the build
// with the pull secret as a build secret, which also becomes the device's
// pull secret.
func TestContainerfileImageModes(t *testing.T) {
	p := &plan.Plan{
		Release: plan.Release{Stream: "5.0"}, Arch: "x86_64", Profile: "minimal",
		Images: []plan.Image{{Ref: "quay.io/a/b@sha256:" + strings.Repeat("0", 64)}},
		Files:  []plan.File{{Path: "/etc/crio/openshift-pull-secret", Mode: "0600", Secret: true, Data: []byte("{}")}},
	}
	mapPath := func(device string) string { return "files" + device }
	mirror := string(blueprints.Containerfile(p, "images.txt", mapPath, blueprints.BootcOptions{}))
	pull := string(blueprints.Containerfile(p, "images.txt", mapPath, blueprints.BootcOptions{Images: blueprints.BootcImagesPull}))
	for _, tc := range []struct {
		name, got string
		want      []string
		absent    []string
	}{
		{"mirror", mirror, []string{
			"#   microshift-compose mirror --lock compose.lock.json --to dir:images\n",
			"#   podman build --platform linux/amd64 --secret id=pullsecret,src=pull-secret.json -t microshift-minimal:5.0 -f Containerfile .\n",
			"COPY images/ /usr/lib/microshift-compose/images/\n",
			"RUN --mount=type=secret,id=pullsecret \\\n    install -D -m 0600 /run/secrets/pullsecret /etc/crio/openshift-pull-secret\n",
			`'    skopeo copy --quiet --preserve-digests "dir:/usr/lib/microshift-compose/images/${sha}" "containers-storage:${ref}"'`,
		}, []string{"docker://", "files/etc/crio", "oci:"}},
		{"pull", pull, []string{
			"#   podman build --platform linux/amd64 --secret id=pullsecret,src=pull-secret.json -t microshift-minimal:5.0 -f Containerfile .\n",
			"        skopeo copy --quiet --all --preserve-digests --retry-times 3 --authfile /run/secrets/pullsecret \\\n" +
				"            \"docker://${ref}\" \"dir:/usr/lib/microshift-compose/images/${sha}\"; \\\n",
		}, []string{"COPY images/", "files/etc/crio", "mirror --lock"}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.got, w) {
				t.Errorf("%s: Containerfile lacks %q:\n%s", tc.name, w, tc.got)
			}
		}
		for _, a := range tc.absent {
			if strings.Contains(tc.got, a) {
				t.Errorf("%s: Containerfile has %q", tc.name, a)
			}
		}
	}
}
