package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/microshift-compose/microshift-compose/internal/safetext"
)

// hostileCase is one input an attacker or a careless user hands the tool.
// Every case must fail with its exit code and one "error: " line naming
// the offending file (or flag), without a panic, without blocking, without
// any output on stdout, leaving a previous build's output byte-identical
// and nothing beside it, and without a byte of the planted secret in any
// output.
type hostileCase struct {
	// class groups cases by the defence they exercise (the items
	// and the classes behind them).
	class string
	name  string
	// setup prepares the case's inputs and returns the command line and
	// what the error line must name (a path or a flag).
	setup func(h *hostileEnv) (args []string, names string)
	// want is a substring of the error line.
	want string
	// code is the exit code; 0 means exitError.
	code int
}

// build is a build into the case's previous output.
func build(h *hostileEnv, extra ...string) []string {
	return append([]string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", h.out}, extra...)
}

// withEdge is a build that adds the case catalog's component edge.
func withEdge(h *hostileEnv, extra ...string) []string {
	return build(h, append([]string{"--catalog", h.catalogDir(), "--with", "edge", "--bootc"}, extra...)...)
}

// userFileCases: every file a user names on the command line, as a named
// pipe (must not hang), a socket, a character device, a directory, or
// oversized.
func userFileCases() []hostileCase {
	type input struct {
		name string
		args func(h *hostileEnv, path string) []string
		what string
		max  int64
		// dirWant is what a directory in its place gives.
		dirWant string
	}
	const dirWant = "is not a regular file (a directory)"
	inputs := []input{
		{"--config", func(h *hostileEnv, p string) []string { return build(h, "--config", p) }, "config", 1 << 20, dirWant},
		{"--lvmd", func(h *hostileEnv, p string) []string {
			return build(h, "--with", "storage-lvms", "--lvmd", p)
		}, "lvmd config", 1 << 20, dirWant},
		{"mirror --lock", func(h *hostileEnv, p string) []string {
			return []string{"mirror", "--lock", p, "--to", "oci:" + filepath.Join(h.dir, "layout")}
		}, "lock file", 16 << 20, dirWant},
		{"footprint --lock", func(h *hostileEnv, p string) []string { return []string{"footprint", "--lock", p} }, "lock file", 16 << 20, dirWant},
		{"diff NEW", func(h *hostileEnv, p string) []string {
			return []string{"diff", filepath.Join(h.out, "compose.lock.json"), p}
		}, "lock file", 16 << 20, "has no compose.lock.json: diff compares build outputs or their lock files"},
		{"release update --payload", func(h *hostileEnv, p string) []string {
			return []string{"release", "update", h.releaseDir("rel"), "--payload", "x86_64=" + p, "--dry-run"}
		}, "payload", 8 << 20, dirWant},
		{"release update --csv", func(h *hostileEnv, p string) []string {
			return []string{"release", "update", h.releaseDir("rel"), "--csv", p, "--dry-run"}
		}, "CSV", 8 << 20, dirWant},
		{"--pull-secret", func(h *hostileEnv, p string) []string { return build(h, "--pull-secret", p) }, "pull secret", 1 << 20, dirWant},
		{"--mirror-ca", func(h *hostileEnv, p string) []string {
			return build(h, "--mirror-registry", "mirror.example.com/edge", "--mirror-ca", p)
		}, "CA certificate", 1 << 20, dirWant},
		{"--ssh-key", func(h *hostileEnv, p string) []string {
			return build(h, "--kickstart", "--ostree-url", "http://edge.example.com/repo", "--user", "admin", "--ssh-key", p)
		}, "SSH key file", 1 << 20, dirWant},
		{"--ca-trust", func(h *hostileEnv, p string) []string { return build(h, "--ca-trust", p) }, "CA certificate", 1 << 20, dirWant},
		{"--policy", func(h *hostileEnv, p string) []string { return build(h, "--policy", p) }, "policy", 1 << 20, dirWant},
		{"--verify-key", func(h *hostileEnv, p string) []string { return build(h, "--verify-key", p) }, "key", 64 << 10, dirWant},
		{"mirror --verify-key", func(h *hostileEnv, p string) []string {
			return []string{"mirror", "--lock", filepath.Join(h.out, "compose.lock.json"), "--to", "oci:" + filepath.Join(h.dir, "layout"), "--verify-key", p}
		}, "key", 64 << 10, dirWant},
		// Read by containers/image, which has no size limit of its own;
		// they are checked to be regular files before it opens them.
		{"mirror --authfile", func(h *hostileEnv, p string) []string {
			return []string{"mirror", "--lock", filepath.Join(h.out, "compose.lock.json"), "--to", "oci:" + filepath.Join(h.dir, "layout"), "--authfile", p}
		}, "--authfile", 0, "is a directory, not an auth file"},
		{"mirror --registries-conf", func(h *hostileEnv, p string) []string {
			return []string{"mirror", "--lock", filepath.Join(h.out, "compose.lock.json"), "--to", "oci:" + filepath.Join(h.dir, "layout"), "--registries-conf", p}
		}, "--registries-conf", 0, dirWant},
	}
	var cases []hostileCase
	for _, in := range inputs {
		in := in
		cases = append(cases,
			hostileCase{class: "gate/non-regular", name: in.name + " is a named pipe",
				setup: func(h *hostileEnv) ([]string, string) {
					p := h.fifo("input.fifo")
					return in.args(h, p), p
				}, want: "is not a regular file (a named pipe)"},
			hostileCase{class: "gate/non-regular", name: in.name + " is a socket",
				setup: func(h *hostileEnv) ([]string, string) {
					p := h.socket("input.sock")
					return in.args(h, p), p
				}, want: "is not a regular file (a socket)"},
			hostileCase{class: "gate/non-regular", name: in.name + " is a character device",
				setup: func(h *hostileEnv) ([]string, string) { return in.args(h, "/dev/zero"), "/dev/zero" },
				want:  "is not a regular file (a character device)"},
			hostileCase{class: "gate/non-regular", name: in.name + " is a directory",
				setup: func(h *hostileEnv) ([]string, string) {
					p := h.mkdir("input.d")
					return in.args(h, p), p
				}, want: in.dirWant},
			hostileCase{class: "gate/non-regular", name: in.name + " is a symlink to a named pipe",
				setup: func(h *hostileEnv) ([]string, string) {
					h.fifo("real.fifo")
					p := h.symlink(h.path("real.fifo"), "input.link")
					return in.args(h, p), p
				}, want: "is not a regular file (a named pipe)"},
		)
		if in.max == 0 {
			continue
		}
		cases = append(cases,
			hostileCase{class: "gate/size", name: in.name + " is larger than its limit",
				setup: func(h *hostileEnv) ([]string, string) {
					p := h.sparse("input.big", in.max+1)
					return in.args(h, p), p
				}, want: fmt.Sprintf("file is larger than %d bytes", in.max)},
		)
	}
	return cases
}

// catalogGateCases: the files of a catalog directory: non-regular files,
// symlinks that leave their component (the secret must not leak), sizes.
func catalogGateCases() []hostileCase {
	var cases []hostileCase
	// Where in a component a file can be, and how it is given.
	type spot struct {
		name  string
		setup func(h *hostileEnv, make func(rel string) string) string // returns the path named
	}
	spots := []spot{
		{"component.toml", func(h *hostileEnv, make func(string) string) string {
			return make("catalog/components/edge/component.toml")
		}},
		{"catalog.toml", func(h *hostileEnv, make func(string) string) string {
			h.component("edge", "")
			return make("catalog/catalog.toml")
		}},
		{"a [[files]] source", func(h *hostileEnv, make func(string) string) string {
			h.component("edge", "[[files]]\npath = \"/etc/edge/agent.conf\"\nsource = \"files/agent.conf\"\n")
			make("catalog/components/edge/files/agent.conf")
			return h.compDir("edge") + "/component.toml"
		}},
		{"a manifests/ resource", func(h *hostileEnv, make func(string) string) string {
			h.manifests("edge", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\n"})
			make("catalog/components/edge/manifests/cm.yaml")
			return "manifests/cm.yaml"
		}},
		{"manifests/kustomization.yaml", func(h *hostileEnv, make func(string) string) string {
			h.component("edge", "")
			h.write("catalog/components/edge/manifests/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
			make("catalog/components/edge/manifests/kustomization.yaml")
			return "manifests/kustomization.yaml"
		}},
		{"the plugin", func(h *hostileEnv, make func(string) string) string {
			h.component("edge", "")
			return make("catalog/components/edge/plugin")
		}},
		{"a release/ file", func(h *hostileEnv, make func(string) string) string {
			h.component("edge", "[images]\nfile = \"edge\"\nkeys = [\"agent\"]\n")
			return make("catalog/components/edge/release/release-edge-x86_64.json")
		}},
	}
	for _, sp := range spots {
		sp := sp
		cases = append(cases,
			hostileCase{class: "gate/non-regular", name: "catalog: " + sp.name + " is a named pipe",
				setup: func(h *hostileEnv) ([]string, string) {
					named := sp.setup(h, h.fifo)
					return withEdge(h), named
				}, want: "named pipe"},
			hostileCase{class: "gate/non-regular", name: "catalog: " + sp.name + " is a socket",
				setup: func(h *hostileEnv) ([]string, string) {
					named := sp.setup(h, h.socket)
					return withEdge(h), named
				}, want: "not a regular file"},
			hostileCase{class: "gate/symlink", name: "catalog: " + sp.name + " is an absolute symlink to a secret",
				setup: func(h *hostileEnv) ([]string, string) {
					named := sp.setup(h, func(rel string) string { return h.symlink(h.secret, rel) })
					return withEdge(h), named
				}, want: ""},
			hostileCase{class: "gate/symlink", name: "catalog: " + sp.name + " is a relative symlink out of the catalog",
				setup: func(h *hostileEnv) ([]string, string) {
					named := sp.setup(h, func(rel string) string {
						depth := strings.Count(rel, "/") + 1
						return h.symlink(strings.Repeat("../", depth)+"secret/shadow", rel)
					})
					return withEdge(h), named
				}, want: ""},
		)
	}
	cases = append(cases,
		hostileCase{class: "gate/symlink", name: "catalog: a file source links to another component's file",
			setup: func(h *hostileEnv) ([]string, string) {
				h.component("edge", "[[files]]\npath = \"/etc/edge/agent.conf\"\nsource = \"agent.conf\"\n")
				h.write("catalog/private/agent.conf", h.token)
				h.symlink("../../private/agent.conf", "catalog/components/edge/agent.conf")
				return withEdge(h), h.compDir("edge") + "/component.toml"
			}, want: `source "agent.conf" is a symlink to ../../private/agent.conf, outside the component directory`},
		hostileCase{class: "gate/symlink", name: "catalog: the component directory is a symlink out of the catalog",
			setup: func(h *hostileEnv) ([]string, string) {
				h.write("elsewhere/edge/component.toml", "name = \"edge\"\ndescription = \"x\"\norder = 900\n")
				h.mkdir("catalog/components")
				h.symlink(h.path("elsewhere/edge"), "catalog/components/edge")
				return withEdge(h), h.compDir("edge")
			}, want: "not a directory"},
		hostileCase{class: "gate/symlink", name: "catalog: manifests/ is a symlink out of the component",
			setup: func(h *hostileEnv) ([]string, string) {
				h.component("edge", "")
				h.write("elsewhere/kustomization.yaml", "resources: []\n")
				h.symlink(h.path("elsewhere"), "catalog/components/edge/manifests")
				return withEdge(h), h.compDir("edge") + "/manifests"
			}, want: "outside the component directory"},
		hostileCase{class: "gate/symlink", name: "catalog: a symlink loop as a file source",
			setup: func(h *hostileEnv) ([]string, string) {
				h.component("edge", "[[files]]\npath = \"/etc/edge/a.conf\"\nsource = \"loop\"\n")
				h.symlink("loop", "catalog/components/edge/loop")
				return withEdge(h), h.compDir("edge") + "/component.toml"
			}, want: "too many levels of symlinks"},
		hostileCase{class: "gate/symlink", name: "catalog: a manifests/ symlink to a directory inside",
			setup: func(h *hostileEnv) ([]string, string) {
				h.manifests("edge", map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"})
				h.mkdir("catalog/components/edge/data")
				h.symlink("../data", "catalog/components/edge/manifests/data")
				return withEdge(h), "manifests/data"
			}, want: "a symlink to a directory, which is not followed"},
		hostileCase{class: "gate/size", name: "catalog: component.toml over 1 MiB",
			setup: func(h *hostileEnv) ([]string, string) {
				return withEdge(h), h.sparse("catalog/components/edge/component.toml", 1<<20+1)
			}, want: "file is larger than 1048576 bytes"},
		hostileCase{class: "gate/size", name: "catalog: catalog.toml over 1 MiB",
			setup: func(h *hostileEnv) ([]string, string) {
				h.component("edge", "")
				return withEdge(h), h.sparse("catalog/catalog.toml", 1<<20+1)
			}, want: "file is larger than 1048576 bytes"},
		hostileCase{class: "gate/size", name: "catalog: a 64 MiB file source",
			setup: func(h *hostileEnv) ([]string, string) {
				h.component("edge", "[[files]]\npath = \"/etc/edge/big\"\nsource = \"big\"\n")
				h.sparse("catalog/components/edge/big", 64<<20)
				return withEdge(h), h.compDir("edge") + "/component.toml"
			}, want: `source "big" is larger than 1048576 bytes`},
		hostileCase{class: "gate/size", name: "catalog: a template that writes beyond the limit",
			setup: func(h *hostileEnv) ([]string, string) {
				h.component("edge", "[[files]]\npath = \"/etc/edge/t\"\ntemplate = true\ncontent = '{{define \"x\"}}{{printf \"%09000d\" 0}}{{template \"x\"}}{{end}}{{template \"x\"}}'\n")
				return withEdge(h), h.compDir("edge") + "/component.toml"
			}, want: "output is larger than 1048576 bytes"},
		hostileCase{class: "gate/size", name: "catalog: a template that loops a billion times without writing",
			setup: func(h *hostileEnv) ([]string, string) {
				h.component("edge", "[[files]]\npath = \"/etc/edge/t\"\ntemplate = true\ncontent = '{{range 1000000000}}{{end}}'\n")
				return withEdge(h), h.compDir("edge") + "/component.toml"
			}, want: "number 1000000000 is larger than 10000"},
		hostileCase{class: "gate/size", name: "catalog: a template printf of a gigabyte",
			setup: func(h *hostileEnv) ([]string, string) {
				h.component("edge", "[[files]]\npath = \"/etc/edge/t\"\ntemplate = true\ncontent = '{{printf \"%0999999999d\" 0}}'\n")
				return withEdge(h), h.compDir("edge") + "/component.toml"
			}, want: "printf: width or precision 0999999999 is larger than 10000"},
		hostileCase{class: "gate/size", name: "catalog: a 40 MiB manifest",
			setup: func(h *hostileEnv) ([]string, string) {
				h.manifests("edge", map[string]string{"kustomization.yaml": "resources:\n- big.yaml\n"})
				h.sparse("catalog/components/edge/manifests/big.yaml", 40<<20)
				return withEdge(h), "manifests/big.yaml"
			}, want: "file is larger than 33554432 bytes"},
		hostileCase{class: "gate/size", name: "catalog: a component directory over 64 MiB in all",
			setup: func(h *hostileEnv) ([]string, string) {
				h.manifests("edge", map[string]string{"kustomization.yaml": "resources: []\n"})
				for i := range 3 {
					h.sparse(fmt.Sprintf("catalog/components/edge/manifests/blob%d", i), 30<<20)
				}
				return withEdge(h), "manifests/blob2"
			}, want: "the component directory holds more than 67108864 bytes"},
		hostileCase{class: "gate/size", name: "catalog: a release/ file over 4 MiB",
			setup: func(h *hostileEnv) ([]string, string) {
				h.component("edge", "[images]\nfile = \"edge\"\nkeys = [\"agent\"]\n")
				return withEdge(h), h.sparse("catalog/components/edge/release/release-edge-x86_64.json", 4<<20+1)
			}, want: "file is larger than 4194304 bytes"},
		hostileCase{class: "gate/size", name: "plugin: stdout over 16 MiB",
			setup: func(h *hostileEnv) ([]string, string) {
				h.plugin("edge", "head -c 17000000 /dev/zero | tr '\\0' 'a'")
				return withEdge(h), "plugin run"
			}, want: "wrote more than 16777216 bytes to stdout; killed it"},
	)
	return cases
}

// aliasBomb is a ~350-byte YAML document whose aliases expand to 9^9
// nodes.
func aliasBomb(prefix string) string {
	var b strings.Builder
	b.WriteString(prefix)
	b.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		fmt.Fprintf(&b, "%s: &%s [%s]\n", n, n, strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ","))
		prev = n
	}
	return b.String()
}

// yamlCases: YAML alias bombs in every YAML input, refused before any YAML
// library expands them.
func yamlCases() []hostileCase {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n"
	return []hostileCase{
		{class: "yaml/alias-bomb", name: "in a catalog manifest",
			setup: func(h *hostileEnv) ([]string, string) {
				h.manifests("edge", map[string]string{"cm.yaml": cm + "  x: y\n" + aliasBomb("")})
				return withEdge(h), "manifests/cm.yaml"
			}, want: "excessive YAML aliasing"},
		{class: "yaml/alias-bomb", name: "in manifests/kustomization.yaml",
			setup: func(h *hostileEnv) ([]string, string) {
				h.manifests("edge", map[string]string{"kustomization.yaml": "resources: []\n" + aliasBomb("")})
				return withEdge(h), "manifests/kustomization.yaml"
			}, want: "excessive YAML aliasing"},
		{class: "yaml/alias-bomb", name: "in a file kustomize would read by another name",
			setup: func(h *hostileEnv) ([]string, string) {
				h.manifests("edge", map[string]string{"kustomization.yaml": "resources:\n- cm.txt\n", "cm.txt": aliasBomb(cm)})
				return withEdge(h), "manifests/cm.txt"
			}, want: "excessive YAML aliasing"},
		{class: "yaml/alias-bomb", name: "in plugin output",
			setup: func(h *hostileEnv) ([]string, string) {
				h.pluginOutput("edge", aliasBomb(""))
				return withEdge(h), "plugin run printed bad output"
			}, want: "excessive YAML aliasing"},
		{class: "yaml/alias-bomb", name: "in a later document of plugin output",
			setup: func(h *hostileEnv) ([]string, string) {
				h.pluginOutput("edge", cm+"  k: v\n---\n"+aliasBomb(""))
				return withEdge(h), "plugin run printed bad output"
			}, want: "document 2: excessive YAML aliasing"},
		{class: "yaml/alias-bomb", name: "an alias cycle in plugin output",
			setup: func(h *hostileEnv) ([]string, string) {
				h.pluginOutput("edge", "a: &a [*a]\n")
				return withEdge(h), "plugin run printed bad output"
			}, want: "an anchor refers to itself"},
		{class: "yaml/alias-bomb", name: "in --config",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.write("config.yaml", aliasBomb(""))
				return build(h, "--config", p), p
			}, want: "excessive YAML aliasing"},
		{class: "yaml/alias-bomb", name: "in --lvmd",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.write("lvmd.yaml", aliasBomb(""))
				return build(h, "--with", "storage-lvms", "--lvmd", p), p
			}, want: "excessive YAML aliasing"},
		{class: "yaml/alias-bomb", name: "in a CSV",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.write("bundle.clusterserviceversion.yaml", aliasBomb("kind: ClusterServiceVersion\n"))
				return []string{"release", "update", h.releaseDir("rel"), "--csv", p, "--dry-run"}, p
			}, want: "excessive YAML aliasing"},
		{class: "yaml/alias-bomb", name: "in a YAML payload",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.write("payload.yaml", aliasBomb("kind: ImageStream\n"))
				return []string{"release", "update", h.releaseDir("rel"), "--payload", "x86_64=" + p, "--dry-run"}, p
			}, want: "excessive YAML aliasing"},
	}
}

// textCases: values that would change the structure of generated text
// (Containerfile, blueprint.toml, shell lines, config comments), refused
// with the file they come from.
func textCases() []hostileCase {
	var cases []hostileCase
	paths := map[string]string{
		"a newline starting a RUN":  `/etc/x\nRUN touch /tmp/p\n#`,
		"a carriage return":         `/etc/x\rRUN id`,
		"a tab":                     `/etc/x\ty`,
		"a NUL":                     `/etc/x\u0000y`,
		"an escape sequence":        `/etc/\u001b[2Jx`,
		"a bidi override":           `/etc/\u202egnp.exe`,
		"a line separator":          `/etc/x\u2028RUN id`,
		"a DEL":                     `/etc/x\u007f`,
		"a glob star":               `/etc/*.conf`,
		"a glob question mark":      `/etc/a?.conf`,
		"a glob bracket":            `/etc/[ab].conf`,
		"a backslash":               `/etc/a\\b`,
		"a backslash at a line end": `/etc/x\\`,
		"a relative path":           `etc/x`,
		"a .. component":            `/etc/../x`,
		"a double slash":            `/etc//x`,
		"a trailing slash":          `/etc/x/`,
		"the root directory":        `/`,
		"a 300-byte name":           "/etc/" + strings.Repeat("a", 300),
		"a 5000-byte path":          strings.Repeat("/aaaa", 1000),
	}
	names := make([]string, 0, len(paths))
	for n := range paths {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := paths[n]
		cases = append(cases, hostileCase{class: "text/device-path", name: "a file path with " + n,
			setup: func(h *hostileEnv) ([]string, string) {
				h.component("edge", fmt.Sprintf("[[files]]\npath = \"%s\"\ncontent = \"x\"\n", p))
				return withEdge(h), h.compDir("edge") + "/component.toml"
			}, want: "files[0]: path"})
	}
	values := []struct{ name, toml, want string }{
		{"a service with a newline", "[services]\nenabled = [\"a\\nRUN id\"]\n", "is not a systemd unit name"},
		{"a service with a shell command", "[services]\nenabled = [\"a; rm -rf /\"]\n", "is not a systemd unit name"},
		{"a service with $()", "[services]\nenabled = [\"$(id).service\"]\n", "is not a systemd unit name"},
		{"a package with a space", "packages = [\"a b\"]\n", "is not a package name"},
		{"a package with a command substitution", "packages = [\"$(touch /tmp/p)\"]\n", "is not a package name"},
		{"a package with a newline", "packages = [\"a\\nRUN id\"]\n", "is not a package name"},
		{"a firewall port with a command", "[firewall]\nports = [\"80:tcp; id\"]\n", "firewall.ports"},
		{"a firewall service with a space", "[firewall]\nservices = [\"ssh http\"]\n", "is not a firewalld service name"},
		{"a trusted source with a command", "[firewall]\ntrusted_sources = [\"$(id)\"]\n", "is not an IP address"},
		{"a mode with a path", "[[files]]\npath = \"/etc/x\"\nmode = \"0644 /etc/shadow\"\ncontent = \"x\"\n", "is not an octal permission mode from 0000 to 0777"},
		{"a description with an escape sequence", "", "description"},
	}
	for _, v := range values {
		v := v
		cases = append(cases, hostileCase{class: "text/values", name: v.name,
			setup: func(h *hostileEnv) ([]string, string) {
				if v.toml == "" {
					h.write("catalog/components/edge/component.toml", "name = \"edge\"\ndescription = \"x\\u001b]0;pwned\\u0007\"\norder = 900\nrequires = [\"core\"]\n")
				} else {
					h.component("edge", v.toml)
				}
				return withEdge(h), h.compDir("edge") + "/component.toml"
			}, want: v.want})
	}
	cases = append(cases,
		hostileCase{class: "text/values", name: "a --config path value with a control character",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.write("config.yaml", "manifests:\n  kustomizePaths: [\"/etc/x\\u0007\\nRUN id\"]\n")
				return build(h, "--config", p), p
			}, want: `manifests.kustomizePaths[0]: "/etc/x\a\nRUN id" holds a control character`},
		hostileCase{class: "text/values", name: "a --config key with an escape sequence",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.write("config.yaml", "debugging:\n  \"log\\u001bLevel\": Debug\n")
				return build(h, "--config", p), p
			}, want: "holds a control character"},
		hostileCase{class: "text/values", name: "a binary file source (blueprint.toml cannot carry it)",
			setup: func(h *hostileEnv) ([]string, string) {
				h.component("edge", "[[files]]\npath = \"/etc/edge/blob\"\nsource = \"blob\"\n")
				h.write("catalog/components/edge/blob", "\xff\xfe\x00binary")
				return withEdge(h), "/etc/edge/blob"
			}, want: "is not UTF-8 text"},
	)
	return cases
}

// pluginCases: plugins that print invalid Kubernetes names or kinds,
// misbehave, or print what kustomize cannot render.
func pluginCases() []hostileCase {
	meta := func(apiVersion, kind, name, ns string) string {
		s := fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata:\n  name: %q\n", apiVersion, kind, name)
		if ns != "" {
			s += fmt.Sprintf("  namespace: %q\n", ns)
		}
		return s
	}
	var cases []hostileCase
	for _, tc := range []struct{ name, out, want string }{
		{"an uppercase name", meta("v1", "ConfigMap", "Edge", ""), `metadata.name "Edge" is not a valid ConfigMap name`},
		{"a name with a space", meta("v1", "ConfigMap", "a b", ""), `metadata.name "a b"`},
		{"a name with a newline", meta("v1", "ConfigMap", "a\nRUN id", ""), `metadata.name "a\nRUN id"`},
		{"a name with a slash", meta("v1", "ConfigMap", "../../etc/passwd", ""), `metadata.name "../../etc/passwd"`},
		{"a name with an escape sequence", meta("v1", "ConfigMap", "a\x1b[2J", ""), `metadata.name "a\x1b[2J"`},
		{"a 300-character name", meta("v1", "ConfigMap", strings.Repeat("a", 300), ""), "is not a valid ConfigMap name"},
		{"a Service name starting with a digit", meta("v1", "Service", "1web", ""), "is not a valid Service name"},
		{"a Namespace name with a dot", meta("v1", "Namespace", "edge.example", ""), "is not a valid Namespace name"},
		{"an RBAC name with a glob", meta("rbac.authorization.k8s.io/v1", "ClusterRole", "*", ""), "is not a valid ClusterRole name"},
		{"an invalid namespace", meta("v1", "ConfigMap", "a", "Edge_NS"), `namespace "Edge_NS" is not a valid namespace name`},
		{"a kind with a newline", "apiVersion: v1\nkind: \"Config\\nMap\"\nmetadata:\n  name: a\n", "is not a Kubernetes kind"},
		{"the fuzzer's multi-line kind", "apiVersion: 0\nkind: 0\n\n 0", "is not a Kubernetes kind"},
		{"an apiVersion with a space", "apiVersion: \"v 1\"\nkind: ConfigMap\nmetadata:\n  name: a\n", "is not a Kubernetes apiVersion"},
		{"binary output", "\x00\x01\x02", "output is not UTF-8 text"},
		{"two resources with one name", meta("v1", "ConfigMap", "a", "") + "---\n" + meta("v1", "ConfigMap", "a", ""), "already registered id"},
		{"a kustomization with helmCharts", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nhelmCharts:\n- name: x\n  repo: https://charts.example.com\n", "a kustomization's helmCharts are not rendered (kustomize's Helm inflation runs a helm binary); give the chart as the component's [chart]"},
		{"a kustomization with a remote base", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- https://example.com/x.yaml\n", "remote resources are not fetched"},
	} {
		tc := tc
		cases = append(cases, hostileCase{class: "plugin/output", name: "plugin prints " + tc.name,
			setup: func(h *hostileEnv) ([]string, string) {
				h.pluginOutput("edge", tc.out)
				return withEdge(h), `component "edge"`
			}, want: tc.want})
	}
	cases = append(cases,
		hostileCase{class: "plugin/process", name: "plugin writes escape sequences to stderr and fails",
			setup: func(h *hostileEnv) ([]string, string) {
				h.plugin("edge", `printf 'boom \033[2J\033]0;pwned\007\n' >&2; exit 3`)
				return withEdge(h), `component "edge"`
			}, want: `plugin run failed (exit 3): boom \x1b[2J\x1b]0;pwned\x07`},
		hostileCase{class: "plugin/process", name: "plugin hangs past --plugin-timeout",
			setup: func(h *hostileEnv) ([]string, string) {
				h.plugin("edge", "setsid sleep 600 & sleep 600")
				return withEdge(h, "--plugin-timeout", "500ms"), `component "edge"`
			}, want: "did not finish within 500ms (raise --plugin-timeout); killed it and every process it started"},
		hostileCase{class: "plugin/process", name: "plugin exits 2",
			setup: func(h *hostileEnv) ([]string, string) {
				h.plugin("edge", "printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: a\\n'; exit 2")
				return withEdge(h), `component "edge"`
			}, want: "plugin run: bad configuration (exit 2)"},
		hostileCase{class: "plugin/process", name: "plugin is not executable",
			setup: func(h *hostileEnv) ([]string, string) {
				h.component("edge", "")
				h.write("catalog/components/edge/plugin", "#!/bin/sh\n")
				return withEdge(h), h.compDir("edge") + "/plugin"
			}, want: "plugin is not executable"},
	)
	return cases
}

// outputCases: --output directories that are not a previous build's.
func outputCases() []hostileCase {
	mine := func(h *hostileEnv, files map[string]string) string {
		d := h.mkdir("mine")
		for f, data := range files {
			h.write(filepath.Join("mine", f), data)
		}
		return d
	}
	return []hostileCase{
		{class: "output/ownership", name: "a user file beside an empty compose.lock.json",
			setup: func(h *hostileEnv) ([]string, string) {
				d := mine(h, map[string]string{"thesis.tex": "precious", "compose.lock.json": ""})
				return []string{"build", "--profile", "minimal", "--output", d}, d
			}, want: "thesis.tex is not something build writes"},
		{class: "output/ownership", name: "a home directory",
			setup: func(h *hostileEnv) ([]string, string) {
				d := mine(h, map[string]string{".bashrc": "x", "notes.md": "y"})
				return []string{"build", "--profile", "minimal", "--output", d}, d
			}, want: ".bashrc is not something build writes"},
		{class: "output/ownership", name: "build's file names but an unparseable lock",
			setup: func(h *hostileEnv) ([]string, string) {
				d := mine(h, map[string]string{"compose.lock.json": "{\"schema\": 1", "images.txt": "x\n"})
				return []string{"build", "--profile", "minimal", "--output", d}, d
			}, want: "its compose.lock.json does not parse"},
		{class: "output/ownership", name: "a foreign file inside files/",
			setup: func(h *hostileEnv) ([]string, string) {
				h.write(filepath.Join(h.out, "files", "etc", "thesis.tex"), "mine")
				return build(h), h.out
			}, want: "files/etc/thesis.tex is not a file the previous build wrote"},
		{class: "output/ownership", name: "a foreign file inside config.d/",
			setup: func(h *hostileEnv) ([]string, string) {
				h.write(filepath.Join(h.out, "config.d", "99-mine.yaml"), "mine")
				return build(h), h.out
			}, want: "config.d/99-mine.yaml is not a file the previous build wrote"},
		{class: "output/ownership", name: "a foreign directory in the output",
			setup: func(h *hostileEnv) ([]string, string) {
				h.write(filepath.Join(h.out, "src", "main.go"), "package main")
				return build(h), h.out
			}, want: "src is not something build writes"},
		{class: "output/ownership", name: "blueprint.toml is a symlink",
			setup: func(h *hostileEnv) ([]string, string) {
				os.Remove(filepath.Join(h.out, "blueprint.toml"))
				h.symlink(h.secret, filepath.Join(h.out, "blueprint.toml"))
				return build(h), h.out
			}, want: "blueprint.toml is a symlink, which build never writes"},
		{class: "output/ownership", name: "the output is a file",
			setup: func(h *hostileEnv) ([]string, string) {
				p := filepath.Join(h.out, "images.txt")
				return []string{"build", "--profile", "minimal", "--output", p}, p
			}, want: "exists and is not a directory"},
		{class: "output/ownership", name: "the output is a named pipe",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.fifo("out.fifo")
				return []string{"build", "--profile", "minimal", "--output", p}, p
			}, want: "exists and is not a directory"},
		{class: "output/ownership", name: "the output's parent is a file (the message names --output)",
			setup: func(h *hostileEnv) ([]string, string) {
				p := filepath.Join(h.out, "images.txt", "sub")
				return []string{"build", "--profile", "minimal", "--output", p}, p
			}, want: "creating output directory"},
	}
}

// releaseCases: release directories a build or the release commands must
// refuse: half-updated, another arch's base, hostile keys, pipes.
func releaseCases() []hostileCase {
	journal := func(h *hostileEnv, dir string) {
		h.write(filepath.Join(dir, ".microshift-compose-update.journal"), `{"version": 1, "files": []}`)
	}
	return []hostileCase{
		{class: "release/interrupted-update", name: "build --release-dir of a half-updated directory",
			setup: func(h *hostileEnv) ([]string, string) {
				d := h.releaseDir("rel")
				journal(h, d)
				return build(h, "--release-dir", d), d
			}, want: "an update was interrupted and left its files part old, part new"},
		{class: "release/interrupted-update", name: "release verify of a half-updated directory",
			setup: func(h *hostileEnv) ([]string, string) {
				d := h.releaseDir("rel")
				journal(h, d)
				return []string{"release", "verify", d}, d
			}, want: "run 'microshift-compose release update"},
		{class: "release/interrupted-update", name: "release diff of a half-updated directory",
			setup: func(h *hostileEnv) ([]string, string) {
				d := h.releaseDir("rel")
				journal(h, d)
				return []string{"release", "diff", "5.0", d}, d
			}, want: "an update was interrupted"},
		{class: "release/interrupted-update", name: "a half-updated component release/ directory",
			setup: func(h *hostileEnv) ([]string, string) {
				h.component("edge", "")
				journal(h, "catalog/components/edge/release")
				return withEdge(h), "release"
			}, want: "an update was interrupted"},
		{class: "release/interrupted-update", name: "release update with a damaged journal",
			setup: func(h *hostileEnv) ([]string, string) {
				d := h.releaseDir("rel")
				h.write(filepath.Join(d, ".microshift-compose-update.journal"), "{")
				return []string{"release", "update", d, "--resolve-tags"}, d
			}, want: "its journal is damaged"},
		{class: "release/files", name: "an x86_64 core file whose base is an arm64 nightly",
			setup: func(h *hostileEnv) ([]string, string) {
				d := h.releaseDir("rel")
				p := filepath.Join(d, "release-x86_64.json")
				data, _ := os.ReadFile(p)
				h.write(p, strings.Replace(string(data), "5.0.0-0.nightly-2026", "5.0.0-0.nightly-arm64-2026", 1))
				return build(h, "--release-dir", d), p
			}, want: "is a build for aarch64, but the file is for x86_64; it belongs in release-aarch64.json"},
		{class: "release/files", name: "a component file whose base names another arch",
			setup: func(h *hostileEnv) ([]string, string) {
				d := h.releaseDir("rel")
				p := filepath.Join(d, "release-olm-aarch64.json")
				data, _ := os.ReadFile(p)
				h.write(p, strings.Replace(string(data), "-arm64-", "-amd64-", 1))
				return build(h, "--release-dir", d), p
			}, want: "is a build for x86_64, but the file is for aarch64"},
		{class: "release/files", name: "an image key with a control character",
			setup: func(h *hostileEnv) ([]string, string) {
				d := h.releaseDir("rel")
				p := filepath.Join(d, "release-x86_64.json")
				data, _ := os.ReadFile(p)
				h.write(p, strings.Replace(string(data), `"cli"`, `"cli\n| injected |"`, 1))
				return build(h, "--release-dir", d), p
			}, want: "holds a control character"},
		{class: "release/files", name: "a release file is a named pipe",
			setup: func(h *hostileEnv) ([]string, string) {
				d := h.releaseDir("rel")
				p := filepath.Join(d, "release-olm-x86_64.json")
				os.Remove(p)
				h.fifo(p)
				return build(h, "--release-dir", d), p
			}, want: "not a regular file"},
		{class: "release/files", name: "a release file is a symlink to the secret",
			setup: func(h *hostileEnv) ([]string, string) {
				d := h.releaseDir("rel")
				p := filepath.Join(d, "release-olm-x86_64.json")
				os.Remove(p)
				h.symlink(h.secret, p)
				return build(h, "--release-dir", d), p
			}, want: "not a regular file"},
		{class: "release/files", name: "a release file over 4 MiB",
			setup: func(h *hostileEnv) ([]string, string) {
				d := h.releaseDir("rel")
				p := filepath.Join(d, "release-olm-x86_64.json")
				h.sparse(p, 4<<20+1)
				return build(h, "--release-dir", d), p
			}, want: "file is larger than 4194304 bytes"},
		{class: "release/files", name: "release update of a directory with a named pipe",
			setup: func(h *hostileEnv) ([]string, string) {
				d := h.releaseDir("rel")
				p := filepath.Join(d, "release-olm-x86_64.json")
				os.Remove(p)
				h.fifo(p)
				return []string{"release", "update", d, "--resolve-tags", "--dry-run"}, p
			}, want: "not a regular file"},
	}
}

// acceptedCases: what was accepted with exit 0 and is now refused with a
// clear line.
func acceptedCases() []hostileCase {
	lockArgs := func(h *hostileEnv, old, new string) ([]string, string) {
		p := h.lock("edited.lock.json", old, new)
		return []string{"diff", filepath.Join(h.out, "compose.lock.json"), p}, p
	}
	return []hostileCase{
		{class: "accepted/selection", name: "--without core leaves an empty plan",
			setup: func(h *hostileEnv) ([]string, string) { return build(h, "--without", "core"), "--without core" },
			want:  "profile minimal with --without core selects no components; every plan needs core"},
		{class: "accepted/selection", name: "--without core with an add-on that does not need it",
			setup: func(h *hostileEnv) ([]string, string) {
				h.write("catalog/components/edge/component.toml", "name = \"edge\"\ndescription = \"x\"\norder = 900\n")
				return build(h, "--without", "core", "--catalog", h.catalogDir(), "--with", "edge"), "--without core"
			}, want: "does not install MicroShift: none of edge has the microshift RPM"},
		{class: "accepted/flags", name: "build --jobs -1",
			setup: func(h *hostileEnv) ([]string, string) { return build(h, "--jobs", "-1"), "--jobs" },
			want:  "--jobs must be at least 1, got -1", code: exitUsage},
		{class: "accepted/flags", name: "build --jobs 0",
			setup: func(h *hostileEnv) ([]string, string) { return build(h, "--jobs", "0"), "--jobs" },
			want:  "--jobs must be at least 1, got 0", code: exitUsage},
		{class: "accepted/flags", name: "build --retries 0",
			setup: func(h *hostileEnv) ([]string, string) { return build(h, "--retries", "0"), "--retries" },
			want:  "--retries must be at least 1, got 0", code: exitUsage},
		{class: "accepted/lock", name: "diff: a null image entry",
			setup: func(h *hostileEnv) ([]string, string) { return lockArgs(h, `"images": [`, `"images": [null, `) },
			want:  "images[0]: null where a value is expected"},
		{class: "accepted/lock", name: "diff: a null use of an image",
			setup: func(h *hostileEnv) ([]string, string) { return lockArgs(h, `"uses": [`, `"uses": [null, `) },
			want:  "images[0].uses[0]: null"},
		{class: "accepted/lock", name: "diff: images null",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.lock("edited.lock.json", "", "")
				data, _ := os.ReadFile(p)
				s := string(data)
				i := strings.Index(s, `"images": [`)
				j := strings.Index(s[i:], "\n  ],") + i
				h.write(p, s[:i]+`"images": null`+s[j+4:])
				return []string{"diff", filepath.Join(h.out, "compose.lock.json"), p}, p
			}, want: "images: null"},
		{class: "accepted/lock", name: "diff: a null component",
			setup: func(h *hostileEnv) ([]string, string) { return lockArgs(h, `"components": [`, `"components": [null, `) },
			want:  "components[0]: null"},
		{class: "accepted/lock", name: "diff: a null package",
			setup: func(h *hostileEnv) ([]string, string) { return lockArgs(h, `"packages": [`, `"packages": [null, `) },
			want:  "packages[0]: null"},
		{class: "accepted/lock", name: "diff: a profile with a newline",
			setup: func(h *hostileEnv) ([]string, string) {
				return lockArgs(h, `"profile": "minimal"`, `"profile": "minimal\n### injected"`)
			}, want: "holds a control character"},
		{class: "accepted/lock", name: "mirror: a null image entry",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.lock("edited.lock.json", `"images": [`, `"images": [null, `)
				return []string{"mirror", "--lock", p, "--to", "oci:" + h.path("layout")}, p
			}, want: "images[0]: null"},
		{class: "accepted/lock", name: "footprint: a null image entry",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.lock("edited.lock.json", `"images": [`, `"images": [null, `)
				return []string{"footprint", "--lock", p}, p
			}, want: "images[0]: null"},
	}
}

// unclearCases: errors that named the wrong thing or gave advice for
// another tool.
func unclearCases() []hostileCase {
	return []hostileCase{
		{class: "unclear/messages", name: "helmCharts in manifests/",
			setup: func(h *hostileEnv) ([]string, string) {
				h.manifests("edge", map[string]string{"kustomization.yaml": "helmCharts:\n- name: x\n  repo: https://charts.example.com\n"})
				return withEdge(h), "manifests/kustomization.yaml"
			}, want: "a kustomization's helmCharts are not rendered (kustomize's Helm inflation runs a helm binary); give the chart as the component's [chart] (docs/catalog.md, Helm charts), render it with 'helm template'"},
		{class: "unclear/messages", name: "helmGlobals in manifests/",
			setup: func(h *hostileEnv) ([]string, string) {
				h.manifests("edge", map[string]string{"kustomization.yaml": "helmGlobals:\n  chartHome: charts\nresources: []\n"})
				return withEdge(h), "manifests/kustomization.yaml"
			}, want: "helmCharts are not rendered"},
		{class: "unclear/messages", name: "a symlink in manifests/ pointing outside",
			setup: func(h *hostileEnv) ([]string, string) {
				h.manifests("edge", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\n"})
				h.symlink(h.secret, "catalog/components/edge/manifests/cm.yaml")
				return withEdge(h), "manifests/cm.yaml"
			}, want: "outside the component directory (kustomize reads only files inside it)"},
		{class: "unclear/messages", name: "a dangling symlink in manifests/",
			setup: func(h *hostileEnv) ([]string, string) {
				h.manifests("edge", map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\n"})
				h.symlink("nowhere.yaml", "catalog/components/edge/manifests/cm.yaml")
				return withEdge(h), "manifests/cm.yaml"
			}, want: "a symlink to nowhere.yaml, which does not exist"},
	}
}

func allHostileCases() []hostileCase {
	var all []hostileCase
	for _, f := range []func() []hostileCase{userFileCases, catalogGateCases, yamlCases, textCases, pluginCases, outputCases, releaseCases, acceptedCases, unclearCases, registryHostileCases, structureCases, documentCases, linkCases, roughEdgeCases, trustCases, referenceCases, round3RoughEdgeCases, installerHostileCases, chartCases, hardeningHostileCases, round4AirgapCases, round4FetchCases, round4RulesCases, round4OperatorCases, round4WordsCases} {
		all = append(all, f()...)
	}
	return all
}

// TestHostileInputs runs the hostile-input suite (see hostileCase).
func TestHostileInputs(t *testing.T) {
	t.Parallel() // see parallelE2E
	cases := allHostileCases()
	if len(cases) < 300 {
		t.Fatalf("%d hostile cases; the suite must hold at least 300", len(cases))
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		key := tc.class + "/" + tc.name
		if seen[key] {
			t.Fatalf("duplicate case %q", key)
		}
		seen[key] = true
		t.Run(key, func(t *testing.T) {
			h := newHostileEnv(t)
			args, names := tc.setup(h)
			before := snapshot(t, h.out)
			inputs := h.inputs()
			stdout, stderr, code := runGuarded(t, 30*time.Second, args...)
			want := tc.code
			if want == 0 {
				want = exitError
			}
			if code != want {
				t.Errorf("run(%q) = exit %d, want %d; stderr %q", args, code, want, stderr)
			}
			checkOneLineError(t, stderr)
			line := strings.TrimSuffix(strings.TrimPrefix(stderr, "error: "), "\n")
			if !strings.Contains(line, names) {
				t.Errorf("the error does not name %q: %s", names, line)
			}
			if tc.want != "" && !strings.Contains(line, tc.want) {
				t.Errorf("the error does not say %q: %s", tc.want, line)
			}
			if stdout != "" {
				t.Errorf("run(%q) printed on stdout: %q", args, stdout)
			}
			if d := diffSnapshots(before, snapshot(t, h.out)); d != "" {
				t.Errorf("run(%q) changed the previous output: %s", args, d)
			}
			if l := leftovers(t, filepath.Dir(h.out), h.out); len(l) > 0 {
				t.Errorf("run(%q) left %v", args, l)
			}
			if holders := h.secretHolders(inputs, map[string]string{"stdout": stdout, "stderr": stderr}); len(holders) > 0 {
				t.Errorf("the planted secret reached %v", holders)
			}
		})
	}
}

// TestHostileSuiteClasses prints how many cases each class holds (the
// report's table) and keeps every class populated.
func TestHostileSuiteClasses(t *testing.T) {
	counts := map[string]int{}
	for _, tc := range allHostileCases() {
		counts[tc.class]++
	}
	classes := make([]string, 0, len(counts))
	for c := range counts {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	total := 0
	for _, c := range classes {
		t.Logf("%-32s %3d", c, counts[c])
		total += counts[c]
	}
	t.Logf("%-32s %3d", "total", total)
}

// TestHostileValuesQuoted: values the generators must quote rather than
// refuse (spaces, quotes, $ in a device path; invalid UTF-8 in a --config
// file name that reaches a comment) build, and what is written keeps its
// structure: the Containerfile's COPY has exactly the path back, the
// config drop-in's comment stays one comment line. A --config file name
// with a newline is refused before anything is written, as every path
// holding a control character is, from a flag or a composition file
// (request.CheckPath).
func TestHostileValuesQuoted(t *testing.T) {
	h := newHostileEnv(t)
	path := `/etc/edge/my "agent" it's $HOME.conf`
	h.component("edge", fmt.Sprintf("[[files]]\npath = %q\ncontent = \"x = 1\\n\"\n", path))
	out := filepath.Join(h.dir, "built")
	injected := h.write("conf\nRUN touch /tmp/p\n#.yaml", "debugging:\n  logLevel: Debug\n")
	stdout, stderr, code := runGuarded(t, 30*time.Second, "build", "--profile", "minimal", "--arch", "x86_64",
		"--catalog", h.catalogDir(), "--with", "edge", "--bootc", "--config", injected, "--output", out)
	if code != exitUsage || stdout != "" || !strings.HasPrefix(stderr, `error: --config: path "`) || !strings.Contains(stderr, " holds a control character") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("build --config with a newline = exit %d, stdout %q, stderr %q; want exit %d, one line refusing --config's control character", code, stdout, stderr, exitUsage)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the refused build wrote %s: %v", out, err)
	}
	cfg := h.write("conf\xff\xfe.yaml", "debugging:\n  logLevel: Debug\n")
	stdout, stderr, code = runGuarded(t, 30*time.Second, "build", "--profile", "minimal", "--arch", "x86_64",
		"--catalog", h.catalogDir(), "--with", "edge", "--bootc", "--config", cfg, "--output", out)
	if code != exitOK {
		t.Fatalf("build = exit %d: %s", code, stderr)
	}
	_ = stdout
	cf, err := os.ReadFile(filepath.Join(out, "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var copyLine string
	for _, l := range strings.Split(string(cf), "\n") {
		if strings.HasPrefix(l, "COPY ") && strings.Contains(l, "agent") {
			copyLine = l
		}
		if strings.HasPrefix(strings.TrimSpace(l), "RUN touch") {
			t.Errorf("the Containerfile runs the injected command: %q", l)
		}
	}
	// The JSON form, each argument escaped for the builder's word
	// expansion (\$, \", \'): decoded and unescaped, exactly the path.
	args, ok := strings.CutPrefix(copyLine, "COPY --chmod=0644 ")
	var got []string
	if !ok || json.Unmarshal([]byte(args), &got) != nil || len(got) != 2 ||
		safetext.UnescapeContainerfileArg(got[0]) != "files"+path || safetext.UnescapeContainerfileArg(got[1]) != path {
		t.Errorf("COPY line %q does not copy files%s to %s", copyLine, path, path)
	}
	if _, err := os.Stat(filepath.Join(out, "files", path)); err != nil {
		t.Errorf("the device file is not at its path in the output: %v", err)
	}
	dropIn, err := os.ReadFile(filepath.Join(out, "config.d", "10-microshift-compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(dropIn) || !strings.Contains(string(dropIn), " user conf\\xff\\xfe.yaml\n") {
		t.Errorf("the drop-in does not name the config file escaped:\n%s", dropIn)
	}
}

// TestPluginContainmentBuild: through the whole build, a plugin that
// leaves a setsid daemon and a child holding stdout succeeds at once, and
// both are gone afterwards.
func TestPluginContainmentBuild(t *testing.T) {
	h := newHostileEnv(t)
	h.plugin("edge", `( setsid sh -c 'echo $$ > daemon.pid; exec sleep 600' </dev/null >/dev/null 2>&1 & )
while [ ! -s daemon.pid ]; do sleep 0.01; done
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: made\n'
sleep 600 &
echo $! > child.pid`)
	start := time.Now()
	_, stderr, code := runGuarded(t, 30*time.Second, withEdge(h)...)
	if code != exitOK {
		t.Fatalf("build = exit %d: %s", code, stderr)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("build took %s with a plugin leaving processes behind", d)
	}
	for _, f := range []string{"daemon.pid", "child.pid"} {
		data, err := os.ReadFile(filepath.Join(h.compDir("edge"), f))
		if err != nil {
			t.Fatal(err)
		}
		pid := strings.TrimSpace(string(data))
		deadline := time.Now().Add(10 * time.Second)
		for {
			stat, err := os.ReadFile("/proc/" + pid + "/stat")
			if err != nil || strings.Contains(string(stat), ") Z ") {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("process %s (%s) the plugin left is still running", pid, f)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
