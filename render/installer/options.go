package installer

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/osbuild/images/pkg/datasizes"
	"github.com/osbuild/images/pkg/policies"
	"golang.org/x/crypto/ssh"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/internal/safetext"
	"github.com/microshift-compose/microshift-compose/internal/text"
)

// Defaults of the disk layout, after MicroShift's own kickstarts: one LVM
// volume group holding a root logical volume of a fixed size, the rest of
// the group left free for LVMS (TopoLVM) to carve volumes from.
const (
	// DefaultVolumeGroup is the group the kickstart creates when --lvmd
	// names none. MicroShift without an lvmd.yaml uses the only volume
	// group of the host (or one named "microshift" among several), so
	// this one is LVMS's.
	DefaultVolumeGroup = "rhel"
	// DefaultRootSize is the root logical volume without --filesystem
	// /=SIZE: the minimum MicroShift's image-builder script allowed.
	DefaultRootSize uint64 = 10 * datasizes.GibiByte
	// WheelGroup is the group the user joins.
	WheelGroup = "wheel"
)

// User is the account the device gets, with the SSH public keys that may
// log in as it. It has no password.
type User struct {
	Name string
	// Keys are authorized_keys lines, as the key file holds them.
	Keys []string
	// KeyFile names the key file, for messages.
	KeyFile string
}

// Filesystem is a mount point and its minimum size in bytes.
type Filesystem struct {
	Mount   string
	MinSize uint64
}

// maxKeyFile bounds an authorized_keys file.
const maxKeyFile = 1 << 20

// UserNamePattern is what useradd accepts without --badname (shadow-utils'
// default rule), at most 32 characters.
const UserNamePattern = `^[a-z_][a-z0-9_-]{0,30}[a-z0-9_$-]?$`

var userNamePattern = lazyregexp.New(UserNamePattern)

// ReservedUsers are accounts of the base system the device already has,
// which --user refuses.
func ReservedUsers() []string { return slices.Clone(reservedUsers) }

var reservedUsers = []string{"root", "bin", "daemon", "adm", "lp", "sync", "shutdown", "halt", "mail", "operator", "games", "ftp", "nobody", "sshd", "dbus", "polkitd", "chrony", "systemd-network", "systemd-resolve", "tss", "rpc", "rpcuser", "openvswitch", "hugetlbfs", "redis"}

// CheckUserName refuses a name useradd would refuse, and the system's own
// accounts (root stays locked).
func CheckUserName(name string) error {
	if !userNamePattern.MatchString(name) {
		return fmt.Errorf("--user %q is not a user name useradd accepts (a lowercase letter or _, then up to 31 lowercase letters, digits, _ or -)", name)
	}
	if slices.Contains(reservedUsers, name) {
		return fmt.Errorf("--user %q is an account of the base system; name a user of your own (root stays locked)", name)
	}
	return nil
}

// ReadSSHKeys reads an authorized_keys file through the input gate and
// checks every key line with golang.org/x/crypto/ssh, the parser sshd's
// format is implemented by. Blank lines and comments are dropped; a key's
// options and comment are kept. Messages name the file and the line,
// never the key.
func ReadSSHKeys(file string) ([]string, error) {
	data, err := inputfile.Read("SSH key file", file, maxKeyFile)
	if err != nil {
		return nil, fmt.Errorf("--ssh-key: %w", err)
	}
	var keys []string
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.Contains(line, "PRIVATE KEY") {
			return nil, fmt.Errorf("--ssh-key %s: line %d: it holds a private key, which must not go to the device; give the public key (.pub)", file, i+1)
		}
		if _, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line)); err != nil {
			return nil, fmt.Errorf("--ssh-key %s: line %d is not an SSH public key (an authorized_keys line such as \"ssh-ed25519 AAAA... user@host\")", file, i+1)
		}
		if !keyLineOK(line) {
			return nil, fmt.Errorf("--ssh-key %s: line %d holds a control, format or line-separator character (U+2028, U+0085...) or invalid UTF-8, which the kickstart's reader cannot carry; remove it from the key's comment", file, i+1)
		}
		keys = append(keys, line)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("--ssh-key %s: no SSH public key in it", file)
	}
	return keys, nil
}

// keyLineOK keeps a key line writable as one kickstart argument and one
// line of authorized_keys: valid UTF-8 without control, format or
// line-separator characters (Python's splitlines, which pykickstart reads
// a kickstart with, ends a line at U+0085, U+2028 and U+2029).
func keyLineOK(s string) bool {
	return utf8.ValidString(s) && !text.HasUnsafe(s)
}

// ParseFilesystem parses MOUNT=SIZE (SIZE as osbuild reads blueprint
// sizes: "20 GiB", "10GiB", "512 MiB", bytes without a unit) and checks the
// mount point against osbuild's mount point policy.
func ParseFilesystem(s string) (Filesystem, error) {
	mount, size, ok := strings.Cut(s, "=")
	if !ok || mount == "" || size == "" {
		return Filesystem{}, fmt.Errorf("--filesystem %q: want MOUNT=SIZE, e.g. /=20GiB or /var/lib/data=50GiB", s)
	}
	if err := checkMount(mount); err != nil {
		return Filesystem{}, fmt.Errorf("--filesystem %q: %v", s, err)
	}
	if err := policies.MountpointPolicies.Check(mount); err != nil {
		return Filesystem{}, fmt.Errorf("--filesystem %q: osbuild does not allow mount point %s: %v", s, mount, err)
	}
	if err := policies.OstreeMountpointPolicies.Check(mount); err != nil {
		return Filesystem{}, fmt.Errorf("--filesystem %q: mount point %s is a symlink on ostree and bootc systems: %v", s, mount, err)
	}
	n, err := datasizes.Parse(size)
	if err != nil {
		return Filesystem{}, fmt.Errorf("--filesystem %q: %q is not a size (e.g. 20GiB, 512MiB, 10GB)", s, size)
	}
	if n < datasizes.MebiByte {
		return Filesystem{}, fmt.Errorf("--filesystem %q: %s is smaller than 1 MiB", s, size)
	}
	if n > 1<<50 {
		return Filesystem{}, fmt.Errorf("--filesystem %q: %s is larger than 1 PiB", s, size)
	}
	return Filesystem{Mount: mount, MinSize: n}, nil
}

// ParseDiskSize parses --disk-size (sizes as ParseFilesystem reads them):
// at least 4 GiB (osbuild's smallest bootc root with the boot
// partitions), at most 1 PiB.
func ParseDiskSize(s string) (uint64, error) {
	n, err := datasizes.Parse(s)
	if err != nil {
		return 0, fmt.Errorf("--disk-size %q is not a size (e.g. 40GiB, 64GB)", s)
	}
	if n < 4*datasizes.GibiByte {
		return 0, fmt.Errorf("--disk-size %q is smaller than 4 GiB", s)
	}
	if n > 1<<50 {
		return 0, fmt.Errorf("--disk-size %q is larger than 1 PiB", s)
	}
	return n, nil
}

// mountPattern is what a mount point may hold: it becomes a kickstart
// argument, a logical volume name and, on a bootc disk, the name of a
// systemd mount unit, whose escaping osbuild does not do for "+".
var mountPattern = lazyregexp.New(`^/[A-Za-z0-9._/-]*$`)

func checkMount(mount string) error {
	if mount == "/" {
		return nil
	}
	if err := safetext.DevicePath(mount); err != nil {
		return fmt.Errorf("mount point %q %v", mount, err)
	}
	if !mountPattern.MatchString(mount) {
		return fmt.Errorf("mount point %q holds a character other than letters, digits and . _ - /", mount)
	}
	return nil
}

// CheckFilesystems refuses a bad mount point and two sizes for one.
func CheckFilesystems(fss []Filesystem) error {
	seen := map[string]bool{}
	for _, fs := range fss {
		if err := checkMount(fs.Mount); err != nil {
			return fmt.Errorf("--filesystem: %v", err)
		}
		if seen[fs.Mount] {
			return fmt.Errorf("--filesystem %s is given twice", fs.Mount)
		}
		seen[fs.Mount] = true
	}
	return nil
}

// FirewallPortPattern is what ParseFirewallPort takes, as a regular
// expression (for the composition file's schema), but for a range's order:
// a port 1-65535 without leading zeros, or two joined by '-', then '/' or
// ':' and tcp or udp.
const FirewallPortPattern = `^` + portRE + `(-` + portRE + `)?[/:](tcp|udp)$`

const portRE = `([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])`

// ParseFirewallPort parses PORT/PROTO or FROM-TO/PROTO (PROTO tcp or udp)
// into the plan's form, PORT:PROTO.
func ParseFirewallPort(s string) (string, error) {
	spec, proto, ok := strings.Cut(s, "/")
	if !ok {
		spec, proto, ok = strings.Cut(s, ":")
	}
	if !ok || (proto != "tcp" && proto != "udp") {
		return "", fmt.Errorf("--firewall-port %q: want PORT/PROTO or FROM-TO/PROTO with PROTO tcp or udp, e.g. 8080/tcp", s)
	}
	from, to, isRange := strings.Cut(spec, "-")
	lo, err := port(from)
	if err != nil {
		return "", fmt.Errorf("--firewall-port %q: %v", s, err)
	}
	if isRange {
		hi, err := port(to)
		if err != nil {
			return "", fmt.Errorf("--firewall-port %q: %v", s, err)
		}
		if hi <= lo {
			return "", fmt.Errorf("--firewall-port %q: the range ends at or below where it starts", s)
		}
	}
	return spec + ":" + proto, nil
}

func port(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || strings.TrimLeft(s, "0123456789") != "" || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("%q is not a port number", s)
	}
	if n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %d is out of range (1-65535)", n)
	}
	return n, nil
}

// lvName derives a logical volume name from a mount point: /var/lib/data
// becomes var_lib_data.
func lvName(mount string) string {
	if mount == "/" {
		return "root"
	}
	var b strings.Builder
	for _, r := range strings.TrimPrefix(path.Clean(mount), "/") {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ErrNoPayload is returned for a kickstart asked to install nothing.
var ErrNoPayload = errors.New("no payload")

// hostnamePattern is a DNS name: labels of letters, digits, - and _,
// neither starting nor ending with - or _.
var hostnamePattern = lazyregexp.New(`^[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?)*\.?$`)

// CheckOSTreeURL checks --ostree-url as what the kickstart's ostreesetup,
// osbuild's ostree source and ostree itself read: an http, https or file
// URL, a host name or IP address with a port from 1 to 65535, no
// credentials (they would be written to microshift.ks, installer.toml and
// the lock, and the message does not print them), no fragment, and
// nothing a kickstart argument cannot hold.
func CheckOSTreeURL(s string) error {
	if safetext.URLCredentials(s) {
		return fmt.Errorf("--ostree-url holds credentials (a user or password before @, or a query string), which microshift.ks (0644), installer.toml and compose.lock.json would carry: serve the repository to the installer without them, or install a bootc image (--bootc-image) whose registry credentials --pull-secret writes to 0600 files only (/etc/ostree/auth.json, /etc/crio/openshift-pull-secret)")
	}
	bad := fmt.Errorf("--ostree-url %q is not an http, https or file URL of an ostree repository", s)
	u, err := url.Parse(s)
	if err != nil || !argOK(s) || s != strings.TrimSpace(s) {
		return bad
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" || u.Path == "" {
			return fmt.Errorf("--ostree-url %q: a file URL names a local path, as in file:///run/install/repo", s)
		}
		return nil
	case "http", "https":
	default:
		return bad
	}
	host := u.Hostname()
	ipv6 := strings.HasPrefix(u.Host, "[")
	if ip := net.ParseIP(host); ip == nil && (ipv6 || !hostnamePattern.MatchString(host)) || ip != nil && ipv6 != (ip.To4() == nil) {
		return fmt.Errorf("--ostree-url %q: %q is not a host name or IP address", s, u.Host)
	}
	if strings.HasSuffix(u.Host, ":") || u.Port() != "" {
		if _, err := port(u.Port()); err != nil {
			return fmt.Errorf("--ostree-url %q: %v", s, err)
		}
	}
	return nil
}

// DevicePattern is a block device path as udev names them under /dev
// (/dev/vda, /dev/nvme0n1, /dev/disk/by-id/wwn-0x5000c500a1b2c3d4,
// /dev/disk/by-path/pci-0000:00:1f.2-ata-1, /dev/mapper/mpatha): the
// characters those names use and no other, so that the value stays one
// word of the installer's kernel command line (coreos.inst.install_dev=)
// and of anything else that reads it.
const DevicePattern = `^/dev/[A-Za-z0-9][A-Za-z0-9._:+-]*(?:/[A-Za-z0-9][A-Za-z0-9._:+-]*)*$`

var devicePattern = lazyregexp.New(DevicePattern)

// CheckInstallationDevice checks --installation-device: a device path,
// nothing else.
func CheckInstallationDevice(s string) error {
	if len(s) > safetext.MaxPath || !devicePattern.MatchString(s) || safetext.DevicePath(s) != nil {
		return fmt.Errorf("--installation-device %q is not a device path such as /dev/vda or /dev/disk/by-id/NAME (letters, digits and . _ : + - after /dev/)", s)
	}
	return nil
}
