package safetext

import (
	"encoding/json"
	"os/exec"
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/internal/text"
)

func TestDevicePath(t *testing.T) {
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"/etc/edge/agent.conf", true},
		{"/etc/edge/my agent.conf", true},
		{"/etc/edge/it's \"$HOME\".conf", true},
		{"/etc/ünïcode.conf", true},
		{"", false},
		{"etc/x", false},
		{"/etc//x", false},
		{"/etc/x/", false},
		{"/etc/../x", false},
		{"/", false},
		{"/etc/x\nRUN touch /tmp/p\n#", false},
		{"/etc/x\r", false},
		{"/etc/\x1b[31mx", false},
		{"/etc/\u202ex", false},
		{"/etc/x\u2028", false},
		{"/etc/\xff", false},
		{"/etc/*.conf", false},
		{"/etc/a?", false},
		{"/etc/[ab]", false},
		{`/etc/a\b`, false},
		{"/" + strings.Repeat("a", 256), false},
		{strings.Repeat("/aaaaaaaaa", 410), false},
	} {
		if err := DevicePath(tc.path); (err == nil) != tc.ok {
			t.Errorf("DevicePath(%q) = %v, want ok=%t", tc.path, err, tc.ok)
		}
	}
}

// TestShell runs sh on quoted hostile words: each must come back as one
// argument, unchanged (control characters escaped), and run nothing.
func TestShell(t *testing.T) {
	sh := testutil.NeedTool(t, "sh", "dash")
	for _, s := range []string{"plain-1.0", "a b", "it's", `"$(touch /tmp/p)"`, "`id`", "x; rm -rf /", "a\nb", "*", "~root", "$HOME", ""} {
		out, err := exec.Command(sh, "-c", "printf '%s|' "+Shell(s)).Output()
		if err != nil {
			t.Fatalf("sh with %s: %v", Shell(s), err)
		}
		want := strings.ReplaceAll(s, "\n", `\x0a`) + "|"
		if string(out) != want {
			t.Errorf("sh printed %q for Shell(%q) = %s, want %q", out, s, Shell(s), want)
		}
	}
}

func TestContainerfileArgs(t *testing.T) {
	if got := ContainerfileArgs("files/etc/a.conf", "/etc/a.conf"); got != "files/etc/a.conf /etc/a.conf" {
		t.Errorf("plain args = %s", got)
	}
	for _, args := range [][]string{
		{"files/etc/my agent.conf", "/etc/my agent.conf"},
		{"files/etc/x\nRUN touch /tmp/p\n#", "/etc/x\nRUN touch /tmp/p\n#"},
		{`files/etc/$HOME "q" 'q' \`, `/etc/$HOME "q" 'q' \`},
	} {
		got := ContainerfileArgs(args...)
		if strings.ContainsAny(got, "\n\r") {
			t.Fatalf("ContainerfileArgs(%q) = %q spans lines", args, got)
		}
		var back []string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Fatalf("ContainerfileArgs(%q) = %s is not a JSON array: %v", args, got, err)
		}
		for i := range args {
			if u := UnescapeContainerfileArg(back[i]); u != args[i] {
				t.Errorf("argument %d comes back as %q, want %q", i, u, args[i])
			}
			if strings.Contains(strings.ReplaceAll(back[i], `\$`, ""), "$") {
				t.Errorf("argument %d keeps an unescaped $: %q", i, back[i])
			}
		}
	}
}

// FuzzDevicePath: an accepted path is absolute, clean, printable and free
// of glob characters, whatever it is.
func FuzzDevicePath(f *testing.F) {
	for _, s := range []string{"/etc/a.conf", "/etc/x\nRUN id", "/etc/my file", "/", "/etc/*", "/etc/\u202e", "/etc/\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := DevicePath(p)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		if text.HasUnsafe(p) || !path.IsAbs(p) || path.Clean(p) != p || strings.ContainsAny(p, `*?[]\`) || p == "/" {
			t.Fatalf("DevicePath accepted %q", p)
		}
	})
}

// FuzzContainerfileArgs: whatever the arguments, the result is one line,
// and in the JSON form every argument comes back exactly (after the
// builder's unescaping) when it is valid UTF-8.
func FuzzContainerfileArgs(f *testing.F) {
	f.Add("files/etc/a", "/etc/a")
	f.Add("files/etc/x\nRUN id", "/etc/$HOME \"q\" 'q' \\")
	f.Add("a b", "\u202e")
	f.Fuzz(func(t *testing.T, src, dst string) {
		out := ContainerfileArgs(src, dst)
		if strings.ContainsAny(out, "\n\r") || text.HasUnsafe(out) {
			t.Fatalf("ContainerfileArgs(%q, %q) = %q is not one printable line", src, dst, out)
		}
		if !strings.HasPrefix(out, "[") {
			if out != src+" "+dst {
				t.Fatalf("plain form %q of %q %q", out, src, dst)
			}
			return
		}
		var back []string
		if err := json.Unmarshal([]byte(out), &back); err != nil || len(back) != 2 {
			t.Fatalf("JSON form %q does not parse as two arguments: %v", out, err)
		}
		for i, want := range []string{src, dst} {
			if !utf8.ValidString(want) || text.HasUnsafe(want) {
				continue // written escaped, as \uXXXX
			}
			if got := UnescapeContainerfileArg(back[i]); got != want {
				t.Fatalf("argument %d comes back as %q, want %q", i, got, want)
			}
		}
	})
}

// FuzzShell: a quoted word is the word itself (only safe characters) or
// one single-quoted string whose inner quotes are all written '\”, with
// nothing a shell would expand outside the quotes.
func FuzzShell(f *testing.F) {
	for _, s := range []string{"a", "a b", "it's", "$(id)", "`id`", "a\nb", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := Shell(s)
		if strings.ContainsAny(q, "\n\r") || text.HasUnsafe(q) {
			t.Fatalf("Shell(%q) = %q is not one printable line", s, q)
		}
		if shellSafe(s) {
			if q != s {
				t.Fatalf("Shell(%q) = %q, want it as is", s, q)
			}
			return
		}
		inner, ok := strings.CutPrefix(q, "'")
		if !ok || !strings.HasSuffix(inner, "'") {
			t.Fatalf("Shell(%q) = %q is not single-quoted", s, q)
		}
		inner = strings.TrimSuffix(inner, "'")
		if strings.Contains(strings.ReplaceAll(inner, `'\''`, ""), "'") {
			t.Fatalf("Shell(%q) = %q ends its quotes early", s, q)
		}
	})
}

func TestCredentials(t *testing.T) {
	digest := "sha256:" + strings.Repeat("a", 64)
	for _, tc := range []struct {
		in            string
		url, registry bool
	}{
		{"http://edge.example.com/repo", false, false},
		{"http://edge.example.com/a@b", false, false},
		{"http://user:pw@edge.example.com/repo", true, true},
		{"http://user@edge.example.com/repo", true, true},
		{"https://edge.example.com/repo?token=x", true, true},
		{"https://edge.example.com/repo?", true, true},
		{"http://user:p w@edge/repo", true, true}, // unparseable, still credentials
		{"quay.io/a/b:1", false, false},
		{"quay.io/a/b@" + digest, false, false},
		{"ubuntu@" + digest, true, false}, // not a URL: URLCredentials errs on the side of yes
		{"user:pw@quay.io/a/b:1", false, true},
		{"docker://user:pw@mirror.example.com:5000/ms", true, true},
		{"token@mirror.example.com", false, true},
		{"user:pw@quay.io/a/b@" + digest, false, true},
		{"mirror.example.com:5000/ms", false, false},
	} {
		if got := URLCredentials(tc.in); got != tc.url {
			t.Errorf("URLCredentials(%q) = %v, want %v", tc.in, got, tc.url)
		}
		if got := RegistryCredentials(tc.in); got != tc.registry {
			t.Errorf("RegistryCredentials(%q) = %v, want %v", tc.in, got, tc.registry)
		}
	}
}

// FuzzRegistryCredentials: a reference with an @ before its first / is
// taken for credentials unless a digest follows it.
func FuzzRegistryCredentials(f *testing.F) {
	for _, s := range []string{"user:pw@quay.io/a/b", "quay.io/a@sha256:" + strings.Repeat("0", 64), "a@b", "docker://u@h/p"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := RegistryCredentials(s)
		rest := strings.TrimPrefix(s, "docker://")
		if strings.Contains(rest, "://") {
			return
		}
		before, after, ok := strings.Cut(rest, "@")
		if ok && !strings.Contains(before, "/") && !got {
			// Only a digest may follow such an @.
			algo, hex, isDigest := strings.Cut(after, ":")
			if !isDigest || algo == "" || len(hex) < 32 || strings.Trim(hex, "0123456789abcdefABCDEF") != "" {
				t.Fatalf("RegistryCredentials(%q) = false", s)
			}
		}
		if !strings.Contains(rest, "@") && got {
			t.Fatalf("RegistryCredentials(%q) = true without an @", s)
		}
	})
}
