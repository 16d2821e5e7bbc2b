package main

import (
	"encoding/json"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

func TestVersionOutputs(t *testing.T) {
	line := mustRun(t, "version")
	if flagLine := mustRun(t, "--version"); flagLine != line {
		t.Errorf("--version = %q, version = %q: want the same line", flagLine, line)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, "version", "--output", "json")), &got); err != nil {
		t.Fatalf("version --output json: %v", err)
	}
	for _, k := range []string{"version", "commit", "date", "go", "platform"} {
		if _, ok := got[k]; !ok {
			t.Errorf("version --output json has no %q: %v", k, got)
		}
	}
	if got["go"] != runtime.Version() || !strings.HasPrefix(line, "microshift-compose "+got["version"].(string)+" (") {
		t.Errorf("version = %q, json %v: want the version and %s", line, got, runtime.Version())
	}
	if _, _, code := runCLI(t, "version", "--output", "yaml"); code != exitUsage {
		t.Errorf("version --output yaml: exit %d, want %d", code, exitUsage)
	}
}

// TestResolveBuild: what the linker stamps wins; else what Go recorded
// (module version from go install, vcs.* from a checkout); "(devel)" only
// when there is nothing.
func TestResolveBuild(t *testing.T) {
	vcs := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2025-01-02T03:04:05Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	tests := []struct {
		name                  string
		ldVersion, ldCommit   string
		ldDate                string
		bi                    *debug.BuildInfo
		wantVersion, wantLine string
	}{
		{name: "plain go build, no VCS", bi: &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "(devel)"}},
			wantVersion: "(devel)", wantLine: "(devel) (go1.99 " + runtime.GOOS + "/" + runtime.GOARCH + ")"},
		{name: "no build info", wantVersion: "(devel)"},
		{name: "go build in a checkout", bi: vcs,
			wantVersion: "(devel)", wantLine: "(devel) (commit 0123456789ab, modified, 2025-01-02T03:04:05Z, go1.99 " + runtime.GOOS + "/" + runtime.GOARCH + ")"},
		{name: "go install at a version", bi: &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "v1.2.3"}},
			wantVersion: "v1.2.3"},
		{name: "Makefile or goreleaser", ldVersion: "v1.2.4", ldCommit: "fedcba9876543210", ldDate: "2025-02-03T04:05:06Z", bi: vcs,
			wantVersion: "v1.2.4", wantLine: "v1.2.4 (commit fedcba987654, 2025-02-03T04:05:06Z, go1.99 " + runtime.GOOS + "/" + runtime.GOARCH + ")"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := resolveBuild(tc.ldVersion, tc.ldCommit, tc.ldDate, tc.bi)
			if b.Version != tc.wantVersion {
				t.Errorf("version = %q, want %q", b.Version, tc.wantVersion)
			}
			if tc.wantLine != "" && b.String() != tc.wantLine {
				t.Errorf("line = %q, want %q", b.String(), tc.wantLine)
			}
		})
	}
}

// TestFlagCompletion asks cobra's __complete command, as the shells do.
func TestFlagCompletion(t *testing.T) {
	tests := []struct {
		args         []string
		want, reject []string
	}{
		{args: []string{"build", "--profile", ""}, want: []string{"full\t", "minimal\t", "networking-only\t", "storage-only\t"}},
		{args: []string{"build", "--profile", "st"}, want: []string{"storage-only\t"}},
		{args: []string{"footprint", "--profile", "full,"}, want: []string{"full,minimal\t"}, reject: []string{"full,full\t"}},
		{args: []string{"build", "--with", ""}, want: []string{"multus\t", "olm\t", "storage-lvms\t"}},
		{args: []string{"resolve", "--without", "multus,"}, want: []string{"multus,olm\t"}, reject: []string{"multus,multus\t"}},
		{args: []string{"build", "--arch", ""}, want: []string{"x86_64", "aarch64"}},
		{args: []string{"build", "--release", ""}, want: []string{"4.14\t", "4.18\t", "5.0\t"}},
		{args: []string{"release", "verify", "--release", ""}, want: []string{"4.19\t"}},
		{args: []string{"build", "--release", "4.18", "--distro", ""}, want: []string{"rhel-9.4\t"}, reject: []string{"rhel-9.8\t", "rhel-10.2\t"}},
		{args: []string{"build", "--release", "5.0", "--distro", ""}, want: []string{"rhel-9.8\t", "rhel-10.2\t"}},
		{args: []string{"build", "--distro", "rhel-9.6", "--arch", "aarch64", "--image-type", ""}, want: []string{"edge-commit", "edge-container", "image-installer"}},
		{args: []string{"build", "--release", "4.18", "--arch", "x86_64", "--image-type", ""}, want: []string{"edge-commit"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, stderr, code := runCLI(t, append([]string{"__complete"}, tc.args...)...)
			if code != exitOK || !strings.HasPrefix(stderr, "Completion ended with directive: ShellCompDirectiveNoFileComp") {
				t.Fatalf("__complete: exit %d, stderr %q", code, stderr)
			}
			lines := strings.Split(out, "\n")
			has := func(prefix string) bool {
				return slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, prefix) })
			}
			for _, w := range tc.want {
				if !has(w) {
					t.Errorf("no completion %q in:\n%s", w, out)
				}
			}
			for _, r := range tc.reject {
				if has(r) {
					t.Errorf("completion %q offered in:\n%s", r, out)
				}
			}
		})
	}
}
