package kernelargs_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/microshift-compose/microshift-compose/internal/kernelargs"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want kernelargs.Arg
		err  string // "" for accepted
	}{
		{in: "quiet", want: kernelargs.Arg{Key: "quiet"}},
		{in: "console=ttyS0,115200n8", want: kernelargs.Arg{Key: "console", Value: "ttyS0,115200n8", HasValue: true}},
		{in: "rd.lvm.lv=rhel/root", want: kernelargs.Arg{Key: "rd.lvm.lv", Value: "rhel/root", HasValue: true}},
		{in: "ip=[fd00::2]::[fd00::1]:64::eth0:none", want: kernelargs.Arg{Key: "ip", Value: "[fd00::2]::[fd00::1]:64::eth0:none", HasValue: true}},
		{in: "crashkernel=1G-4G:192M,4G-64G:256M", want: kernelargs.Arg{Key: "crashkernel", Value: "1G-4G:192M,4G-64G:256M", HasValue: true}},
		{in: "audit=1", want: kernelargs.Arg{Key: "audit", Value: "1", HasValue: true}},
		{in: "empty=", want: kernelargs.Arg{Key: "empty", HasValue: true}},
		{in: "_underscore", want: kernelargs.Arg{Key: "_underscore"}},

		{in: "", err: "empty"},
		{in: "--", err: `"--" ends the kernel's arguments`},
		{in: "=value", err: "no key before '='"},
		{in: "-quiet", err: "a key starts with a letter"},
		{in: ".quiet", err: "a key starts with a letter"},
		{in: "a b", err: "a space in its key"},
		{in: "console=tty0 init=/bin/sh", err: "a space in its value"},
		{in: "quiet\ninit=/bin/sh", err: "a newline in its key"},
		{in: "a=b\r", err: "a carriage return in its value"},
		{in: "a=b\tc", err: "a tab in its value"},
		{in: `a="b c"`, err: "a quote in its value"},
		{in: `a='b'`, err: "a quote in its value"},
		{in: `a=b\`, err: "a backslash in its value"},
		{in: "a=$(reboot)", err: `the character "$" in its value`},
		{in: "a=`reboot`", err: "the character \"`\" in its value"},
		{in: "a=b#c", err: `the character "#" in its value`},
		{in: "a=b;reboot", err: `the character ";" in its value`},
		{in: "a=\u00a0", err: `the character "\u00a0" in its value`},
		{in: "a=\u2028init=/bin/sh", err: `the character "\u2028" in its value`},
		{in: "a=\x00", err: `the character "\x00" in its value`},
		{in: "a=" + strings.Repeat("x", kernelargs.MaxArg), err: "longer than 256 bytes"},
		{in: "init=/bin/sh", err: "init replaces systemd"},
		{in: "Init=/bin/sh", err: "Init replaces systemd"},
		{in: "rdinit=/bin/sh", err: "rdinit replaces"},
		{in: "rd.break", err: "rd.break stops the boot"},
		{in: "rd.break=pre-mount", err: "rd.break stops the boot"},
		{in: "systemd.unit=emergency.target", err: "systemd.unit boots into another target"},
		{in: "rd.systemd.unit=emergency.target", err: "rd.systemd.unit (systemd.unit for the initramfs) boots into another target"},
		{in: "systemd.debug-shell", err: "opens a root shell"},
		{in: "systemd.debug_shell=1", err: "opens a root shell"},
		{in: "single", err: "single-user mode"},
		{in: "S", err: "single-user mode"},
		{in: "emergency", err: "emergency shell"},
		{in: "root=/dev/sda1", err: "root is set for the deployment"},
		{in: "ostree=/ostree/boot.1/rhel/0", err: "written by ostree"},
		{in: "BOOT_IMAGE=/vmlinuz", err: "written by the bootloader"},
		{in: "fips=1", err: "fips is set by --fips"},
		{in: "fips=0", err: "fips is set by --fips"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := kernelargs.Parse(tc.in)
			if tc.err == "" {
				if err != nil || got != tc.want {
					t.Fatalf("Parse(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
				}
				if got.String() != tc.in {
					t.Errorf("Parse(%q).String() = %q", tc.in, got.String())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, kernelargs.ErrInvalid) {
				t.Fatalf("Parse(%q) = %+v, %v; want an ErrInvalid containing %q", tc.in, got, err, tc.err)
			}
			if strings.ContainsAny(err.Error(), "\n\r\u2028\x00") {
				t.Errorf("the message is not one line: %q", err)
			}
		})
	}
}

// TestRefusedByWhatTheyDo: an argument is refused for what it does, in
// every spelling the kernel and systemd read alike: systemd.NAME and the
// initramfs' rd.systemd.NAME, '-' or '_', any case; its neighbours that
// only tune the boot are taken.
func TestRefusedByWhatTheyDo(t *testing.T) {
	const (
		units = "the catalog and the plan decide the device's units, so no kernel argument chooses, adds, runs or masks them"
		shell = "no kernel argument opens a shell without a login"
	)
	for _, tc := range []struct {
		in   string
		want string // "" for accepted
	}{
		// What chooses, adds, runs or masks units, in both forms.
		{"systemd.unit=multi-user.target", "systemd.unit boots into another target than the default one"},
		{"rd.systemd.unit=emergency.target", "rd.systemd.unit (systemd.unit for the initramfs) boots into another target"},
		{"systemd.wants=sshd.service", "systemd.wants adds a unit to the boot: " + units},
		{"rd.systemd.wants=debug-shell.service", "rd.systemd.wants (systemd.wants for the initramfs) adds a unit to the boot: " + units},
		{"systemd.mask=microshift.service", "systemd.mask masks a unit for the boot: " + units},
		{"rd.systemd.mask=microshift.service", "rd.systemd.mask (systemd.mask for the initramfs) masks a unit"},
		{"rd.systemd.mask=crio.service", "masks a unit"},
		{"systemd.run=/usr/bin/true", "systemd.run boots into a command run as kernel-command-line.service"},
		{"rd.systemd.run=/usr/bin/true", "rd.systemd.run (systemd.run for the initramfs) boots into a command"},
		{"systemd.run_success_action=none", "systemd.run_success_action sets what the boot does"},
		{"systemd.run-failure-action=none", "systemd.run-failure-action sets what the boot does when systemd.run's command fails"},
		{"rd.systemd.run_failure_action=none", "(systemd.run_failure_action for the initramfs)"},
		{"systemd.confirm_spawn=1", "asks the console before starting each unit"},
		{"rd.systemd.confirm-spawn", "(systemd.confirm_spawn for the initramfs) asks the console"},
		{"systemd.mount-extra=/dev/sdb1:/var/lib/microshift", "systemd.mount-extra adds a mount unit"},
		{"rd.systemd.mount_extra=/dev/sdb1:/sysroot/var", "adds a mount unit"},
		{"systemd.swap-extra=/dev/sdb2", "adds a swap unit"},
		{"systemd.ssh_listen=0.0.0.0:2222", "adds a socket unit starting sshd"},
		{"init=/usr/lib/systemd/systemd", "init replaces systemd as the first process"},
		{"RdInit=/init", "RdInit replaces the initramfs' first process (init= for the initramfs)"},
		{"emergency", "emergency boots the emergency shell (emergency.target) instead of the image's default target: " + units},
		{"rd.emergency=reboot", "rd.emergency boots the initramfs into its emergency shell"},
		{"rescue", "rescue boots the rescue shell"},
		{"rd.rescue", "rd.rescue boots the initramfs' rescue shell"},
		{"2", "2 boots runlevel 2"},
		{"3", "3 boots runlevel 3"},
		{"5", "5 boots runlevel 5"},
		// What opens a shell, in both forms.
		{"systemd.debug_shell", "systemd.debug_shell opens a root shell on tty9 (or the tty it names): " + shell},
		{"rd.systemd.debug_shell", "rd.systemd.debug_shell (systemd.debug_shell for the initramfs) opens a root shell"},
		{"rd.systemd.debug-shell=tty1", "opens a root shell"},
		{"systemd.default_debug_tty=tty1", "chooses the tty of systemd.debug_shell's root shell"},
		{"rd.systemd.default-debug-tty=tty1", "(systemd.default_debug_tty for the initramfs)"},
		{"systemd.crash_shell", "opens a root shell when systemd crashes"},
		{"rd.systemd.crash-shell=1", "(systemd.crash_shell for the initramfs) opens a root shell when systemd crashes"},
		{"systemd.break=pre-switch-root", "stops the boot at a breakpoint with a shell"},
		{"rd.systemd.break=pre-udev", "(systemd.break for the initramfs) stops the boot"},
		{"rd.cmdline=ask", "asks the console for more kernel arguments"},
		// Case and '-' as '_', as now.
		{"SYSTEMD.MASK=microshift.service", "SYSTEMD.MASK masks a unit"},
		{"Rd.Systemd.Wants=x.service", "adds a unit"},

		// Neighbours that only tune the boot or a unit.
		{"systemd.log_level=debug", ""},
		{"rd.systemd.log_level=info", ""},
		{"systemd.log-target=console", ""},
		{"systemd.show_status=0", ""},
		{"systemd.setenv=LANG=C", ""},
		{"systemd.service_watchdogs=0", ""},
		{"systemd.crash_reboot", ""},
		{"systemd.getty_auto=0", ""},
		{"systemd.gpt_auto=0", ""},
		{"rd.systemd.gpt_auto=0", ""},
		{"systemd.units=x", ""},
		{"systemd.unit_x=1", ""},
		{"rd.lvm.lv=rhel/root", ""},
		{"rd.luks.uuid=luks-1234", ""},
		{"rd.neednet=1", ""},
		{"rd.udev.log_level=3", ""},
		{"rd.driver.blacklist=nouveau", ""},
		{"rd.debug", ""},
		{"rd.shellx", ""},
		{"systemd", ""},
		{"rd.systemd", ""},
		{"6", ""},
		{"debug", ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := kernelargs.Parse(tc.in)
			if tc.want == "" {
				if err != nil || got.String() != tc.in {
					t.Fatalf("Parse(%q) = %+v, %v; want it taken", tc.in, got, err)
				}
				return
			}
			if err == nil || !errors.Is(err, kernelargs.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse(%q) = %v; want an ErrInvalid saying %q", tc.in, err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), kernelargs.Flag+" ") {
				t.Errorf("the message does not name %s: %q", kernelargs.Flag, err)
			}
		})
	}
}

// TestRefusedTables: the tables hold names as the kernel compares them,
// and systemd's arguments only in the table that refuses both forms.
func TestRefusedTables(t *testing.T) {
	canonical := func(k string) bool { return k == strings.ToLower(strings.ReplaceAll(k, "-", "_")) }
	for k := range kernelargs.RefusedSystemd() {
		if !canonical(k) || strings.Contains(k, ".") {
			t.Errorf("systemd argument %q: want the name after \"systemd.\", lower case, '_' for '-'", k)
		}
		for _, form := range []string{"systemd." + k, "rd.systemd." + k} {
			if _, ok := kernelargs.Refused(form); !ok {
				t.Errorf("%s is not refused", form)
			}
		}
	}
	for k := range kernelargs.RefusedKeys() {
		if !canonical(k) {
			t.Errorf("key %q: want lower case, '_' for '-'", k)
		}
		if strings.HasPrefix(k, "systemd.") || strings.HasPrefix(k, "rd.systemd.") {
			t.Errorf("key %q belongs in the systemd table, which refuses its twin too", k)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		err  string
	}{
		{"none", nil, ""},
		{"several", []string{"quiet", "console=tty0", "console=ttyS0,115200", "audit=1"}, ""},
		{"a repeatable key", []string{"ip=eth0:dhcp", "ip=eth1:dhcp", "rd.lvm.lv=rhel/root", "rd.lvm.lv=rhel/swap"}, ""},
		{"a duplicate", []string{"quiet", "audit=1", "quiet"}, `"quiet": invalid kernel argument: given twice`},
		{"a duplicate of a repeatable key", []string{"console=tty0", "console=tty0"}, "given twice"},
		{"two values", []string{"audit=1", "audit=0"}, `"audit=0": invalid kernel argument: conflicts with --karg "audit=1": the kernel reads audit once`},
		{"dash and underscore are one name", []string{"audit_backlog_limit=8192", "audit-backlog-limit=1024"}, "conflicts with --karg \"audit_backlog_limit=8192\""},
		{"a flag and a value", []string{"nosmt", "nosmt=force"}, "conflicts with"},
		{"a repeatable flag and value", []string{"console", "console=tty0"}, "conflicts with"},
		{"a bad one among good ones", []string{"quiet", "init=/bin/sh"}, "init replaces systemd"},
		{"too long in all", []string{"a=" + strings.Repeat("x", 253), "b=" + strings.Repeat("x", 253), "c=" + strings.Repeat("x", 253), "d=" + strings.Repeat("x", 253), "e=x"}, "more than 1024 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := kernelargs.Check(tc.in)
			if tc.err == "" {
				if err != nil || len(got) != len(tc.in) {
					t.Fatalf("Check(%q) = %v, %v", tc.in, got, err)
				}
				if cl := kernelargs.CommandLine(got); cl != strings.Join(tc.in, " ") {
					t.Errorf("CommandLine = %q", cl)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Check(%q) = %v; want an error containing %q", tc.in, err, tc.err)
			}
		})
	}
}

// FuzzCheck: whatever the arguments, Check either refuses them with one
// line, or accepts arguments that every reader takes as the same list: the
// command line splits at its spaces (the kernel's rule) back into them, and
// none holds a character a writer would have to quote: a shell's, a TOML
// string's, or shlex's (pykickstart reads bootloader --append="..." with
// it; the installer tests run ksvalidator on the kickstart).
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"quiet", "console=ttyS0,115200n8", "init=/bin/sh", "a b", "a=\"b c\"", "fips=1", "x=$(id)", "a\nb", "ip=[::1]", "rd.systemd.mask=microshift.service", "systemd.run=x", "rd.systemd.debug-shell", "systemd.log_level=debug", "rd.lvm.lv=rhel/root"} {
		f.Add(s, "audit=1")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		// Twins and spellings are decided alike: an argument is refused
		// for what it does, not for how it is written.
		for _, s := range []string{a, b} {
			key, _, _ := strings.Cut(s, "=")
			if strings.IndexFunc(key, func(r rune) bool { return r > unicode.MaxASCII }) >= 0 {
				continue // no key of the kernel's: Parse refuses it for its characters
			}
			name := strings.ToLower(strings.ReplaceAll(key, "-", "_"))
			_, refused := kernelargs.Refused(name)
			for _, other := range spellings(key) {
				if _, r := kernelargs.Refused(strings.ToLower(strings.ReplaceAll(other, "-", "_"))); r != refused {
					t.Fatalf("%q refused %v, but its spelling %q refused %v", key, refused, other, r)
				}
			}
			if refused {
				if _, err := kernelargs.Parse(s); err == nil {
					t.Fatalf("Parse(%q) took a refused key", s)
				}
			}
		}
		args, err := kernelargs.Check([]string{a, b})
		if err != nil {
			if !errors.Is(err, kernelargs.ErrInvalid) {
				t.Fatalf("Check(%q, %q) = %v, not ErrInvalid", a, b, err)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("Check(%q, %q): message on more than one line: %q", a, b, err)
			}
			return
		}
		cl := kernelargs.CommandLine(args)
		if got := strings.Fields(cl); len(got) != 2 || got[0] != a || got[1] != b {
			t.Fatalf("Check(%q, %q) accepted arguments whose command line %q splits into %q", a, b, cl, got)
		}
		for _, r := range cl {
			if r > unicode.MaxASCII || unicode.IsControl(r) || strings.ContainsRune("\"'\\$`#;&|<>(){}*?!", r) {
				t.Fatalf("Check(%q, %q) accepted %q", a, b, r)
			}
		}
	})
}

// spellings are the other ways to write key that the kernel and systemd
// read as the same argument, or as its twin: '-' for '_' and the reverse,
// upper case, and systemd.NAME for rd.systemd.NAME and the reverse.
func spellings(key string) []string {
	out := []string{strings.ReplaceAll(key, "_", "-"), strings.ReplaceAll(key, "-", "_"), strings.ToUpper(key)}
	lower := strings.ToLower(key)
	switch {
	case strings.HasPrefix(lower, "rd.systemd."):
		out = append(out, key[len("rd."):])
	case strings.HasPrefix(lower, "systemd."):
		out = append(out, "rd."+key)
	}
	return out
}

// FuzzPattern: Pattern (with MaxArg) takes exactly what Safe takes, the
// characters Parse takes, so that the composition file's schema refuses
// what --karg refuses for its characters and nothing else.
func FuzzPattern(f *testing.F) {
	for _, s := range []string{"quiet", "console=ttyS0,115200n8", "ip=[::1]", "a=b=c", "_x", "-x", ".x", "--", "", "a b", "a=\"b\"", "x=$(id)", "a\nb", "é=1", "rd.lvm.lv=rhel/root", "k=%~^@+", "=v", strings.Repeat("a", kernelargs.MaxArg+1)} {
		f.Add(s)
	}
	pattern := regexp.MustCompile(kernelargs.Pattern)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := pattern.MatchString(s) && len(s) <= kernelargs.MaxArg, kernelargs.Safe(s); got != want {
			t.Fatalf("Pattern matches %q: %v; Safe: %v", s, got, want)
		}
	})
}
