package serve_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/microshift-compose/microshift-compose/airgap/serve"
	"github.com/microshift-compose/microshift-compose/releases"
)

// TestServeDropsHalfSentRequests: a client that sends half a request (its
// headers unfinished, or a body it never completes) or idles on a
// keep-alive connection is disconnected by the server's timeouts instead
// of holding a connection for ever; headers beyond the bound are refused
// with 431; a whole request still gets its answer.
func TestServeDropsHalfSentRequests(t *testing.T) {
	defer serve.SetTimeouts(time.Second, 2*time.Second, time.Second)()
	f := newFixture(t)
	from := f.mirror(t, "oci:"+t.TempDir()+"/layout", releases.X86_64)
	r := start(t, from, serve.Options{})

	// closed reports whether the server closes c (EOF or reset) before the
	// test's own guard, reading whatever it sends first.
	closed := func(c net.Conn) bool {
		c.SetReadDeadline(time.Now().Add(60 * time.Second))
		_, err := io.Copy(io.Discard, c)
		var ne net.Error
		return !(errors.As(err, &ne) && ne.Timeout())
	}
	for _, tc := range []struct{ name, send string }{
		{"headers never finished", "GET /v2/ HTTP/1.1\r\nHost: x\r\n"},
		{"a body never finished", "PUT /v2/openshift-release-dev/ocp-v4.0-art-dev/blobs/uploads/x HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\nabc"},
		{"nothing at all", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", r.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, tc.send); err != nil {
				t.Fatal(err)
			}
			if !closed(c) {
				t.Errorf("the server held a connection that sent %q", tc.send)
			}
		})
	}

	t.Run("an idle keep-alive connection", func(t *testing.T) {
		c, err := net.Dial("tcp", r.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /v2/ HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /v2/: %v, %v", resp, err)
		}
		resp.Body.Close()
		if !closed(c) {
			t.Error("the server held an idle keep-alive connection")
		}
	})

	t.Run("headers beyond the bound", func(t *testing.T) {
		req, _ := http.NewRequest("GET", "http://"+r.Host+"/v2/", nil)
		req.Header.Set("X-Padding", strings.Repeat("x", serve.MaxHeaderBytes+4096))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("GET /v2/ with %d bytes of headers: %d, want 431", serve.MaxHeaderBytes+4096, resp.StatusCode)
		}
	})
}

// TestServeCatalog: the catalog lists every repository served (under
// the prefix), in pages as a client asks for them, and each repository's
// tags are listed (none for one of untagged images).
func TestServeCatalog(t *testing.T) {
	f := newFixture(t)
	from := f.mirror(t, "oci:"+t.TempDir()+"/layout", releases.X86_64)
	r := start(t, from, serve.Options{Prefix: "site"})
	reg, err := name.NewRegistry(r.Host, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"site/lvms4/topolvm-rhel9", "site/openshift-release-dev/ocp-v4.0-art-dev", "site/ubi9/toolbox"}
	got, err := remote.Catalog(context.Background(), reg)
	if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("catalog = %v, %v; want %v", got, err, want)
	}
	var paged []string
	for last := ""; ; {
		page, err := remote.CatalogPage(reg, last, 1)
		if err != nil {
			t.Fatalf("catalog page after %q: %v", last, err)
		}
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		last = page[len(page)-1]
	}
	if strings.Join(paged, " ") != strings.Join(want, " ") {
		t.Errorf("the catalog a page of 1 at a time = %v, want %v", paged, want)
	}
	for repo, tags := range map[string]string{"site/ubi9/toolbox": "9.4", "site/lvms4/topolvm-rhel9": ""} {
		rr, _ := name.NewRepository(r.Host+"/"+repo, name.Insecure)
		got, err := remote.List(rr)
		if tags == "" {
			if err == nil && len(got) != 0 {
				t.Errorf("tags of %s = %v, want none", repo, got)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != tags {
			t.Errorf("tags of %s = %v, %v; want %s", repo, got, err, tags)
		}
	}
}
