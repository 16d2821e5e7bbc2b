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
// or non-ASCII character). Arguments that take the boot away from MicroShift
// (init=, rd.break, systemd.unit=...) or that the bootloader, ostree or
// --fips own are refused by name. It does not decide where arguments go.
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

// reserved are the keys (compared as the kernel does, '-' as '_') a user
// may not set, and why; built on first use (package initialisation stays
// within its budget).
var reserved = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"init":                "replaces systemd as the first process, so the device would never start MicroShift (and is how a kernel command line hands out a root shell)",
		"rdinit":              "replaces the initramfs' first process, so the device would never boot its deployment",
		"rd.break":            "stops the boot in an initramfs shell",
		"rd.shell":            "drops the boot to an initramfs shell on failure instead of failing it",
		"rd.emergency":        "sends a failing boot to an emergency shell",
		"emergency":           "boots into the emergency shell, not the device's services",
		"rescue":              "boots into the rescue shell, not the device's services",
		"single":              "boots into single-user mode, not the device's services",
		"s":                   "boots into single-user mode, not the device's services",
		"1":                   "boots into single-user mode, not the device's services",
		"systemd.unit":        "boots into another target than the device's services, so MicroShift never starts and greenboot rolls the update back",
		"systemd.debug_shell": "opens a root shell on tty9 without a login",
		"root":                "is set for the deployment by the installer and the bootloader",
		"rootflags":           "is set for the deployment by the installer and the bootloader",
		"rootfstype":          "is set for the deployment by the installer and the bootloader",
		"ro":                  "is set for the deployment by ostree and bootc",
		"rw":                  "is set for the deployment by ostree and bootc",
		"ostree":              "names the deployment ostree boots and is written by ostree itself",
		"boot_image":          "is written by the bootloader",
		"initrd":              "is written by the bootloader",
		"fips":                "is set by --fips, which also sets the FIPS crypto policy the kernel argument alone does not",
	}
})

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
	if why, ok := reserved()[strings.ToLower(a.name())]; ok {
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
