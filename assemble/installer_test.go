package assemble_test

import (
	"context"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/osbuild/blueprint/pkg/blueprint"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/distros"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/render/installer"
)

const installerKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGb8dV7c1JHoBOC6kKQsdwITvRoX0uF9mPcQVkIDTmcv admin@example.com"

// Every image type that installs an ostree commit builds with --ostree-url:
// blueprint.toml is the commit (validated as edge-commit) and installer.toml
// the installer, validated by osbuild/images for its type with the URL; for
// edge-installer the kickstart goes through customizations.installer.
func TestBuildInstallerImageTypes(t *testing.T) {
	p := assembletest.Plan(t, assembletest.Catalog(t), assembletest.Release(t, "4.19"), compose.Request{Profile: "full", Arch: releases.X86_64})
	user := &installer.User{Name: "admin", Keys: []string{installerKey}}
	fs := []installer.Filesystem{{Mount: "/", MinSize: 20 << 30}}
	for _, tc := range []struct {
		imageType string
		kickstart bool
		device    string
		noFS      bool     // edge-installer takes no sizes without a kickstart
		want      []string // in installer.toml
	}{
		{imageType: "edge-installer", noFS: true, want: []string{}},
		{imageType: "edge-installer", kickstart: true, want: []string{"[customizations.installer.kickstart]", `volgroup rhel pv.01`, `sshkey --username=admin`}},
		{imageType: "edge-simplified-installer", device: "/dev/vda", want: []string{`installation_device = "/dev/vda"`, `mountpoint = "/"`}},
		{imageType: "edge-raw-image", kickstart: true, want: []string{`name = "admin"`, `mountpoint = "/"`}},
		{imageType: "edge-ami", want: []string{`mountpoint = "/"`}},
		{imageType: "edge-vsphere", want: []string{`mountpoint = "/"`}},
	} {
		t.Run(tc.imageType, func(t *testing.T) {
			opts := assemble.InstallerOptions{
				OSTree: &blueprints.OSTreeOptions{URL: "http://edge.example.com/repo"}, Kickstart: tc.kickstart,
				User: user, Filesystems: fs, InstallationDevice: tc.device,
			}
			if tc.noFS {
				opts.Filesystems = nil
			}
			out, err := assemble.Build(context.Background(), p, assemble.Options{ImageType: tc.imageType, Installer: opts})
			if err != nil {
				t.Fatalf("Build(--image-type %s --ostree-url) = %v", tc.imageType, err)
			}
			inst := out.File(output.InstallerBlueprintFile)
			main := out.File(output.BlueprintFile)
			if inst == nil || main == nil {
				t.Fatalf("want %s and %s", output.BlueprintFile, output.InstallerBlueprintFile)
			}
			var ibp, mbp blueprint.Blueprint
			if _, err := toml.Decode(string(inst.Data), &ibp); err != nil {
				t.Fatal(err)
			}
			if _, err := toml.Decode(string(main.Data), &mbp); err != nil {
				t.Fatal(err)
			}
			if len(ibp.Packages)+len(ibp.Containers) > 0 || len(mbp.Packages) == 0 || len(mbp.Containers) == 0 {
				t.Errorf("the composition must be in the commit's blueprint only")
			}
			// osbuild/images validates both again, as a user's compose would.
			if _, err := blueprints.ValidateImage(&ibp, p.Target.Distro, tc.imageType, "x86_64", opts.OSTree); err != nil {
				t.Errorf("installer.toml: %v", err)
			}
			if _, err := blueprints.Validate(&mbp, p.Target.Distro, distros.DefaultImageType, "x86_64"); err != nil {
				t.Errorf("blueprint.toml: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(inst.Data), w) {
					t.Errorf("installer.toml lacks %q:\n%s", w, inst.Data)
				}
			}
			users := len(mbp.Customizations.GetUsers()) + len(ibp.Customizations.GetUsers())
			if ibp.Customizations != nil && ibp.Customizations.Installer != nil {
				users++ // in the kickstart
			}
			if users != 1 {
				t.Errorf("the user is placed %d times, want once", users)
			}
			if tc.kickstart && out.File(output.KickstartFile) == nil {
				t.Errorf("no %s", output.KickstartFile)
			}
		})
	}
}

func TestBuildInstallerErrors(t *testing.T) {
	p := assembletest.Plan(t, assembletest.Catalog(t), assembletest.Release(t, "4.19"), compose.Request{Profile: "minimal", Arch: releases.X86_64})
	url := &blueprints.OSTreeOptions{URL: "http://edge.example.com/repo"}
	fs := []installer.Filesystem{{Mount: "/", MinSize: 20 << 30}}
	for _, tc := range []struct {
		name string
		opts assemble.Options
		want string
	}{
		{"installer type without a URL", assemble.Options{ImageType: "edge-installer"}, "pass --ostree-url"},
		{"image type that drops the plan", assemble.Options{ImageType: "network-installer"}, "would drop the blueprint's packages, containers"},
		{"URL nothing pulls", assemble.Options{Installer: assemble.InstallerOptions{OSTree: url}}, "add --kickstart, or an --image-type that installs a commit"},
		{"sizes nothing takes", assemble.Options{Installer: assemble.InstallerOptions{Filesystems: fs}}, "--filesystem: no output takes filesystem sizes"},
		{"simplified installer without a device", assemble.Options{ImageType: "edge-simplified-installer", Installer: assemble.InstallerOptions{OSTree: url}}, "pass --installation-device"},
		{"kickstart without a payload", assemble.Options{Installer: assemble.InstallerOptions{Kickstart: true}}, "pass --ostree-url URL (and --ostree-ref) or --bootc-image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := assemble.Build(context.Background(), p, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Build = %v, want an error with %q", err, tc.want)
			}
			if out != nil {
				t.Error("an output was returned with the error")
			}
		})
	}
}

// An installer output that leaves the device without a login says so: the
// kickstart locks root, and config.toml's bootc image has no user; with
// --user, or a blueprint that takes the user, nothing is said.
func TestBuildWarnsNobodyCanLogIn(t *testing.T) {
	p := assembletest.Plan(t, assembletest.Catalog(t), assembletest.Release(t, "4.19"), compose.Request{Profile: "full", Arch: releases.X86_64})
	user := &installer.User{Name: "admin", Keys: []string{installerKey}}
	ostree := &blueprints.OSTreeOptions{URL: "http://edge.example.com/repo"}
	const nobody = "nobody can log in to the device"
	for _, tc := range []struct {
		name string
		opts assemble.Options
		want string // "" for no warning
	}{
		{"kickstart without a user", assemble.Options{Installer: assemble.InstallerOptions{Kickstart: true, OSTree: ostree}}, output.KickstartFile + " locks root and creates no user"},
		{"kickstart with a user", assemble.Options{Installer: assemble.InstallerOptions{Kickstart: true, OSTree: ostree, User: user}}, ""},
		{"bootc disk config without a user", assemble.Options{Bootc: true, Installer: assemble.InstallerOptions{BIB: true}}, output.BIBConfigFile + " creates no user"},
		{"bootc disk config with a user", assemble.Options{Bootc: true, Installer: assemble.InstallerOptions{BIB: true, User: user}}, ""},
		{"no installer output", assemble.Options{Bootc: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := assembletest.Build(t, p, tc.opts)
			var got []string
			for _, w := range out.Plan.Warnings {
				if strings.Contains(w, nobody) {
					got = append(got, w)
				}
			}
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("warnings %q, want none about logging in", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Errorf("warnings %q, want one saying %q", got, tc.want)
			}
		})
	}
}
