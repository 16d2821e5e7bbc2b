// Command countingproxy sits in front of a registry and counts what clients
// upload to it: blob bytes sent (PATCH and PUT bodies of upload sessions),
// blob uploads completed, and cross-repository mounts (POST ?mount= answered
// 201 Created). Bench code only: `make bench` compares microshift-compose
// mirror with skopeo sync through it.
//
//	go run ./hack/countingproxy -listen 127.0.0.1:5001 -to http://127.0.0.1:5000
//
// GET /_counts on the proxy prints the counts as JSON.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
)

type counts struct {
	UploadedBytes int64 `json:"uploaded_bytes"`
	Uploads       int64 `json:"uploads"`
	Mounts        int64 `json:"mounts"`
	Requests      int64 `json:"requests"`
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	to := flag.String("to", "", "registry URL to forward to")
	flag.Parse()
	target, err := url.Parse(*to)
	if err != nil || *to == "" {
		fmt.Fprintln(os.Stderr, "countingproxy: -to URL is required")
		os.Exit(2)
	}
	var uploaded, uploads, mounts, requests atomic.Int64
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	proxy.ModifyResponse = func(resp *http.Response) error {
		r := resp.Request
		if r.Method == http.MethodPost && r.URL.Query().Get("mount") != "" && resp.StatusCode == http.StatusCreated {
			mounts.Add(1)
		}
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/blobs/uploads/") && resp.StatusCode == http.StatusCreated {
			uploads.Add(1)
		}
		return nil
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/_counts" {
			json.NewEncoder(w).Encode(counts{uploaded.Load(), uploads.Load(), mounts.Load(), requests.Load()})
			return
		}
		requests.Add(1)
		if strings.Contains(r.URL.Path, "/blobs/uploads/") && r.Body != nil {
			r.Body = &countingBody{ReadCloser: r.Body, n: &uploaded}
		}
		proxy.ServeHTTP(w, r)
	})
	fmt.Fprintf(os.Stderr, "countingproxy: %s -> %s\n", *listen, target)
	log.Fatal(http.ListenAndServe(*listen, handler))
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
