package testutil

import (
	"bytes"
	"context"
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
// serving plain HTTP on 127.0.0.1 with storage in a temporary directory.
type Registry struct {
	// Host is "127.0.0.1:<port>", the registry part of image references.
	Host string
	// Storage is the registry's filesystem storage root.
	Storage string
	cmd     *exec.Cmd
	log     *bytes.Buffer
}

// StartRegistry starts docker-registry for the test and stops it at cleanup.
// A missing binary fails the test: `make test` installs it.
func StartRegistry(t testing.TB) *Registry {
	t.Helper()
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		t.Fatalf("docker-registry is not installed (Debian package docker-registry; `make test` installs it): %v", err)
	}
	var lastErr error
	for range 5 {
		r, err := startRegistry(t, bin)
		if err == nil {
			return r
		}
		lastErr = err
	}
	t.Fatalf("starting docker-registry: %v", lastErr)
	return nil
}

func startRegistry(t testing.TB, bin string) (*Registry, error) {
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
	cfgPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o644); err != nil {
		return nil, err
	}
	r := &Registry{Host: host, Storage: storage, log: &bytes.Buffer{}}
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
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/v2/", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
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
