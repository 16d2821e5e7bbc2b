package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/internal/safetext"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/render/installer"
)

// installerOptions are how the composition is installed on a device: the
// installer outputs (--kickstart, --bib), the payload they install
// (--ostree-url/--ostree-ref, --bootc-image), and the device's user, disk,
// firewall and CA trust.
type installerOptions struct {
	Kickstart   bool
	BIB         bool
	OSTreeURL   string
	OSTreeRef   string
	BootcImage  string
	User        string
	SSHKey      string
	Filesystems []string
	DiskSize    string
	Ports       []string
	CATrust     []string
	Device      string
}

func (o *installerOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&o.Kickstart, "kickstart", false, "also write "+installer.KickstartFile+", an Anaconda kickstart installing the ostree commit (--ostree-url) or the bootc image (--bootc-image)")
	f.BoolVar(&o.BIB, "bib", false, "also write "+installer.BIBConfigFile+" for image-builder (needs --bootc; image-builder build --bootc-ref IMAGE --blueprint config.toml TYPE, and bootc-image-builder reads it too): for the disk images (qcow2, raw, ami, vmdk) the user and an LVM disk layout (the volume group of --lvmd's default device class, root and --filesystem volumes, the rest free for LVMS), or with --kickstart the kickstart for anaconda-iso")
	f.StringVar(&o.OSTreeURL, "ostree-url", "", "URL of the ostree repository serving the commit built from blueprint.toml: the payload of --kickstart and of an --image-type that installs a commit (edge-installer, edge-simplified-installer, edge-raw-image, edge-ami, edge-vsphere); without credentials, which would be written to microshift.ks and the lock")
	f.StringVar(&o.OSTreeRef, "ostree-ref", "", "ref of that commit (default: osbuild's for the distro and arch, e.g. rhel/9/x86_64/edge)")
	f.StringVar(&o.BootcImage, "bootc-image", "", "bootc image (registry/repository:tag or @digest) the kickstart installs with ostreecontainer and the device updates from: with --verify-key its repository needs a signature by the key, with --mirror-registry its registry is sent to the mirror")
	f.StringVar(&o.User, "user", "", "user the device gets, in the wheel group, without a password: logs in with --ssh-key (blueprint, kickstart, bootc-image-builder config)")
	f.StringVar(&o.SSHKey, "ssh-key", "", "SSH public key file (authorized_keys lines) of --user")
	f.StringArrayVar(&o.Filesystems, "filesystem", nil, "MOUNT=SIZE, repeatable: minimum size of a filesystem (/=20GiB sizes the root logical volume of the kickstart and the --bib disk, default 10GiB; /boot its partition; other mount points get a logical volume of their own, below /var only for --bib)")
	f.StringVar(&o.DiskSize, "disk-size", "", "size of the disk image image-builder (or bootc-image-builder) builds from --bib's config.toml (qcow2, raw, ami, vmdk), e.g. 40GiB: what the boot partitions and logical volumes leave is the volume group's free space for LVMS (default: 10GiB beyond them)")
	f.StringArrayVar(&o.Ports, "firewall-port", nil, "PORT/PROTO or FROM-TO/PROTO (tcp, udp) the device's firewall opens, repeatable (blueprint, Containerfile, kickstart)")
	f.StringVar(&o.Device, "installation-device", "", "disk edge-simplified-installer installs to, a device path (e.g. /dev/vda or /dev/disk/by-id/NAME; customizations.installation_device of installer.toml, on the installer's kernel command line)")
	f.StringArrayVar(&o.CATrust, "ca-trust", nil, "PEM CA certificate file the device trusts system-wide, repeatable: placed in "+installer.CATrustDir+"/ (update-ca-trust runs in the kickstart and the Containerfile)")
}

// Validate checks the flags and their combinations; files are read by
// options.
// deviceUpdates says whether the device's trust (--verify-key, --policy)
// or registries (--mirror-registry) are written: --bootc-image then also
// names the bootc image the device updates from.
func (o *installerOptions) Validate(bootc, deviceUpdates bool) error {
	if (o.User == "") != (o.SSHKey == "") {
		return usageError{fmt.Errorf("--user and --ssh-key go together: the user logs in with the key only")}
	}
	if o.User != "" {
		if err := installer.CheckUserName(o.User); err != nil {
			return usageError{err}
		}
	}
	if o.OSTreeRef != "" && o.OSTreeURL == "" {
		return usageError{fmt.Errorf("--ostree-ref names the commit at --ostree-url: add --ostree-url")}
	}
	if o.OSTreeURL != "" {
		if err := blueprints.CheckOSTree(blueprints.OSTreeOptions{URL: o.OSTreeURL, Ref: o.OSTreeRef}); err != nil {
			return usageError{err}
		}
	}
	if o.BootcImage != "" {
		if o.OSTreeURL != "" {
			return usageError{fmt.Errorf("--bootc-image and --ostree-url are two payloads for the kickstart: choose one")}
		}
		if !o.Kickstart && !deviceUpdates {
			return usageError{fmt.Errorf("--bootc-image is what the kickstart installs and the device updates from: add --kickstart, or --verify-key or --mirror-registry for its updates")}
		}
		if safetext.RegistryCredentials(o.BootcImage) {
			return usageError{fmt.Errorf("--bootc-image holds credentials (user:password@ before the registry), which microshift.ks and compose.lock.json would carry: name the image without them and give the registry's credentials with --pull-secret (an auth file, written 0600 to /etc/ostree/auth.json for the installer)")}
		}
		if err := checkImageFlag("--bootc-image", o.BootcImage); err != nil {
			return err
		}
	}
	if o.Device != "" {
		if err := installer.CheckInstallationDevice(o.Device); err != nil {
			return usageError{err}
		}
	}
	if o.BIB && !bootc {
		return usageError{fmt.Errorf("--bib writes the bootc-image-builder config of the bootc image: add --bootc")}
	}
	var filesystems []installer.Filesystem
	for _, s := range o.Filesystems {
		fs, err := installer.ParseFilesystem(s)
		if err != nil {
			return usageError{err}
		}
		filesystems = append(filesystems, fs)
	}
	if err := installer.CheckFilesystems(filesystems); err != nil {
		return usageError{err}
	}
	for _, s := range o.Ports {
		if _, err := installer.ParseFirewallPort(s); err != nil {
			return usageError{err}
		}
	}
	if o.DiskSize != "" {
		if _, err := installer.ParseDiskSize(o.DiskSize); err != nil {
			return usageError{err}
		}
	}
	return nil
}

// options reads the key file and returns the installer options of
// assemble.Build.
func (o *installerOptions) options() (assemble.InstallerOptions, error) {
	out := assemble.InstallerOptions{Kickstart: o.Kickstart, BIB: o.BIB, BootcImage: o.BootcImage, InstallationDevice: o.Device}
	if o.OSTreeURL != "" {
		out.OSTree = &blueprints.OSTreeOptions{URL: o.OSTreeURL, Ref: o.OSTreeRef}
	}
	if o.User != "" {
		keys, err := installer.ReadSSHKeys(o.SSHKey)
		if err != nil {
			return out, err
		}
		out.User = &installer.User{Name: o.User, Keys: keys, KeyFile: o.SSHKey}
	}
	for _, s := range o.Filesystems {
		fs, err := installer.ParseFilesystem(s)
		if err != nil {
			return out, err
		}
		out.Filesystems = append(out.Filesystems, fs)
	}
	if err := installer.CheckFilesystems(out.Filesystems); err != nil {
		return out, usageError{err}
	}
	if o.DiskSize != "" {
		n, err := installer.ParseDiskSize(o.DiskSize)
		if err != nil {
			return out, usageError{err}
		}
		out.DiskSize = n
	}
	return out, nil
}

// apply adds the firewall ports and CA trust files to the plan.
func (o *installerOptions) apply(p *plan.Plan) error {
	var ports []string
	for _, s := range o.Ports {
		port, err := installer.ParseFirewallPort(s)
		if err != nil {
			return err
		}
		ports = append(ports, port)
	}
	return installer.AddInputs(p, installer.Inputs{FirewallPorts: ports, CATrust: o.CATrust})
}
