package upstream_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/releases/knowledge/upstream"
)

const commitA = "5728b8303426e721378dab7c77451ff91220953f"

func TestParsePinsErrors(t *testing.T) {
	stream := func(s, branch, commit string) string {
		return "[[stream]]\nstream = \"" + s + "\"\nbranch = \"" + branch + "\"\ncommit = \"" + commit + "\"\n"
	}
	ok := stream("4.20", "release-4.20", commitA)
	for _, tc := range []struct{ name, doc, want string }{
		{"fine", ok, ""},
		{"none", "", `pins.toml: no [[stream]]`},
		{"unknown key", ok + "colour = 1\n", `pins.toml: line 5: unknown key "stream.colour"`},
		{"syntax", "[[stream]\n", `pins.toml: line 2: expected end of table array name delimiter`},
		{"stream not major.minor", stream("4.20.1", "release-4.20", commitA), `pins.toml: stream[0]: stream "4.20.1" is not major.minor`},
		{"out of order", stream("4.21", "release-4.21", commitA) + ok, `pins.toml: stream[1]: stream 4.20 is not newer than the one before: list streams oldest first`},
		{"short commit", stream("4.20", "release-4.20", commitA[:12]), `pins.toml: stream[0] (4.20): commit "5728b8303426" is not a full commit hash (40 hex digits)`},
		{"bad branch", stream("4.20", "-delete", commitA), `pins.toml: stream[0] (4.20): branch "-delete" is not a branch name`},
		{"branch twice", ok + stream("4.21", "release-4.20", commitA), `pins.toml: stream[1] (4.21): branch release-4.20 pinned twice`},
		{"two development", ok + "development = true\n" + stream("4.21", "main", commitA) + "development = true\n", `pins.toml: 2 streams are marked development; only upstream's development branch is`},
		{"release files commit", ok + "[stream.release_files]\nbranch = \"rebase\"\ncommit = \"HEAD\"\n", `pins.toml: stream[0] (4.20): release_files: commit "HEAD" is not a full commit hash`},
		{"alias of nothing", ok + "[[alias]]\nbranch = \"release-4.23\"\ncommit = \"" + commitA + "\"\nstream = \"5.0\"\n", `pins.toml: alias[0] (release-4.23): stream "5.0" is not pinned`},
		{"alias is a stream", ok + "[[alias]]\nbranch = \"release-4.20\"\ncommit = \"" + commitA + "\"\nstream = \"4.20\"\n", `pins.toml: alias[0]: branch release-4.20 is pinned as a stream too`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := upstream.ParsePins("pins.toml", []byte(tc.doc))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("ParsePins = %v", err)
			case tc.want == "":
				data, err := p.Encode()
				if err != nil {
					t.Fatal(err)
				}
				if again, err := upstream.ParsePins("again", data); err != nil || len(again.Streams) != len(p.Streams) {
					t.Errorf("ParsePins(Encode()) = %v", err)
				}
			case err == nil || !strings.HasPrefix(err.Error(), tc.want):
				t.Errorf("ParsePins = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestParseHandErrors(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"fine", "[[key]]\npath = \"a.b\"\nwhy = \"because\"\nmin = 1\n", ""},
		{"unknown key", "[[key]]\npath = \"a\"\nwhy = \"x\"\nmaximum = 3\n", `handkept.toml: line 4: unknown key "key.maximum"`},
		{"key without why", "[[key]]\npath = \"a\"\nmin = 1\n", `handkept.toml: key[0] "a": path and why are required`},
		{"key bad release", "[[key]]\npath = \"a\"\nwhy = \"x\"\nrelease = \"soon\"\n", `handkept.toml: key[0] "a": release: invalid semver constraint "soon"`},
		{"default and no_default", "[[key]]\npath = \"a\"\nwhy = \"x\"\ndefault = 1\nno_default = true\n", `handkept.toml: key[0] "a": default and no_default together`},
		{"distro without why", "[[distro]]\nrelease = \">=4.16\"\nname = \"rhel-9.4\"\n", `handkept.toml: distro[0]: release, name and why are required`},
		{"major without why", "[distro_major.9]\nimage_type = \"edge-commit\"\n", `handkept.toml: distro_major.9: why is required`},
		{"lvmd without text", "[[lvmd]]\nrelease = \"<5.0\"\n", `handkept.toml: lvmd[0]: release and empty_file are required`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := upstream.ParseHand("handkept.toml", []byte(tc.doc))
			if (tc.want == "") != (err == nil) || (err != nil && !strings.HasPrefix(err.Error(), tc.want)) {
				t.Errorf("ParseHand = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestParseSpec(t *testing.T) {
	const spec = `Name: microshift
%package release-info
%package -n microshift-extra
%prep
%install
install -d -m755 %{buildroot}%{_sysconfdir}/microshift/config.d
install -p -m644 packaging/a.yaml %{buildroot}%{_sysconfdir}/microshift/config.d/00-a.yaml
install -p -m644 packaging/b.yaml -D %{buildroot}/%{_sysconfdir}/microshift/b/
install -p -m644 packaging/*.yaml %{buildroot}%{_sysconfdir}/microshift/
%files
%license LICENSE
%dir %{_sysconfdir}/microshift
%config(noreplace) %{_sysconfdir}/microshift/config.yaml.default
%{_sysconfdir}/microshift/observability/opentelemetry-collector-*.yaml
%{_bindir}/microshift
%files release-info
%ifarch x86_64
%{_sysconfdir}/microshift/config.d/00-a.yaml
%endif
%changelog
* Tue Jan 09 2024 someone
`
	s, err := upstream.ParseSpec("microshift.spec", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"microshift", "microshift-extra", "microshift-release-info"}; !slices.Equal(s.Packages, want) {
		t.Errorf("Packages = %q, want %q", s.Packages, want)
	}
	if got := s.EtcFiles["microshift"]; !slices.Equal(got, []string{"/etc/microshift/config.yaml.default"}) {
		t.Errorf("EtcFiles[microshift] = %q: no directories, globs or /usr files", got)
	}
	if got := s.EtcFiles["microshift-release-info"]; !slices.Equal(got, []string{"/etc/microshift/config.d/00-a.yaml"}) {
		t.Errorf("EtcFiles[release-info] = %q", got)
	}
	if s.Sources["/etc/microshift/config.d/00-a.yaml"] != "packaging/a.yaml" || s.Sources["/etc/microshift/b/b.yaml"] != "packaging/b.yaml" || len(s.Sources) != 2 {
		t.Errorf("Sources = %v, want the two single-file installs", s.Sources)
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"no name", "%package x\n", "microshift.spec:1: %package before the Name: line"},
		{"no name at all", "Summary: x\n", "microshift.spec: no Name: line"},
		{"twice", "Name: m\n%package a\n%package a\n", "microshift.spec: a package is declared twice"},
		{"option", "Name: m\n%package -q a\n", "microshift.spec:2: unsupported option -q"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := upstream.ParseSpec("microshift.spec", []byte(tc.doc)); err == nil || err.Error() != tc.want {
				t.Errorf("ParseSpec = %v, want %q", err, tc.want)
			}
		})
	}
}

// FuzzParseSpec: any input gives packages or one error line, never a
// panic; the base package is always among the packages.
func FuzzParseSpec(f *testing.F) {
	f.Add([]byte("Name: microshift\n%package olm\n%files olm\n%{_sysconfdir}/a\n%install\ninstall -p a %{buildroot}/etc/b/\n"))
	f.Add([]byte("Name: x\n%files -n y\n%config(noreplace) %attr(0644,root,root) %{_sysconfdir}/z\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := upstream.ParseSpec("fuzz.spec", data)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") || !strings.HasPrefix(err.Error(), "fuzz.spec") {
				t.Fatalf("error %q is not one line naming the file", err)
			}
			return
		}
		if len(s.Packages) == 0 || !slices.IsSorted(s.Packages) {
			t.Fatalf("packages %q", s.Packages)
		}
		for _, files := range s.EtcFiles {
			for _, p := range files {
				if !strings.HasPrefix(p, "/etc/") {
					t.Fatalf("etc file %q", p)
				}
			}
		}
	})
}

// FuzzParsePins: pins either parse and encode back to the same pins, or
// fail with one line naming the file.
func FuzzParsePins(f *testing.F) {
	f.Add([]byte("[[stream]]\nstream = \"4.20\"\nbranch = \"release-4.20\"\ncommit = \"" + commitA + "\"\n"))
	f.Add([]byte("[[stream]]\nstream = \"5.1\"\nbranch = \"main\"\ncommit = \"" + commitA + "\"\ndevelopment = true\n[stream.release_files]\nbranch = \"r\"\ncommit = \"" + commitA + "\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := upstream.ParsePins("pins.toml", data)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") || !strings.HasPrefix(err.Error(), "pins.toml") {
				t.Fatalf("error %q is not one line naming the file", err)
			}
			return
		}
		enc, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		again, err := upstream.ParsePins("again", enc)
		if err != nil {
			t.Fatalf("ParsePins(Encode()) = %v", err)
		}
		enc2, _ := again.Encode()
		if string(enc) != string(enc2) {
			t.Fatalf("Encode is not stable")
		}
	})
}
