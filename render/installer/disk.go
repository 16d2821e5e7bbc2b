package installer

import (
	"fmt"
	"strings"

	"github.com/osbuild/images/pkg/datasizes"
)

// Disk layout shared by the kickstart and the bootc-image-builder config:
// the platform's boot partitions, a /boot partition, and one LVM volume
// group holding a root logical volume and one volume per other
// --filesystem; what the volumes leave of the group is LVMS's.
const (
	// BootMount is the one mount point that is a partition rather than a
	// logical volume: the boot loader reads it, and neither Anaconda nor
	// osbuild puts it on LVM.
	BootMount = "/boot"
	// DefaultLVMSFree is what a bootc-image-builder disk image leaves free
	// in the volume group for LVMS without --disk-size: the space of
	// MicroShift's documented 20 GB virtual machine beside its 10 GiB root.
	DefaultLVMSFree uint64 = 10 * datasizes.GibiByte
	// MinLVMSFree is the least --disk-size may leave free for LVMS.
	MinLVMSFree uint64 = 1 * datasizes.GibiByte
	// bootReserve bounds what the platform's partitions take on a disk
	// image beside the volume group: osbuild's BIOS boot (1 MiB), EFI
	// system (200 MiB) and /boot (1 GiB) partitions, the GPT headers and
	// the LVM metadata, rounded up. A /boot of the user's replaces the
	// /boot part of it.
	bootReserve uint64 = 1536 * datasizes.MebiByte
)

// volume is a logical volume: its name in the group, its mount point and
// its size.
type volume struct {
	Name  string
	Mount string
	Size  uint64
}

// diskLayout is the disk both installers lay out.
type diskLayout struct {
	VolumeGroup string
	// Boot is the size of a /boot partition the user sized; 0 leaves it
	// to the installer (reqpart --add-boot, osbuild's 1 GiB).
	Boot uint64
	// Volumes are the logical volumes, root first, then in the order of
	// the filesystems.
	Volumes []volume
}

// volumesSize is what the logical volumes take.
func (l diskLayout) volumesSize() uint64 {
	var n uint64
	for _, v := range l.Volumes {
		n += v.Size
	}
	return n
}

// reserve is what a disk image's partitions take beside the group.
func (l diskLayout) reserve() uint64 {
	if l.Boot == 0 {
		return bootReserve
	}
	return bootReserve - datasizes.GibiByte + l.Boot
}

// layout checks the volume group name and the filesystems and lays them
// out: "/" sizes the root volume (DefaultRootSize without it), /boot the
// boot partition, every other mount point gets a volume named after it.
func layout(vg string, fss []Filesystem) (diskLayout, error) {
	if vg == "" {
		vg = DefaultVolumeGroup
	}
	if !lvmName(vg) {
		return diskLayout{}, fmt.Errorf("volume group %q is not an LVM name", vg)
	}
	if err := CheckFilesystems(fss); err != nil {
		return diskLayout{}, err
	}
	l := diskLayout{VolumeGroup: vg, Volumes: []volume{{Name: "root", Mount: "/", Size: DefaultRootSize}}}
	names := map[string]string{"root": "/"}
	for _, fs := range fss {
		switch fs.Mount {
		case "/":
			l.Volumes[0].Size = fs.MinSize
			continue
		case BootMount:
			l.Boot = fs.MinSize
			continue
		case "/usr":
			return diskLayout{}, fmt.Errorf("--filesystem /usr: /usr is the read-only image of an ostree or bootc system, on the root volume (size it with --filesystem /=SIZE)")
		}
		name := lvName(fs.Mount)
		if prev, ok := names[name]; ok {
			return diskLayout{}, fmt.Errorf("--filesystem %s and %s would be one logical volume %s", prev, fs.Mount, name)
		}
		if err := checkLVName(name); err != nil {
			return diskLayout{}, fmt.Errorf("--filesystem %s: its logical volume name %s %v", fs.Mount, name, err)
		}
		names[name] = fs.Mount
		l.Volumes = append(l.Volumes, volume{Name: name, Mount: fs.Mount, Size: fs.MinSize})
	}
	return l, nil
}

// lvmReservedParts are what lvcreate refuses in a logical volume name
// (lvm(8), "VALID NAMES"): suffixes of its internal volumes anywhere in
// the name, snapshot and pvmove at its start.
var lvmReservedParts = []string{"_cdata", "_cmeta", "_corig", "_iorig", "_mimage", "_mlog", "_pmspare", "_rimage", "_rmeta", "_tdata", "_tmeta", "_vdata", "_vorigin", "_wcorig"}

func checkLVName(name string) error {
	if !lvmName(name) || name == "." || name == ".." {
		return fmt.Errorf("is not an LVM name")
	}
	if strings.HasPrefix(name, "snapshot") || strings.HasPrefix(name, "pvmove") {
		return fmt.Errorf("starts with a prefix LVM reserves (snapshot, pvmove)")
	}
	for _, part := range lvmReservedParts {
		if strings.Contains(name, part) {
			return fmt.Errorf("holds %s, which LVM reserves for its internal volumes", part)
		}
	}
	return nil
}
