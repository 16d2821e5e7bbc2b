// Command benchverify pushes the image set `make bench` verifies to a
// registry and writes what both sides of the comparison read: a release
// directory for `microshift-compose release verify`, and a curl config
// fetching exactly the documents verify needs (each manifest by digest and
// each single image's config), the manifest-fetch floor. Bench code only.
//
//	go run ./hack/benchverify -registry 127.0.0.1:5000 -out /tmp/verify
//
// The set, as BenchmarkVerify100 has it: 100 images over 10 repositories,
// 70 single-arch (amd64) and 30 indexes (amd64 and arm64).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

func main() {
	var (
		host = flag.String("registry", "", "registry host:port (plain HTTP)")
		out  = flag.String("out", "", "directory to write release/ and curl.cfg into")
		n    = flag.Int("images", 100, "number of images")
	)
	flag.Parse()
	if *host == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "benchverify: -registry and -out are required")
		os.Exit(2)
	}
	if err := run(*host, *out, *n); err != nil {
		fmt.Fprintln(os.Stderr, "benchverify:", err)
		os.Exit(1)
	}
}

func run(host, out string, n int) error {
	p := &testutil.Pusher{Host: host}
	images := map[string]string{}
	var curl strings.Builder
	fetch := func(path, kind, digest, accept string) {
		fmt.Fprintf(&curl, "url = \"http://%s/v2/%s/%s/%s\"\noutput = \"/dev/null\"\n", host, path, kind, digest)
		if accept != "" {
			fmt.Fprintf(&curl, "header = \"Accept: %s\"\n", accept)
		}
	}
	for i := range n {
		path := fmt.Sprintf("bench/component-%d", i%10)
		layer := testutil.NewLayer(uint64(1000+i), 512)
		var ref string
		var err error
		if i < n*7/10 {
			ref, err = p.PushImage(path, "amd64", []testutil.Layer{layer})
			cfg, m := testutil.Image("amd64", []testutil.Layer{layer})
			fetch(path, "manifests", m.Digest().String(), string(m.Type))
			fetch(path, "blobs", cfg.Digest().String(), "")
		} else {
			arm := testutil.NewLayer(uint64(5000+i), 512)
			ref, _, err = p.PushIndex(path, []string{"amd64", "arm64"}, map[string][]testutil.Layer{"amd64": {layer}, "arm64": {arm}})
			if err == nil {
				fetch(path, "manifests", ref[strings.LastIndex(ref, "@")+1:], "application/vnd.oci.image.index.v1+json")
			}
		}
		if err != nil {
			return err
		}
		images[fmt.Sprintf("image-%03d", i)] = ref
	}
	rel := filepath.Join(out, "release")
	if err := os.MkdirAll(rel, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(map[string]any{"release": map[string]string{"base": "4.19.0"}, "images": images}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(rel, "release-x86_64.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "curl.cfg"), []byte(curl.String()), 0o644); err != nil {
		return err
	}
	fmt.Printf("images=%d fetches=%d\n", n, strings.Count(curl.String(), "url = "))
	return nil
}
