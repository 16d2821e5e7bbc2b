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
//
// -release 2 is the next release of that set, for `make bench day2`: every
// third image gets a new layer in place of its last own one (the bases and
// the common layer stay), so a third of the manifests and configs change.
// -minimal N with -lock-minimal FILE also writes a lock of the first N
// images: a smaller plan of the same release. -prefix names the
// repositories (bench/img-NN by default), so that two sets can share one
// registry.
package main

import (
	"flag"
	"fmt"
	"os"
	"sync"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
)

func main() {
	var (
		host   = flag.String("registry", "", "registry host:port (plain HTTP)")
		lock   = flag.String("lock", "", "compose.lock.json to write")
		nImg   = flag.Int("images", 24, "number of images")
		nBase  = flag.Int("bases", 3, "number of shared base layers")
		baseMB = flag.Int("base-mib", 128, "size of each base layer, MiB")
		ownKB  = flag.Int("own-kib", 9*1024, "size of each image's own layers, KiB")
		rel    = flag.Int("release", 1, "release of the set: 1, or 2 (every third image has a new layer)")
		nMin   = flag.Int("minimal", 0, "also write -lock-minimal with the first N images")
		minLk  = flag.String("lock-minimal", "", "compose.lock.json of the first -minimal images")
		prefix = flag.String("prefix", "bench", "repository prefix: PREFIX/img-NN")
	)
	flag.Parse()
	if *host == "" || *lock == "" || (*rel != 1 && *rel != 2) || (*nMin > 0) != (*minLk != "") {
		fmt.Fprintln(os.Stderr, "benchmirror: -registry and -lock are required, -release is 1 or 2, -minimal goes with -lock-minimal")
		os.Exit(2)
	}
	set := benchSet{host: *host, lock: *lock, images: *nImg, bases: *nBase, baseSize: int64(*baseMB) << 20, ownSize: int64(*ownKB) << 10,
		release: *rel, minimal: *nMin, minimalLock: *minLk, prefix: *prefix}
	if err := set.run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchmirror:", err)
		os.Exit(1)
	}
}

type benchSet struct {
	host, lock, minimalLock, prefix string
	images, bases, release, minimal int
	baseSize, ownSize               int64
}

func (b benchSet) run() error {
	p := &testutil.Pusher{Host: b.host}
	var mu sync.Mutex // Pusher is not safe for concurrent use
	common := testutil.NewLayer(7, 8<<20)
	bases := make([]testutil.Layer, b.bases)
	for i := range bases {
		bases[i] = testutil.NewLayer(uint64(100+i), b.baseSize)
	}
	refs := make([]string, b.images)
	var unique, shared, naive int64
	shared = common.Desc.Size
	for _, l := range bases {
		shared += l.Desc.Size
	}
	unique = shared
	changed := 0
	for i := range b.images {
		layers := []testutil.Layer{bases[i%b.bases], common}
		for j := range 3 {
			seed := uint64(1000 + i*10 + j)
			if b.release == 2 && i%3 == 0 && j == 2 {
				seed = uint64(50000 + i) // the next release's layer
			}
			layers = append(layers, testutil.NewLayer(seed, b.ownSize+int64(i*4096+j)))
		}
		if b.release == 2 && i%3 == 0 {
			changed++
		}
		mu.Lock()
		ref, err := p.PushImage(fmt.Sprintf("%s/img-%02d", b.prefix, i), "amd64", layers)
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
		unique += img - bases[i%b.bases].Desc.Size - common.Desc.Size
	}
	if err := writeLock(b.lock, refs); err != nil {
		return err
	}
	if b.minimal > 0 {
		if err := writeLock(b.minimalLock, refs[:min(b.minimal, len(refs))]); err != nil {
			return err
		}
	}
	fmt.Printf("images=%d unique_bytes=%d shared_bytes=%d naive_bytes=%d release=%d changed=%d\n", b.images, unique, shared, naive, b.release, changed)
	return nil
}

func writeLock(path string, refs []string) error {
	lock := plan.Plan{Schema: plan.Schema, Arch: "x86_64", Profile: "bench"}
	for _, r := range refs {
		lock.Images = append(lock.Images, plan.Image{Ref: r, Pinned: true, Uses: []plan.ImageUse{{Component: "bench"}}})
	}
	data, err := lockfile.Encode(&lock)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
