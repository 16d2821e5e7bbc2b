package installer

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/osbuild/blueprint/pkg/blueprint"
	"github.com/osbuild/images/pkg/datasizes"

	"github.com/microshift-compose/microshift-compose/plan"
)

// BIBConfigFile is the bootc-image-builder config's name in the output
// directory (bootc-image-builder reads it mounted at /config.toml).
const BIBConfigFile = "config.toml"

// BIBOptions are the installer inputs of a bootc-image-builder config.
type BIBOptions struct {
	User *User
	// VolumeGroup names the disk image's LVM volume group, "" for
	// DefaultVolumeGroup: the group of --lvmd's default device class, so
	// that LVMS finds it.
	VolumeGroup string
	// Filesystems size the root logical volume ("/", DefaultRootSize
	// without it), the /boot partition, and a logical volume each for the
	// others.
	Filesystems []Filesystem
	// DiskSize is the disk image's size; 0 is what the partitions and
	// volumes take plus DefaultLVMSFree. What they leave is the volume
	// group's free space, for LVMS.
	DiskSize uint64
	// Kickstart, when set, is the kickstart body (Kickstart with a zero
	// Payload) for the anaconda-iso type, which adds the image's
	// ostreecontainer. The user and the disk layout are then the
	// kickstart's: bootc-image-builder refuses a user beside a kickstart.
	Kickstart []byte
	// FIPS boots the anaconda-iso installer with fips=1 (its
	// customizations.fips), as RHEL installs a FIPS system; the disk image
	// types take FIPS mode from the image's kargs.d.
	FIPS bool
}

// BIBConfig is the config's document: bootc-image-builder reads the
// customizations of an osbuild blueprint.
type BIBConfig struct {
	Customizations *blueprint.Customizations `toml:"customizations"`
}

// Customizations returns the blueprint customizations of o for the
// installer blueprints of osbuild's image types: the user with its keys
// in the wheel group, the filesystem sizes, or the kickstart. The
// bootc-image-builder config takes its user from here and lays its disk
// out with BIBDisk.
func Customizations(o BIBOptions) *blueprint.Customizations {
	c := &blueprint.Customizations{}
	if len(o.Kickstart) > 0 {
		c.Installer = &blueprint.InstallerCustomization{Kickstart: &blueprint.Kickstart{Contents: string(o.Kickstart)}}
		return c
	}
	if o.User != nil {
		key := strings.Join(o.User.Keys, "\n")
		c.User = []blueprint.UserCustomization{{Name: o.User.Name, Key: &key, Groups: []string{WheelGroup}}}
	}
	for _, fs := range o.Filesystems {
		c.Filesystem = append(c.Filesystem, blueprint.FilesystemCustomization{Mountpoint: fs.Mount, MinSize: fs.MinSize})
	}
	return c
}

// bibMountVarDenied are the directories under /var that
// bootc-image-builder does not mount a filesystem on (symlinks, or the
// state bootc keeps itself), beyond osbuild's ostree mount point policy.
var bibMountVarDenied = []string{"/var/mail"}

// checkBIBMount refuses a mount point bootc-image-builder does not lay out
// on a bootc disk: it takes /, /boot and directories below /var only.
func checkBIBMount(mount string) error {
	switch {
	case mount == "/" || mount == BootMount:
		return nil
	case !strings.HasPrefix(mount, "/var/"):
		return fmt.Errorf("--filesystem %s: a bootc disk image mounts filesystems on /, /boot and directories below /var only (the rest of the tree is the image's)", mount)
	}
	for _, d := range bibMountVarDenied {
		if mount == d || strings.HasPrefix(mount, d+"/") {
			return fmt.Errorf("--filesystem %s: bootc-image-builder does not mount a filesystem on %s", mount, d)
		}
	}
	return nil
}

// BIBDisk lays out a bootc-image-builder disk image for MicroShift: the
// platform's boot partitions (bootc-image-builder adds them, and /boot
// unless --filesystem sizes it), then one LVM volume group named as LVMS
// expects, holding the root logical volume and one per other filesystem;
// the disk's size (customizations.disk.minsize) leaves the rest of the
// group free for LVMS. The group's partition is as large as the root
// volume at least (bootc-image-builder sizes root from it) and grows to
// the disk.
func BIBDisk(o BIBOptions) (*blueprint.DiskCustomization, error) {
	d, _, err := bibDisk(o)
	return d, err
}

func bibDisk(o BIBOptions) (*blueprint.DiskCustomization, diskLayout, error) {
	for _, fs := range o.Filesystems {
		if err := checkBIBMount(fs.Mount); err != nil {
			return nil, diskLayout{}, err
		}
	}
	l, err := layout(o.VolumeGroup, o.Filesystems)
	if err != nil {
		return nil, diskLayout{}, fmt.Errorf("writing %s: %w", BIBConfigFile, err)
	}
	used := l.volumesSize() + l.reserve()
	size := o.DiskSize
	if size == 0 {
		// Whole GiB, as a user would size it.
		size = (used + DefaultLVMSFree + datasizes.GibiByte - 1) / datasizes.GibiByte * datasizes.GibiByte
	} else if size < used+MinLVMSFree {
		return nil, diskLayout{}, fmt.Errorf("--disk-size %s leaves LVMS less than %s: the boot partitions and logical volumes take up to %s", humanSize(size), humanSize(MinLVMSFree), humanSize(used))
	}
	d := &blueprint.DiskCustomization{MinSize: size}
	if l.Boot > 0 {
		d.Partitions = append(d.Partitions, blueprint.PartitionCustomization{
			Type:                         "plain",
			MinSize:                      l.Boot,
			FilesystemTypedCustomization: blueprint.FilesystemTypedCustomization{Mountpoint: BootMount, FSType: "xfs"},
		})
	}
	vg := blueprint.PartitionCustomization{Type: "lvm", MinSize: l.Volumes[0].Size, VGCustomization: blueprint.VGCustomization{Name: l.VolumeGroup}}
	for _, v := range l.Volumes {
		vg.LogicalVolumes = append(vg.LogicalVolumes, blueprint.LVCustomization{
			Name:                         v.Name,
			MinSize:                      v.Size,
			FilesystemTypedCustomization: blueprint.FilesystemTypedCustomization{Mountpoint: v.Mount, FSType: "xfs"},
		})
	}
	d.Partitions = append(d.Partitions, vg)
	return d, l, nil
}

// EncodeBIBConfig writes config.toml for a plan's bootc image: with a
// kickstart, for the anaconda-iso type; without, for the disk image types
// (qcow2, raw, ami, vmdk...), with the user and the disk layout of
// BIBDisk.
func EncodeBIBConfig(p *plan.Plan, o BIBOptions) ([]byte, error) {
	c := &blueprint.Customizations{}
	var disk diskLayout
	if len(o.Kickstart) > 0 {
		c.Installer = &blueprint.InstallerCustomization{Kickstart: &blueprint.Kickstart{Contents: string(o.Kickstart)}}
		if o.FIPS {
			on := true
			c.FIPS = &on
		}
	} else {
		if o.User != nil {
			c.User = Customizations(BIBOptions{User: o.User}).User
		}
		var err error
		if c.Disk, disk, err = bibDisk(o); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# bootc-image-builder config for MicroShift %s, profile %s, %s.\n", p.Release.Stream, p.Profile, p.Arch)
	b.WriteString("# Generated by microshift-compose; do not edit.\n")
	if len(o.Kickstart) > 0 {
		b.WriteString("# For --type anaconda-iso: the installer adds the image and includes the kickstart below.\n")
	} else {
		b.WriteString("# For the disk image types (--type qcow2, raw, ami, vmdk...).\n")
		writeDiskComment(&b, disk, c.Disk.MinSize)
	}
	b.WriteString("# Build with image-builder, which bootc-image-builder became (the image in root's container storage):\n")
	b.WriteString("#   podman run --rm --privileged --security-opt label=type:unconfined_t -v ./config.toml:/config.toml:ro -v ./output:/output \\\n")
	b.WriteString("#     -v /var/lib/containers/storage:/var/lib/containers/storage " + ImageBuilderImage + " \\\n")
	b.WriteString("#     build --bootc-ref IMAGE --blueprint /config.toml --output-dir /output TYPE\n")
	b.WriteString("# or with the bootc-image-builder image of the release's RHEL: ... registry.redhat.io/rhel9/bootc-image-builder --type TYPE --config /config.toml IMAGE\n\n")
	enc := toml.NewEncoder(&b)
	enc.Indent = ""
	if err := enc.Encode(configTOML{Customizations: customizationsTOML{User: c.User, FIPS: c.FIPS, Installer: c.Installer, Disk: (*diskTOML)(c.Disk)}}); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", BIBConfigFile, err)
	}
	return b.Bytes(), nil
}

// ImageBuilderImage is osbuild's image-builder as a container, which builds
// a bootc image's disk images and installer from this config
// (`image-builder build --bootc-ref IMAGE --blueprint config.toml TYPE`):
// bootc-image-builder was merged into it, and MicroShift's own CI builds its
// installers with it.
const ImageBuilderImage = "ghcr.io/osbuild/image-builder-cli:latest"

// configTOML is BIBConfig as config.toml is written: only what the config
// sets, no zero value standing for a default (osbuild/blueprint's
// DiskCustomization tags start_offset and sector_size omitempty, which the
// TOML encoder keeps for a 0).
type configTOML struct {
	Customizations customizationsTOML `toml:"customizations"`
}

// customizationsTOML are the customizations config.toml takes, in
// blueprint.Customizations' order.
type customizationsTOML struct {
	User      []blueprint.UserCustomization     `toml:"user,omitempty"`
	Disk      *diskTOML                         `toml:"disk,omitempty"`
	FIPS      *bool                             `toml:"fips,omitempty"`
	Installer *blueprint.InstallerCustomization `toml:"installer,omitempty"`
}

// diskTOML is blueprint.DiskCustomization, converted, with every number
// omitted when zero.
type diskTOML struct {
	Type        string                             `toml:"type,omitempty"`
	MinSize     uint64                             `toml:"minsize,omitzero"`
	Partitions  []blueprint.PartitionCustomization `toml:"partitions,omitempty"`
	StartOffset uint64                             `toml:"start_offset,omitzero"`
	SectorSize  uint64                             `toml:"sector_size,omitzero"`
}

// writeDiskComment says in words what the disk layout below is.
func writeDiskComment(b *bytes.Buffer, l diskLayout, size uint64) {
	fmt.Fprintf(b, "# The disk, %s: bootc-image-builder's boot partitions", humanSize(size))
	if l.Boot > 0 {
		fmt.Fprintf(b, " (%s for %s)", humanSize(l.Boot), BootMount)
	}
	fmt.Fprintf(b, ", then LVM volume group %s:\n", l.VolumeGroup)
	for _, v := range l.Volumes {
		fmt.Fprintf(b, "#   logical volume %s, %s, on %s\n", v.Name, humanSize(v.Size), v.Mount)
	}
	fmt.Fprintf(b, "#   free for LVMS (TopoLVM): at least %s\n", humanSize(size-l.volumesSize()-l.reserve()))
	b.WriteString("# bootc-image-builder makes root at least twice the image's size, out of that free space.\n")
}

// humanSize writes a size in MiB or GiB, rounded down to a tenth of a
// GiB where it is not whole.
func humanSize(n uint64) string {
	switch {
	case n >= datasizes.GibiByte && n%datasizes.GibiByte == 0:
		return fmt.Sprintf("%d GiB", n/datasizes.GibiByte)
	case n >= datasizes.GibiByte:
		return fmt.Sprintf("%d.%d GiB", n/datasizes.GibiByte, n%datasizes.GibiByte*10/datasizes.GibiByte)
	case n%datasizes.MebiByte == 0:
		return fmt.Sprintf("%d MiB", n/datasizes.MebiByte)
	}
	return fmt.Sprintf("%d bytes", n)
}
