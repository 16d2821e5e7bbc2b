// Package safetext is the one rule for values that reach the text the
// tool generates (blueprint.toml, the Containerfile's instructions and
// shell lines, config comments, kustomization lists): a value is first
// checked (DevicePath), then quoted by the generator for the syntax it
// lands in (Shell, ContainerfileArgs, Comment), so that no value, however
// hostile, can change the structure of what is written: add a line, an
// instruction, a command or a key. It generates nothing itself.
package safetext

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/internal/text"
)

// Device path limits: what Linux allows.
const (
	MaxPath     = 4096
	MaxPathName = 255
)

// globChars are the characters COPY treats as a pattern in a source and
// that cannot be escaped portably across builders.
const globChars = `*?[]\`

// DevicePath checks a path a file gets on the device: absolute and clean
// (written as path.Clean writes it: no "//", "." or ".." and no trailing
// "/"), valid UTF-8, without control, format or line-separator characters,
// without the glob characters * ? [ ] and backslash (COPY sources are
// patterns), at most MaxPath bytes and MaxPathName per name. Spaces,
// quotes and $ are allowed: the generators quote them.
//
// Errors are phrased to follow "path %q": "must be absolute and clean".
func DevicePath(p string) error {
	switch {
	case p == "":
		return errors.New("is empty")
	case !utf8.ValidString(p):
		return errors.New("is not valid UTF-8")
	case text.HasUnsafe(p):
		return errors.New("contains a control character (a newline, tab, escape or similar)")
	case !path.IsAbs(p):
		return errors.New("must be absolute and clean")
	case path.Clean(p) != p:
		return fmt.Errorf("must be absolute and clean (write %q)", path.Clean(p))
	case p == "/":
		return errors.New("is the root directory, not a file")
	case strings.ContainsAny(p, globChars):
		return errors.New(`contains one of * ? [ ] \ (COPY would read it as a pattern)`)
	case len(p) > MaxPath:
		return fmt.Errorf("is longer than %d bytes", MaxPath)
	}
	for _, name := range strings.Split(p[1:], "/") {
		if len(name) > MaxPathName {
			return fmt.Errorf("has a name longer than %d bytes", MaxPathName)
		}
	}
	return nil
}

// shellSafe reports whether s needs no quoting in sh or in a
// Containerfile word.
func shellSafe(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.+/=:,@%", r)) {
			return false
		}
	}
	return true
}

// Shell quotes s as one sh word: as is when it holds only characters the
// shell gives no meaning to, else in single quotes. Control characters
// are escaped first (text.Escape), so the word stays on its line.
func Shell(s string) string {
	if shellSafe(s) {
		return s
	}
	s = text.Escape(s)
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ContainerfileArgs renders the arguments of a COPY (or ADD) instruction,
// after its flags: plain words when every argument is made of safe
// characters, else the JSON array form, each argument with the
// characters a builder would interpret ($ for variables, quotes and the
// backslash) escaped by a backslash. JSON escapes any control character,
// so the instruction stays one line whatever an argument holds.
func ContainerfileArgs(args ...string) string {
	plain := true
	for _, a := range args {
		if !shellSafe(a) {
			plain = false
		}
	}
	if plain {
		return strings.Join(args, " ")
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		var b strings.Builder
		for _, r := range a {
			if strings.ContainsRune(`\$'"`, r) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		quoted[i] = jsonString(b.String())
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// jsonString writes s as a JSON string with every character text.Escape
// would escape written as \uXXXX (JSON itself escapes only C0 controls),
// so that a bidi override or a line separator is visible as an escape.
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == utf8.RuneError || text.HasUnsafe(string(r)):
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// UnescapeContainerfileArg reverses ContainerfileArgs' escaping of one
// JSON-form argument, as a builder's word expansion does: a backslash
// makes the next character literal. Tests use it to check a round trip.
func UnescapeContainerfileArg(s string) string {
	var b strings.Builder
	escaped := false
	for _, r := range s {
		if !escaped && r == '\\' {
			escaped = true
			continue
		}
		escaped = false
		b.WriteRune(r)
	}
	return b.String()
}

// Comment makes s safe inside a one-line comment ("# ..."): control
// characters, a newline included, are escaped.
func Comment(s string) string { return text.Escape(s) }

// digestPattern is what follows the @ of a digest reference: an
// algorithm and its hex.
var digestPattern = lazyregexp.New(`^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[0-9a-fA-F]{32,}$`)

// URLCredentials reports whether a URL carries credentials: a user (with
// or without a password) before an @ in its authority, or a query string
// (where access tokens ride). It errs on the side of yes for a URL it
// cannot parse but whose authority holds an @. Callers refuse such a
// value without printing it.
func URLCredentials(s string) bool {
	if u, err := url.Parse(s); err == nil {
		return u.User != nil || u.RawQuery != "" || u.ForceQuery
	}
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		rest = s
	}
	authority, _, _ := strings.Cut(rest, "/")
	return strings.Contains(authority, "@") || strings.Contains(s, "?")
}

// RegistryCredentials reports whether a registry reference
// (REGISTRY/REPOSITORY[:TAG][@DIGEST] or REGISTRY[/PREFIX], with or
// without docker://) carries credentials as user:password@ before its
// registry: an @ before the first / that no digest follows. Callers refuse
// such a value without printing it.
func RegistryCredentials(s string) bool {
	s = strings.TrimPrefix(s, "docker://")
	if strings.Contains(s, "://") {
		return URLCredentials(s)
	}
	before, after, ok := strings.Cut(s, "@")
	return ok && !strings.Contains(before, "/") && !digestPattern.MatchString(after)
}
