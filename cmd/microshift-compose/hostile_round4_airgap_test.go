package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containers/image/v5/docker/reference"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
)

// Round four of the hostile suite, airgap's part (issue 34): a bundle
// named as its own base or written over what it reads, one rule at every
// door (a bundle's arch, the oci-layout version), archive headers that
// name more than a layout path can be, a bundle refused for a corrupt
// blob, and messages that name only what the command takes. The layouts,
// archives and locks of a case are made under the previous output
// (h.out/airgap), so that the suite's check that nothing changed covers
// them too.

// airgapWork is where a case's layouts live: under the previous output.
func (h *hostileEnv) airgapWork() string {
	h.t.Helper()
	p := filepath.Join(h.out, "airgap")
	if err := os.MkdirAll(p, 0o755); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// siteLayout writes an OCI layout of n small random images, named
// quay.io/edge/appI@DIGEST as mirror names them, and a lock of them for
// arch; it returns the layout's directory and the lock's path.
func (h *hostileEnv) siteLayout(rel string, n int, arch string) (dir, lock string) {
	h.t.Helper()
	dir = filepath.Join(h.airgapWork(), rel)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		h.t.Fatal(err)
	}
	var refs []string
	for i := range n {
		img, err := random.Image(2048, 2)
		if err != nil {
			h.t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			h.t.Fatal(err)
		}
		ref := "quay.io/edge/app" + string(rune('a'+i)) + "@" + d.String()
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})); err != nil {
			h.t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	lock = filepath.Join(h.airgapWork(), rel+"."+arch+".lock.json")
	l := plan.Plan{Schema: plan.Schema, Arch: arch, Profile: "test"}
	for _, r := range refs {
		l.Images = append(l.Images, plan.Image{Ref: r, Pinned: true, Uses: []plan.ImageUse{{Component: "test"}}})
	}
	data, err := lockfile.Encode(&l)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(lock, data, 0o644); err != nil {
		h.t.Fatal(err)
	}
	return dir, lock
}

// cli runs the CLI in process for a case's setup, which must succeed.
func (h *hostileEnv) cli(args ...string) {
	h.t.Helper()
	var out, errOut bytes.Buffer
	if code := run(h.t.Context(), args, &out, &errOut); code != exitOK {
		h.t.Fatalf("setup: %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
}

// bundleOf makes a differential bundle at to (oci:DIR or
// oci-archive:FILE) of a second site layout's images against the first
// one's lock, both read from one layout holding both: what a site that
// holds the first applies. It returns the full layout (the site) and the
// second lock.
func (h *hostileEnv) bundleOf(to, arch string) (site, lock2 string) {
	h.t.Helper()
	site, lock1 := h.siteLayout("site", 2, arch)
	other, lock2 := h.siteLayout("new", 2, arch)
	// The source the bundle is made from: both layouts' images.
	h.cli("mirror", "--quiet", "--from", "oci:"+other, "--to", "oci:"+filepath.Join(h.airgapWork(), "source"))
	h.cli("mirror", "--quiet", "--from", "oci:"+site, "--to", "oci:"+filepath.Join(h.airgapWork(), "source"))
	h.cli("mirror", "--quiet", "--lock", lock2, "--from", "oci:"+filepath.Join(h.airgapWork(), "source"), "--since", lock1, "--to", to)
	return site, lock2
}

// setLayoutVersion rewrites a layout's oci-layout file.
func setLayoutVersion(h *hostileEnv, dir, content string) {
	h.t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// longNameArchive writes an archive of a layout whose entry after
// oci-layout has a header naming size bytes in field (the name as PAX or
// GNU long name, or a PAX comment).
func longNameArchive(h *hostileEnv, rel, field string, size int) string {
	h.t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	write := func(hdr *tar.Header, data string) {
		hdr.Size, hdr.Mode, hdr.Typeflag = int64(len(data)), 0o644, tar.TypeReg
		if err := tw.WriteHeader(hdr); err != nil {
			h.t.Fatal(err)
		}
		tw.Write([]byte(data))
	}
	write(&tar.Header{Name: "oci-layout"}, `{"imageLayoutVersion":"1.0.0"}`)
	long := "blobs/sha256/" + strings.Repeat("a", size)
	switch field {
	case "PAX name":
		write(&tar.Header{Name: long, Format: tar.FormatPAX}, "x")
	case "GNU long name":
		write(&tar.Header{Name: long, Format: tar.FormatGNU}, "x")
	case "PAX comment":
		write(&tar.Header{Name: "blobs/sha256/x", Format: tar.FormatPAX, PAXRecords: map[string]string{"comment": strings.Repeat("c", size)}}, "x")
	}
	write(&tar.Header{Name: "index.json"}, `{"schemaVersion":2,"manifests":[]}`)
	tw.Close()
	p := filepath.Join(h.airgapWork(), rel)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// corruptBlob flips a byte of the largest layer blob of a layout that
// its bundle file does not list as left out.
func corruptBlob(h *hostileEnv, dir string) {
	h.t.Helper()
	var idx v1.IndexManifest
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil || json.Unmarshal(data, &idx) != nil {
		h.t.Fatalf("reading %s/index.json: %v", dir, err)
	}
	// The second image's manifest, and its last layer.
	m := idx.Manifests[len(idx.Manifests)-1]
	mdata, err := os.ReadFile(filepath.Join(dir, "blobs", "sha256", m.Digest.Hex))
	if err != nil {
		h.t.Fatal(err)
	}
	var man v1.Manifest
	if err := json.Unmarshal(mdata, &man); err != nil {
		h.t.Fatal(err)
	}
	l := man.Layers[len(man.Layers)-1]
	p := filepath.Join(dir, "blobs", "sha256", l.Digest.Hex)
	b, err := os.ReadFile(p)
	if err != nil {
		h.t.Fatal(err)
	}
	b[0] ^= 0xff
	if err := os.WriteFile(p, b, 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func round4AirgapCases() []hostileCase {
	var cases []hostileCase
	add := func(class, name string, setup func(h *hostileEnv) ([]string, string), want string, code int) {
		cases = append(cases, hostileCase{class: class, name: name, setup: setup, want: want, code: code})
	}
	w := func(h *hostileEnv, rel string) string { return filepath.Join(h.airgapWork(), rel) }

	// A bundle named as its own base, however the two are written: the
	// same path, a symlink, a hard link, oci: and oci-archive: of one
	// file, a split archive's list; a layout as its own base.
	sinceCases := []struct {
		name  string
		since func(h *hostileEnv, archive string) string
		split bool
	}{
		{"the same path", func(_ *hostileEnv, a string) string { return "oci-archive:" + a }, false},
		{"with ./ and ..", func(_ *hostileEnv, a string) string {
			return "oci-archive:" + filepath.Dir(a) + "/./x/../" + filepath.Base(a)
		}, false},
		{"a symlink to it", func(h *hostileEnv, a string) string { return "oci-archive:" + h.symlink(a, w(h, "link.tar")) }, false},
		{"a hard link of it", func(h *hostileEnv, a string) string {
			if err := os.Link(a, w(h, "hard.tar")); err != nil {
				h.t.Fatal(err)
			}
			return "oci-archive:" + w(h, "hard.tar")
		}, false},
		{"oci: of the same file", func(_ *hostileEnv, a string) string { return "oci:" + a }, false},
		{"its split list", func(_ *hostileEnv, a string) string { return "oci-archive:" + a + ".parts.json" }, true},
		{"its first part", func(_ *hostileEnv, a string) string { return "oci-archive:" + a + ".001" }, true},
	}
	for _, c := range sinceCases {
		add("day2/bundle", "mirror --since the destination: "+c.name, func(h *hostileEnv) ([]string, string) {
			site, lock := h.siteLayout("site", 2, "x86_64")
			archive := w(h, "day2.tar")
			args := []string{"mirror", "--quiet", "--from", "oci:" + site, "--to", "oci-archive:" + archive}
			if c.split {
				args = append(args, "--max-size", "1MiB")
			}
			h.cli(args...)
			since := c.since(h, archive)
			args = []string{"mirror", "--lock", lock, "--from", "oci:" + site, "--since", since, "--to", "oci-archive:" + archive}
			if c.split {
				args = append(args, "--max-size", "1MiB")
			}
			parsed, err := airgap.ParseSource(since)
			if err != nil {
				h.t.Fatal(err)
			}
			return args, "--since " + parsed.String()
		}, "a bundle is made against what the site holds", 0)
	}
	add("day2/bundle", "mirror --since the destination layout", func(h *hostileEnv) ([]string, string) {
		site, lock := h.siteLayout("site", 2, "x86_64")
		src := w(h, "src")
		h.cli("mirror", "--quiet", "--from", "oci:"+site, "--to", "oci:"+src)
		return []string{"mirror", "--lock", lock, "--from", "oci:" + src, "--since", "oci:" + site + "/", "--to", "oci:" + site}, "--since oci:" + site
	}, "write the bundle to a new file or directory", 0)
	add("day2/bundle", "mirror --from a symlink to the destination", func(h *hostileEnv) ([]string, string) {
		site, _ := h.siteLayout("site", 1, "x86_64")
		link := h.symlink(site, "link")
		return []string{"mirror", "--from", "oci:" + link, "--to", "oci:" + site}, "--from oci:" + link
	}, "it is also the source", 0)
	add("day2/bundle", "mirror --to oci-archive: over its own --lock", func(h *hostileEnv) ([]string, string) {
		site, lock := h.siteLayout("site", 1, "x86_64")
		return []string{"mirror", "--lock", lock, "--from", "oci:" + site, "--to", "oci-archive:" + lock}, "--lock " + lock
	}, "would replace --lock", exitUsage)
	add("day2/bundle", "mirror --to oci: over its --since given as the layout's index.json", func(h *hostileEnv) ([]string, string) {
		site, lock := h.siteLayout("site", 1, "x86_64")
		src := w(h, "src")
		h.cli("mirror", "--quiet", "--from", "oci:"+site, "--to", "oci:"+src)
		base := filepath.Join(site, "index.json")
		return []string{"mirror", "--lock", lock, "--from", "oci:" + src, "--since", base, "--to", "oci:" + site}, "--since " + base
	}, "which this command reads", exitUsage)

	// One rule at every door: a bundle's arch (--since checked it; --from
	// now does), the oci-layout version wherever a layout is read or
	// written.
	add("rules/one-rule", "mirror --from a bundle for another arch", func(h *hostileEnv) ([]string, string) {
		bundle := w(h, "day2")
		h.bundleOf("oci:"+bundle, "aarch64")
		_, lockX86 := h.siteLayout("x86", 1, "x86_64")
		return []string{"mirror", "--lock", lockX86, "--from", "oci:" + bundle, "--to", "oci:" + w(h, "other")}, "oci:" + bundle
	}, "it is a bundle for aarch64, and the plan is for x86_64", 0)
	for _, v := range []struct{ name, content, want string }{
		{"version 2.0.0", `{"imageLayoutVersion":"2.0.0"}`, `imageLayoutVersion "2.0.0", which this version does not read`},
		{"no version", `{"imageLayoutVersion2":"1.0.0"}`, "has no imageLayoutVersion"},
		{"not JSON", `imageLayoutVersion: 1.0.0`, "is not a JSON object"},
	} {
		doors := []struct {
			name string
			args func(h *hostileEnv, dir, lock string) ([]string, string)
			code int
		}{
			{"mirror --from oci:", func(h *hostileEnv, dir, _ string) ([]string, string) {
				return []string{"mirror", "--from", "oci:" + dir, "--to", "oci:" + w(h, "copy")}, "oci:" + dir
			}, 0},
			{"mirror --since oci:", func(h *hostileEnv, dir, _ string) ([]string, string) {
				other, lock := h.siteLayout("other", 1, "x86_64")
				return []string{"mirror", "--lock", lock, "--from", "oci:" + other, "--since", "oci:" + dir, "--to", "oci:" + w(h, "bundle")}, "oci:" + dir
			}, 0},
			{"mirror --to oci:", func(h *hostileEnv, dir, _ string) ([]string, string) {
				other, _ := h.siteLayout("other", 1, "x86_64")
				return []string{"mirror", "--from", "oci:" + other, "--to", "oci:" + dir}, dir
			}, 0},
			{"prune oci:", func(_ *hostileEnv, dir, lock string) ([]string, string) {
				return []string{"prune", "--keep", lock, "--apply", "oci:" + dir}, "oci:" + dir
			}, 0},
			{"serve oci:", func(_ *hostileEnv, dir, _ string) ([]string, string) {
				return []string{"serve", "--listen", "127.0.0.1:0", "oci:" + dir}, "oci:" + dir
			}, 0},
			{"diff --from oci:", func(_ *hostileEnv, dir, lock string) ([]string, string) {
				return []string{"diff", lock, lock, "--from", "oci:" + dir}, "oci:" + dir
			}, 0},
		}
		for _, d := range doors {
			add("rules/one-rule", d.name+" with an oci-layout of "+v.name, func(h *hostileEnv) ([]string, string) {
				dir, lock := h.siteLayout("site", 1, "x86_64")
				setLayoutVersion(h, dir, v.content)
				return d.args(h, dir, lock)
			}, v.want, d.code)
		}
	}
	add("rules/one-rule", "mirror --from oci-archive: with an oci-layout of version 2.0.0", func(h *hostileEnv) ([]string, string) {
		archive := w(h, "v2.tar")
		writeTar(h.t, archive, map[string]string{"oci-layout": `{"imageLayoutVersion":"2.0.0"}`, "index.json": `{"schemaVersion":2,"manifests":[]}`})
		return []string{"mirror", "--from", "oci-archive:" + archive, "--to", "oci:" + w(h, "copy")}, "oci-archive:" + archive
	}, `imageLayoutVersion "2.0.0"`, 0)

	// Archive headers that name more than a layout path can be: refused
	// at that header, by every command that reads an archive.
	for _, field := range []string{"PAX name", "GNU long name", "PAX comment"} {
		for _, door := range []struct {
			class, name string
			args        func(h *hostileEnv, a string) []string
		}{
			{"day2/archive", "mirror --from", func(h *hostileEnv, a string) []string {
				return []string{"mirror", "--from", "oci-archive:" + a, "--to", "oci:" + w(h, "copy")}
			}},
			{"day2/archive", "mirror --to (an existing archive)", func(h *hostileEnv, a string) []string {
				site, _ := h.siteLayout("site", 1, "x86_64")
				return []string{"mirror", "--from", "oci:" + site, "--to", "oci-archive:" + a}
			}},
			{"serve/bounds", "serve", func(_ *hostileEnv, a string) []string {
				return []string{"serve", "--listen", "127.0.0.1:0", "oci-archive:" + a}
			}},
		} {
			add(door.class, door.name+": an archive entry with a 5000-byte "+field, func(h *hostileEnv) ([]string, string) {
				a := longNameArchive(h, "long.tar", field, 5000)
				return door.args(h, a), a
			}, "longer than any path of an OCI layout", 0)
		}
	}

	// A bundle refused for a corrupt blob changes nothing at the site: no
	// image added to its index.json, no blob left.
	for _, to := range []string{"oci:", "oci-archive:"} {
		add("day2/bundle", "mirror --from a bundle with a corrupt blob --to "+to+" (all or nothing)", func(h *hostileEnv) ([]string, string) {
			bundle := w(h, "day2")
			site, lock2 := h.bundleOf("oci:"+bundle, "x86_64")
			corruptBlob(h, bundle)
			dest := site
			if to == "oci-archive:" {
				dest = w(h, "site.tar")
				h.cli("mirror", "--quiet", "--from", "oci:"+site, "--to", "oci-archive:"+dest)
			}
			return []string{"mirror", "--quiet", "--lock", lock2, "--from", "oci:" + bundle, "--to", to + dest}, "nothing of the bundle was applied"
		}, "content does not match its digest", 0)
	}

	// Messages: --since of a registry reference; prune's argument.
	for _, ref := range []string{"quay.io/edge/app:4.19", "docker://quay.io/edge/app@sha256:" + strings.Repeat("a", 64), "registry.example.com:5000/edge/os:latest"} {
		add("messages/round4-airgap", "mirror --since "+ref, func(h *hostileEnv) ([]string, string) {
			site, lock := h.siteLayout("site", 1, "x86_64")
			return []string{"mirror", "--lock", lock, "--from", "oci:" + site, "--since", ref, "--to", "oci-archive:" + w(h, "day2.tar")}, "--since " + ref
		}, "a registry reference is not a base: --since names what the site holds", exitUsage)
	}
	for _, arg := range []struct{ arg, want string }{
		{"oci-archive:site.tar", "(an archive is written anew by mirror, not pruned)"},
		{"dir:site", `"dir:site" is neither: a dir: layout holds the images of one build's bootc Containerfile, each also as a directory of hard links listed in image-list.txt, which prune would leave behind: mirror the lock of the build you keep into a new dir: instead`},
		{"site", `"site" is neither`},
		{"docker:/registry.example.com", "is neither"},
	} {
		add("day2/prune", "prune "+arg.arg, func(h *hostileEnv) ([]string, string) {
			_, lock := h.siteLayout("site", 1, "x86_64")
			return []string{"prune", "--keep", lock, arg.arg}, "prune takes oci:DIR, an OCI image layout to prune, or docker://REGISTRY/PREFIX, a registry to report on;"
		}, arg.want, exitUsage)
	}
	add("day2/prune", "prune --keep a lock whose image the layout lacks, with attachments of another", func(h *hostileEnv) ([]string, string) {
		site, _ := h.siteLayout("site", 2, "x86_64")
		_, other := h.siteLayout("other", 1, "x86_64")
		return []string{"prune", "--keep", other, "--apply", "oci:" + site}, other
	}, "nothing was removed", 0)
	return cases
}

// FuzzParsePruneTarget: prune's argument parser never panics, and what it
// takes is an OCI layout or a registry, nothing mirror writes besides.
func FuzzParsePruneTarget(f *testing.F) {
	for _, s := range []string{"oci:site", "docker://localhost:5000/site", "oci-archive:x.tar", "dir:d", "site", "oci:", "docker://", "oci:a:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		target, err := parsePruneTarget(s)
		if err != nil {
			return
		}
		if target.Transport != airgap.TransportOCI && target.Transport != airgap.TransportDocker {
			t.Fatalf("parsePruneTarget(%q) took a %s target", s, target.Transport)
		}
	})
}

// FuzzLooksLikeRegistryRef: what --since takes for a registry reference
// (to say it is no base) is docker:// or a reference with a tag or digest.
func FuzzLooksLikeRegistryRef(f *testing.F) {
	for _, s := range []string{"quay.io/a/b:1", "docker://quay.io/a@sha256:" + strings.Repeat("a", 64), "day1/compose.lock.json", "quay.io/a/b", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !looksLikeRegistryRef(s) || strings.HasPrefix(s, "docker://") {
			return
		}
		named, err := reference.ParseNamed(s)
		if err != nil || reference.IsNameOnly(named) || strings.HasSuffix(s, ".json") {
			t.Fatalf("looksLikeRegistryRef(%q) took a name that is no tagged or pinned reference", s)
		}
	})
}
