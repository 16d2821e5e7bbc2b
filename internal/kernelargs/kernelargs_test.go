package kernelargs_test

import (
	"errors"
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
	for _, s := range []string{"quiet", "console=ttyS0,115200n8", "init=/bin/sh", "a b", "a=\"b c\"", "fips=1", "x=$(id)", "a\nb", "ip=[::1]"} {
		f.Add(s, "audit=1")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
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
