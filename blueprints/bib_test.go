package blueprints_test

import (
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/blueprints"
)

// CheckBIBConfig refuses what bootc-image-builder would refuse or only
// warn about, and accepts an LVM disk layout.
func TestCheckBIBConfig(t *testing.T) {
	const lvm = `[customizations.disk]
minsize = 23622320128
[[customizations.disk.partitions]]
type = "lvm"
minsize = 10737418240
name = "rhel"
[[customizations.disk.partitions.logical_volumes]]
name = "root"
minsize = 10737418240
mountpoint = "/"
fs_type = "xfs"
`
	for _, tc := range []struct{ name, config, want string }{
		{"an LVM disk", lvm, ""},
		// What --bib wrote before: osbuild/images' bootc disk types only
		// warn, and lay out plain partitions.
		{"filesystem customizations", "[[customizations.filesystem]]\nmountpoint = \"/\"\nminsize = 21474836480\n",
			`config.toml: bootc-image-builder --type qcow2 warns: blueprint validation failed for image type "qcow2": customizations.filesystem: not supported`},
		{"an unknown key", "[customizations]\ncolour = \"blue\"\n" + lvm, "bootc-image-builder cannot read it: unknown keys found: [customizations.colour]"},
		{"a partition without a size", "[customizations.disk]\n[[customizations.disk.partitions]]\ntype = \"lvm\"\n", "minsize is required"},
		{"filesystem and disk together", lvm + "[[customizations.filesystem]]\nmountpoint = \"/\"\nminsize = 1\n", "refuses it: cannot combine disk and filesystem customizations"},
		{"/boot on LVM", strings.Replace(lvm, `mountpoint = "/"`, `mountpoint = "/boot"`, 1), `invalid mountpoint "/boot" for logical volume`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := blueprints.CheckBIBConfig("config.toml", []byte(tc.config), "rhel-9.6", "x86_64")
			if tc.want == "" {
				if err != nil {
					t.Fatalf("CheckBIBConfig = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckBIBConfig = %v, want an error with %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("the error is not one line: %q", err)
			}
		})
	}
}

// A layout osbuild/images panics on is an error.
func TestCheckBIBConfigPanic(t *testing.T) {
	config := `[customizations.disk]
minsize = 23622320128
[[customizations.disk.partitions]]
type = "lvm"
minsize = 10737418240
[[customizations.disk.partitions.logical_volumes]]
minsize = 10737418240
mountpoint = "/"
fs_type = "xfs"
[[customizations.disk.partitions.logical_volumes]]
minsize = 1073741824
mountpoint = "/var/a+b"
fs_type = "xfs"
`
	err := blueprints.CheckBIBConfig("config.toml", []byte(config), "rhel-9.6", "x86_64")
	if err == nil || !strings.Contains(err.Error(), "refuses it: osbuild/images: invalid filename") {
		t.Fatalf("CheckBIBConfig = %v, want osbuild's panic as an error", err)
	}
}
