package main

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases/rpmrepo"
)

// Round four of the hostile suite (issue 34), the classes about fetching,
// decompressing and sizes: a repository's credentials sent to another
// origin its metadata or a redirect names, decompression bombs in
// repository metadata and RPMs, sizes a registry or a lock states that
// overflow a total, and messages that named the wrong thing.

// fetchArgs is release fetch of 4.18.7 for x86_64 with a short timeout,
// without progress.
func fetchArgs(extra ...string) []string {
	return append([]string{"release", "fetch", "4.18.7", "--quiet", "--arch", "x86_64", "--timeout", "5s"}, extra...)
}

// fileURL is the file:// URL of path as release fetch prints it.
func fileURL(path string) string { return (&url.URL{Scheme: "file", Path: path}).String() }

// leakTrap is a server standing for another origin: it answers every
// request 401 and, when a request brings an Authorization header or a
// client certificate, writes the case's planted secret (the repository's
// password) beside the previous output, where the suite finds it.
func leakTrap(h *hostileEnv, tlsConfig *tls.Config) *httptest.Server {
	leaked := filepath.Join(filepath.Dir(h.out), "leaked-credentials")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var got []string
		if a := r.Header.Get("Authorization"); a != "" {
			raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, "Basic "))
			got = append(got, a, string(raw))
		}
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			got = append(got, "client certificate presented: "+h.token)
		}
		if len(got) > 0 {
			f, _ := os.OpenFile(leaked, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			fmt.Fprintln(f, strings.Join(got, " "))
			f.Close()
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="mirror"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	if tlsConfig != nil {
		srv.TLS = tlsConfig
		srv.StartTLS()
	} else {
		srv.Start()
	}
	h.t.Cleanup(srv.Close)
	return srv
}

// credentialRepo serves a repository whose primary metadata lists
// microshift-release-info 4.18.7 at pkgHref (xml:base pkgBase), with p
// for the primary's own entry in repomd.xml; the server demands
// user:<planted secret>, or, over TLS (tlsConfig), a client certificate.
// redirect sends the package downloads to that origin.
func credentialRepo(h *hostileEnv, p testutil.Primary, pkgHref, pkgBase string, tlsConfig *tls.Config, redirect string) *httptest.Server {
	dir := h.mkdir("repo")
	testutil.WritePrimary(h.t, dir, p, func(w io.Writer) error {
		_, err := io.WriteString(w, testutil.PrimaryDoc(testutil.PrimaryPackage(rpmrepo.CorePackage, "4.18.7", pkgHref, pkgBase)))
		return err
	})
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+h.token))
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tlsConfig == nil && r.Header.Get("Authorization") != want {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if redirect != "" && strings.HasPrefix(r.URL.Path, "/Packages/") {
			http.Redirect(w, r, redirect+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		files.ServeHTTP(w, r)
	}))
	if tlsConfig != nil {
		srv.TLS = tlsConfig
		srv.StartTLS()
	} else {
		srv.Start()
	}
	h.t.Cleanup(srv.Close)
	return srv
}

// withPassword is the server's URL with user:<planted secret>.
func withPassword(h *hostileEnv, srv *httptest.Server) string {
	return strings.Replace(srv.URL, "http://", "http://user:"+h.token+"@", 1) + "/"
}

// repoFile writes a .repo file for baseurl with the planted secret as its
// password, and extra lines.
func repoFile(h *hostileEnv, baseurl string, extra ...string) string {
	return h.write("creds/test.repo", fmt.Sprintf("[rhocp]\nbaseurl = %s/\nusername = user\npassword = %s\n%s", baseurl, h.token, strings.Join(extra, "\n")))
}

// whitespace writes n bytes of spaces.
func whitespace(w io.Writer, n int) error {
	chunk := []byte(strings.Repeat(" ", 64<<10))
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// bombRepo writes a repository (no server: --repo file://) whose primary
// metadata p holds what body writes, and returns the --repo URL and the
// primary file's URL.
func bombRepo(h *hostileEnv, p testutil.Primary, body func(w io.Writer) error) (repo, primary string) {
	dir := h.mkdir("bomb")
	testutil.WritePrimary(h.t, dir, p, body)
	return fileURL(dir) + "/", fileURL(filepath.Join(dir, "repodata", p.Name))
}

// registryImages is an in-process registry for the size and message
// cases.
type registryImages struct {
	h    *hostileEnv
	host string
	p    *testutil.Pusher
}

func newRegistryImages(h *hostileEnv) *registryImages {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	h.t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	return &registryImages{h: h, host: host, p: &testutil.Pusher{Host: host}}
}

func (r *registryImages) must(ref string, err error) string {
	r.h.t.Helper()
	if err != nil {
		r.h.t.Fatal(err)
	}
	return ref
}

// good is an ordinary amd64 image.
func (r *registryImages) good() string {
	return r.must(r.p.PushImage("app/good", "amd64", []testutil.Layer{testutil.NewLayer(1, 100)}))
}

// stated is an image whose manifest states size for its layer.
func (r *registryImages) stated(repo string, size int64) string {
	layer := testutil.NewLayer(2, 100)
	cfg, _ := testutil.Image("amd64", []testutil.Layer{layer})
	if err := r.p.Blob(repo, cfg.Data, cfg.Type); err != nil {
		r.h.t.Fatal(err)
	}
	d := layer.Desc
	d.Size = size
	data, _ := json.Marshal(v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, Config: cfg.Descriptor(nil), Layers: []v1.Descriptor{d}})
	return r.must(r.p.Manifest(repo, testutil.Raw{Data: data, Type: types.OCIManifestSchema1}, "x"))
}

var amd64Only = []v1.Platform{{OS: "linux", Architecture: "amd64"}}

// nested is an index whose amd64 entry is another index.
func (r *registryImages) nested() string {
	layer := testutil.NewLayer(3, 100)
	cfg, m := testutil.Image("amd64", []testutil.Layer{layer})
	for _, b := range []testutil.Raw{cfg, {Data: layer.Data, Type: layer.Desc.MediaType}} {
		if err := r.p.Blob("app/nested", b.Data, b.Type); err != nil {
			r.h.t.Fatal(err)
		}
	}
	inner := testutil.Index([]testutil.Raw{m}, amd64Only)
	r.must(r.p.Manifest("app/nested", m, ""))
	r.must(r.p.Manifest("app/nested", inner, ""))
	return r.must(r.p.Manifest("app/nested", testutil.Index([]testutil.Raw{inner}, amd64Only), "outer"))
}

var schema1Manifest = testutil.Raw{Data: []byte(`{"schemaVersion":1,"name":"app/s1","tag":"latest","architecture":"amd64","fsLayers":[],"history":[]}`), Type: types.DockerManifestSchema1}

// schema1 is a Docker schema 1 manifest.
func (r *registryImages) schema1() string {
	return r.must(r.p.Manifest("app/s1", schema1Manifest, "latest"))
}

// schema1Index is an index whose amd64 entry is a schema 1 manifest.
func (r *registryImages) schema1Index() string {
	r.schema1()
	return r.must(r.p.Manifest("app/s1", testutil.Index([]testutil.Raw{schema1Manifest}, amd64Only), "index"))
}

// diff is diff --resolve-sizes from a lock of a good image to a lock of
// refs.
func (r *registryImages) diff(refs ...string) []string {
	old := writeRefsLock(r.h.t, r.h.mkdir("old"), r.good())
	cur := writeRefsLock(r.h.t, r.h.mkdir("new"), refs...)
	return []string{"diff", old, cur, "--resolve-sizes", "--insecure-registry", r.host, "--timeout", "5s", "--retries", "1"}
}

// footprint is footprint --lock of a lock of refs.
func (r *registryImages) footprint(refs ...string) []string {
	return []string{"footprint", "--lock", writeRefsLock(r.h.t, r.h.mkdir("lock"), refs...), "--insecure-registry", r.host, "--timeout", "5s", "--retries", "1"}
}

// releaseDiff is release diff --resolve-sizes from a release of a good
// image to one of ref.
func (r *registryImages) releaseDiff(ref string) []string {
	file := func(dir, ref string) string {
		r.h.write(filepath.Join(dir, "release-x86_64.json"), `{"release": {"base": "5.0.0"}, "images": {"app": "`+ref+`"}}`)
		return r.h.path(dir)
	}
	return []string{"release", "diff", file("rel-old", r.good()), file("rel-new", ref), "--resolve-sizes", "--arch", "x86_64", "--insecure-registry", r.host, "--timeout", "5s", "--retries", "1"}
}

// footprintLock writes the footprint fixture lock with edit applied to its
// text (once, required to apply), and the fixture itself.
func footprintLock(h *hostileEnv, old, new string) (edited, fixture string) {
	h.t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "lockdiff", "full-footprint.lock.json"))
	if err != nil {
		h.t.Fatal(err)
	}
	s := string(data)
	if !strings.Contains(s, old) {
		h.t.Fatalf("lock edit: %q not in the fixture", old)
	}
	return h.write("edited.lock.json", strings.Replace(s, old, new, 1)), h.write("fixture.lock.json", s)
}

// rpmFile builds an RPM of r and returns its path, transformed by change
// when set.
func rpmFile(h *hostileEnv, r testutil.RPM, change func([]byte) []byte) string {
	p := testutil.BuildRPM(h.t, h.mkdir("rpms"), r)
	if change != nil {
		data, err := os.ReadFile(p)
		if err != nil {
			h.t.Fatal(err)
		}
		if err := os.WriteFile(p, change(data), 0o644); err != nil {
			h.t.Fatal(err)
		}
	}
	return p
}

// rpmBomb is microshift-release-info 4.18.7 holding 8 MiB of zeros (a few
// kilobytes compressed) whose header says its payload is 2000 bytes.
func rpmBomb(h *hostileEnv) string {
	return rpmFile(h, testutil.RPM{Name: rpmrepo.CorePackage, Version: "4.18.7", Files: map[string][]byte{
		rpmrepo.ReleaseDir + "/release-x86_64.json": []byte(`{"release": {"base": "4.18.7"}, "images": {}}`),
		"/usr/share/microshift/blueprint/zeros":     make([]byte, 8<<20),
	}}, func(b []byte) []byte { return testutil.SetRPMSignatureTag(h.t, b, 1007, 2000) })
}

func round4FetchCases() []hostileCase {
	const notOwn = "which is not the repository's own origin: its credentials and client certificate go only to "
	elementBound := fmt.Sprintf("an XML element or the text between two is larger than %d bytes uncompressed", rpmrepo.MaxPrimaryElement)
	const schema1 = "is a Docker schema 1 manifest, a format deprecated since 2017 that this tool does not read"
	return []hostileCase{
		// Credentials go only to the repository's own origin (scheme,
		// host and port); what another origin is sent, it writes beside
		// the output, where the suite finds the planted secret.
		{class: "fetch/credentials", name: "the packages' xml:base names another origin (--repo URL credentials)",
			setup: func(h *hostileEnv) ([]string, string) {
				trap := leakTrap(h, nil)
				repo := credentialRepo(h, testutil.Primary{Name: "p-primary.xml.gz"}, "Packages/m.rpm", trap.URL+"/", nil, "")
				return fetchArgs("--repo", withPassword(h, repo)), trap.URL + "/Packages/m.rpm"
			}, want: notOwn},
		{class: "fetch/credentials", name: "repomd.xml's primary href is absolute at another origin (.repo username and password)",
			setup: func(h *hostileEnv) ([]string, string) {
				trap := leakTrap(h, nil)
				repo := credentialRepo(h, testutil.Primary{Name: "p-primary.xml.gz", Href: trap.URL + "/repodata/p-primary.xml.gz"}, "Packages/m.rpm", "", nil, "")
				return fetchArgs("--repo-file", repoFile(h, repo.URL)), trap.URL + "/repodata/p-primary.xml.gz"
			}, want: notOwn},
		{class: "fetch/credentials", name: "the repository redirects a download to another port of its host",
			setup: func(h *hostileEnv) ([]string, string) {
				trap := leakTrap(h, nil)
				repo := credentialRepo(h, testutil.Primary{Name: "p-primary.xml.gz"}, "Packages/m.rpm", "", nil, trap.URL)
				return fetchArgs("--repo-file", repoFile(h, repo.URL)), repo.URL + "/Packages/m.rpm"
			}, want: notOwn},
		{class: "fetch/credentials", name: "a package href at another origin carries user information of its own",
			setup: func(h *hostileEnv) ([]string, string) {
				trap := leakTrap(h, nil)
				href := strings.Replace(trap.URL, "http://", "http://other:pw@", 1) + "/Packages/m.rpm"
				repo := credentialRepo(h, testutil.Primary{Name: "p-primary.xml.gz"}, href, "", nil, "")
				return fetchArgs("--repo", withPassword(h, repo)), trap.URL + "/Packages/m.rpm"
			}, want: notOwn},
		{class: "fetch/credentials", name: "the client certificate is not presented to a mirror that asks for one",
			setup: func(h *hostileEnv) ([]string, string) {
				ca := testutil.NewCA(h.t)
				trap := leakTrap(h, &tls.Config{Certificates: []tls.Certificate{ca.ServerCert(h.t)}, ClientAuth: tls.RequestClientCert})
				repo := credentialRepo(h, testutil.Primary{Name: "p-primary.xml.gz"}, "Packages/m.rpm", trap.URL+"/",
					&tls.Config{Certificates: []tls.Certificate{ca.ServerCert(h.t)}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool()}, "")
				cert, key := ca.WriteClientFiles(h.t, h.mkdir("creds"))
				caFile := h.write("creds/ca.pem", string(ca.PEM))
				file := h.write("creds/redhat.repo", fmt.Sprintf("[rhocp]\nbaseurl = %s/\nsslcacert = %s\nsslclientcert = %s\nsslclientkey = %s\n", repo.URL, caFile, cert, key))
				return fetchArgs("--repo-file", file), trap.URL + "/Packages/m.rpm"
			}, want: notOwn},

		// Decompressed and streamed input within what its metadata
		// declares and hard caps, never held whole.
		{class: "bounds/decompression", name: "primary.xml.gz holding 384 MiB of whitespace, its open-size declared",
			setup: func(h *hostileEnv) ([]string, string) {
				repo, primary := bombRepo(h, testutil.Primary{Name: "ws-primary.xml.gz"}, func(w io.Writer) error {
					io.WriteString(w, `<?xml version="1.0"?><metadata packages="1">`)
					return whitespace(w, 384<<20)
				})
				return fetchArgs("--repo", repo), primary
			}, want: elementBound},
		{class: "bounds/decompression", name: "primary.xml.zst with a 64 MiB description, no open-size",
			setup: func(h *hostileEnv) ([]string, string) {
				repo, primary := bombRepo(h, testutil.Primary{Name: "d-primary.xml.zst", NoOpenSize: true}, func(w io.Writer) error {
					io.WriteString(w, `<metadata><package type="rpm"><name>microshift-release-info</name><description>`)
					return whitespace(w, 64<<20)
				})
				return fetchArgs("--repo", repo), primary
			}, want: elementBound},
		{class: "bounds/decompression", name: "primary metadata larger uncompressed than its open-size",
			setup: func(h *hostileEnv) ([]string, string) {
				repo, primary := bombRepo(h, testutil.Primary{Name: "o-primary.xml.gz", OpenSize: 4096}, func(w io.Writer) error {
					io.WriteString(w, "<metadata>")
					for range 200 {
						io.WriteString(w, testutil.PrimaryPackage("bash", "5.1.8", "Packages/b.rpm", ""))
					}
					return nil
				})
				return fetchArgs("--repo", repo), primary
			}, want: "larger than 4096 bytes uncompressed, the open-size repomd.xml lists"},
		{class: "bounds/decompression", name: "primary metadata listing 20001 release-info packages",
			setup: func(h *hostileEnv) ([]string, string) {
				repo, primary := bombRepo(h, testutil.Primary{Name: "n-primary.xml.zst"}, func(w io.Writer) error {
					io.WriteString(w, "<metadata>")
					for i := range rpmrepo.MaxPrimaryPackages + 1 {
						io.WriteString(w, testutil.PrimaryPackage(rpmrepo.CorePackage, fmt.Sprintf("4.18.%d", i), "Packages/m.rpm", ""))
					}
					return nil
				})
				return fetchArgs("--repo", repo), primary
			}, want: fmt.Sprintf("more than %d release-info packages", rpmrepo.MaxPrimaryPackages)},
		{class: "bounds/decompression", name: "release import of an RPM whose payload is larger than its header declares",
			setup: func(h *hostileEnv) ([]string, string) {
				p := rpmBomb(h)
				return []string{"release", "import", p}, p
			}, want: "payload is larger than the RPM declares (2000 bytes): refused as an RPM bomb"},
		{class: "bounds/decompression", name: "release fetch of an RPM whose payload is larger than its header declares",
			setup: func(h *hostileEnv) ([]string, string) {
				p := rpmBomb(h)
				dir := h.mkdir("bombrepo")
				if err := os.Rename(p, filepath.Join(dir, filepath.Base(p))); err != nil {
					h.t.Fatal(err)
				}
				testutil.CreateRepo(h.t, dir)
				return fetchArgs("--repo", fileURL(dir)), fileURL(filepath.Join(dir, filepath.Base(p)))
			}, want: "payload is larger than the RPM declares (2000 bytes)"},
		{class: "bounds/decompression", name: "release import of an RPM whose release files add up to more than 16 MiB",
			setup: func(h *hostileEnv) ([]string, string) {
				files := map[string][]byte{}
				for _, c := range []string{"a", "b", "c", "d", "e"} {
					files[rpmrepo.ReleaseDir+"/release-"+c+"-x86_64.json"] = []byte(`{"release": {"base": "4.18.7"}, "images": {}}` + strings.Repeat(" ", 4<<20-100))
				}
				p := rpmFile(h, testutil.RPM{Name: "microshift-a-release-info", Version: "4.18.7", Files: files}, nil)
				return []string{"release", "import", p}, p
			}, want: fmt.Sprintf("add up to more than %d bytes", rpmrepo.MaxReleaseBytes)},

		// Sizes from outside are bounded, and so are their sums.
		{class: "sizes/overflow", name: "diff of a lock whose footprint has a negative component size",
			setup: func(h *hostileEnv) ([]string, string) {
				edited, fixture := footprintLock(h, `"unique": 47233299`, `"unique": -47233299`)
				return []string{"diff", fixture, edited}, edited
			}, want: "states a size of -47233299 bytes: size out of range (a size cannot be negative)"},
		{class: "sizes/overflow", name: "diff of a lock whose footprint total is 2^62 bytes",
			setup: func(h *hostileEnv) ([]string, string) {
				edited, fixture := footprintLock(h, `"unique": 896817250`, `"unique": 4611686018427387904`)
				return []string{"diff", edited, fixture}, edited
			}, want: "footprint: total: unique states a size of 4611686018427387904 bytes"},
		{class: "sizes/overflow", name: "diff --resolve-sizes of three images with layers of 2^62 bytes",
			setup: func(h *hostileEnv) ([]string, string) {
				r := newRegistryImages(h)
				a := r.stated("app/huge", 1<<62)
				return r.diff(a, a, a), a
			}, want: "states a size of 4611686018427387904 bytes: size out of range (more than the 1 TiB a blob may have)"},
		{class: "sizes/overflow", name: "footprint --lock of an image with a layer of 2^63-1 bytes",
			setup: func(h *hostileEnv) ([]string, string) {
				r := newRegistryImages(h)
				a := r.stated("app/huge", 1<<63-1)
				return r.footprint(a), a
			}, want: "states a size of 9223372036854775807 bytes"},
		{class: "sizes/overflow", name: "footprint --lock of an image with a negative layer size",
			setup: func(h *hostileEnv) ([]string, string) {
				r := newRegistryImages(h)
				a := r.stated("app/neg", -4096)
				return r.footprint(a), a
			}, want: "states a size of -4096 bytes: size out of range (a size cannot be negative)"},
		{class: "sizes/overflow", name: "release diff --resolve-sizes of an image with a layer of 2^62 bytes",
			setup: func(h *hostileEnv) ([]string, string) {
				r := newRegistryImages(h)
				a := r.stated("app/huge", 1<<62)
				return r.releaseDiff(a), a
			}, want: "more than the 1 TiB a blob may have"},

		// One accurate reason each.
		{class: "messages/round4", name: "release import of a text file says it is not an RPM",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.write("notes.txt", "hello\n")
				return []string{"release", "import", p}, p
			}, want: "not an RPM file (it does not begin with the RPM lead, magic ed ab ee db) and not a directory: release import takes one release directory"},
		{class: "messages/round4", name: "release import of a .rpm that is not one says so",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.write("fake.rpm", "#!/bin/sh\necho not an rpm\n")
				return []string{"release", "import", p}, p
			}, want: "not an RPM file: it does not begin with the RPM lead (magic ed ab ee db); want a release-info .rpm"},
		{class: "messages/round4", name: "diff --resolve-sizes of an index inside an index",
			setup: func(h *hostileEnv) ([]string, string) {
				r := newRegistryImages(h)
				a := r.nested()
				return r.diff(a), a
			}, want: "the index lists another index (sha256:"},
		{class: "messages/round4", name: "diff --resolve-sizes of a schema 1 manifest",
			setup: func(h *hostileEnv) ([]string, string) {
				r := newRegistryImages(h)
				a := r.schema1()
				return r.diff(a), a
			}, want: schema1},
		{class: "messages/round4", name: "release diff --resolve-sizes of an index inside an index",
			setup: func(h *hostileEnv) ([]string, string) {
				r := newRegistryImages(h)
				a := r.nested()
				return r.releaseDiff(a), a
			}, want: "and an index inside an index is not read"},
		{class: "messages/round4", name: "footprint of an index listing a schema 1 manifest",
			setup: func(h *hostileEnv) ([]string, string) {
				r := newRegistryImages(h)
				a := r.schema1Index()
				return r.footprint(a), a
			}, want: "for linux/amd64 (x86_64): a Docker schema 1 manifest, a format deprecated since 2017"},
	}
}

// TestFetchDecompressionRSS runs the binary under GNU time on the
// decompression bombs of issue 34: primary metadata of 384 MiB and 1 GiB
// of whitespace in a file of about a megabyte (the binary before the
// element bound peaked near 1 GB on the first and accepted the second at
// 3.2 GB with a long --timeout). Each must be refused with one line naming
// the file and the bound, under 100 MB of peak RSS; a large metadata file
// of ordinary packages is read whole in as little. The peak RSS of each is
// logged; FETCH_RSS_BIN=<binary> measures another build (main's) and
// checks nothing.
func TestFetchDecompressionRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("writes gigabyte bombs and runs the binary on them")
	}
	bin, measureOnly := os.Getenv("FETCH_RSS_BIN"), true
	if bin == "" {
		bin, measureOnly = e2eBinary(t), false
	}
	work := t.TempDir()
	bomb := func(name string, p testutil.Primary, body func(w io.Writer) error) (repo, primary string) {
		dir := filepath.Join(work, name)
		testutil.WritePrimary(t, dir, p, body)
		return fileURL(dir) + "/", fileURL(filepath.Join(dir, "repodata", p.Name))
	}
	spaces := func(n int) func(w io.Writer) error {
		return func(w io.Writer) error {
			io.WriteString(w, `<?xml version="1.0"?><metadata packages="1">`)
			return whitespace(w, n)
		}
	}
	// As TestTrustFilesRSS: refused under 100 MB, accepted under 150 MB
	// (a freshly built binary's own pages are some 10 MB more than a
	// cached copy's).
	const refusedBudget, acceptedBudget = 100 * 1000 * 1000 / 1024, 150 * 1000 * 1000 / 1024
	elementBound := fmt.Sprintf("an XML element or the text between two is larger than %d bytes uncompressed", rpmrepo.MaxPrimaryElement)
	type bombCase struct {
		label, repo, primary, version, want string
		budget                              int64
	}
	var cases []bombCase
	add := func(label, version, want string, p testutil.Primary, body func(w io.Writer) error) {
		repo, primary := bomb(fmt.Sprint(len(cases)), p, body)
		budget := int64(refusedBudget)
		if want != elementBound {
			budget = acceptedBudget
		}
		cases = append(cases, bombCase{label, repo, primary, version, want, budget})
	}
	add("384 MiB of whitespace in primary.xml.gz, open-size declared (refused)", "4.18.7", elementBound, testutil.Primary{Name: "a-primary.xml.gz"}, spaces(384<<20))
	add("1 GiB of whitespace in primary.xml.gz, no open-size (refused)", "4.18.7", elementBound, testutil.Primary{Name: "b-primary.xml.gz", NoOpenSize: true}, spaces(1<<30))
	add("1 GiB of whitespace in primary.xml.zst, no open-size (refused)", "4.18.7", elementBound, testutil.Primary{Name: "c-primary.xml.zst", NoOpenSize: true}, spaces(1<<30))
	// 100 MiB of ordinary packages, a release-info one among every 64: read
	// whole, streamed (the version asked for is not there).
	add("100 MiB of ordinary packages (read whole; the version is missing)", "4.17.1", "has no microshift-release-info 4.17.1", testutil.Primary{Name: "d-primary.xml.zst"},
		func(w io.Writer) error {
			io.WriteString(w, `<?xml version="1.0"?><metadata packages="0">`)
			for i := 0; ; i++ {
				pkg := testutil.PrimaryPackage("bash", "5.1.8", "Packages/b.rpm", "")
				if i%64 == 0 {
					pkg = testutil.PrimaryPackage(rpmrepo.CorePackage, fmt.Sprintf("4.18.%d", i/64), "Packages/m.rpm", "")
				}
				if i*len(pkg) > 100<<20 {
					break
				}
				io.WriteString(w, pkg)
			}
			_, err := io.WriteString(w, "</metadata>")
			return err
		})
	for _, tc := range cases {
		t.Run(tc.label, func(t *testing.T) {
			start := time.Now()
			// Without --quiet, which main's binary lacks: the error is the
			// last line, after the progress.
			r, rss := peakRSS(t, work, 120*time.Second, bin, "release", "fetch", tc.version, "--arch", "x86_64", "--timeout", "600s", "--repo", tc.repo, "--output", filepath.Join(t.TempDir(), "out"))
			took := time.Since(start)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			last := lines[len(lines)-1]
			t.Logf("%-72s peak RSS %6.1f MB, %5.1fs, exit %d: %.200s", tc.label, float64(rss)*1024/1e6, took.Seconds(), r.code, last)
			if measureOnly {
				return
			}
			if r.code != exitError || strings.Count(r.stderr, "error: ") != 1 || !strings.HasPrefix(last, "error: ") || !strings.Contains(last, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 1 and one error line with %q", r.code, r.stderr, tc.want)
			}
			if tc.want == elementBound && !strings.Contains(last, tc.primary+": ") {
				t.Errorf("the error does not name %s: %s", tc.primary, last)
			}
			if rss <= 0 || rss >= tc.budget {
				t.Errorf("peak RSS %d KiB, want under %d KiB", rss, tc.budget)
			}
		})
	}
}
