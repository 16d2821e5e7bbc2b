package main

import (
	"path/filepath"
	"strings"
)

// installerHostileCases: issue 25 round three, the installer's classes.
// Credentials in a URL or reference are refused, naming the auth file way,
// without printing them (the planted token is the password: the suite
// checks it reaches no output and not stderr); values that reach a
// kernel command line are device paths only; what the kickstart's and
// bootc-image-builder's readers would refuse is refused at build.
func installerHostileCases() []hostileCase {
	lockOf := func(h *hostileEnv) string { return filepath.Join(h.out, "compose.lock.json") }
	kickstart := func(h *hostileEnv, extra ...string) []string {
		return build(h, append([]string{"--kickstart"}, extra...)...)
	}
	simplified := func(h *hostileEnv, device string) []string {
		return build(h, "--image-type", "edge-simplified-installer", "--ostree-url", "http://edge.example.com/repo", "--installation-device", device)
	}
	keyFile := func(h *hostileEnv, comment string) string {
		return h.write("admin.pub", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGb8dV7c1JHoBOC6kKQsdwITvRoX0uF9mPcQVkIDTmcv admin@example.com\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGb8dV7c1JHoBOC6kKQsdwITvRoX0uF9mPcQVkIDTmcv "+comment+"\n")
	}
	const credentials = "holds credentials"
	var cases []hostileCase
	for _, u := range []struct{ name, url string }{
		{"a user and password", "http://admin:%s@edge.example.com/repo"},
		{"a token as the user", "https://%s@edge.example.com/repo"},
		{"a token in the query", "https://edge.example.com/repo?access_token=%s"},
		{"a password and a port out of range", "http://admin:%s@edge.example.com:99999/repo"},
		{"a password and a space (no URL at all)", "http://admin:%s@edge.example.com/a b"},
		{"a password on a file URL", "file://admin:%s@/run/install/repo"},
	} {
		cases = append(cases,
			hostileCase{class: "credentials/url", name: "--kickstart --ostree-url with " + u.name,
				setup: func(h *hostileEnv) ([]string, string) {
					return kickstart(h, "--ostree-url", strings.Replace(u.url, "%s", h.token, 1)), "--ostree-url"
				}, want: credentials, code: exitUsage},
			hostileCase{class: "credentials/url", name: "--image-type edge-installer --ostree-url with " + u.name,
				setup: func(h *hostileEnv) ([]string, string) {
					return build(h, "--image-type", "edge-installer", "--ostree-url", strings.Replace(u.url, "%s", h.token, 1)), "--ostree-url"
				}, want: credentials, code: exitUsage},
		)
	}
	cases = append(cases,
		hostileCase{class: "credentials/url", name: "--ostree-url credentials name the pull secret way",
			setup: func(h *hostileEnv) ([]string, string) {
				return kickstart(h, "--ostree-url", "http://admin:"+h.token+"@edge.example.com/repo"), "--pull-secret"
			}, want: "0600", code: exitUsage},
		hostileCase{class: "credentials/url", name: "--bootc-image with a user and password",
			setup: func(h *hostileEnv) ([]string, string) {
				return build(h, "--bootc", "--kickstart", "--bootc-image", "admin:"+h.token+"@quay.io/example/microshift:4.19"), "--bootc-image"
			}, want: credentials, code: exitUsage},
		hostileCase{class: "credentials/url", name: "--bootc-base with a user and password",
			setup: func(h *hostileEnv) ([]string, string) {
				return build(h, "--bootc", "--bootc-base", "admin:"+h.token+"@registry.redhat.io/rhel9/rhel-bootc:9.6"), "--bootc-base"
			}, want: credentials, code: exitUsage},
		hostileCase{class: "credentials/url", name: "--mirror-registry with a user and password",
			setup: func(h *hostileEnv) ([]string, string) {
				return build(h, "--mirror-registry", "admin:"+h.token+"@mirror.example.com:5000/ms"), "--mirror-registry"
			}, want: credentials},
		hostileCase{class: "credentials/url", name: "mirror --to docker:// with a user and password",
			setup: func(h *hostileEnv) ([]string, string) {
				return []string{"mirror", "--lock", lockOf(h), "--to", "docker://admin:" + h.token + "@mirror.example.com:5000/ms"}, "--to"
			}, want: credentials, code: exitUsage},
	)

	for name, dev := range map[string]string{
		"a kernel argument after a space": "/dev/vda init=/bin/sh",
		"a kernel argument after a tab":   "/dev/vda\tinit=/bin/sh",
		"a newline":                       "/dev/vda\nrd.break",
		"a double quote":                  `/dev/vda" init=/bin/sh "`,
		"a shell separator":               "/dev/disk/by-id/x;reboot",
		"a command substitution":          "/dev/vda$(reboot)",
		"an equals sign":                  "/dev/vda=init",
		"a line separator":                "/dev/vda\u2028init=/bin/sh",
		"a no-break space":                "/dev/vda\u00a0init=/bin/sh",
		"a path out of /dev":              "/dev/../etc/shadow",
		"no /dev":                         "/etc/vda",
	} {
		cases = append(cases, hostileCase{class: "injection/kernel-cmdline", name: "--installation-device with " + name,
			setup: func(h *hostileEnv) ([]string, string) { return simplified(h, dev), "--installation-device" },
			want:  "is not a device path", code: exitUsage})
	}

	for name, comment := range map[string]string{
		"U+2028 (line separator)":      "a\u2028b",
		"U+2029 (paragraph separator)": "a\u2029b",
		"U+0085 (next line)":           "a\u0085b",
		"invalid UTF-8":                "a\xff\xfeb",
		"an escape sequence":           "a\x1b[2Jb",
		"a vertical tab":               "a\x0bb",
	} {
		cases = append(cases, hostileCase{class: "readers/kickstart", name: "--ssh-key with a comment holding " + name,
			setup: func(h *hostileEnv) ([]string, string) {
				p := keyFile(h, comment)
				return kickstart(h, "--ostree-url", "http://edge.example.com/repo", "--user", "admin", "--ssh-key", p), p
			}, want: "line 2 holds a control, format or line-separator character"})
	}
	for _, port := range []string{"99999", "65536", "0", "", "08080", "x"} {
		cases = append(cases, hostileCase{class: "readers/kickstart", name: "--ostree-url with port " + port,
			setup: func(h *hostileEnv) ([]string, string) {
				return kickstart(h, "--ostree-url", "http://edge.example.com:"+port+"/repo"), "--ostree-url"
			}, code: exitUsage})
	}
	cases = append(cases,
		hostileCase{class: "readers/kickstart", name: "--ostree-url with a host no resolver reads",
			setup: func(h *hostileEnv) ([]string, string) {
				return kickstart(h, "--ostree-url", "http://edge_.example.com/repo"), "--ostree-url"
			}, want: "is not a host name or IP address", code: exitUsage},
		hostileCase{class: "readers/kickstart", name: "--filesystem whose volume name lvcreate refuses",
			setup: func(h *hostileEnv) ([]string, string) {
				return kickstart(h, "--ostree-url", "http://edge.example.com/repo", "--filesystem", "/var/lib/x_tmeta=1GiB"), "--filesystem"
			}, want: "holds _tmeta, which LVM reserves"},
		hostileCase{class: "readers/kickstart", name: "--filesystem /usr",
			setup: func(h *hostileEnv) ([]string, string) {
				return kickstart(h, "--ostree-url", "http://edge.example.com/repo", "--filesystem", "/usr=5GiB"), "--filesystem"
			}, want: "read-only image"},
		hostileCase{class: "readers/bootc-image-builder", name: "--bib --filesystem outside /var",
			setup: func(h *hostileEnv) ([]string, string) {
				return build(h, "--bootc", "--bib", "--filesystem", "/data=1GiB"), "--filesystem"
			}, want: "directories below /var only"},
		hostileCase{class: "readers/bootc-image-builder", name: "--bib --filesystem /var itself",
			setup: func(h *hostileEnv) ([]string, string) {
				return build(h, "--bootc", "--bib", "--filesystem", "/var=10GiB"), "--filesystem"
			}, want: "directories below /var only"},
		hostileCase{class: "readers/bootc-image-builder", name: "--bib --filesystem with a + (osbuild cannot name its mount unit)",
			setup: func(h *hostileEnv) ([]string, string) {
				return build(h, "--bootc", "--bib", "--filesystem", "/var/a+b=1GiB"), "--filesystem"
			}, want: "holds a character", code: exitUsage},
		hostileCase{class: "readers/bootc-image-builder", name: "--disk-size leaving LVMS nothing",
			setup: func(h *hostileEnv) ([]string, string) {
				return build(h, "--bootc", "--bib", "--filesystem", "/=30GiB", "--disk-size", "31GiB"), "--disk-size"
			}, want: "leaves LVMS less than 1 GiB"},
	)
	return cases
}
