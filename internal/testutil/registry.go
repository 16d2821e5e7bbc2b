package testutil

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Registry is a real CNCF distribution registry (Debian's docker-registry)
// on 127.0.0.1 with storage in a temporary directory: plain HTTP, or TLS
// with a certificate of a test CA and htpasswd authentication.
type Registry struct {
	// Host is "127.0.0.1:<port>", the registry part of image references.
	Host string
	// Storage is the registry's filesystem storage root.
	Storage string
	// User and Password are the htpasswd credentials ("" without auth).
	User, Password string
	// CA signed the registry's certificate (nil for plain HTTP).
	CA *CA
	// Pusher pushes to the registry with its credentials and CA.
	Pusher *Pusher
	cmd    *exec.Cmd
	log    *bytes.Buffer
}

// RegistryOptions secure a test registry.
type RegistryOptions struct {
	// TLS serves HTTPS with a certificate of CA.
	TLS *CA
	// User and Password, when set, require basic auth (htpasswd, bcrypt,
	// made by Apache's htpasswd).
	User, Password string
}

// StartRegistry starts docker-registry for the test and stops it at cleanup.
// A missing binary fails the test: `make test` installs it.
func StartRegistry(t testing.TB) *Registry { return StartSecureRegistry(t, RegistryOptions{}) }

// StartSecureRegistry starts docker-registry with TLS and/or htpasswd
// authentication.
func StartSecureRegistry(t testing.TB, o RegistryOptions) *Registry {
	t.Helper()
	bin := NeedTool(t, "docker-registry", "docker-registry")
	var lastErr error
	for range 5 {
		r, err := startRegistry(t, bin, o)
		if err == nil {
			return r
		}
		lastErr = err
	}
	t.Fatalf("starting docker-registry: %v", lastErr)
	return nil
}

// Client is an HTTP client that trusts the registry's CA.
func (r *Registry) Client() *http.Client {
	if r.CA == nil {
		return http.DefaultClient
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: r.CA.Pool()}}}
}

// URL is the registry's base URL.
func (r *Registry) URL() string {
	if r.CA != nil {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

// Stop stops the registry (a test of what happens when it is gone).
func (r *Registry) Stop() { r.cmd.Process.Kill() }

func htpasswd(t testing.TB, dir, user, password string) (string, error) {
	bin := NeedTool(t, "htpasswd", "apache2-utils")
	out, err := exec.Command(bin, "-Bbn", user, password).Output()
	if err != nil {
		return "", fmt.Errorf("htpasswd: %w", err)
	}
	p := filepath.Join(dir, "htpasswd")
	return p, os.WriteFile(p, out, 0o600)
}

func startRegistry(t testing.TB, bin string, o RegistryOptions) (*Registry, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir := t.TempDir()
	storage := filepath.Join(dir, "storage")
	host := fmt.Sprintf("127.0.0.1:%d", port)
	config := fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
`, storage, host)
	if o.TLS != nil {
		certFile, keyFile := o.TLS.WriteServerFiles(t, dir)
		config += fmt.Sprintf("  tls:\n    certificate: %s\n    key: %s\n", certFile, keyFile)
	}
	if o.User != "" {
		pw, err := htpasswd(t, dir, o.User, o.Password)
		if err != nil {
			return nil, err
		}
		config += fmt.Sprintf("auth:\n  htpasswd:\n    realm: microshift-compose-test\n    path: %s\n", pw)
	}
	cfgPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o644); err != nil {
		return nil, err
	}
	r := &Registry{Host: host, Storage: storage, log: &bytes.Buffer{}, User: o.User, Password: o.Password, CA: o.TLS}
	r.Pusher = &Pusher{Host: host, User: o.User, Password: o.Password}
	if o.TLS != nil {
		r.Pusher.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: o.TLS.Pool()}}
		r.Pusher.Secure = true
	}
	r.cmd = exec.Command(bin, "serve", cfgPath)
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	if err := r.cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- r.cmd.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.URL()+"/v2/", nil)
		if resp, err := r.Client().Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || (o.User != "" && resp.StatusCode == http.StatusUnauthorized) {
				break
			}
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("docker-registry exited: %v: %s", err, r.log.String())
		case <-ctx.Done():
			r.cmd.Process.Kill()
			return nil, fmt.Errorf("docker-registry did not answer on %s: %s", host, r.log.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		<-exited
	})
	return r, nil
}

// Log returns what the registry printed, for failure messages.
func (r *Registry) Log() string { return r.log.String() }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
