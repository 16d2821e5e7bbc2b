package main

import (
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/microshift-compose/microshift-compose/plan/request"
)

// fileCommands are the commands that take a composition file.
var fileCommands = []func() *cobra.Command{newBuildCmd, newResolveCmd, newImagesCmd, newMirrorCmd, newMatrixCmd}

// pathFlags are cmd's flags checkGiven checks as paths: those a path key
// mirrors, and those markPaths marked.
func pathFlags(cmd *cobra.Command) map[string]bool {
	out := map[string]bool{}
	_ = walkRequest(cmd, &request.Request{}, func(f *pflag.Flag, v reflect.Value, _ string) error {
		if isPath(v) {
			out[f.Name] = true
		}
		return nil
	})
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Annotations[pathAnnotation] != nil {
			out[f.Name] = true
		}
	})
	return out
}

// TestPathFlags: every flag of the commands that take a composition file
// whose help names a file or a directory here is checked as a path, and
// takes one path per occurrence (a comma-separated list would split a
// path at its commas, and pflag's CSV reading drops what follows a
// newline, so the check would never see it).
func TestPathFlags(t *testing.T) {
	mentions := regexp.MustCompile(`(?i)\bfile\b|directory|\bDIR\b|\bpath\b`)
	// Flags whose help names a file or directory that is not one of this
	// machine's: a mode, a device's disk, kernel arguments, a size, a
	// format, a list mixing references and paths.
	notPaths := []string{"bootc-images", "format", "installation-device", "karg", "release", "max-size", "since"}
	for _, newCmd := range fileCommands {
		cmd := newCmd()
		paths := pathFlags(cmd)
		for _, want := range []string{"file", "config", "lvmd", "catalog"} {
			if !paths[want] {
				t.Errorf("%s: --%s is not checked as a path", cmd.Name(), want)
			}
		}
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			typ := f.Value.Type()
			if paths[f.Name] && typ != "string" && typ != "stringArray" {
				t.Errorf("%s --%s is a path flag of type %s: want string or stringArray, one path each", cmd.Name(), f.Name, typ)
			}
			if (typ == "string" || typ == "stringArray" || typ == "stringSlice") && mentions.MatchString(f.Usage) && !paths[f.Name] && !slices.Contains(notPaths, f.Name) {
				t.Errorf("%s --%s names a file or directory in its help but is not checked as a path (markPaths)", cmd.Name(), f.Name)
			}
		})
	}
	for name, want := range map[string][]string{
		"build":  {"file", "output", "authfile", "registries-conf", "cert-dir", "sign-key", "verify-key", "ca-trust", "upgrade-from", "ssh-key", "pull-secret"},
		"mirror": {"lock", "to", "from", "authfile", "sign-key", "verify-key", "policy"},
		"matrix": {"release-dir", "output", "file"},
	} {
		var cmd *cobra.Command
		for _, newCmd := range fileCommands {
			if c := newCmd(); c.Name() == name {
				cmd = c
			}
		}
		paths := pathFlags(cmd)
		for _, f := range want {
			if !paths[f] {
				t.Errorf("%s: --%s is not checked as a path", name, f)
			}
		}
	}
}

// TestGivenValues: a value is checked the same way whether a flag gives it
// on the command line or a composition file's key does; a key written
// with its zero value is given.
func TestGivenValues(t *testing.T) {
	dir := t.TempDir()
	fileFixtures(t, dir)
	for _, tc := range []struct {
		name  string
		cmd   func() *cobra.Command
		args  []string
		toml  string // a composition file given with -f
		want  string // the error, "" for none
		check func(t *testing.T, req request.Request, cmd *cobra.Command)
	}{
		{name: "empty --cis", args: []string{"--cis", ""}, want: `--cis is empty, which chooses nothing: give a value, or leave it out`},
		{name: "empty cis key", toml: "cis = ''\n", want: `F: key "cis" (--cis) is empty, which chooses nothing`},
		{name: "empty --release", args: []string{"--release="}, want: `--release is empty`},
		{name: "empty release key", toml: "release = ''\n", want: `F: key "release" (--release) is empty`},
		{name: "empty installer.user key", toml: "installer.user = ''\n", want: `F: key "installer.user" (--user) is empty`},
		{name: "zero --health-check-timeout", args: []string{"--health-check-timeout", "0s"}, want: `--health-check-timeout must be positive, got "0s"`},
		{name: "zero health_checks.timeout", toml: "[health_checks]\ntimeout = '0s'\n", want: `F: key "health_checks.timeout" (--health-check-timeout) must be positive, got "0s"`},
		{name: "negative health_checks.timeout", toml: "[health_checks]\ntimeout = '-1m'\n", want: `F: key "health_checks.timeout" (--health-check-timeout) must be positive, got "-1m"`},
		{name: "zero --plugin-timeout", args: []string{"--plugin-timeout", "0"}, want: `--plugin-timeout must be positive, got "0"`},
		{name: "zero plugin_timeout", toml: "plugin_timeout = '0s'\n", want: `F: key "plugin_timeout" (--plugin-timeout) must be positive, got "0s"`},
		{name: "zero --plugin-timeout spelled 0m", args: []string{"--plugin-timeout", "0m"}, want: `--plugin-timeout must be positive, got "0m"`},
		{name: "zero plugin_timeout spelled 0h0m", toml: "plugin_timeout = '0h0m'\n", want: `F: key "plugin_timeout" (--plugin-timeout) must be positive, got "0h0m"`},
		{name: "plugin_timeout without a unit", toml: "plugin_timeout = '90'\n", want: `F: line 1: key "plugin_timeout": "90" is not a duration (e.g. 90s, 10m, 1h30m)`},
		{name: "durations keep their spelling", toml: "plugin_timeout = '90s'\n[health_checks]\ntimeout = '1h30m'\n", check: func(t *testing.T, req request.Request, _ *cobra.Command) {
			if req.PluginTimeout != "90s" || req.HealthChecks.Timeout != "1h30m" {
				t.Errorf("durations = %q, %q; want 90s and 1h30m as written", req.PluginTimeout, req.HealthChecks.Timeout)
			}
		}},
		{name: "a duration flag keeps its spelling", args: []string{"--plugin-timeout", "1m30s", "--health-check-timeout", "5400s"}, check: func(t *testing.T, req request.Request, _ *cobra.Command) {
			if req.PluginTimeout != "1m30s" || req.HealthChecks.Timeout != "5400s" {
				t.Errorf("durations = %q, %q; want 1m30s and 5400s as given", req.PluginTimeout, req.HealthChecks.Timeout)
			}
		}},
		{name: "--config with a newline", args: []string{"--config", "a\nb.yaml"}, want: `--config: path "a\nb.yaml" holds a control character, which no path given to microshift-compose may hold: rename it`},
		{name: "--output with a carriage return", args: []string{"--output", "out\r"}, want: `--output: path "out\r" holds a control character`},
		{name: "--ca-trust with an empty path", args: []string{"--ca-trust", ""}, want: `--ca-trust: empty path`},
		{name: "--verify-key with a tab", args: []string{"--verify-key", "D/cosign.pub", "--verify-key", "k\t.pub"}, want: `--verify-key: path "k\t.pub" holds a control character`},
		{name: "--sign-key with an escape", args: []string{"--sign-key", "k\x1b[2J"}, want: `--sign-key: path "k\x1b[2J" holds a control character`},
		{name: "-f with a newline", args: []string{"-f", "device\n.toml"}, want: `--file: path "device\n.toml" holds a control character`},
		{name: "matrix --release-dir with a line separator", cmd: newMatrixCmd, args: []string{"--release-dir", "rel\u2028"}, want: `--release-dir: path "rel\u2028" holds a control character`},
		{name: "mirror --to with a newline", cmd: newMirrorCmd, args: []string{"--to", "oci:a\nb"}, want: `--to: path "oci:a\nb" holds a control character`},
		{name: "a config path of invalid UTF-8", args: []string{"--config", "conf\xff.yaml"}},
		{name: "a config path with a comma, quotes and $", args: []string{"--config", `my "a,b" $HOME.yaml`}},

		{name: "false is a choice", toml: "fips = false\nbootc.enabled = false\n", check: func(t *testing.T, req request.Request, cmd *cobra.Command) {
			if !cmd.Flags().Changed("fips") || !cmd.Flags().Changed("bootc") || req.FIPS || req.Bootc.Enabled {
				t.Errorf("fips = false: --fips given %t, request %+v", cmd.Flags().Changed("fips"), req)
			}
		}},
		{name: "an empty list is a choice", toml: "with = []\n", args: []string{"--without", ""}, check: func(t *testing.T, req request.Request, cmd *cobra.Command) {
			if !cmd.Flags().Changed("with") || len(req.With) != 0 || len(req.Without) != 0 {
				t.Errorf("with = []: request %+v", req)
			}
		}},
		{name: "a flag wins over a zero key", toml: "cis = ''\n[health_checks]\ntimeout = '0s'\n", args: []string{"--cis", "level2", "--health-check-timeout", "15m"}, check: func(t *testing.T, req request.Request, _ *cobra.Command) {
			if req.CIS != "level2" || req.HealthChecks.Timeout != "15m" {
				t.Errorf("request %+v", req)
			}
		}},
		{name: "profiles = [] for build", toml: "profiles = []\n", want: `F: key "profile" (--profile) is empty`},
		{name: "profile = '' for matrix", cmd: newMatrixCmd, toml: "profile = ''\n", check: func(t *testing.T, req request.Request, cmd *cobra.Command) {
			if !cmd.Flags().Changed("profile") || len(req.Profiles) != 0 {
				t.Errorf("matrix profile = '': --profile given %t, request %+v", cmd.Flags().Changed("profile"), req)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newCmd := tc.cmd
			if newCmd == nil {
				newCmd = newBuildCmd
			}
			args := fixturePaths(dir, tc.args)
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".toml")
			if tc.toml != "" {
				writeTestFile(t, file, tc.toml)
				args = append(args, "-f", file)
			}
			cmd := newCmd()
			if err := cmd.ParseFlags(args); err != nil {
				t.Fatalf("parsing %q: %v", args, err)
			}
			fo := fileOptions{Path: cmd.Flags().Lookup("file").Value.String()}
			err := fo.apply(cmd, cmd.Name() == "matrix")
			want := strings.ReplaceAll(tc.want, "F: ", file+": ")
			if want == "" {
				if err != nil {
					t.Fatalf("apply(%q) = %v", args, err)
				}
				if tc.check != nil {
					req, err := requestFromFlags(cmd)
					if err != nil {
						t.Fatal(err)
					}
					tc.check(t, req, cmd)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("apply(%q) = %v, want %q", args, err, want)
			}
			// From the command line, a usage error (exit 2), as every
			// flag's; from the file, the file's error (exit 1).
			_, usage := err.(usageError)
			if usage != (tc.toml == "") {
				t.Errorf("apply(%q) = %T, usage error %t; want %t", args, err, usage, tc.toml == "")
			}
		})
	}
}
