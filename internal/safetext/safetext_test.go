package safetext

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
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
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
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
