package installer

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/osbuild/images/pkg/datasizes"

	"github.com/microshift-compose/microshift-compose/internal/kernelargs"
	"github.com/microshift-compose/microshift-compose/internal/safetext"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan"
)

// KickstartFile is the kickstart's name in the output directory.
const KickstartFile = "microshift.ks"

// Payload is what the kickstart installs: an ostree commit (OSTreeURL and
// OSTreeRef, with ostreesetup) or a bootc image (BootcImage, with
// ostreecontainer). The zero Payload writes the body an installer image
// adds its own payload to.
type Payload struct {
	OSTreeURL string
	OSTreeRef string
	// BootcImage is the image reference the device installs and then
	// updates from (bootc upgrade).
	BootcImage string
}

// Kind names the payload for messages and the kickstart's header.
func (p Payload) Kind() string {
	switch {
	case p.BootcImage != "":
		return "bootc image " + p.BootcImage
	case p.OSTreeURL != "":
		return "ostree commit " + p.OSTreeRef + " from " + p.OSTreeURL
	}
	return ""
}

// OSName and Remote are the ostree stateroot and remote of an installed
// commit, as RHEL for Edge installers name them.
const (
	OSName = "rhel"
	Remote = "edge"
)

// KickstartOptions are the installer inputs of a kickstart.
type KickstartOptions struct {
	Payload Payload
	// VolumeGroup is the LVM volume group holding the root volume, the rest
	// of it free for LVMS; "" is DefaultVolumeGroup.
	VolumeGroup string
	// Filesystems size logical volumes: "/" is the root volume
	// (DefaultRootSize without it), any other mount point gets a volume of
	// its own.
	Filesystems []Filesystem
	User        *User
	// Files are written in %post, each at its path and mode: the pull
	// secret, the mirror's registries.conf.d drop-in and CA, CA trust
	// anchors. Files under /etc/containers/certs.d/ and the pull secret
	// (as /etc/ostree/auth.json) are written in %pre-install too for a
	// bootc payload, so that the installer can pull the image.
	Files []plan.File
	// KernelArgs are appended to the installed system's kernel command
	// line (bootloader --append): fips=1 with FIPS mode, then the user's,
	// checked by internal/kernelargs. Anaconda does not apply a bootc
	// image's kargs.d (bootc-image-builder#902), so the kickstart carries
	// them for both payloads.
	KernelArgs []string
	// OSTreePost are commands %post runs when the kickstart installs an
	// ostree commit or is the body of an installer of one
	// (fips-mode-setup on RHEL 9); never for a bootc image.
	OSTreePost []string
}

// Where the device keeps what the kickstart writes.
const (
	// CATrustDir is the directory update-ca-trust reads anchors from.
	CATrustDir = "/etc/pki/ca-trust/source/anchors"
	// certsDDir holds registry CAs containers/image reads per host.
	certsDDir = "/etc/containers/certs.d/"
	// ostreeAuth is where ostree and bootc read registry credentials.
	ostreeAuth = "/etc/ostree/auth.json"
)

// heredocMark ends a file's here-document. Files that hold it on a line
// of their own (or that a here-document cannot carry as is) are written
// base64-encoded instead.
const heredocMark = "MICROSHIFT_COMPOSE_EOF"

// Kickstart writes an Anaconda kickstart that partitions the disk for
// MicroShift (a volume group with a root volume, the rest left for LVMS),
// locks root, adds the user with its SSH keys, opens the plan's firewall,
// installs the payload, and writes the installer files in %post. Every
// value is checked or quoted; file contents are never passed through a
// shell expansion.
func Kickstart(p *plan.Plan, o KickstartOptions) ([]byte, error) {
	if o.Payload.OSTreeURL != "" && o.Payload.BootcImage != "" {
		return nil, fmt.Errorf("writing %s: both an ostree commit and a bootc image to install; choose one", KickstartFile)
	}
	if o.Payload.OSTreeURL != "" && o.Payload.OSTreeRef == "" {
		return nil, fmt.Errorf("writing %s: an ostree URL without a ref", KickstartFile)
	}
	disk, err := layout(o.VolumeGroup, o.Filesystems)
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", KickstartFile, err)
	}
	for _, f := range o.Files {
		if err := safetext.DevicePath(f.Path); err != nil {
			return nil, fmt.Errorf("writing %s: device file path %q %v", KickstartFile, f.Path, err)
		}
		if !modeOK(f.Mode) {
			return nil, fmt.Errorf("writing %s: device file %s: mode %q is not octal such as 0644", KickstartFile, f.Path, f.Mode)
		}
	}
	if safetext.URLCredentials(o.Payload.OSTreeURL) || safetext.RegistryCredentials(o.Payload.BootcImage) {
		return nil, fmt.Errorf("writing %s: the payload's URL or image reference holds credentials, which the kickstart would carry: give registry credentials as the pull secret", KickstartFile)
	}
	for _, v := range []string{o.Payload.OSTreeURL, o.Payload.OSTreeRef, o.Payload.BootcImage} {
		if !argOK(v) {
			return nil, fmt.Errorf("writing %s: %q holds a space, a quote or a control character", KickstartFile, v)
		}
	}
	if o.Payload.OSTreeURL != "" {
		if err := CheckOSTreeURL(o.Payload.OSTreeURL); err != nil {
			return nil, fmt.Errorf("writing %s: %w", KickstartFile, err)
		}
	}
	for _, a := range o.KernelArgs {
		if !kernelargs.Safe(a) {
			return nil, fmt.Errorf("writing %s: kernel argument %s holds a character the kernel command line cannot carry as it is", KickstartFile, text.QuoteExcerpt(a))
		}
	}
	var post []string
	if o.Payload.BootcImage == "" {
		post = o.OSTreePost
	}
	for _, c := range post {
		if strings.ContainsAny(c, "\n\r%") || text.HasUnsafe(c) {
			return nil, fmt.Errorf("writing %s: %%post command %s is not one line", KickstartFile, text.QuoteExcerpt(c))
		}
	}

	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Kickstart for MicroShift %s, profile %s, %s: %s.\n", p.Release.Stream, p.Profile, p.Arch, strings.Join(p.ComponentNames(), ", "))
	w("# Generated by microshift-compose; do not edit.\n")
	if kind := o.Payload.Kind(); kind != "" {
		w("# Installs the %s.\n", safetext.Comment(kind))
	} else {
		w("# The body of an installer's kickstart: the installer adds the payload\n")
		w("# (osbuild's edge-installer its ostreesetup, bootc-image-builder's anaconda-iso\n")
		w("# its ostreecontainer) and includes this.\n")
	}
	if slices.ContainsFunc(o.Files, func(f plan.File) bool { return f.Secret }) {
		w("# It holds the pull secret: keep it private.\n")
	}
	w("\nlang en_US.UTF-8\nkeyboard us\ntimezone UTC\ntext\nreboot\n")
	w("network --bootproto=dhcp --device=link --activate --onboot=on\n")

	vg := disk.VolumeGroup
	w("\n# One LVM volume group %s: the root volume, then what LVMS (TopoLVM) uses for\n", vg)
	w("# persistent volumes, the free space of the group.\n")
	w("zerombr\nclearpart --all --initlabel\n")
	if disk.Boot == 0 {
		w("reqpart --add-boot\n")
	} else {
		w("reqpart\npart %s --fstype=xfs --size=%d\n", BootMount, mib(disk.Boot))
	}
	w("part pv.01 --grow\nvolgroup %s pv.01\n", vg)
	for _, v := range disk.Volumes {
		w("logvol %s --vgname=%s --fstype=xfs --size=%d --name=%s\n", v.Mount, vg, mib(v.Size), v.Name)
	}

	w("\n# Root is locked")
	if o.User != nil {
		w("; %s logs in with its SSH key", o.User.Name)
	}
	w(".\nrootpw --lock\n")
	if o.User != nil {
		if err := CheckUserName(o.User.Name); err != nil {
			return nil, err
		}
		w("user --name=%s --groups=%s\n", o.User.Name, WheelGroup)
		for _, k := range o.User.Keys {
			if !keyLineOK(k) {
				return nil, fmt.Errorf("writing %s: an SSH key of %s holds a control, format or line-separator character or invalid UTF-8", KickstartFile, o.User.Name)
			}
		}
		// Kickstart takes one sshkey per user (pykickstart refuses a
		// second); %post appends the others.
		if len(o.User.Keys) > 0 {
			w("sshkey --username=%s %s\n", o.User.Name, ksQuote(o.User.Keys[0]))
		}
	}
	var moreKeys []string
	if o.User != nil && len(o.User.Keys) > 1 {
		moreKeys = o.User.Keys[1:]
	}

	if len(o.KernelArgs) > 0 {
		w("\n# The installed system's kernel command line: FIPS mode and --karg.\n")
		w("bootloader --append=%s\n", ksQuote(strings.Join(o.KernelArgs, " ")))
	}

	fw := p.Firewall
	if len(fw.Ports)+len(fw.Services) > 0 {
		w("\n# What MicroShift and the components need open.\n")
		w("firewall --enabled")
		if len(fw.Ports) > 0 {
			w(" --port=%s", strings.Join(fw.Ports, ","))
		}
		for _, s := range fw.Services {
			w(" --service=%s", s)
		}
		w("\n")
	}
	for _, port := range fw.Ports {
		if !portOK(port) {
			return nil, fmt.Errorf("writing %s: firewall port %q is not port:proto", KickstartFile, port)
		}
	}
	for _, s := range append(slices.Clone(fw.Services), fw.TrustedSources...) {
		if !argOK(s) || strings.ContainsAny(s, ",") {
			return nil, fmt.Errorf("writing %s: firewall entry %q holds a space, comma, quote or control character", KickstartFile, s)
		}
	}

	switch {
	case o.Payload.BootcImage != "":
		var pre []plan.File
		for _, f := range o.Files {
			switch {
			case f.Secret:
				g := f
				g.Path = ostreeAuth
				pre = append(pre, g)
			case strings.HasPrefix(f.Path, certsDDir):
				pre = append(pre, f)
			}
		}
		if len(pre) > 0 {
			w("\n# The installer pulls the image with the pull secret and the registry CAs.\n")
			w("%%pre-install --erroronfail\n")
			w("umask 0077\n")
			for _, f := range pre {
				writeFile(&b, f)
			}
			w("%%end\n")
		}
		w("\n# The bootc image; the device updates from it with bootc upgrade.\n")
		w("ostreecontainer --url=%s --transport=registry\n", o.Payload.BootcImage)
	case o.Payload.OSTreeURL != "":
		w("\n# The ostree commit; the device updates from the remote %s.\n", Remote)
		w("ostreesetup --osname=%s --remote=%s --url=%s --ref=%s --nogpg\n", OSName, Remote, o.Payload.OSTreeURL, o.Payload.OSTreeRef)
	}

	anchors := slices.ContainsFunc(o.Files, func(f plan.File) bool { return strings.HasPrefix(f.Path, CATrustDir+"/") })
	if len(o.Files) > 0 || len(fw.TrustedSources) > 0 || len(moreKeys) > 0 || len(post) > 0 {
		w("\n%%post --log=/var/log/anaconda/post-install.log --erroronfail\n")
		w("set -eu\n")
		if len(post) > 0 {
			// MicroShift's post-fips.cfg: --no-bootcfg, as an ostree
			// system's boot loader is not reconfigured (fips=1 is on
			// bootloader's line).
			w("# FIPS mode: the crypto policy of the installed system.\n")
			for _, c := range post {
				w("%s\n", c)
			}
		}
		if len(moreKeys) > 0 {
			w("# The other SSH keys of %s, after the one of sshkey.\n", o.User.Name)
			w("home=$(getent passwd %s | cut -d: -f6)\n", o.User.Name)
			writeContent(&b, ">>", `"$home/.ssh/authorized_keys"`, []byte(strings.Join(moreKeys, "\n")+"\n"))
		}
		if len(o.Files) > 0 {
			w("# Registry access and trust; contents are written as given, never echoed.\n")
			w("umask 0077\n")
			for _, f := range o.Files {
				writeFile(&b, f)
			}
		}
		if anchors {
			w("update-ca-trust extract\n")
		}
		for _, s := range fw.TrustedSources {
			w("firewall-offline-cmd --zone=trusted --add-source=%s\n", s)
		}
		w("%%end\n")
	}
	return b.Bytes(), nil
}

// writeFile writes one file in a %pre-install or %post script: a quoted
// here-document when the content is text a here-document carries
// exactly, else base64.
func writeFile(b *bytes.Buffer, f plan.File) {
	p := safetext.Shell(f.Path)
	fmt.Fprintf(b, "mkdir -p %s\n", safetext.Shell(path.Dir(f.Path)))
	writeContent(b, ">", p, f.Data)
	fmt.Fprintf(b, "chmod %s %s\n", f.Mode, p)
}

// writeContent writes data to target (a shell word) with redirect (> or
// >>): a quoted here-document when the content is text a here-document
// carries exactly, else base64.
func writeContent(b *bytes.Buffer, redirect, target string, data []byte) {
	if heredocSafe(data) {
		fmt.Fprintf(b, "cat %s %s <<'%s'\n%s%s\n", redirect, target, heredocMark, data, heredocMark)
	} else {
		fmt.Fprintf(b, "base64 -d %s %s <<'%s'\n", redirect, target, heredocMark)
		enc := base64.StdEncoding.EncodeToString(data)
		for len(enc) > 76 {
			fmt.Fprintf(b, "%s\n", enc[:76])
			enc = enc[76:]
		}
		fmt.Fprintf(b, "%s\n%s\n", enc, heredocMark)
	}
}

// heredocSafe reports whether data is text that a quoted here-document
// inside a kickstart section carries byte for byte: valid UTF-8 ending in
// a newline, without control characters (tabs aside), without a line the
// kickstart parser reads as a section (starting with %) and without the
// end mark.
func heredocSafe(data []byte) bool {
	if len(data) == 0 || data[len(data)-1] != '\n' || !utf8.Valid(data) {
		return false
	}
	for _, line := range strings.Split(string(data[:len(data)-1]), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "%") || strings.TrimSpace(line) == heredocMark {
			return false
		}
		if text.HasUnsafe(strings.ReplaceAll(line, "\t", " ")) {
			return false
		}
	}
	return true
}

// mib rounds a size up to whole MiB, the unit of logvol --size.
func mib(n uint64) uint64 { return (n + datasizes.MebiByte - 1) / datasizes.MebiByte }

func modeOK(m string) bool {
	if len(m) != 4 || m[0] != '0' {
		return false
	}
	return strings.Trim(m[1:], "01234567") == ""
}

func portOK(p string) bool {
	spec, proto, ok := strings.Cut(p, ":")
	if !ok || (proto != "tcp" && proto != "udp") {
		return false
	}
	from, to, isRange := strings.Cut(spec, "-")
	if _, err := port(from); err != nil {
		return false
	}
	if isRange {
		if _, err := port(to); err != nil {
			return false
		}
	}
	return true
}

// argOK reports whether s can be one bare kickstart argument.
func argOK(s string) bool {
	return !strings.ContainsAny(s, " \t\"'\\#") && !text.HasUnsafe(s)
}

func lvmName(s string) bool {
	if s == "" || s[0] == '-' || len(s) > 127 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("+_.-", r)) {
			return false
		}
	}
	return true
}

// ksQuote writes s as one double-quoted kickstart argument, as
// pykickstart writes sshkey's (and reads it back, with Python's shlex in
// POSIX mode): a backslash and a double quote are escaped by a backslash.
func ksQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
