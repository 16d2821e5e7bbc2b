package blueprints_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/osbuild/blueprint/pkg/blueprint"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/internal/safetext"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan"
)

// outputPath is the mapping build uses: config.d/ and manifests.d/ at the
// top of the output, everything else under files/.
func outputPath(device string) string {
	for _, d := range []string{"config.d/", "manifests.d/"} {
		if _, rest, ok := strings.Cut(device, "/etc/microshift/"+d); ok {
			return d + rest
		}
	}
	return "files" + device
}

// hostilePlan is a valid plan with one device file, service, package,
// firewall port and trusted source set to the values under test.
func hostilePlan(path, mode, service, pkg, port, data string) *plan.Plan {
	return &plan.Plan{
		Release:  plan.Release{Version: "5.0.0", Stream: "5.0"},
		Arch:     "x86_64",
		Profile:  "edge",
		Packages: []plan.Package{{Name: "microshift", Version: "5.0.*"}, {Name: pkg}},
		Images:   []plan.Image{{Ref: "quay.io/org/app@sha256:" + strings.Repeat("a", 64), Pinned: true}},
		Services: plan.Services{Enabled: []string{"microshift", service}},
		Firewall: plan.Firewall{Ports: []string{"6443:tcp", port}, TrustedSources: []string{"10.42.0.0/16"}},
		Files: []plan.File{
			{Path: "/etc/microshift/config.d/10-microshift-compose.yaml", Mode: "0644", Data: []byte("a: 1\n")},
			{Path: path, Mode: mode, Data: []byte(data)},
		},
	}
}

// instruction is one Containerfile instruction, continuation lines joined.
type instruction struct{ cmd, rest string }

// parseContainerfile reads a Containerfile as a builder does: blank and
// comment lines skipped, a line ending in a backslash continued on the
// next (comment lines inside a continuation skipped too).
func parseContainerfile(t testing.TB, data []byte) []instruction {
	t.Helper()
	if i := bytes.IndexFunc(data, func(r rune) bool { return r != '\n' && text.HasUnsafe(string(r)) }); i >= 0 {
		t.Fatalf("Containerfile holds a control character at byte %d:\n%s", i, data)
	}
	var out []instruction
	var cur strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\"))
			continue
		}
		cur.WriteString(line)
		logical := strings.TrimSpace(cur.String())
		cur.Reset()
		cmd, rest, _ := strings.Cut(logical, " ")
		out = append(out, instruction{cmd: cmd, rest: strings.TrimSpace(rest)})
	}
	if cur.Len() > 0 {
		t.Fatalf("Containerfile ends in a continuation:\n%s", data)
	}
	return out
}

// copyArgs parses the arguments of a COPY after its flags: the JSON array
// form (each argument unescaped as a builder's word expansion does) or
// whitespace-separated words.
func copyArgs(t testing.TB, rest string) (mode string, args []string) {
	t.Helper()
	for strings.HasPrefix(rest, "--") {
		flag, after, _ := strings.Cut(rest, " ")
		if m, ok := strings.CutPrefix(flag, "--chmod="); ok {
			mode = m
		} else {
			t.Fatalf("COPY with unexpected flag %q", flag)
		}
		rest = strings.TrimSpace(after)
	}
	if strings.HasPrefix(rest, "[") {
		var js []string
		if err := json.Unmarshal([]byte(rest), &js); err != nil {
			t.Fatalf("COPY %s: JSON form does not parse: %v", rest, err)
		}
		for _, a := range js {
			args = append(args, safetext.UnescapeContainerfileArg(a))
		}
		return mode, args
	}
	return mode, strings.Fields(rest)
}

// shellWords splits a shell command line into words: single quotes group,
// a single quote inside is closed, escaped and reopened (what
// safetext.Shell writes), anything
// else unquoted is split on spaces. It fails on characters that would make
// the shell do more than run one command with these words.
func shellWords(t testing.TB, line string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	in, inWord := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case in && c == '\'':
			in = false
		case in:
			w.WriteByte(c)
		case c == '\'':
			in, inWord = true, true
		case c == '\\' && i+1 < len(line) && line[i+1] == '\'':
			w.WriteByte('\'')
			i++
			inWord = true
		case c == ' ':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case strings.IndexByte("$`\"\\;|&<>(){}*?[]~#!\n", c) >= 0:
			t.Fatalf("unquoted %q in shell line %q", c, line)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if in {
		t.Fatalf("unterminated quote in shell line %q", line)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// runCommands splits a RUN line into its commands (joined by &&) and each
// into words.
func runCommands(t testing.TB, rest string) [][]string {
	var out [][]string
	for _, part := range strings.Split(rest, " && ") {
		out = append(out, shellWords(t, strings.TrimSpace(part)))
	}
	return out
}

// checkContainerfileStructure asserts that the Containerfile of p has the
// structure the plan calls for, whatever its values: one ARG and one FROM,
// COPY instructions whose destinations are exactly the plan's device files
// (or their directories) and the two image steps, a services RUN running
// systemctl with exactly the plan's units, a firewall RUN with exactly its
// ports, and nothing else. exact also requires every value back unchanged.
// Both ways of embedding the images are checked.
func checkContainerfileStructure(t testing.TB, p *plan.Plan, exact bool) {
	t.Helper()
	for _, images := range []string{blueprints.BootcImagesMirror, blueprints.BootcImagesPull} {
		checkContainerfileMode(t, p, exact, images)
	}
}

func checkContainerfileMode(t testing.TB, p *plan.Plan, exact bool, images string) {
	t.Helper()
	pull := images == blueprints.BootcImagesPull
	data := blueprints.Containerfile(p, "images.txt", outputPath, blueprints.BootcOptions{Images: images})
	ins := parseContainerfile(t, data)
	counts := map[string]int{}
	var copied []string
	for _, in := range ins {
		counts[in.cmd]++
		switch in.cmd {
		case "ARG", "FROM":
		case "COPY":
			mode, args := copyArgs(t, in.rest)
			if len(args) != 2 {
				t.Fatalf("COPY with %d arguments, want 2: %q\n%s", len(args), in.rest, data)
			}
			if mode == "" && args[1] != "/usr/lib/microshift-compose/images/" {
				t.Fatalf("COPY without --chmod: %q", in.rest)
			}
			copied = append(copied, args[1])
		case "RUN":
			if strings.HasPrefix(in.rest, "mkdir -p /usr/libexec ") || strings.HasPrefix(in.rest, "while read -r ref; do") ||
				(pull && strings.HasPrefix(in.rest, "--mount=type=secret,id="+blueprints.BootcSecretID+"     set -eu;")) {
				continue // the image loader, the image check and the pull: constant text
			}
			cmds := runCommands(t, in.rest)
			switch cmds[0][0] {
			case "dnf":
				if len(cmds) != 2 || !slices.Equal(cmds[0][:3], []string{"dnf", "install", "-y"}) || !slices.Equal(cmds[1], []string{"dnf", "clean", "all"}) {
					t.Fatalf("packages RUN runs %q", cmds)
				}
				pkgs := cmds[0][3:]
				if want := len(p.Packages) + 2; len(pkgs) != want { // + firewalld, skopeo
					t.Fatalf("dnf installs %d packages, want %d: %q", len(pkgs), want, pkgs)
				}
				if exact && pkgs[1] != p.Packages[1].Name {
					t.Fatalf("dnf installs %q, want %q", pkgs[1], p.Packages[1].Name)
				}
			case "systemctl":
				var units []string
				for _, c := range cmds {
					if c[0] != "systemctl" || (c[1] != "enable" && c[1] != "disable") {
						t.Fatalf("services RUN runs %q", c)
					}
					units = append(units, c[2:]...)
				}
				want := append(append([]string{}, p.Services.Enabled...), p.Services.Disabled...)
				if exact && !slices.Equal(units, want) {
					t.Fatalf("systemctl units %q, want %q", units, want)
				}
				if len(units) != len(want) {
					t.Fatalf("systemctl got %d units, want %d: %q", len(units), len(want), units)
				}
			case "firewall-offline-cmd":
				if len(cmds) != len(p.Firewall.Ports)+len(p.Firewall.Services)+len(p.Firewall.TrustedSources) {
					t.Fatalf("firewall RUN runs %d commands for %d entries", len(cmds), len(p.Firewall.Ports)+len(p.Firewall.TrustedSources))
				}
				for i, c := range cmds {
					if c[0] != "firewall-offline-cmd" || len(c) != 3 {
						t.Fatalf("firewall command %q", c)
					}
					if exact && i < len(p.Firewall.Ports) {
						spec, proto, _ := strings.Cut(p.Firewall.Ports[i], ":")
						if c[2] != "--add-port="+spec+"/"+proto {
							t.Fatalf("firewall port %q, want %q", c[2], p.Firewall.Ports[i])
						}
					}
				}
			case "bootc":
				if len(cmds) != 1 || !slices.Equal(cmds[0], []string{"bootc", "container", "lint"}) {
					t.Fatalf("bootc RUN runs %q", cmds)
				}
			default:
				t.Fatalf("unexpected RUN %q", in.rest)
			}
		default:
			t.Fatalf("unexpected instruction %q in\n%s", in.cmd, data)
		}
	}
	if counts["ARG"] != 1 || counts["FROM"] != 1 {
		t.Fatalf("ARG %d, FROM %d, want one each:\n%s", counts["ARG"], counts["FROM"], data)
	}
	// packages, services, firewall, the image loader, the image check and
	// bootc's lint; and the pull.
	want := 6
	if pull {
		want++
	}
	if counts["RUN"] != want {
		t.Fatalf("%d RUN instructions, want %d:\n%s", counts["RUN"], want, data)
	}
	// Every COPY lands on a device file or a directory of them (or is one
	// of the two image steps), and every device file is copied.
	for _, dst := range copied {
		if dst == "/usr/lib/microshift-compose/images/" || dst == "/usr/lib/microshift-compose/images.txt" {
			continue
		}
		ok := false
		for _, f := range p.Files {
			if f.Path == dst || (strings.HasSuffix(dst, "/") && strings.HasPrefix(f.Path, dst)) {
				ok = true
			}
		}
		if !ok && exact {
			t.Fatalf("COPY to %q, which is no device file of the plan", dst)
		}
	}
	// images.txt, and the mirrored images unless they are pulled.
	want = len(p.Files) + 2
	if pull {
		want--
	}
	if len(copied) != want {
		t.Fatalf("%d COPY instructions, want %d:\n%s", len(copied), want, data)
	}
}

// hostileValues are what the campaign used and the classes behind
// them: newlines and carriage returns that would start an instruction,
// spaces and quotes that would split or end a word, variables and command
// substitutions, globs, escape sequences and bidi overrides.
var hostileValues = []string{
	"/etc/x\nRUN touch /tmp/p\n#",
	"/etc/x\rRUN touch /tmp/p",
	"/etc/my agent.conf",
	`/etc/it's "quoted".conf`,
	"/etc/$HOME/${PATH}.conf",
	"/etc/$(touch /tmp/p).conf",
	"/etc/`id`.conf",
	"/etc/a.conf /etc/shadow",
	"/etc/*.conf",
	"/etc/\x1b]0;pwned\a.conf",
	"/etc/\u202eevil.conf",
	"/etc/x\\\nRUN id",
	"/etc/x\u2028RUN id",
	"/etc/[x].conf",
}

// TestContainerfileHostileValues proves that no device path, service,
// package or firewall value changes the Containerfile's structure: each is
// refused by CheckPlan or quoted so that it comes back unchanged.
func TestContainerfileHostileValues(t *testing.T) {
	for _, v := range hostileValues {
		t.Run(fmt.Sprintf("%q", v), func(t *testing.T) {
			unit := strings.TrimPrefix(v, "/etc/")
			p := hostilePlan(v, "0644", unit, unit, "8080:tcp", "data\n")
			err := blueprints.CheckPlan(p)
			checkContainerfileStructure(t, p, err == nil)
			// The device path alone, with safe other values.
			p = hostilePlan(v, "0644", "edge-agent.service", "edge-agent", "8080:tcp", "data\n")
			err = blueprints.CheckPlan(p)
			safe := safetext.DevicePath(v) == nil
			if (err == nil) != safe {
				t.Errorf("CheckPlan = %v, want refused=%t", err, !safe)
			}
			checkContainerfileStructure(t, p, err == nil)
		})
	}
	// The values the generator must quote rather than refuse.
	for _, v := range []string{"/etc/my agent.conf", `/etc/it's "quoted".conf`, "/etc/$HOME/${PATH}.conf", "/etc/$(touch /tmp/p).conf"} {
		if err := blueprints.CheckPlan(hostilePlan(v, "0644", "a.service", "a", "8080:tcp", "")); err != nil {
			t.Errorf("CheckPlan(%q) = %v, want it accepted and quoted", v, err)
		}
	}
}

// TestCheckPlanRefuses lists what CheckPlan refuses, one value at a time.
func TestCheckPlanRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(p *plan.Plan)
		want string
	}{
		{"newline in a path", func(p *plan.Plan) { p.Files[1].Path = "/etc/x\nRUN touch /tmp/p\n#" }, `device file path "/etc/x\nRUN touch /tmp/p\n#" contains a control character`},
		{"relative path", func(p *plan.Plan) { p.Files[1].Path = "etc/x" }, `device file path "etc/x" must be absolute and clean`},
		{"glob", func(p *plan.Plan) { p.Files[1].Path = "/etc/*.conf" }, `contains one of * ? [ ] \`},
		{"mode", func(p *plan.Plan) { p.Files[1].Mode = "0644 /etc" }, `mode "0644 /etc" is not octal`},
		{"binary data", func(p *plan.Plan) { p.Files[1].Data = []byte{0xff, 0xfe} }, "is not UTF-8 text"},
		{"service", func(p *plan.Plan) { p.Services.Enabled[1] = "a; id" }, `service "a; id" is not a systemd unit name`},
		{"package", func(p *plan.Plan) { p.Packages[1].Name = "a b" }, `package "a b" is not a package name`},
		{"package version", func(p *plan.Plan) { p.Packages[1].Version = "1 && id" }, `version "1 && id" is not a version`},
		{"port", func(p *plan.Plan) { p.Firewall.Ports[1] = "80/tcp;id" }, `firewall port "80/tcp;id"`},
		{"source", func(p *plan.Plan) { p.Firewall.TrustedSources[0] = "$(id)" }, `firewall trusted source "$(id)"`},
		{"image", func(p *plan.Plan) { p.Images[0].Ref = "quay.io/a\n" }, `image "quay.io/a\n" contains a control character`},
		{"profile", func(p *plan.Plan) { p.Profile = "edge\nRUN id" }, `profile "edge\nRUN id" is not a name`},
		{"component", func(p *plan.Plan) { p.Components = []plan.Component{{Name: "A B"}} }, `component "A B" is not a name`},
	} {
		p := hostilePlan("/etc/edge/agent.conf", "0644", "edge.service", "edge", "8080:tcp", "x")
		if err := blueprints.CheckPlan(p); err != nil {
			t.Fatalf("CheckPlan(valid) = %v", err)
		}
		tc.edit(p)
		err := blueprints.CheckPlan(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: CheckPlan = %v, want it to say %q", tc.name, err, tc.want)
		}
	}
}

// checkBlueprintRoundTrip encodes the blueprint of p and decodes it back:
// the TOML must parse and hold exactly the plan's files, services and
// packages, so that no value can add a key, a table or an entry.
func checkBlueprintRoundTrip(t testing.TB, p *plan.Plan) {
	t.Helper()
	data, err := blueprints.Encode(blueprints.FromPlan(p))
	if err != nil {
		t.Fatalf("Encode = %v", err)
	}
	var back blueprint.Blueprint
	md, err := toml.Decode(string(data), &back)
	if err != nil {
		t.Fatalf("blueprint.toml does not parse: %v\n%s", err, data)
	}
	if und := md.Undecoded(); len(und) > 0 {
		t.Fatalf("blueprint.toml has keys the blueprint does not: %v", und)
	}
	if back.Customizations == nil || len(back.Customizations.Files) != len(p.Files) {
		t.Fatalf("blueprint.toml has the wrong number of files:\n%s", data)
	}
	for i, f := range p.Files {
		got := back.Customizations.Files[i]
		if got.Path != f.Path || got.Data != string(f.Data) || got.Mode != f.Mode {
			t.Fatalf("file %d comes back as %q %q %q, want %q %q %q", i, got.Path, got.Mode, got.Data, f.Path, f.Mode, f.Data)
		}
	}
	if !slices.Equal(back.Customizations.Services.Enabled, p.Services.Enabled) {
		t.Fatalf("services come back as %q, want %q", back.Customizations.Services.Enabled, p.Services.Enabled)
	}
	if len(back.Packages) != len(p.Packages) || back.Packages[1].Name != p.Packages[1].Name {
		t.Fatalf("packages come back as %+v", back.Packages)
	}
}

func TestBlueprintHostileValues(t *testing.T) {
	for _, v := range hostileValues {
		unit := strings.TrimPrefix(v, "/etc/")
		p := hostilePlan(v, "0644", unit, unit, "8080:tcp", "line\n\"\"\"\n'''\n[x]\n"+v)
		checkBlueprintRoundTrip(t, p)
	}
}

// FuzzContainerfile writes the Containerfile of plans with arbitrary
// device paths, modes, services, packages and firewall ports: the
// structure must always be what the plan calls for, and when CheckPlan
// accepts the plan, every value must come back unchanged.
func FuzzContainerfile(f *testing.F) {
	f.Add("/etc/edge/agent.conf", "0644", "edge.service", "edge", "8080:tcp")
	for _, v := range hostileValues {
		f.Add(v, "0600", strings.TrimPrefix(v, "/etc/"), "pkg", "1-2:udp")
	}
	f.Fuzz(func(t *testing.T, path, mode, service, pkg, port string) {
		p := hostilePlan(path, mode, service, pkg, port, "")
		checkContainerfileStructure(t, p, blueprints.CheckPlan(p) == nil)
	})
}

// FuzzBlueprint encodes plans with arbitrary paths, contents, services and
// packages: whatever CheckPlan accepts must encode to TOML that decodes to
// exactly the plan.
func FuzzBlueprint(f *testing.F) {
	f.Add("/etc/edge/agent.conf", "a = 1\n", "edge.service", "edge")
	for _, v := range hostileValues {
		f.Add(v, v+"\n\"\"\"'''", strings.TrimPrefix(v, "/etc/"), "pkg")
	}
	f.Fuzz(func(t *testing.T, path, data, service, pkg string) {
		p := hostilePlan(path, "0644", service, pkg, "8080:tcp", data)
		if blueprints.CheckPlan(p) != nil {
			return
		}
		checkBlueprintRoundTrip(t, p)
	})
}
