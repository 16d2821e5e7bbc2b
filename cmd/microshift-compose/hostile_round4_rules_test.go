package main

import (
	"fmt"
	"strings"
)

// Round four of the hostile suite, the rules' part (issue 34): a rule
// decided by what a value does, not by a list of its spellings, and one
// rule behind both doors of an option, its flag and its composition-file
// key.
//
//   - hardening/karg-twins: a kernel argument that chooses, adds, runs or
//     masks units or opens a shell is refused in its systemd.* form and in
//     the initramfs' rd.systemd.* form alike, whatever its case and '-' or
//     '_', from --karg and from kernel_args.
//   - rules/two-doors: a path holding a control character, an empty string
//     and a zero duration are refused the same way from a flag (every path
//     flag of the commands that take a composition file) and from the
//     file's key, and --print-file prints nothing -f would refuse.
func round4RulesCases() []hostileCase {
	var cases []hostileCase
	for _, k := range []struct{ arg, want string }{
		{"rd.systemd.unit=emergency.target", "rd.systemd.unit (systemd.unit for the initramfs) boots into another target"},
		{"systemd.wants=sshd.service", "systemd.wants adds a unit to the boot"},
		{"rd.systemd.wants=debug-shell.service", "rd.systemd.wants (systemd.wants for the initramfs) adds a unit"},
		{"systemd.mask=microshift.service", "systemd.mask masks a unit for the boot"},
		{"rd.systemd.mask=microshift.service", "rd.systemd.mask (systemd.mask for the initramfs) masks a unit"},
		{"SYSTEMD.MASK=crio.service", "SYSTEMD.MASK masks a unit"},
		{"systemd.run=/usr/bin/true", "systemd.run boots into a command"},
		{"rd.systemd.run=/usr/bin/true", "(systemd.run for the initramfs) boots into a command"},
		{"systemd.run_success_action=none", "sets what the boot does when systemd.run's command succeeds"},
		{"rd.systemd.run-failure-action=none", "(systemd.run_failure_action for the initramfs)"},
		{"systemd.confirm_spawn=1", "asks the console before starting each unit"},
		{"systemd.mount-extra=/dev/sdb1:/var/lib/microshift", "adds a mount unit"},
		{"rd.systemd.debug_shell", "(systemd.debug_shell for the initramfs) opens a root shell"},
		{"rd.systemd.debug-shell=tty1", "opens a root shell"},
		{"systemd.default_debug_tty=tty1", "chooses the tty of systemd.debug_shell's root shell"},
		{"rd.systemd.default_debug_tty=tty1", "(systemd.default_debug_tty for the initramfs)"},
		{"systemd.crash_shell", "opens a root shell when systemd crashes"},
		{"rd.systemd.break=pre-udev", "stops the boot at a breakpoint with a shell"},
		{"rd.rescue", "rd.rescue boots the initramfs' rescue shell"},
		{"rd.emergency=reboot", "rd.emergency boots the initramfs into its emergency shell"},
		{"3", "3 boots runlevel 3"},
		{"rd.cmdline=ask", "asks the console for more kernel arguments"},
	} {
		cases = append(cases, hostileCase{class: "hardening/karg-twins", name: "--karg " + k.arg,
			setup: func(h *hostileEnv) ([]string, string) { return build(h, "--karg", k.arg), "--karg" },
			want:  k.want, code: exitUsage})
	}
	cases = append(cases,
		hostileCase{class: "hardening/karg-twins", name: "kernel_args with rd.systemd.mask",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.write("device.toml", "kernel_args = ['quiet', 'rd.systemd.mask=microshift.service']\n")
				return build(h, "-f", p), "--karg"
			}, want: "rd.systemd.mask (systemd.mask for the initramfs) masks a unit", code: exitUsage},
		hostileCase{class: "hardening/karg-twins", name: "matrix --emit with rd.systemd.unit",
			setup: func(h *hostileEnv) ([]string, string) {
				return []string{"matrix", "--profile", "minimal", "--arch", "x86_64", "--emit", "github", "--karg", "rd.systemd.unit=rescue.target"}, "--karg"
			}, want: "boots into another target", code: exitUsage},
		hostileCase{class: "hardening/karg-twins", name: "--print-file with rd.systemd.debug_shell",
			setup: func(h *hostileEnv) ([]string, string) {
				return build(h, "--karg", "rd.systemd.debug_shell", "--print-file"), "--karg"
			}, want: "opens a root shell", code: exitUsage},
	)

	const control = "holds a control character, which no path given to microshift-compose may hold"
	// Every path flag of the commands that take a composition file, keyed
	// or not, with a control character: refused before anything else is
	// checked (the flags it needs beside it included).
	for _, c := range []struct {
		flag string
		args func(h *hostileEnv, p string) []string
	}{
		{"--catalog", func(h *hostileEnv, p string) []string { return build(h, "--catalog", p) }},
		{"--release-dir", func(h *hostileEnv, p string) []string { return build(h, "--release-dir", p) }},
		{"--config", func(h *hostileEnv, p string) []string { return build(h, "--config", p) }},
		{"--lvmd", func(h *hostileEnv, p string) []string { return build(h, "--lvmd", p) }},
		{"--pull-secret", func(h *hostileEnv, p string) []string { return build(h, "--pull-secret", p) }},
		{"--mirror-ca", func(h *hostileEnv, p string) []string { return build(h, "--mirror-ca", p) }},
		{"--policy", func(h *hostileEnv, p string) []string { return build(h, "--policy", p) }},
		{"--verify-key", func(h *hostileEnv, p string) []string { return build(h, "--verify-key", p) }},
		{"--fulcio-ca", func(h *hostileEnv, p string) []string { return build(h, "--fulcio-ca", p) }},
		{"--rekor-key", func(h *hostileEnv, p string) []string { return build(h, "--rekor-key", p) }},
		{"--ca-roots", func(h *hostileEnv, p string) []string { return build(h, "--ca-roots", p) }},
		{"--ca-intermediates", func(h *hostileEnv, p string) []string { return build(h, "--ca-intermediates", p) }},
		{"--ssh-key", func(h *hostileEnv, p string) []string { return build(h, "--ssh-key", p) }},
		{"--ca-trust", func(h *hostileEnv, p string) []string { return build(h, "--ca-trust", p) }},
		{"--upgrade-from", func(h *hostileEnv, p string) []string { return build(h, "--upgrade-from", p) }},
		{"--output", func(h *hostileEnv, p string) []string {
			return []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", p}
		}},
		{"--file", func(h *hostileEnv, p string) []string { return build(h, "-f", p) }},
		{"--authfile", func(h *hostileEnv, p string) []string { return build(h, "--resolve-sizes", "--authfile", p) }},
		{"--registries-conf", func(h *hostileEnv, p string) []string { return build(h, "--registries-conf", p) }},
		{"--cert-dir", func(h *hostileEnv, p string) []string { return build(h, "--cert-dir", p) }},
		{"--sign-key", func(h *hostileEnv, p string) []string { return build(h, "--sign-key", p) }},
		{"resolve --config", func(h *hostileEnv, p string) []string {
			return []string{"resolve", "--profile", "minimal", "--arch", "x86_64", "--config", p}
		}},
		{"images --lvmd", func(h *hostileEnv, p string) []string {
			return []string{"images", "--profile", "minimal", "--arch", "x86_64", "--lvmd", p}
		}},
		{"matrix --release-dir", func(h *hostileEnv, p string) []string {
			return []string{"matrix", "--profile", "minimal", "--arch", "x86_64", "--release-dir", h.releaseDir("rel"), "--release-dir", p, "--output", h.path("cells")}
		}},
		{"matrix --output", func(h *hostileEnv, p string) []string {
			return []string{"matrix", "--profile", "minimal", "--arch", "x86_64", "--output", p}
		}},
		{"mirror --lock", func(h *hostileEnv, p string) []string {
			return []string{"mirror", "--lock", p, "--to", "oci:" + h.path("layout")}
		}},
		{"mirror --to", func(h *hostileEnv, p string) []string {
			return []string{"mirror", "--profile", "minimal", "--arch", "x86_64", "--to", "oci:" + p}
		}},
		{"mirror --from", func(h *hostileEnv, p string) []string {
			return []string{"mirror", "--profile", "minimal", "--arch", "x86_64", "--from", "oci:" + p, "--to", "oci:" + h.path("layout")}
		}},
	} {
		flag := strings.Fields(c.flag)[len(strings.Fields(c.flag))-1]
		for _, v := range []struct{ name, rel string }{{"a newline", "conf\nRUN touch /tmp/p\n#"}, {"an escape sequence", "a\x1b[2Jb"}} {
			cases = append(cases, hostileCase{class: "rules/two-doors", name: c.flag + " with " + v.name,
				setup: func(h *hostileEnv) ([]string, string) { return c.args(h, h.path(v.rel)), flag + ": path" },
				want:  control, code: exitUsage})
		}
	}
	// The same paths as composition-file keys: refused with the file, the
	// line and the key.
	for _, k := range []struct{ key, toml string }{
		{"microshift.config", "[microshift]\nconfig = \"conf\\nRUN touch /tmp/p\\n#.yaml\"\n"},
		{"registry.pull_secret", "[registry]\npull_secret = \"ps\\u001b[2J.json\"\n"},
		{"trust.keys", "[trust]\nkeys = [\"key\\t.pub\"]\n"},
		{"catalog", "catalog = \"cat\\u2028alog\"\n"},
		{"output.dir", "[output]\ndir = \"out\\r\"\n"},
	} {
		cases = append(cases, hostileCase{class: "rules/two-doors", name: "composition file key " + k.key + " with a control character",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.write("device.toml", k.toml)
				return build(h, "-f", p), p + ": line "
			}, want: fmt.Sprintf("key %q: path ", k.key)})
	}
	// An empty string or a zero duration chooses nothing: refused from
	// the flag and from the key alike.
	for _, z := range []struct{ flag, value, toml, key, want string }{
		{"--cis", "", "cis = ''\n", "cis", "is empty, which chooses nothing"},
		{"--release", "", "release = ''\n", "release", "is empty, which chooses nothing"},
		{"--distro", "", "distro = ''\n", "distro", "is empty, which chooses nothing"},
		{"--bootc-images", "", "bootc.enabled = true\nbootc.images = ''\n", "bootc.images", "is empty, which chooses nothing"},
		{"--mirror-registry", "", "registry.mirror = ''\n", "registry.mirror", "is empty, which chooses nothing"},
		{"--health-check-timeout", "0s", "health_checks.timeout = '0s'\n", "health_checks.timeout", `must be positive, got "0s"`},
		{"--plugin-timeout", "0s", "plugin_timeout = '0s'\n", "plugin_timeout", `must be positive, got "0s"`},
		{"--health-check-timeout", "-1m", "health_checks.timeout = '-1m'\n", "health_checks.timeout", `must be positive, got "-1m"`},
	} {
		cases = append(cases,
			hostileCase{class: "rules/two-doors", name: fmt.Sprintf("%s %q", z.flag, z.value),
				setup: func(h *hostileEnv) ([]string, string) { return build(h, z.flag, z.value), z.flag + " " },
				want:  z.want, code: exitUsage},
			hostileCase{class: "rules/two-doors", name: fmt.Sprintf("composition file %s", strings.TrimSpace(strings.ReplaceAll(z.toml, "\n", "; "))),
				setup: func(h *hostileEnv) ([]string, string) {
					p := h.write("device.toml", z.toml)
					return build(h, "-f", p), fmt.Sprintf("%s: key %q (%s) ", p, z.key, z.flag)
				}, want: z.want},
		)
	}
	cases = append(cases,
		hostileCase{class: "rules/two-doors", name: "profiles = [] in build's file",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.write("device.toml", "profiles = []\n")
				return []string{"build", "-f", p, "--arch", "x86_64", "--output", h.out}, p + `: key "profile" (--profile)`
			}, want: "is empty, which chooses nothing"},
		hostileCase{class: "rules/two-doors", name: "profile = '' in matrix's file",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.write("device.toml", "profile = ''\n")
				return []string{"matrix", "-f", p, "--arch", "x86_64", "--output", h.path("cells")}, "--profile"
			}, want: "no profile given", code: exitUsage},
		hostileCase{class: "rules/two-doors", name: "a storage class name with a comma",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.write("device.toml", "[[microshift.storage_classes]]\ndevice_class = 'thin'\nname = 'fast,fstype=ext4'\n")
				return build(h, "-f", p), p + ": microshift.storage_classes[0]"
			}, want: `name "fast,fstype=ext4" holds ',' or '='`},
	)
	// --print-file prints nothing -f or the build would refuse.
	for _, p := range []struct {
		name        string
		args        func(h *hostileEnv) []string
		names, want string
		code        int
	}{
		{"a --config with a newline", func(h *hostileEnv) []string {
			return []string{"build", "--profile", "minimal", "--config", h.write("conf\n#.yaml", "{}\n"), "--print-file"}
		}, "--config: path", control, exitUsage},
		{"a --config that does not exist", func(h *hostileEnv) []string {
			return []string{"build", "--profile", "minimal", "--config", h.path("missing.yaml"), "--print-file"}
		}, `the file --print-file prints: line 5: key "microshift.config"`, "does not exist", 0},
		{"a --release-dir that is a file", func(h *hostileEnv) []string {
			return []string{"build", "--profile", "minimal", "--release-dir", h.write("release.json", "{}\n"), "--print-file"}
		}, `key "release_dir"`, "is not a directory", 0},
		{"--plugin-timeout -1m", func(h *hostileEnv) []string {
			return []string{"build", "--profile", "minimal", "--plugin-timeout", "-1m", "--print-file"}
		}, "--plugin-timeout", "must be positive", exitUsage},
		{"--release that is no constraint", func(h *hostileEnv) []string {
			return []string{"build", "--profile", "minimal", "--release", ">>4.18", "--print-file"}
		}, "--release", "invalid semver constraint", exitUsage},
		{"--sbom-format that is no format", func(h *hostileEnv) []string {
			return []string{"build", "--profile", "minimal", "--sbom-format", "swid", "--print-file"}
		}, "--sbom-format", "unknown format", exitUsage},
		{"two --filesystem for one mount point", func(h *hostileEnv) []string {
			return []string{"build", "--profile", "minimal", "--filesystem", "/=20GiB", "--filesystem", "/=30GiB", "--print-file"}
		}, "--filesystem", "", exitUsage},
		{"--output with an unknown placeholder", func(h *hostileEnv) []string {
			return []string{"build", "--profile", "minimal", "--output", "out/{nope}", "--print-file"}
		}, "{nope}", "", exitUsage},
		{"matrix --karg init=", func(h *hostileEnv) []string {
			return []string{"matrix", "--profile", "minimal", "--karg", "init=/bin/sh", "--print-file"}
		}, "--karg", "init replaces systemd", exitUsage},
		{"matrix --arch sparc", func(h *hostileEnv) []string {
			return []string{"matrix", "--profile", "minimal", "--arch", "sparc", "--print-file"}
		}, "--arch", "", exitUsage},
		{"matrix --storage-class without --lvmd", func(h *hostileEnv) []string {
			return []string{"matrix", "--profile", "minimal", "--storage-class", "thin", "--print-file"}
		}, "--storage-class", "add --lvmd", exitUsage},
	} {
		cases = append(cases, hostileCase{class: "rules/two-doors", name: "--print-file with " + p.name,
			setup: func(h *hostileEnv) ([]string, string) { return p.args(h), p.names },
			want:  p.want, code: p.code})
	}
	return cases
}
