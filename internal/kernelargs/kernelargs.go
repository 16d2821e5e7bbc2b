// Package kernelargs checks the kernel arguments a user asks the device to
// boot with (build --karg) and joins them into a kernel command line.
//
// The same arguments reach four writers that quote differently or not at
// all: an osbuild blueprint (customizations.kernel.append, which osbuild
// passes on as written), bootc's kargs.d TOML (one argument per string), a
// kickstart (bootloader --append="...", read by pykickstart with shlex) and
// the kernel's own parser. So an argument is refused unless it means the
// same to all of them: one key, or key=value, of characters that none of
// them quotes, splits or expands (no space, quote, backslash, $, #, control
// or non-ASCII character).
//
// Arguments are also refused for what they do, whatever their spelling:
// one that decides the boot's units (chooses the target or the first
// process, adds, runs or masks units, or asks the console which to start)
// or opens a shell without a login is refused, because the catalog and the
// plan decide the device's services; and so is one that the bootloader,
// ostree, the installer or --fips set. systemd in the initramfs reads the
// same arguments as rd.systemd.*: every systemd.* argument refused is
// refused as its rd.systemd.* twin too (and rdinit= as init='s,
// rd.emergency and rd.rescue as emergency's and rescue's). Keys are
// compared as the kernel and systemd compare them ('-' and '_' are one
// character) and without regard to case. Arguments that only tune a unit
// or the boot (systemd.log_level, rd.lvm.lv, systemd.setenv...) are taken.
// It does not decide where arguments go.
package kernelargs

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/microshift-compose/microshift-compose/internal/text"
)

// Flag is how messages name the option that gives arguments.
const Flag = "--karg"

// MaxArg bounds one argument and MaxTotal all of them joined: x86's kernel
// command line holds 2048 bytes (COMMAND_LINE_SIZE), and the bootloader,
// ostree and the platform need their share of it.
const (
	MaxArg   = 256
	MaxTotal = 1024
)

// Pattern is what Safe takes, as a regular expression (for the composition
// file's schema, which adds MaxArg): a key of keyChar's characters not
// starting with '-' or '.', and a value of valueChar's after '='.
const Pattern = `^[A-Za-z0-9_][A-Za-z0-9_.-]*(=[A-Za-z0-9_.,:/=+@%~^\[\]-]*)?$`

// Arg is one kernel argument: a key, and a value after '=' when it has one.
type Arg struct {
	Key      string
	Value    string
	HasValue bool
}

func (a Arg) String() string {
	if a.HasValue {
		return a.Key + "=" + a.Value
	}
	return a.Key
}

// name is the key as the kernel compares parameter names: a dash and an
// underscore are the same character (kernel/params.c, parameq).
func (a Arg) name() string { return strings.ReplaceAll(a.Key, "-", "_") }

// ErrInvalid is wrapped by every refusal of Parse and Check.
var ErrInvalid = errors.New("invalid kernel argument")

// keyChar and valueChar are the characters an argument may hold: those of
// kernel parameter names (letters, digits, '_', '-', '.'), and in values
// also what device paths, consoles, addresses and lists use
// (console=ttyS0,115200n8, ip=[fd00::2]::[fd00::1]:64::eth0:none,
// rd.lvm.lv=rhel/root, isolcpus=1-3). Nothing a shell, a TOML string or
// shlex treats specially.
func keyChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.'
}

func valueChar(r rune) bool {
	return keyChar(r) || strings.ContainsRune(",:/=+@%~^[]", r)
}

// The rules an argument is refused by, ending its message.
const (
	unitsRule = "the catalog and the plan decide the device's units, so no kernel argument chooses, adds, runs or masks them"
	shellRule = "no kernel argument opens a shell without a login"
	ownedRule = ""
)

// refusal is why an argument is refused: what it does, and the rule.
type refusal struct{ does, rule string }

func (r refusal) String() string {
	if r.rule == "" {
		return r.does
	}
	return r.does + ": " + r.rule
}

// refusedSystemd are systemd's arguments refused (systemd(1),
// systemd-debug-generator(8), systemd-run-generator(8),
// systemd-fstab-generator(8), systemd-ssh-generator(8)), by the name after
// "systemd.", '-' written '_'. Each is refused as systemd.NAME, which
// systemd reads in the main system, and as rd.systemd.NAME, which it reads
// in the initramfs.
var refusedSystemd = sync.OnceValue(func() map[string]refusal {
	return map[string]refusal{
		"unit":               {"boots into another target than the default one, so MicroShift never starts and greenboot rolls the update back", unitsRule},
		"wants":              {"adds a unit to the boot", unitsRule},
		"mask":               {"masks a unit for the boot", unitsRule},
		"run":                {"boots into a command run as kernel-command-line.service, which ends the boot when the command exits", unitsRule},
		"run_success_action": {"sets what the boot does when systemd.run's command succeeds", unitsRule},
		"run_failure_action": {"sets what the boot does when systemd.run's command fails", unitsRule},
		"confirm_spawn":      {"asks the console before starting each unit", unitsRule},
		"mount_extra":        {"adds a mount unit to the boot", unitsRule},
		"swap_extra":         {"adds a swap unit to the boot", unitsRule},
		"ssh_listen":         {"adds a socket unit starting sshd on an address", unitsRule},
		"debug_shell":        {"opens a root shell on tty9 (or the tty it names)", shellRule},
		"default_debug_tty":  {"chooses the tty of systemd.debug_shell's root shell", shellRule},
		"crash_shell":        {"opens a root shell when systemd crashes", shellRule},
		"break":              {"stops the boot at a breakpoint with a shell", shellRule},
	}
})

// refusedKeys are the other keys refused, compared as the kernel does
// ('-' as '_', lower case).
var refusedKeys = sync.OnceValue(func() map[string]refusal {
	target := func(t string) refusal {
		return refusal{"boots " + t + " instead of the image's default target", unitsRule}
	}
	owned := func(by string) refusal { return refusal{"is set " + by, ownedRule} }
	return map[string]refusal{
		"init":         {"replaces systemd as the first process, so the device would never start MicroShift (and is how a kernel command line hands out a root shell)", unitsRule},
		"rdinit":       {"replaces the initramfs' first process (init= for the initramfs), so the device would never boot its deployment", unitsRule},
		"emergency":    target("the emergency shell (emergency.target)"),
		"rd.emergency": {"boots the initramfs into its emergency shell (systemd) or chooses what a failing one does (dracut)", unitsRule},
		"rescue":       target("the rescue shell (rescue.target)"),
		"rd.rescue":    target("the initramfs' rescue shell (rescue.target)"),
		"single":       target("single-user mode (rescue.target)"),
		"s":            target("single-user mode (rescue.target)"),
		"1":            target("runlevel 1 (rescue.target)"),
		"2":            target("runlevel 2 (runlevel2.target)"),
		"3":            target("runlevel 3 (runlevel3.target)"),
		"4":            target("runlevel 4 (runlevel4.target)"),
		"5":            target("runlevel 5 (runlevel5.target)"),
		"rd.break":     {"stops the boot in an initramfs shell", shellRule},
		"rd.shell":     {"drops a failing boot to an initramfs shell instead of failing it", shellRule},
		"rd.cmdline":   {"asks the console for more kernel arguments", shellRule},
		"root":         owned("for the deployment by the installer and the bootloader"),
		"rootflags":    owned("for the deployment by the installer and the bootloader"),
		"rootfstype":   owned("for the deployment by the installer and the bootloader"),
		"ro":           owned("for the deployment by ostree and bootc"),
		"rw":           owned("for the deployment by ostree and bootc"),
		"ostree":       {"names the deployment ostree boots and is written by ostree itself", ownedRule},
		"boot_image":   {"is written by the bootloader", ownedRule},
		"initrd":       {"is written by the bootloader", ownedRule},
		"fips":         owned("by --fips, which also sets the FIPS crypto policy the kernel argument alone does not"),
	}
})

// refused says why a key (as the kernel compares it: '-' as '_', lower
// case) is refused, if it is: a systemd argument in either of its forms,
// or another refused key.
func refused(name string) (string, bool) {
	if r, ok := refusedKeys()[name]; ok {
		return r.String(), true
	}
	if rest, ok := strings.CutPrefix(name, "rd.systemd."); ok {
		if r, ok := refusedSystemd()[rest]; ok {
			return "(systemd." + rest + " for the initramfs) " + r.String(), true
		}
	}
	if rest, ok := strings.CutPrefix(name, "systemd."); ok {
		if r, ok := refusedSystemd()[rest]; ok {
			return r.String(), true
		}
	}
	return "", false
}

// repeatable are the keys the kernel or dracut reads every occurrence of:
// one of them may be given with several values.
var repeatable = []string{"console", "ip", "nameserver", "rd.lvm.lv", "rd.lvm.vg", "rd.luks.uuid", "rd.luks.name", "rd.md.uuid", "rd.driver.blacklist", "rd.driver.pre", "rd.driver.post"}

// Parse checks one argument and splits it at its first '='.
func Parse(s string) (Arg, error) {
	bad := func(why string, args ...any) (Arg, error) {
		return Arg{}, fmt.Errorf("%s %s: %w: %s", Flag, text.QuoteExcerpt(s), ErrInvalid, fmt.Sprintf(why, args...))
	}
	switch {
	case s == "":
		return bad("empty")
	case s == "--":
		return bad("\"--\" ends the kernel's arguments and hands what follows to init")
	case len(s) > MaxArg:
		return bad("longer than %d bytes", MaxArg)
	}
	key, value, hasValue := strings.Cut(s, "=")
	a := Arg{Key: key, Value: value, HasValue: hasValue}
	for i, r := range key {
		if !keyChar(r) {
			return bad("%s in its key: one argument is a key (letters, digits, _ - .) or key=value, without spaces, quotes, backslashes, $ or control characters, each its own %s", describe(r), Flag)
		}
		if i == 0 && (r == '-' || r == '.') {
			return bad("a key starts with a letter, a digit or _")
		}
	}
	if key == "" {
		return bad("no key before '='")
	}
	for _, r := range value {
		if !valueChar(r) {
			return bad("%s in its value: values may hold letters, digits and _ - . , : / = + @ %% ~ ^ [ ] only, which every reader of a kernel command line (the kernel, the bootloader, bootc's kargs.d, the kickstart) takes as they are; give one argument per %s", describe(r), Flag)
		}
	}
	if why, ok := refused(strings.ToLower(a.name())); ok {
		return bad("%s %s", key, why)
	}
	return a, nil
}

// Safe reports whether s is a kernel argument a writer may put on a
// command line as it is: a key, or key=value, of the characters Parse
// takes, whatever the key (fips=1 included). Writers check what they are
// given with it, whoever checked it before.
func Safe(s string) bool {
	if s == "" || s == "--" || len(s) > MaxArg {
		return false
	}
	key, value, _ := strings.Cut(s, "=")
	if key == "" || key[0] == '-' || key[0] == '.' {
		return false
	}
	for _, r := range key {
		if !keyChar(r) {
			return false
		}
	}
	for _, r := range value {
		if !valueChar(r) {
			return false
		}
	}
	return true
}

// describe names a refused character for a message, escaped.
func describe(r rune) string {
	switch r {
	case ' ':
		return "a space"
	case '\t':
		return "a tab"
	case '\n':
		return "a newline"
	case '\r':
		return "a carriage return"
	case '"', '\'':
		return "a quote"
	case '\\':
		return "a backslash"
	}
	return "the character " + text.QuoteExcerpt(string(r))
}

// Check parses every argument and refuses an argument given twice, a key
// given with two values (a flag and a value, or two values of a key the
// kernel reads once: "the last wins" is no way to configure a device), and
// more than MaxTotal bytes in all.
func Check(args []string) ([]Arg, error) {
	var out []Arg
	seen := map[string]Arg{}
	total := 0
	for _, s := range args {
		a, err := Parse(s)
		if err != nil {
			return nil, err
		}
		total += len(s) + 1
		if total-1 > MaxTotal {
			return nil, fmt.Errorf("%s: %w: the arguments take more than %d bytes of the kernel command line, which the bootloader, ostree and the platform share", Flag, ErrInvalid, MaxTotal)
		}
		name := a.name()
		for _, prev := range out {
			if prev.String() == a.String() {
				return nil, fmt.Errorf("%s %s: %w: given twice", Flag, text.QuoteExcerpt(s), ErrInvalid)
			}
		}
		if prev, ok := seen[name]; ok && !slices.Contains(repeatable, name) {
			return nil, fmt.Errorf("%s %s: %w: conflicts with %s %s: the kernel reads %s once; give one of them", Flag, text.QuoteExcerpt(s), ErrInvalid, Flag, text.QuoteExcerpt(prev.String()), a.Key)
		} else if ok && prev.HasValue != a.HasValue {
			return nil, fmt.Errorf("%s %s: %w: conflicts with %s %s", Flag, text.QuoteExcerpt(s), ErrInvalid, Flag, text.QuoteExcerpt(prev.String()))
		}
		seen[name] = a
		out = append(out, a)
	}
	return out, nil
}

// CommandLine joins checked arguments with spaces, as a kernel command line
// holds them: no argument needs quoting (Parse refuses what would).
func CommandLine(args []Arg) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.String()
	}
	return strings.Join(parts, " ")
}
