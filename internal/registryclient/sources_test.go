package registryclient_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

const digest = "sha256:0123456789012345678901234567890123456789012345678901234567890123"

func writeConf(t *testing.T, conf string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "registries.conf")
	if err := os.WriteFile(p, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPullSources(t *testing.T) {
	conf := writeConf(t, `
[[registry]]
location = "quay.io"
[[registry.mirror]]
location = "mirror.example.com:5000/ms"
[[registry.mirror]]
location = "tags.example.com/t"
pull-from-mirror = "tag-only"

[[registry]]
location = "blocked.example.com"
blocked = true

[[registry]]
location = "plain.example.com"
insecure = true

[[registry]]
location = "registry.redhat.io"
[[registry.mirror]]
location = "local.example.com:8443/rh"
insecure = true
`)
	o, err := registryclient.Options{RegistriesConf: conf}.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ref  string
		want []string
	}{
		{"quay.io/org/app@" + digest, []string{"mirror.example.com:5000/ms/org/app@" + digest, "quay.io/org/app@" + digest}},
		{"quay.io/org/app:v1", []string{"mirror.example.com:5000/ms/org/app:v1", "tags.example.com/t/org/app:v1", "quay.io/org/app:v1"}},
		{"ghcr.io/org/app@" + digest, []string{"ghcr.io/org/app@" + digest}},
		{"registry.redhat.io/lvms4/op@" + digest, []string{"local.example.com:8443/rh/lvms4/op@" + digest, "registry.redhat.io/lvms4/op@" + digest}},
	} {
		got, err := o.PullSources(tc.ref)
		if err != nil {
			t.Errorf("PullSources(%s) = %v", tc.ref, err)
			continue
		}
		var refs []string
		for i, s := range got {
			refs = append(refs, s.Ref.String())
			if s.Mirror != (i < len(got)-1) {
				t.Errorf("PullSources(%s)[%d].Mirror = %t", tc.ref, i, s.Mirror)
			}
		}
		if strings.Join(refs, " ") != strings.Join(tc.want, " ") {
			t.Errorf("PullSources(%s) = %v, want %v", tc.ref, refs, tc.want)
		}
	}
	if _, err := o.PullSources("blocked.example.com/xx@" + digest); !errors.Is(err, registryclient.ErrBlocked) {
		t.Errorf("PullSources of a blocked registry = %v, want ErrBlocked", err)
	}
	// insecure = true: plain HTTP allowed, for the registry and for a mirror.
	for _, ref := range []string{"plain.example.com/xx@" + digest, "local.example.com:8443/rh/lvms4/op@" + digest} {
		r, err := o.ParseReference(ref)
		if err != nil || r.Context().Scheme() != "http" {
			t.Errorf("ParseReference(%s) = %v, %v; want an insecure registry", ref, r, err)
		}
	}
	if r, _ := o.ParseReference("quay.io/xx@" + digest); r.Context().Scheme() != "https" {
		t.Errorf("quay.io is insecure")
	}
}

func TestBrokenRegistriesConf(t *testing.T) {
	conf := writeConf(t, "[[registry]]\nlocation = \"quay.io\"\nmirror = 3\n")
	_, err := registryclient.Options{RegistriesConf: conf}.Prepare()
	if err == nil || !strings.Contains(err.Error(), conf) {
		t.Fatalf("Prepare() with a broken registries.conf = %v, want an error naming it", err)
	}
	_, err = registryclient.Options{RegistriesConf: filepath.Join(t.TempDir(), "nope.conf")}.Prepare()
	if err == nil || !strings.Contains(err.Error(), "--registries-conf") || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("Prepare() with a missing registries.conf = %v", err)
	}
}

// TestCertsD serves a registry with a certificate of a test CA: verified
// with the CA from certs.d (HOME's, then --cert-dir), refused without it
// (at once: a certificate does not get better when asked again), and
// accepted unverified with --tls-verify=false.
func TestCertsD(t *testing.T) {
	cleanHome(t)
	ca := testutil.NewCA(t)
	srv := httptest.NewUnstartedServer(registry.New(registry.Logger(nopLogger())))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.ServerCert(t)}}
	srv.Config.ErrorLog = nopLogger()
	var conns atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "https://")
	pushRandom(t, host, "app/x", remote.WithTransport(&http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}))
	ctx := deadline(t)
	get := func(o registryclient.Options) error {
		o, err := o.Prepare()
		if err != nil {
			return err
		}
		_, err = remote.Get(mustRef(t, host+"/app/x:v1"), o.Remote(ctx)...)
		return err
	}

	conns.Store(0)
	err := get(registryclient.Options{Retries: 3})
	var uerr x509.UnknownAuthorityError
	if !errors.As(err, &uerr) {
		t.Fatalf("Get without the CA = %v, want an unknown-authority error", err)
	}
	// One HTTPS attempt and go-containerregistry's plain-HTTP fallback for
	// loopback; no retries.
	if n := conns.Load(); n > 2 {
		t.Errorf("%d connections for an untrusted certificate, want at most 2 (no retries)", n)
	}

	ca.WriteCertsD(t, filepath.Join(home, ".config", "containers", "certs.d"), host)
	if err := get(registryclient.Options{Retries: 3}); err != nil {
		t.Errorf("Get with the CA in ~/.config/containers/certs.d/%s = %v", host, err)
	}
	cleanHome(t)

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca.PEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := get(registryclient.Options{Retries: 3, CertDir: dir}); err != nil {
		t.Errorf("Get with --cert-dir = %v", err)
	}
	if err := get(registryclient.Options{Retries: 3, SkipTLSVerify: true}); err != nil {
		t.Errorf("Get with --tls-verify=false = %v", err)
	}
}
