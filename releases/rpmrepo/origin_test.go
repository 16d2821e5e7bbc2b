package rpmrepo_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases/rpmrepo"
)

// recorder is a server's record of the credentials it was sent: each
// request's path with its Authorization header and whether a client
// certificate came with it.
type recorder struct {
	mu       sync.Mutex
	requests []string
	auth     []string // paths that came with an Authorization header
	certs    []string // paths that came with a client certificate
}

// handler serves dir, recording; with want set, a request without that
// Authorization header is answered 401.
func (rec *recorder) handler(dir *string, want string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(r)
		if want != "" && r.Header.Get("Authorization") != want {
			w.Header().Set("WWW-Authenticate", `Basic realm="repo"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		http.FileServer(http.Dir(*dir)).ServeHTTP(w, r)
	})
}

func (rec *recorder) record(r *http.Request) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.requests = append(rec.requests, r.URL.Path)
	if r.Header.Get("Authorization") != "" {
		rec.auth = append(rec.auth, r.URL.Path)
	}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		rec.certs = append(rec.certs, r.URL.Path)
	}
}

func (rec *recorder) counts() (requests, auth, certs int) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.requests), len(rec.auth), len(rec.certs)
}

// basic is the Authorization header of user and password.
func basic(user, password string) string {
	r, _ := http.NewRequest("GET", "http://x/", nil)
	r.SetBasicAuth(user, password)
	return r.Header.Get("Authorization")
}

// TestCredentialsStayAtTheirOrigin: the repository's basic-auth
// credentials (from the --repo URL or a .repo file's username and
// password) and its client certificate go to its own origin only. A
// second server, at another port of the same host (net/http keeps an
// Authorization header on a redirect there), receives the metadata's
// xml:base, an absolute href of repomd.xml, a redirect and an href with
// its own user information, and serves them without credentials: the
// fetch succeeds, the second server sees none.
func TestCredentialsStayAtTheirOrigin(t *testing.T) {
	const user, password = "repo-user", "s3cret-token"
	auth := basic(user, password)
	ctx := context.Background()
	type servers struct {
		a, b       *httptest.Server
		aRec, bRec *recorder
		dir        string
	}
	// start serves one repository directory from a (which demands the
	// credentials) and b (which demands bWants, when set), over HTTP;
	// redirect makes a send package downloads to b.
	start := func(t *testing.T, redirect bool, bWants string) *servers {
		s := &servers{aRec: &recorder{}, bRec: &recorder{}}
		s.b = httptest.NewServer(s.bRec.handler(&s.dir, bWants))
		t.Cleanup(s.b.Close)
		files := s.aRec.handler(&s.dir, auth)
		s.a = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if redirect && strings.HasPrefix(r.URL.Path, "/Packages/") && r.Header.Get("Authorization") == auth {
				s.aRec.record(r)
				http.Redirect(w, r, s.b.URL+r.URL.Path, http.StatusTemporaryRedirect)
				return
			}
			files.ServeHTTP(w, r)
		}))
		t.Cleanup(s.a.Close)
		return s
	}
	urlRepo := func(t *testing.T, s *servers) *rpmrepo.Repo {
		r, err := rpmrepo.URLRepo(strings.Replace(s.a.URL, "http://", "http://"+user+":"+password+"@", 1))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	fileRepo := func(t *testing.T, s *servers) *rpmrepo.Repo {
		content := fmt.Sprintf("[rhocp]\nbaseurl = %s/\nusername = %s\npassword = %s\n", s.a.URL, user, password)
		repos, err := rpmrepo.ParseRepoFile("test.repo", []byte(content), rpmrepo.NewVars("x86_64", "9"))
		if err != nil {
			t.Fatal(err)
		}
		return repos[0]
	}
	for _, tc := range []struct {
		name     string
		redirect bool
		// layout makes the repository (with b's URL known) and returns
		// its directory.
		layout func(t *testing.T, b string) string
		repo   func(t *testing.T, s *servers) *rpmrepo.Repo
		// fromB is how many requests b must have answered.
		fromB int
	}{
		{"xml:base of the packages names another origin (--repo URL credentials)", false,
			func(t *testing.T, b string) string { return newRepo(t, "--baseurl", b+"/") }, urlRepo, 4},
		{"xml:base of the packages names another origin (.repo username and password)", false,
			func(t *testing.T, b string) string { return newRepo(t, "--baseurl", b+"/") }, fileRepo, 4},
		{"repomd.xml's primary href is absolute at another origin", false,
			func(t *testing.T, b string) string {
				dir := newRepo(t)
				testutil.EditRepomd(t, dir, func(doc string) string {
					return strings.Replace(doc, `<location href="repodata/`, `<location href="`+b+`/repodata/`, 1)
				})
				return dir
			}, urlRepo, 1},
		{"a package href at another origin carries its own user information", false,
			func(t *testing.T, b string) string {
				dir := newRepo(t)
				testutil.EditPrimary(t, dir, testutil.Primary{}, func(doc string) string {
					return strings.ReplaceAll(doc, `href="Packages/`, `href="`+strings.Replace(b, "http://", "http://other:pw@", 1)+`/Packages/`)
				})
				return dir
			}, fileRepo, 4},
		{"the repository redirects the downloads to another origin (--repo URL credentials)", true,
			func(t *testing.T, b string) string { return newRepo(t) }, urlRepo, 4},
		// net/http copies an Authorization header set on a request to a
		// redirect for the same host name, whatever the port.
		{"the repository redirects the downloads to another origin (.repo username and password)", true,
			func(t *testing.T, b string) string { return newRepo(t) }, fileRepo, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, tc.redirect, "")
			s.dir = tc.layout(t, s.b.URL)
			var lines []string
			c := &rpmrepo.Client{Timeout: 5 * time.Second, Attempts: 1}
			got, err := c.Fetch(ctx, []*rpmrepo.Repo{tc.repo(t, s)}, "4.18.7", "x86_64", func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) })
			if err != nil {
				t.Fatalf("Fetch = %v", err)
			}
			if len(got) != 4 {
				t.Errorf("Fetch = %s", names(got))
			}
			aReqs, aAuth, _ := s.aRec.counts()
			bReqs, bAuth, _ := s.bRec.counts()
			if aAuth != aReqs || aReqs == 0 {
				t.Errorf("the repository's origin got %d requests, %d with the credentials", aReqs, aAuth)
			}
			if bAuth != 0 || bReqs != tc.fromB {
				t.Errorf("the other origin got %d requests (want %d), %d with an Authorization header: %v", bReqs, tc.fromB, bAuth, s.bRec.auth)
			}
			if !tc.redirect && !strings.Contains(strings.Join(lines, "\n"), " is at "+s.b.URL+", not the origin of ") {
				t.Errorf("progress does not say what is read from another origin:\n%s", strings.Join(lines, "\n"))
			}
		})
	}

	// A mirror that wants the credentials does not get them: the error
	// says why.
	t.Run("another origin that demands credentials", func(t *testing.T) {
		s := start(t, false, auth)
		s.dir = newRepo(t, "--baseurl", s.b.URL+"/")
		_, err := (&rpmrepo.Client{Timeout: 5 * time.Second, Attempts: 1}).Fetch(ctx, []*rpmrepo.Repo{urlRepo(t, s)}, "4.18.7", "x86_64", nil)
		want := s.b.URL + "/Packages/microshift-release-info-4.18.7-1.el9.noarch.rpm: access denied (401 Unauthorized) by " + s.b.URL +
			", which is not the repository's own origin: its credentials and client certificate go only to " + s.a.URL + ", so a mirror its metadata or a redirect names must serve the file without them"
		if err == nil || err.Error() != want {
			t.Errorf("Fetch = %v\nwant %q", err, want)
		}
		if _, bAuth, _ := s.bRec.counts(); bAuth != 0 {
			t.Errorf("the other origin got the credentials %d times", bAuth)
		}
	})
}

// TestClientCertificateStaysAtItsOrigin: over HTTPS, the repository's
// client certificate (an entitlement certificate) is presented to its own
// origin, which demands it, and not to a mirror its metadata names that
// asks for one.
func TestClientCertificateStaysAtItsOrigin(t *testing.T) {
	ca := testutil.NewCA(t)
	aRec, bRec := &recorder{}, &recorder{}
	var dir string
	b := httptest.NewUnstartedServer(bRec.handler(&dir, ""))
	b.TLS = &tls.Config{Certificates: []tls.Certificate{ca.ServerCert(t)}, ClientAuth: tls.RequestClientCert}
	b.StartTLS()
	defer b.Close()
	a := httptest.NewUnstartedServer(aRec.handler(&dir, ""))
	a.TLS = &tls.Config{Certificates: []tls.Certificate{ca.ServerCert(t)}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool()}
	a.StartTLS()
	defer a.Close()
	dir = newRepo(t, "--baseurl", b.URL+"/")

	creds := t.TempDir()
	cert, key := ca.WriteClientFiles(t, creds)
	caFile := filepath.Join(creds, "ca.pem")
	if err := os.WriteFile(caFile, ca.PEM, 0o644); err != nil {
		t.Fatal(err)
	}
	content := fmt.Sprintf("[rhocp]\nbaseurl = %s/\nsslcacert = %s\nsslclientcert = %s\nsslclientkey = %s\n", a.URL, caFile, cert, key)
	repos, err := rpmrepo.ParseRepoFile(filepath.Join(creds, "redhat.repo"), []byte(content), rpmrepo.NewVars("x86_64", "9"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := (&rpmrepo.Client{Timeout: 5 * time.Second, Attempts: 1}).Fetch(context.Background(), repos, "4.18.7", "x86_64", nil)
	if err != nil || len(got) != 4 {
		t.Fatalf("Fetch = %v, %v", got, err)
	}
	aReqs, _, aCerts := aRec.counts()
	bReqs, _, bCerts := bRec.counts()
	if aReqs == 0 || aCerts != aReqs {
		t.Errorf("the repository's origin got %d requests, %d with the client certificate", aReqs, aCerts)
	}
	if bReqs != 4 || bCerts != 0 {
		t.Errorf("the mirror got %d requests (want the 4 packages), %d with the client certificate", bReqs, bCerts)
	}
}
