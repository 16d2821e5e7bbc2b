package rpmrepo_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/releases/rpmrepo"
)

func TestParseRepoFile(t *testing.T) {
	data := `# Managed by (rhsm) subscription-manager
[rhocp-4.18-for-rhel-9-$basearch-rpms]
name = Red Hat OpenShift Container Platform 4.18 for RHEL 9 $basearch (RPMs)
baseurl = https://cdn.redhat.com/content/dist/layered/rhel9/$basearch/rhocp/4.18/os
  https://mirror.example/rhocp/${basearch}/4.18/, file:///srv/rhocp-$releasever_major
enabled = 0
sslcacert = /etc/rhsm/ca/redhat-uep.pem
sslclientkey = /etc/pki/entitlement/123-key.pem
sslclientcert = 123.pem
proxy = http://proxy.example:3128
skip_if_unavailable = yes
sslverify = 0

[satellite]
baseurl=https://satellite.example/pulp/content/ACME/Library/content/dist/layered/rhel9/$basearch/rhocp/4.18/os
`
	repos, err := rpmrepo.ParseRepoFile("/etc/yum.repos.d/redhat.repo", []byte(data), rpmrepo.NewVars("aarch64", "9.4"))
	if err != nil {
		t.Fatalf("ParseRepoFile = %v", err)
	}
	if len(repos) != 2 {
		t.Fatalf("%d repositories, want 2", len(repos))
	}
	r := repos[0]
	var urls []string
	for _, u := range r.BaseURLs {
		urls = append(urls, u.String())
	}
	want := "https://cdn.redhat.com/content/dist/layered/rhel9/aarch64/rhocp/4.18/os/ https://mirror.example/rhocp/aarch64/4.18/ file:///srv/rhocp-9/"
	if strings.Join(urls, " ") != want {
		t.Errorf("baseurls = %v\nwant %s", urls, want)
	}
	if r.ID != "rhocp-4.18-for-rhel-9-aarch64-rpms" || r.Where != "/etc/yum.repos.d/redhat.repo [rhocp-4.18-for-rhel-9-$basearch-rpms]" {
		t.Errorf("ID, Where = %q, %q", r.ID, r.Where)
	}
	if r.Enabled || r.SSLVerify || !r.SkipIfUnavailable || r.Proxy.String() != "http://proxy.example:3128" {
		t.Errorf("enabled %v, sslverify %v, skip %v, proxy %v", r.Enabled, r.SSLVerify, r.SkipIfUnavailable, r.Proxy)
	}
	if r.CACert != "/etc/rhsm/ca/redhat-uep.pem" || r.ClientKey != "/etc/pki/entitlement/123-key.pem" || r.ClientCert != "/etc/yum.repos.d/123.pem" {
		t.Errorf("ssl files = %q %q %q (a relative path is the .repo file's directory's)", r.CACert, r.ClientKey, r.ClientCert)
	}
	if s := repos[1]; !s.Enabled || !s.SSLVerify || s.SkipIfUnavailable {
		t.Errorf("defaults: enabled %v, sslverify %v, skip %v", s.Enabled, s.SSLVerify, s.SkipIfUnavailable)
	}

	// Select: the enabled ones by default; by ID (globs), enabled or not.
	sel, err := rpmrepo.Select(repos, nil, "redhat.repo")
	if err != nil || len(sel) != 1 || sel[0].ID != "satellite" {
		t.Errorf("Select() = %v, %v", sel, err)
	}
	sel, err = rpmrepo.Select(repos, []string{"rhocp-*"}, "redhat.repo")
	if err != nil || len(sel) != 1 || sel[0] != r {
		t.Errorf("Select(rhocp-*) = %v, %v", sel, err)
	}
	if _, err := rpmrepo.Select(repos, []string{"rhocp-4.18-for-rhel-9-x86_64-rpms"}, "redhat.repo"); err == nil ||
		err.Error() != `--repo rhocp-4.18-for-rhel-9-x86_64-rpms: redhat.repo has no such repository; did you mean "rhocp-4.18-for-rhel-9-aarch64-rpms"?` {
		t.Errorf("Select(other arch) = %v", err)
	}
}

func TestParseRepoFileRefuses(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"releasever unset", "[r]\nbaseurl = https://h/$releasever/os\n", "f.repo [r]: baseurl: $releasever is not set (pass --releasever)"},
		{"unknown variable", "[r]\nbaseurl = https://h/${contentdir}/os\n", "f.repo [r]: baseurl: $contentdir is not set"},
		{"mirrorlist only", "[r]\nmirrorlist = https://h/mirrors\n", "f.repo [r]: only baseurl is supported, not mirrorlist"},
		{"no baseurl", "[r]\nname = r\n", "f.repo [r]: no baseurl"},
		{"bad boolean", "[r]\nbaseurl = https://h/\nenabled = maybe\n", `f.repo [r]: enabled: "maybe" is not a boolean (1 or 0)`},
		{"bad scheme", "[r]\nbaseurl = ftp://h/\n", `f.repo [r]: baseurl ftp://h/: unsupported scheme "ftp" (want https, http or file)`},
		{"relative file URL", "[r]\nbaseurl = file://repo\n", "f.repo [r]: baseurl file://repo: a file URL must be file:///absolute/path"},
		{"key outside a section", "baseurl = https://h/\n[r]\nbaseurl = https://h/\n", `f.repo: "baseurl" is outside any [repository] section`},
		{"binary", "[r]\x00", "f.repo: not a text file"},
		{"unterminated", "[r]\nbaseurl = https://h/${basearch\n", "f.repo [r]: baseurl: unterminated ${"},
		{"ID with a slash", "[a/b]\nbaseurl = https://h/\n", "f.repo [a/b]: the repository ID must be one word"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rpmrepo.ParseRepoFile("f.repo", []byte(tc.data), rpmrepo.NewVars("x86_64", ""))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseRepoFile = %v\nwant %q", err, tc.want)
			}
		})
	}
}

func TestLoadReposDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.repo", "[one]\nbaseurl = https://h/1/\n")
	write("b.repo", "[two]\nbaseurl = https://h/2/\nenabled = 0\n")
	write("c.repo.rpmsave", "[old]\nbaseurl = https://h/old/\n")
	repos, err := rpmrepo.LoadReposDir(dir, rpmrepo.NewVars("x86_64", ""))
	if err != nil || len(repos) != 2 || repos[0].ID != "one" || repos[1].ID != "two" {
		t.Fatalf("LoadReposDir = %v, %v; want one and two (only *.repo)", repos, err)
	}
	write("d.repo", "[one]\nbaseurl = https://h/again/\n")
	if _, err := rpmrepo.LoadReposDir(dir, rpmrepo.NewVars("x86_64", "")); err == nil ||
		err.Error() != "repository one is defined twice: "+filepath.Join(dir, "a.repo")+" [one] and "+filepath.Join(dir, "d.repo")+" [one]" {
		t.Errorf("a repository twice: %v", err)
	}
	if _, err := rpmrepo.LoadReposDir(filepath.Join(dir, "none"), nil); err == nil || !strings.Contains(err.Error(), "does not exist: pass --repo URL or --repo-file FILE") {
		t.Errorf("missing dir: %v", err)
	}
}
