package main

import "strings"

// hardeningHostileCases: issue 28's --fips, --karg and --cis. A kernel
// argument reaches the installer's command line (bootloader --append), a
// bootc kargs.d TOML string and the blueprint's kernel.append: anything a
// reader would split, quote, expand or take as another argument is
// refused before any output, as are arguments that take the boot from
// MicroShift; so are a CIS profile the distro lacks and FIPS where
// MicroShift is not tested in FIPS mode.
func hardeningHostileCases() []hostileCase {
	kickstart := func(h *hostileEnv, extra ...string) []string {
		return build(h, append([]string{"--kickstart", "--ostree-url", "http://edge.example.com/repo"}, extra...)...)
	}
	var cases []hostileCase
	for _, k := range []struct{ name, arg, want string }{
		{"a newline and a kickstart section", "quiet\n%post\nreboot\n%end", "a newline in its key"},
		{"a newline in a value", "console=tty0\ninit=/bin/sh", "a newline in its value"},
		{"a carriage return", "quiet\rinit=/bin/sh", "a carriage return in its key"},
		{"a space and a second argument", "console=tty0 init=/bin/sh", "a space in its value"},
		{"a tab", "console=tty0\tinit=/bin/sh", "a tab in its value"},
		{"a double quote ending --append", `quiet" --location=none "`, "a quote in its key"},
		{"a single quote", "a='b'", "a quote in its value"},
		{"a backslash", `a=b\`, "a backslash in its value"},
		{"a command substitution", "a=$(reboot)", `the character "$" in its value`},
		{"backquotes", "a=`reboot`", "the character \"`\" in its value"},
		{"a shell separator", "a=b;reboot", `the character ";" in its value`},
		{"a TOML comment", "a=b#c", `the character "#" in its value`},
		{"a line separator", "a=b\u2028init=/bin/sh", `the character "\u2028" in its value`},
		{"a no-break space", "a=b\u00a0init=/bin/sh", `the character "\u00a0" in its value`},
		{"invalid UTF-8", "a=\xff\xfe", "in its value"},
		{"an escape sequence", "a=\x1b[2J", `in its value`},
		{"nothing", "", "empty"},
		{"the end of the kernel's arguments", "--", `"--" ends the kernel's arguments`},
		{"a leading dash", "-quiet", "a key starts with a letter"},
		{"init=", "init=/bin/sh", "init replaces systemd"},
		{"rd.break", "rd.break", "rd.break stops the boot"},
		{"systemd.unit=", "systemd.unit=emergency.target", "systemd.unit boots into another target"},
		{"the debug shell", "systemd.debug-shell=1", "opens a root shell"},
		{"root=", "root=/dev/sda1", "root is set for the deployment"},
		{"fips=1 (belongs to --fips)", "fips=1", "fips is set by --fips"},
		{"fips=0 beside --fips", "fips=0", "fips is set by --fips"},
		{"an overlong value", "a=" + strings.Repeat("x", 300), "longer than 256 bytes"},
	} {
		cases = append(cases, hostileCase{class: "injection/kernel-cmdline", name: "--karg with " + k.name,
			setup: func(h *hostileEnv) ([]string, string) { return kickstart(h, "--karg", k.arg), "--karg" },
			want:  k.want, code: exitUsage})
	}
	cases = append(cases,
		hostileCase{class: "injection/kernel-cmdline", name: "--karg given twice",
			setup: func(h *hostileEnv) ([]string, string) {
				return kickstart(h, "--karg", "quiet", "--karg", "quiet"), "--karg"
			},
			want: "given twice", code: exitUsage},
		hostileCase{class: "injection/kernel-cmdline", name: "--karg with two values of one key",
			setup: func(h *hostileEnv) ([]string, string) {
				return kickstart(h, "--karg", "audit=1", "--karg", "audit=0"), "--karg"
			}, want: `conflicts with --karg "audit=1"`, code: exitUsage},
		hostileCase{class: "injection/kernel-cmdline", name: "--karg with dash and underscore spellings of one key",
			setup: func(h *hostileEnv) ([]string, string) {
				return kickstart(h, "--karg", "audit_backlog_limit=1", "--karg", "audit-backlog-limit=2"), "--karg"
			}, want: "conflicts with", code: exitUsage},
		hostileCase{class: "injection/kernel-cmdline", name: "--karg that no output takes",
			setup: func(h *hostileEnv) ([]string, string) { return build(h, "--karg", "quiet"), "--karg" },
			want:  "no output takes kernel arguments"},
		hostileCase{class: "injection/kernel-cmdline", name: "--karg through matrix --emit with a space",
			setup: func(h *hostileEnv) ([]string, string) {
				return []string{"matrix", "--profile", "minimal", "--arch", "x86_64", "--emit", "github", "--karg", "a b"}, "--karg"
			}, want: "a space in its key", code: exitUsage},
	)
	for _, c := range []struct{ name, value, want string }{
		{"a newline", "level2\nlevel1", "is not a CIS profile"},
		{"a shell separator", "cis;reboot", "is not a CIS profile"},
		{"a path", "../../../etc/shadow", "is not a CIS profile"},
		{"another benchmark", "stig", "is not a CIS profile"},
		{"a level CIS does not have", "level3", "is not a CIS profile"},
		{"an escape sequence", "cis\x1b[2J", "is not a CIS profile"},
	} {
		cases = append(cases, hostileCase{class: "hardening/cis", name: "--cis with " + c.name,
			setup: func(h *hostileEnv) ([]string, string) {
				return build(h, "--image-type", "qcow2", "--cis", c.value), "--cis"
			},
			want: c.want, code: exitUsage})
	}
	cases = append(cases,
		hostileCase{class: "hardening/cis", name: "--cis with a CIS profile the distro lacks",
			setup: func(h *hostileEnv) ([]string, string) {
				return build(h, "--image-type", "qcow2", "--cis", "cis_server_l3"), "--cis"
			}, want: "has no OpenSCAP profile xccdf_org.ssgproject.content_profile_cis_server_l3"},
		hostileCase{class: "hardening/cis", name: "--cis on an ostree commit",
			setup: func(h *hostileEnv) ([]string, string) { return build(h, "--cis", "level2"), "--cis" },
			want:  "cannot run OpenSCAP remediation"},
		hostileCase{class: "hardening/cis", name: "--cis with --bootc",
			setup: func(h *hostileEnv) ([]string, string) {
				return build(h, "--image-type", "qcow2", "--bootc", "--cis", "level2"), "--cis"
			}, want: "cannot be remediated with OpenSCAP"},
		hostileCase{class: "hardening/fips", name: "--fips on aarch64",
			setup: func(h *hostileEnv) ([]string, string) {
				return []string{"build", "--profile", "minimal", "--arch", "aarch64", "--output", h.out, "--fips"}, "--fips"
			}, want: "runs in FIPS mode on x86_64 only, not aarch64"},
		hostileCase{class: "hardening/fips", name: "--fips --bootc on 4.18",
			setup: func(h *hostileEnv) ([]string, string) {
				return build(h, "--release", "4.18", "--with", "networking-ovnk", "--bootc", "--fips"), "--fips"
			}, want: "cannot run in FIPS mode from a bootc image"},
		hostileCase{class: "hardening/fips", name: "--fips before upstream tests it",
			setup: func(h *hostileEnv) ([]string, string) {
				return build(h, "--release", "4.14", "--profile", "full", "--fips"), "--fips"
			}, want: "upstream tests MicroShift in FIPS mode from 4.15"},
	)
	return cases
}
