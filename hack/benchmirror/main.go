// Command benchmirror pushes the synthetic image set `make bench` mirrors to
// a registry and writes a compose.lock.json listing it. Bench code only.
//
//	go run ./hack/benchmirror -registry 127.0.0.1:5000 -lock /tmp/bench.lock.json
//
// The set: -images single-arch images (default 24), each with one of -bases
// shared base layers (default 3 x 128 MiB), a small layer every image
// shares, and three layers of its own (about 9 MiB each): about 1 GiB of
// unique bytes, over a third of it in shared layers, and about 4 GiB if
// every image were pulled on its own.
package main

import (
	"flag"
	"fmt"
	"os"
	"sync"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/compose/plan"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

func main() {
	var (
		host   = flag.String("registry", "", "registry host:port (plain HTTP)")
		lock   = flag.String("lock", "", "compose.lock.json to write")
		nImg   = flag.Int("images", 24, "number of images")
		nBase  = flag.Int("bases", 3, "number of shared base layers")
		baseMB = flag.Int("base-mib", 128, "size of each base layer, MiB")
		ownKB  = flag.Int("own-kib", 9*1024, "size of each image's own layers, KiB")
	)
	flag.Parse()
	if *host == "" || *lock == "" {
		fmt.Fprintln(os.Stderr, "benchmirror: -registry and -lock are required")
		os.Exit(2)
	}
	if err := run(*host, *lock, *nImg, *nBase, int64(*baseMB)<<20, int64(*ownKB)<<10); err != nil {
		fmt.Fprintln(os.Stderr, "benchmirror:", err)
		os.Exit(1)
	}
}

func run(host, lockPath string, nImg, nBase int, baseSize, ownSize int64) error {
	p := &testutil.Pusher{Host: host}
	var mu sync.Mutex // Pusher is not safe for concurrent use
	common := testutil.NewLayer(7, 8<<20)
	bases := make([]testutil.Layer, nBase)
	for i := range bases {
		bases[i] = testutil.NewLayer(uint64(100+i), baseSize)
	}
	refs := make([]string, nImg)
	var unique, shared, naive int64
	shared = common.Desc.Size
	for _, b := range bases {
		shared += b.Desc.Size
	}
	unique = shared
	for i := range nImg {
		layers := []testutil.Layer{bases[i%nBase], common}
		for j := range 3 {
			layers = append(layers, testutil.NewLayer(uint64(1000+i*10+j), ownSize+int64(i*4096+j)))
		}
		mu.Lock()
		ref, err := p.PushImage(fmt.Sprintf("bench/img-%02d", i), "amd64", layers)
		mu.Unlock()
		if err != nil {
			return err
		}
		refs[i] = ref
		cfg, _ := testutil.Image("amd64", layers)
		img := int64(len(cfg.Data))
		for _, l := range layers {
			img += l.Desc.Size
		}
		naive += img
		unique += img - bases[i%nBase].Desc.Size - common.Desc.Size
	}
	lock := plan.Plan{Schema: plan.Schema, Arch: "x86_64", Profile: "bench"}
	for _, r := range refs {
		lock.Images = append(lock.Images, plan.Image{Ref: r, Pinned: true, Uses: []plan.ImageUse{{Component: "bench"}}})
	}
	data, err := compose.EncodeLock(&lock)
	if err != nil {
		return err
	}
	if err := os.WriteFile(lockPath, data, 0o644); err != nil {
		return err
	}
	fmt.Printf("images=%d unique_bytes=%d shared_bytes=%d naive_bytes=%d\n", nImg, unique, shared, naive)
	return nil
}
