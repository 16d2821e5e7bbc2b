package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// complete asks cobra's __complete command, as the shells do, and returns
// the completions (descriptions cut off) and the directive line.
func complete(t *testing.T, dir string, args ...string) (values []string, directive string) {
	t.Helper()
	if dir != "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chdir(dir); err != nil {
			t.Fatal(err)
		}
		defer os.Chdir(wd)
	}
	out, stderr, code := runCLI(t, append([]string{"__complete"}, args...)...)
	if code != exitOK {
		t.Fatalf("__complete %q: exit %d, stderr %q", args, code, stderr)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, ":") { // the directive number
			continue
		}
		v, _, _ := strings.Cut(l, "\t")
		values = append(values, v)
	}
	return values, strings.TrimSpace(stderr)
}

// TestValueCompletion: the flags with a fixed set of values complete them;
// --to and --from complete the transports, then the path after one;
// --with/--without offer only what the chosen release (any of a matrix's)
// and --arch ship; a matrix's --release is a list that may be "all".
func TestValueCompletion(t *testing.T) {
	work := t.TempDir()
	for _, d := range []string{"layouts/one", "layouts/two", ".hidden"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(work, "layouts", "images.tar"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args         []string
		want, reject []string
		exact        bool
		noSpace      bool
	}{
		{args: []string{"build", "--bootc", "--bootc-images", ""}, want: []string{"mirror", "pull"}, exact: true},
		{args: []string{"matrix", "--emit", ""}, want: []string{"github", "tekton"}, exact: true},
		{args: []string{"build", "--format", ""}, want: []string{"text", "json"}, exact: true},
		{args: []string{"images", "--profile", "full", "-o", ""}, want: []string{"text", "json"}, exact: true},
		{args: []string{"release", "list", "--output", ""}, want: []string{"text", "json"}, exact: true},
		{args: []string{"mirror", "--to", ""}, want: []string{"oci:", "dir:", "oci-archive:", "docker://"}, exact: true, noSpace: true},
		{args: []string{"mirror", "--from", ""}, want: []string{"oci:", "dir:", "oci-archive:"}, exact: true, noSpace: true},
		{args: []string{"mirror", "--to", "oci:lay"}, want: []string{"oci:layouts/"}, exact: true, noSpace: true},
		{args: []string{"mirror", "--to", "dir:layouts/"}, want: []string{"dir:layouts/one/", "dir:layouts/two/"}, exact: true, noSpace: true},
		{args: []string{"mirror", "--to", "oci-archive:layouts/"}, want: []string{"oci-archive:layouts/images.tar", "oci-archive:layouts/one/", "oci-archive:layouts/two/"}, exact: true, noSpace: true},
		{args: []string{"mirror", "--from", "oci:"}, want: []string{"oci:layouts/"}, reject: []string{"oci:.hidden/"}, noSpace: true},
		{args: []string{"build", "--release", "4.18", "--with", ""}, want: []string{"olm", "multus", "gateway-api"}, reject: []string{"cert-manager", "ai-model-serving", "sriov"}},
		{args: []string{"build", "--release", "5.0", "--with", "multus,"}, want: []string{"multus,cert-manager", "multus,sriov"}, reject: []string{"multus,multus"}},
		{args: []string{"build", "--release", "5.0", "--arch", "aarch64", "--with", ""}, want: []string{"olm"}, reject: []string{"ai-model-serving"}},
		{args: []string{"build", "--release-dir", testutil.ReleaseDir(t, "release-4.16"), "--without", ""}, want: []string{"multus"}, reject: []string{"gateway-api"}},
		{args: []string{"matrix", "--release", "4.18,5.0", "--with", ""}, want: []string{"cert-manager", "gateway-api"}},
		{args: []string{"matrix", "--release", "4.19,"}, want: []string{"4.19,5.0", "4.19,all"}, reject: []string{"4.19,4.19"}},
		{args: []string{"build", "--release", ""}, want: []string{"5.0", "4.14"}, reject: []string{"all"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, directive := complete(t, work, tc.args...)
			if tc.exact && !slices.Equal(got, tc.want) {
				t.Errorf("completions %q, want %q", got, tc.want)
			}
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("no completion %q in %q", w, got)
				}
			}
			for _, r := range tc.reject {
				if slices.Contains(got, r) {
					t.Errorf("completion %q offered in %q", r, got)
				}
			}
			if strings.Contains(directive, "ShellCompDirectiveNoSpace") != tc.noSpace {
				t.Errorf("directive %q, want NoSpace %v", directive, tc.noSpace)
			}
		})
	}
}

// TestBashCompletion drives the script `completion bash` writes in a real
// bash with the bash-completion package, as a TAB does: a comma list
// completes its last item (cobra's own script, which bash 5.2's printf %q
// breaks, does not), the values of the other flags complete, and without
// bash-completion the script fails, as the README's Install says.
func TestBashCompletion(t *testing.T) {
	bashBin := testutil.NeedTool(t, "bash", "bash")
	const bashCompletion = "/usr/share/bash-completion/bash_completion"
	if _, err := os.Stat(bashCompletion); err != nil {
		msg := "no " + bashCompletion + ": install the bash-completion package (make test-deps)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	bin := e2eBinary(t)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ours, stderr, code := runCLI(t, "completion", "bash")
	if code != exitOK || stderr != "" {
		t.Fatalf("completion bash: exit %d, %q", code, stderr)
	}
	plain, _, _ := runCLI(t, "completion", "bash", "--no-descriptions")
	var stock bytes.Buffer
	if err := newRootCmd(nil, nil).GenBashCompletionV2(&stock, true); err != nil {
		t.Fatal(err)
	}
	scripts := map[string]string{"ours": write("ours.bash", []byte(ours)), "plain": write("plain.bash", []byte(plain)), "cobra": write("cobra.bash", stock.Bytes())}
	// tab completes line as a TAB at its end does (COMP_TYPE 9): the words
	// split as readline splits them, the function the script registered.
	harness := write("tab.bash", []byte(`script=$1 line=$2
[ "$WITH_BASH_COMPLETION" = 1 ] && source `+bashCompletion+`
source "$script"
compopt() { :; }  # only works inside a real completion
COMP_LINE=$line COMP_POINT=${#line} COMP_TYPE=9 COLUMNS=200
read -ra COMP_WORDS <<<"$line"
[[ $line == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
__start_microshift-compose
printf '%s\n' "${COMPREPLY[@]}"
`))
	tab := func(script, line string, withBashCompletion bool) (string, string) {
		t.Helper()
		cmd := exec.Command(bashBin, harness, scripts[script], line)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + filepath.Dir(bin) + ":/usr/bin:/bin", "HOME=" + dir, "WITH_BASH_COMPLETION=0"}
		if withBashCompletion {
			cmd.Env[2] = "WITH_BASH_COMPLETION=1"
		}
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil && withBashCompletion {
			t.Fatalf("bash %s %q: %v\n%s", script, line, err, errOut.String())
		}
		return strings.TrimSpace(out.String()), errOut.String()
	}
	for _, tc := range []struct{ script, line, want string }{
		{"ours", "microshift-compose build --with multus,ce", "multus,cert-manager"},
		{"plain", "microshift-compose build --with multus,ce", "multus,cert-manager"},
		{"ours", "microshift-compose resolve --without networking-ovnk,storage-l", "networking-ovnk,storage-lvms"},
		{"ours", "microshift-compose matrix --arch x86_64,a", "x86_64,aarch64"},
		{"ours", "microshift-compose matrix --emit t", "tekton"},
		{"ours", "microshift-compose build --bootc-images p", "pull"},
		{"ours", "microshift-compose build --format j", "json"},
		{"ours", "microshift-compose build --release 4.18 --with cert", ""},
		// cobra's own script: bash 5.2's %q writes multus\,cert-manager,
		// which does not start with what was typed.
		{"cobra", "microshift-compose build --with multus,ce", ""},
	} {
		got, errOut := tab(tc.script, tc.line, true)
		if got != tc.want {
			t.Errorf("%s: TAB after %q = %q, want %q (stderr %q)", tc.script, tc.line, got, tc.want, errOut)
		}
	}
	if got, errOut := tab("ours", "microshift-compose build --with multus,ce", false); got != "" || !strings.Contains(errOut, "_get_comp_words_by_ref: command not found") {
		t.Errorf("without bash-completion: %q, stderr %q; want the missing _get_comp_words_by_ref", got, errOut)
	}
}

// completionsDir is where TestCompletionScripts writes the shell
// completions for the release archives and packages (make completions,
// make release-assets: one test binary writes them and the man pages, so
// that a release links the command once for both).
var completionsDir = flag.String("completions-dir", "", "write the bash, zsh and fish completion scripts into this directory (make completions)")

// completionScripts are the release's completion files: what
// `microshift-compose completion SHELL` prints, under the names
// .goreleaser.yaml installs.
var completionScripts = []struct {
	shell, file, marker string
}{
	{"bash", "microshift-compose.bash", "complete -o default -F __start_microshift-compose microshift-compose"},
	{"zsh", "_microshift-compose", "#compdef microshift-compose"},
	{"fish", "microshift-compose.fish", "complete -c microshift-compose "},
}

// TestCompletionScripts writes each shell's completion script (with
// -completions-dir, into that directory) as `microshift-compose
// completion SHELL` prints it, and checks that each registers the
// completion of microshift-compose with its shell; TestBashCompletion
// drives the bash one.
func TestCompletionScripts(t *testing.T) {
	dir := assetDir(t, *completionsDir)
	for _, c := range completionScripts {
		out, stderr, code := runCLI(t, "completion", c.shell)
		if code != exitOK || stderr != "" {
			t.Fatalf("completion %s: exit %d, %q", c.shell, code, stderr)
		}
		if !strings.Contains(out, c.marker) {
			t.Errorf("completion %s does not register microshift-compose's completion (%q):\n%.300s", c.shell, c.marker, out)
		}
		if err := os.WriteFile(filepath.Join(dir, c.file), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
