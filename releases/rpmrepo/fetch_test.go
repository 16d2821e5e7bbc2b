package rpmrepo_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases/rpmrepo"
)

func names(ds []*rpmrepo.Downloaded) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.NEVRA.String())
	}
	return strings.Join(out, " ")
}

func TestFetchOverHTTP(t *testing.T) {
	// createrepo_c compresses the primary metadata with gz by default,
	// as RHEL's CDN serves it; older repositories use xz or bz2. (Debian's
	// createrepo_c cannot write zst, which Fedora's repositories use.)
	for _, compress := range []string{"gz", "xz", "bz2"} {
		t.Run(compress, func(t *testing.T) {
			dir := newRepo(t, "--compress-type", compress)
			srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
			defer srv.Close()
			repo, err := rpmrepo.URLRepo(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			c := &rpmrepo.Client{Timeout: 5 * time.Second}
			got, err := c.Fetch(context.Background(), []*rpmrepo.Repo{repo}, "4.18.7", "x86_64", func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) })
			if err != nil {
				t.Fatalf("Fetch = %v", err)
			}
			want := "microshift-release-info-4.18.7-1.el9.noarch microshift-gateway-api-release-info-4.18.7-1.el9.noarch microshift-multus-release-info-4.18.7-1.el9.noarch microshift-olm-release-info-4.18.7-1.el9.noarch"
			if names(got) != want {
				t.Errorf("Fetch = %s\nwant %s", names(got), want)
			}
			for _, d := range got {
				data, err := os.ReadFile(filepath.Join(dir, "Packages", d.NEVRA.String()+".rpm"))
				if err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(data)
				if d.SHA256 != hex.EncodeToString(sum[:]) {
					t.Errorf("%s: SHA256 %s is not the file's", d.NEVRA, d.SHA256)
				}
				if d.URL != srv.URL+"/Packages/"+d.NEVRA.String()+".rpm" || d.Repo != srv.URL+"/" {
					t.Errorf("%s: URL %s, repo %s", d.NEVRA, d.URL, d.Repo)
				}
				for _, f := range d.Files {
					if f.Base != "4.18.7" {
						t.Errorf("%s: %s base %s", d.NEVRA, f.Name, f.Base)
					}
				}
			}
			if len(lines) != 5 || !strings.HasPrefix(lines[0], "reading the metadata of ") {
				t.Errorf("progress = %q", lines)
			}
		})
	}
}

func TestFetchOverHTTPSWithClientCertificate(t *testing.T) {
	dir := newRepo(t)
	ca := testutil.NewCA(t)
	srv := serveHTTPS(t, dir, ca, ca)
	creds := t.TempDir()
	cert, key := ca.WriteClientFiles(t, creds)
	if err := os.WriteFile(filepath.Join(creds, "ca.pem"), ca.PEM, 0o644); err != nil {
		t.Fatal(err)
	}
	// As subscription-manager writes redhat.repo: $basearch in the URL,
	// the entitlement certificate and key, the CDN's CA (here relative to
	// the .repo file).
	repoFile := filepath.Join(creds, "redhat.repo")
	content := fmt.Sprintf(`[rhocp-4.18-for-rhel-9-$basearch-rpms]
name = Red Hat OpenShift Container Platform 4.18 for RHEL 9 $basearch (RPMs)
baseurl = %s/
enabled = 1
gpgcheck = 1
sslverify = 1
sslcacert = ca.pem
sslclientkey = %s
sslclientcert = %s
metadata_expire = 86400

[rhel-9-for-$basearch-baseos-rpms]
baseurl = %s/content/dist/rhel9/$releasever/$basearch/baseos/os
enabled = 0
`, srv.URL, key, cert, srv.URL)
	if err := os.WriteFile(repoFile, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	repos, err := rpmrepo.LoadRepoFile(repoFile, rpmrepo.NewVars("x86_64", "9"))
	if err != nil {
		t.Fatalf("LoadRepoFile = %v", err)
	}
	sel, err := rpmrepo.Select(repos, nil, repoFile)
	if err != nil || len(sel) != 1 || sel[0].ID != "rhocp-4.18-for-rhel-9-x86_64-rpms" {
		t.Fatalf("Select = %v, %v; want the enabled rhocp repository", sel, err)
	}
	c := &rpmrepo.Client{Timeout: 5 * time.Second}
	got, err := c.Fetch(context.Background(), sel, "4.18.7", "x86_64", nil)
	if err != nil {
		t.Fatalf("Fetch = %v", err)
	}
	if !strings.HasPrefix(names(got), "microshift-release-info-4.18.7-1.el9.noarch microshift-gateway-api") || got[0].Repo != "rhocp-4.18-for-rhel-9-x86_64-rpms" {
		t.Errorf("Fetch = %s from %s", names(got), got[0].Repo)
	}

	// Without the client certificate the server refuses the handshake;
	// without the CA the server is not trusted.
	noCert := *sel[0]
	noCert.ClientCert, noCert.ClientKey = "", ""
	_, err = c.Fetch(context.Background(), []*rpmrepo.Repo{&noCert}, "4.18.7", "x86_64", nil)
	if err == nil || !strings.Contains(err.Error(), "repo rhocp-4.18-for-rhel-9-x86_64-rpms ("+repoFile+" [rhocp-4.18-for-rhel-9-$basearch-rpms]): "+srv.URL+"/repodata/repomd.xml:") || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without a client certificate: %v", err)
	}
	noCA := *sel[0]
	noCA.CACert = ""
	_, err = c.Fetch(context.Background(), []*rpmrepo.Repo{&noCA}, "4.18.7", "x86_64", nil)
	if err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Errorf("without the CA: %v", err)
	}
}

func TestFetchRefuses(t *testing.T) {
	ctx := context.Background()
	c := &rpmrepo.Client{Timeout: 5 * time.Second, Attempts: 1}
	serve := func(t *testing.T, dir string) *rpmrepo.Repo {
		srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
		t.Cleanup(srv.Close)
		r, err := rpmrepo.URLRepo(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// modify changes a package of a fresh repository after createrepo_c
	// listed it.
	modify := func(t *testing.T, nevra string, change func([]byte) []byte) *rpmrepo.Repo {
		dir := newRepo(t)
		p := filepath.Join(dir, "Packages", nevra+".rpm")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, change(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return serve(t, dir)
	}
	t.Run("version the repository lacks", func(t *testing.T) {
		repo := serve(t, newRepo(t))
		_, err := c.Fetch(ctx, []*rpmrepo.Repo{repo}, "4.18.9", "x86_64", nil)
		want := "has no microshift-release-info 4.18.9; nearest: 4.18.6, 4.18.7, 4.19.2 (3 versions, 4.18.6 to 4.19.2)"
		if !errors.Is(err, rpmrepo.ErrVersionNotFound) || !strings.Contains(err.Error(), want) {
			t.Errorf("Fetch = %v\nwant %q", err, want)
		}
	})
	t.Run("checksum mismatch", func(t *testing.T) {
		repo := modify(t, "microshift-release-info-4.18.7-1.el9.noarch", func(b []byte) []byte { b[len(b)/2] ^= 1; return b })
		_, err := c.Fetch(ctx, []*rpmrepo.Repo{repo}, "4.18.7", "x86_64", nil)
		if err == nil || !strings.Contains(err.Error(), "microshift-release-info-4.18.7-1.el9.noarch.rpm: checksum mismatch: sha256 ") {
			t.Errorf("Fetch = %v", err)
		}
	})
	t.Run("truncated RPM", func(t *testing.T) {
		repo := modify(t, "microshift-olm-release-info-4.18.7-1.el9.noarch", func(b []byte) []byte { return b[:len(b)/2] })
		_, err := c.Fetch(ctx, []*rpmrepo.Repo{repo}, "4.18.7", "x86_64", nil)
		if err == nil || !strings.Contains(err.Error(), "microshift-olm-release-info-4.18.7-1.el9.noarch.rpm: truncated download: ") {
			t.Errorf("Fetch = %v", err)
		}
	})
	t.Run("primary metadata damaged", func(t *testing.T) {
		dir := newRepo(t)
		matches, _ := filepath.Glob(filepath.Join(dir, "repodata", "*-primary.xml.gz"))
		if len(matches) != 1 {
			t.Fatalf("primary metadata: %v", matches)
		}
		data, _ := os.ReadFile(matches[0])
		data[len(data)-12] ^= 0xff // the gzip trailer's CRC
		os.WriteFile(matches[0], data, 0o644)
		_, err := c.Fetch(ctx, []*rpmrepo.Repo{serve(t, dir)}, "4.18.7", "x86_64", nil)
		if err == nil || !strings.Contains(err.Error(), "does not match its checksum in repomd.xml") {
			t.Errorf("Fetch = %v", err)
		}
	})
	t.Run("not a repository", func(t *testing.T) {
		_, err := c.Fetch(ctx, []*rpmrepo.Repo{serve(t, t.TempDir())}, "4.18.7", "x86_64", nil)
		if err == nil || !strings.Contains(err.Error(), "/repodata/repomd.xml: not found (404): is ") {
			t.Errorf("Fetch = %v", err)
		}
	})
	t.Run("repository without MicroShift", func(t *testing.T) {
		dir := t.TempDir()
		testutil.BuildRPM(t, filepath.Join(dir, "Packages"), testutil.RPM{Name: "bash", Version: "5.1.8", Files: map[string][]byte{"/usr/share/doc/bash/README": []byte("x")}})
		testutil.CreateRepo(t, dir)
		_, err := c.Fetch(ctx, []*rpmrepo.Repo{serve(t, dir)}, "4.18.7", "x86_64", nil)
		if !errors.Is(err, rpmrepo.ErrVersionNotFound) || !strings.Contains(err.Error(), "has no microshift-release-info package") {
			t.Errorf("Fetch = %v", err)
		}
	})
	t.Run("release-info package without release files", func(t *testing.T) {
		dir := t.TempDir()
		testutil.BuildRPM(t, filepath.Join(dir, "Packages"), testutil.RPM{Name: "microshift-release-info", Version: "4.18.7", Files: map[string][]byte{"/usr/share/microshift/blueprint/b.toml": []byte("x")}})
		testutil.CreateRepo(t, dir)
		_, err := c.Fetch(ctx, []*rpmrepo.Repo{serve(t, dir)}, "4.18.7", "x86_64", nil)
		if !errors.Is(err, rpmrepo.ErrNotReleaseInfo) {
			t.Errorf("Fetch = %v", err)
		}
	})
}

// TestFetchStalls: a repository that stops sending, or never answers, fails
// within a few timeouts instead of hanging.
func TestFetchStalls(t *testing.T) {
	dir := newRepo(t)
	files := http.FileServer(http.Dir(dir))
	for _, tc := range []struct {
		name string
		// stall is the path that stalls, and how.
		stall   string
		partial bool
		want    string
	}{
		{"metadata never answered", "/repodata/repomd.xml", false, "no answer within 300ms"},
		{"package body stalls", ".rpm", true, "repository stopped sending data: less than 16 KiB/s over 300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !strings.HasSuffix(r.URL.Path, tc.stall) {
					files.ServeHTTP(w, r)
					return
				}
				if tc.partial {
					w.Header().Set("Content-Length", "100000")
					w.WriteHeader(http.StatusOK)
					w.Write(make([]byte, 100))
					w.(http.Flusher).Flush()
				}
				<-r.Context().Done()
			}))
			defer srv.Close()
			repo, _ := rpmrepo.URLRepo(srv.URL)
			c := &rpmrepo.Client{Timeout: 300 * time.Millisecond, Attempts: 2}
			start := time.Now()
			_, err := c.Fetch(context.Background(), []*rpmrepo.Repo{repo}, "4.18.7", "x86_64", nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Fetch = %v\nwant %q", err, tc.want)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("a stalled repository took %s to fail", d)
			}
		})
	}
}
