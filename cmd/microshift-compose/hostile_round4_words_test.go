package main

import (
	"os"
	"path/filepath"
	"strings"
)

// Round four of the hostile suite, the words' part (issue 37): messages
// that say what the user wrote and all of what is wrong at once.
//
//   - words/matrix: a composition file of several matrix lists given to
//     build names every list, and every flag that chooses one, in one line.
//   - words/durations: a duration is quoted as the user wrote it ("0m",
//     "0h0m", "20000s"), from a flag and from a composition file's key,
//     and its bounds are said in the unit MicroShift says them in.
//   - words/prune: prune dir: says what prune takes and why a dir: layout
//     is not one, first, whatever else is missing; a dir: layout named
//     oci:DIR is refused for the same reason.
//   - words/refs: a repository of one character is taken where podman
//     takes it, so what is refused around it is refused for what it is
//     (an uppercase or '_' repository), from every flag naming an image or
//     a registry prefix.
func round4WordsCases() []hostileCase {
	var cases []hostileCase
	add := func(class, name string, setup func(h *hostileEnv) ([]string, string), want string, code int) {
		cases = append(cases, hostileCase{class: class, name: name, setup: setup, want: want, code: code})
	}

	for _, m := range []struct{ name, toml, want string }{
		{"profiles and arches", "profiles = ['minimal', 'full']\narches = ['x86_64', 'aarch64']\n",
			"profiles (2 values) and arches (2 values) each list several values, which is a matrix: run 'microshift-compose matrix' with it, or choose one of each with --profile and --arch"},
		{"profiles, arches and releases", "profiles = ['minimal', 'full']\narches = ['x86_64', 'aarch64']\nreleases = ['4.21', '5.0']\n",
			"profiles (2 values), arches (2 values) and releases (2 values) each list several values"},
		{"releases alone", "profiles = ['minimal']\narches = ['x86_64']\nreleases = ['4.21', '5.0', '4.20']\n",
			"releases lists 3 values, which is a matrix: run 'microshift-compose matrix' with it, or choose one with --release"},
	} {
		add("words/matrix", "build -f with "+m.name, func(h *hostileEnv) ([]string, string) {
			p := h.write("fleet.toml", m.toml)
			return []string{"build", "-f", p, "--output", h.out}, p
		}, m.want, 0)
	}
	add("words/matrix", "resolve -f with profiles and arches, --arch given", func(h *hostileEnv) ([]string, string) {
		p := h.write("fleet.toml", "profiles = ['minimal', 'full']\narches = ['x86_64', 'aarch64']\n")
		return []string{"resolve", "-f", p, "--arch", "x86_64"}, p
	}, "profiles lists 2 values, which is a matrix: run 'microshift-compose matrix' with it, or choose one with --profile", 0)

	for _, d := range []struct{ flag, value, want string }{
		{"--plugin-timeout", "0m", `--plugin-timeout must be positive, got "0m": leave it out for the default`},
		{"--plugin-timeout", "0h0m0s", `got "0h0m0s"`},
		{"--plugin-timeout", "-90s", `got "-90s"`},
		{"--health-check-timeout", "20000s", `--health-check-timeout "20000s": want whole seconds from 1s to 9999s`},
		{"--health-check-timeout", "1.5s", `--health-check-timeout "1.5s": want whole seconds from 1s to 9999s`},
		{"--health-check-timeout", "500ms", `--health-check-timeout "500ms": want whole seconds`},
		{"--health-check-timeout", "90", `"90" is not a duration (e.g. 90s, 10m, 1h30m)`},
		{"--plugin-timeout", "1h30", `"1h30" is not a duration`},
	} {
		add("words/durations", d.flag+" "+d.value, func(h *hostileEnv) ([]string, string) {
			return build(h, d.flag, d.value), d.flag
		}, d.want, exitUsage)
	}
	// names: what follows the file's path in the message.
	for _, d := range []struct{ toml, names, want string }{
		{"plugin_timeout = '0h0m'\n", `key "plugin_timeout" (--plugin-timeout)`, `must be positive, got "0h0m"`},
		{"[health_checks]\ntimeout = '0'\n", `key "health_checks.timeout" (--health-check-timeout)`, `must be positive, got "0"`},
		{"plugin_timeout = '90'\n", `line 1: key "plugin_timeout"`, `"90" is not a duration (e.g. 90s, 10m, 1h30m)`},
		{"[health_checks]\ntimeout = '1h30'\n", `line 2: key "health_checks.timeout"`, `"1h30" is not a duration`},
	} {
		add("words/durations", "composition file "+strings.TrimSpace(strings.ReplaceAll(d.toml, "\n", "; ")), func(h *hostileEnv) ([]string, string) {
			p := h.write("device.toml", d.toml)
			return build(h, "-f", p), p + ": " + d.names
		}, d.want, 0)
	}
	add("words/durations", "composition file health_checks.timeout = '20000s'", func(h *hostileEnv) ([]string, string) {
		p := h.write("device.toml", "[health_checks]\ntimeout = '20000s'\n")
		return build(h, "-f", p), "--health-check-timeout"
	}, `--health-check-timeout "20000s": want whole seconds from 1s to 9999s`, exitUsage)
	add("words/durations", "mirror --timeout 0m", func(h *hostileEnv) ([]string, string) {
		return []string{"mirror", "--profile", "minimal", "--arch", "x86_64", "--timeout", "0m", "--to", "oci:" + h.path("layout")}, "--timeout"
	}, `--timeout must be positive, got "0m"`, exitUsage)

	const dirReason = "a dir: layout holds the images of one build's bootc Containerfile, each also as a directory of hard links listed in image-list.txt, which prune would leave behind: mirror the lock of the build you keep into a new dir: instead"
	add("words/prune", "prune dir: without --keep", func(h *hostileEnv) ([]string, string) {
		return []string{"prune", "dir:" + h.path("images")}, "prune takes oci:DIR, an OCI image layout to prune, or docker://REGISTRY/PREFIX, a registry to report on;"
	}, `is neither: `+dirReason, exitUsage)
	add("words/prune", "prune --apply dir: without --keep", func(h *hostileEnv) ([]string, string) {
		return []string{"prune", "--apply", "dir:" + h.path("images")}, "prune takes oci:DIR"
	}, dirReason, exitUsage)
	add("words/prune", "prune oci: of a dir: layout", func(h *hostileEnv) ([]string, string) {
		site, lock := h.siteLayout("images", 1, "x86_64")
		if err := os.WriteFile(filepath.Join(site, "image-list.txt"), nil, 0o644); err != nil {
			h.t.Fatal(err)
		}
		return []string{"prune", "--keep", lock, "oci:" + site}, "oci:" + site
	}, "it has image-list.txt: "+dirReason, 0)

	const digest = "@sha256:" + "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
	for _, r := range []struct {
		name  string
		args  func(h *hostileEnv) []string
		names string
		want  string
		code  int
	}{
		{"--bootc-base of an uppercase repository", func(h *hostileEnv) []string {
			return build(h, "--bootc", "--bootc-base", "registry.example.com/M:5.0")
		}, "--bootc-base", "repository name must be lowercase", exitUsage},
		{"--bootc-image of a repository '_'", func(h *hostileEnv) []string {
			return build(h, "--kickstart", "--bootc", "--bootc-image", "registry.example.com/_:5.0")
		}, "--bootc-image", "not a reference containers/image takes", exitUsage},
		{"--mirror-registry of an uppercase prefix", func(h *hostileEnv) []string {
			return build(h, "--mirror-registry", "registry.example.com/M")
		}, "--mirror-registry", `repository "M": a repository of one character is a lowercase letter or a digit`, exitError},
		{"mirror --to docker:// of a prefix '-'", func(h *hostileEnv) []string {
			return []string{"mirror", "--profile", "minimal", "--arch", "x86_64", "--to", "docker://registry.example.com/-"}
		}, "--to", `repository "-": a repository of one character is a lowercase letter or a digit`, exitUsage},
		{"mirror --image of an uppercase repository", func(h *hostileEnv) []string {
			return []string{"mirror", "--profile", "minimal", "--arch", "x86_64", "--image", "registry.example.com/M" + digest, "--to", "oci:" + h.path("layout")}
		}, "--image", "is not a full image reference", exitUsage},
	} {
		add("words/refs", r.name, func(h *hostileEnv) ([]string, string) { return r.args(h), r.names }, r.want, r.code)
	}
	return cases
}
