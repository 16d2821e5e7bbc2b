package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/operators"
	"github.com/microshift-compose/microshift-compose/operators/operatorstest"
)

// Round four of the hostile suite, the operators' part (issue 35): what
// --operator asks for that the catalog lacks (named, with the nearest
// names), dependencies nothing satisfies (with the chain that needs
// them), catalogs that are wrong (tags, two heads, a bundle or package
// twice, no configs label, a layer that is not what its digest says) and
// configs directories that are bombs (deep, huge, many files, a file of
// more than a GiB, aliases). Every catalog is an OCI layout under the
// case's inputs; nothing is written.

// catalogLayout writes c as a catalog image's layout under the case's
// inputs and returns --operator-catalog's value for it.
func (h *hostileEnv) catalogLayout(rel string, c *operatorstest.Catalog) string {
	h.t.Helper()
	return operatorstest.Layout(h.t, h.path(rel), c, "amd64")
}

// imageLayout writes a catalog image built with o.
func (h *hostileEnv) imageLayout(rel string, o operatorstest.ImageOptions) string {
	h.t.Helper()
	return operatorstest.WriteImageLayout(h.t, h.path(rel), operatorstest.Image("amd64", o))
}

// withOperators is a build of the case's catalog (oci:...) with ops.
func withOperators(h *hostileEnv, catalog string, ops ...string) []string {
	args := build(h, "--operator-catalog", catalog)
	for _, o := range ops {
		args = append(args, "--operator", o)
	}
	return args
}

// tarOf is a tar stream of the files (name -> content) in order, with
// the header sizes given (a size of -1 is the content's).
func tarOf(entries ...tarEntry) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		size := int64(len(e.data))
		if e.size > 0 {
			size = e.size
		}
		tw.WriteHeader(&tar.Header{Name: e.name, Typeflag: e.kind, Mode: 0o644, Size: size, Linkname: e.link})
		tw.Write(e.data)
	}
	tw.Flush()
	return b.Bytes()
}

type tarEntry struct {
	name string
	data []byte
	size int64
	kind byte
	link string
}

func round4OperatorCases() []hostileCase {
	var cases []hostileCase
	add := func(class, name string, setup func(h *hostileEnv) ([]string, string), want string) {
		cases = append(cases, hostileCase{class: "operators/" + class, name: name, setup: setup, want: want})
	}
	// usage is a case refused as a usage error (exit 2): a flag's value
	// checked before anything is read.
	usage := func(class, name string, setup func(h *hostileEnv) ([]string, string), want string) {
		cases = append(cases, hostileCase{class: "operators/" + class, name: name, setup: setup, want: want, code: exitUsage})
	}
	sample := func(h *hostileEnv) string { return h.catalogLayout("catalog", operatorstest.Sample()) }
	// fbc is a catalog of one file, catalog.json, holding data.
	fbc := func(h *hostileEnv, data []byte) string {
		return h.imageLayout("catalog", operatorstest.ImageOptions{Files: map[string][]byte{"catalog.json": data}})
	}
	ref := func(s string) string { return operatorstest.Ref("quay.io/example/x", s) }
	one := func(pkg string, b operatorstest.Bundle) *operatorstest.Catalog {
		c := &operatorstest.Catalog{}
		return c.Package(pkg, "stable").Channel(pkg, "stable", operators.Entry{Name: b.Name}).Bundle(b)
	}

	// What --operator asks for that the catalog lacks, named with the
	// nearest names.
	for _, tc := range []struct{ name, op, want string }{
		{"a package the catalog lacks", "etdc", `the catalog has no package "etdc"; did you mean "etcd"?`},
		{"a channel the package lacks", "etcd:stabel", `package "etcd" has no channel "stabel"; did you mean "stable"?`},
		{"a version the channel lacks", "etcd@>=2.0.0", `package "etcd" channel "stable" has no bundle in range ">=2.0.0" (it has versions 0.9.0, 0.9.2, 0.9.4)`},
		{"a version alone the channel lacks", "etcd:alpha@0.9.2", `package "etcd" channel "alpha" has no bundle in range "0.9.2" (it has versions 0.9.4, 0.10.0-rc.1)`},
		{"a package asked for twice", "etcd", `--operator etcd and --operator etcd:alpha ask for package "etcd" twice`},
	} {
		add("choice", tc.name, func(h *hostileEnv) ([]string, string) {
			ops := []string{tc.op}
			if strings.Contains(tc.name, "twice") {
				ops = append(ops, "etcd:alpha")
			}
			return withOperators(h, sample(h), ops...), "--operator"
		}, tc.want)
	}
	for _, tc := range []struct{ name, op, want string }{
		{"a range that is none", "etcd@>=banana", "not a version range"},
		{"an empty range", "etcd@", "an empty version range after the @"},
		{"an approval OLM does not know", "etcd,approval=Sometimes", `approval "Sometimes": want Automatic or Manual`},
		{"a namespace Kubernetes refuses", "etcd,namespace=Not_A_Namespace", `namespace "Not_A_Namespace"`},
		{"a repository for a package", "quay.io/etcd", "is not a package name"},
	} {
		usage("choice", tc.name, func(h *hostileEnv) ([]string, string) {
			return withOperators(h, sample(h), tc.op), "--operator"
		}, tc.want)
	}
	usage("choice", "an operator without a catalog", func(h *hostileEnv) ([]string, string) {
		return build(h, "--operator", "etcd"), "--operator"
	}, "--operator needs --operator-catalog")
	usage("choice", "a catalog without an operator", func(h *hostileEnv) ([]string, string) {
		return build(h, "--operator-catalog", sample(h)), "--operator-catalog"
	}, "without --operator: name the packages to install")
	usage("choice", "a catalog by an unknown transport", func(h *hostileEnv) ([]string, string) {
		return build(h, "--operator-catalog", "containers-storage:quay.io/x/y:1", "--operator", "etcd"), "--operator-catalog"
	}, "registries must be valid RFC 3986 URI authorities")
	add("choice", "olm left out", func(h *hostileEnv) ([]string, string) {
		return append(withOperators(h, sample(h), "etcd"), "--without", "olm"), "--without olm"
	}, "operators are installed by OLM: drop --without olm")

	// Dependencies nothing satisfies, with the chain that needs them.
	deps := func() *operatorstest.Catalog {
		c := one("app", operatorstest.Bundle{Package: "app", Name: "app.v1", Version: "1.0.0", Image: ref("app"),
			RequiresPackages: []operators.PackageRequirement{{Package: "lib", Range: ">=1.0.0"}}})
		c.Package("lib", "stable").Channel("lib", "stable", operators.Entry{Name: "lib.v1"}).
			Bundle(operatorstest.Bundle{Package: "lib", Name: "lib.v1", Version: "1.0.0", Image: ref("lib"),
				RequiresPackages: []operators.PackageRequirement{{Package: "base", Range: ">=3.0.0"}},
				RequiresGVKs:     []operators.GVK{{Group: "gone.example.com", Version: "v1", Kind: "Gone"}}})
		c.Package("base", "stable").Channel("base", "stable", operators.Entry{Name: "base.v2"}).
			Bundle(operatorstest.Bundle{Package: "base", Name: "base.v2", Version: "2.0.0", Image: ref("base")})
		return c
	}
	add("dependency", "a package no bundle satisfies, with the chain", func(h *hostileEnv) ([]string, string) {
		return withOperators(h, h.catalogLayout("catalog", deps()), "app"), "--operator app"
	}, "lib.v1 (lib <- required by app (olm.package.required lib >=1.0.0) <- --operator app) requires package base in range >=3.0.0, and no bundle of it is (it has versions 2.0.0)")
	add("dependency", "an API no bundle provides, with the chain", func(h *hostileEnv) ([]string, string) {
		c := deps()
		c.Objects[len(c.Objects)-1] = (&operatorstest.Catalog{}).Bundle(operatorstest.Bundle{Package: "base", Name: "base.v2", Version: "3.0.0", Image: ref("base")}).Objects[0]
		return withOperators(h, h.catalogLayout("catalog", c), "app"), "--operator app"
	}, "requires API gone.example.com/v1 Gone, which no selected bundle and no channel head of the catalog provides")
	add("dependency", "a package the catalog lacks", func(h *hostileEnv) ([]string, string) {
		c := one("app", operatorstest.Bundle{Package: "app", Name: "app.v1", Version: "1.0.0", Image: ref("app"),
			RequiresPackages: []operators.PackageRequirement{{Package: "nowhere", Range: ">=1.0.0"}}})
		return withOperators(h, h.catalogLayout("catalog", c), "app"), "--operator app"
	}, "requires package nowhere in range >=1.0.0, which the catalog does not have")
	add("dependency", "a dependency asked for out of its range", func(h *hostileEnv) ([]string, string) {
		return withOperators(h, sample(h), "prometheus", "etcd@0.9.0"), "--operator etcd@0.9.0"
	}, "requires package etcd in range >=0.9.2 <0.10.0, and etcdoperator.v0.9.0 0.9.0 is selected")
	add("dependency", "a dependency asked for in another namespace", func(h *hostileEnv) ([]string, string) {
		return withOperators(h, sample(h), "prometheus", "etcd,namespace=databases"), "--operator etcd,namespace=databases"
	}, "etcd is required by prometheus, which is installed in namespace monitoring, and OLM installs a dependency in its dependent's namespace")

	// Catalogs that are wrong.
	tagged := func(related bool) *operatorstest.Catalog {
		b := operatorstest.Bundle{Package: "app", Name: "app.v1", Version: "1.0.0", Image: "quay.io/example/app-bundle:v1"}
		if related {
			b.Image = ref("app")
			b.Related = []operators.RelatedImage{{Name: "manager", Image: "quay.io/example/manager:latest"}}
		}
		return one("app", b)
	}
	add("catalog", "a bundle image by tag", func(h *hostileEnv) ([]string, string) {
		return withOperators(h, h.catalogLayout("catalog", tagged(false)), "app"), "app/catalog.json:"
	}, "bundle image: image is not pinned by digest: quay.io/example/app-bundle:v1")
	add("catalog", "a related image by tag", func(h *hostileEnv) ([]string, string) {
		return withOperators(h, h.catalogLayout("catalog", tagged(true)), "app"), "app/catalog.json:"
	}, `related image "manager": image is not pinned by digest: quay.io/example/manager:latest`)
	add("catalog", "two heads in a channel", func(h *hostileEnv) ([]string, string) {
		c := &operatorstest.Catalog{}
		c.Package("app", "stable").Channel("app", "stable", operators.Entry{Name: "app.v1"}, operators.Entry{Name: "app.v2"}).
			Bundle(operatorstest.Bundle{Package: "app", Name: "app.v1", Version: "1.0.0", Image: ref("1")}).
			Bundle(operatorstest.Bundle{Package: "app", Name: "app.v2", Version: "2.0.0", Image: ref("2")})
		return withOperators(h, h.catalogLayout("catalog", c), "app"), "app/catalog.json:"
	}, `package "app" channel "stable" has 2 heads (app.v1, app.v2)`)
	add("catalog", "duplicate bundles", func(h *hostileEnv) ([]string, string) {
		c := one("app", operatorstest.Bundle{Package: "app", Name: "app.v1", Version: "1.0.0", Image: ref("1")})
		c.Bundle(operatorstest.Bundle{Package: "app", Name: "app.v1", Version: "1.0.1", Image: ref("2")})
		return withOperators(h, h.catalogLayout("catalog", c), "app"), "app/catalog.json:"
	}, `package "app" bundle "app.v1" is defined twice (first at configs/app/catalog.json:`)
	add("catalog", "a package twice", func(h *hostileEnv) ([]string, string) {
		return withOperators(h, fbc(h, []byte(`{"schema":"olm.package","name":"a"}`+"\n"+`{"schema":"olm.package","name":"a"}`)), "a"), "configs/catalog.json:2"
	}, `package "a" is defined twice (first at configs/catalog.json:1)`)
	add("catalog", "a channel listing a bundle it lacks", func(h *hostileEnv) ([]string, string) {
		c := &operatorstest.Catalog{}
		c.Package("app", "stable").Channel("app", "stable", operators.Entry{Name: "app.v9"})
		return withOperators(h, h.catalogLayout("catalog", c), "app"), "app/catalog.json:"
	}, `lists bundle "app.v9", which the catalog does not define`)
	add("catalog", "invalid JSON", func(h *hostileEnv) ([]string, string) {
		return withOperators(h, fbc(h, []byte("{\"schema\":\"olm.package\",\n\"name\":\"a\"}\n{\"schema\": }\n")), "a"), "configs/catalog.json:3"
	}, "invalid JSON")
	add("catalog", "an object without a schema", func(h *hostileEnv) ([]string, string) {
		return withOperators(h, fbc(h, []byte("{\"name\":\"a\"}\n")), "a"), "configs/catalog.json:1"
	}, "an object without a schema")
	add("catalog", "no configs label", func(h *hostileEnv) ([]string, string) {
		cat := h.imageLayout("catalog", operatorstest.ImageOptions{NoLabel: true, Files: operatorstest.Sample().PerPackage(false)})
		return withOperators(h, cat, "etcd"), cat
	}, "not a file-based catalog: the image has no operators.operatorframework.io.index.configs.v1 label")
	add("catalog", "an empty configs directory", func(h *hostileEnv) ([]string, string) {
		cat := h.imageLayout("catalog", operatorstest.ImageOptions{ConfigsDir: "/nothing-here"})
		return withOperators(h, cat, "etcd"), cat
	}, "the configs directory /nothing-here (label operators.operatorframework.io.index.configs.v1) holds no files")
	add("catalog", "a symbolic link in the configs", func(h *hostileEnv) ([]string, string) {
		cat := h.imageLayout("catalog", operatorstest.ImageOptions{Raw: []testutil.Layer{operatorstest.GzipLayer(tarOf(tarEntry{name: "configs/evil.json", kind: tar.TypeSymlink, link: "/etc/shadow"}))}})
		return withOperators(h, cat, "etcd"), cat
	}, `"evil.json" is a symbolic link, not a regular file`)
	add("catalog", "not an OCI layout", func(h *hostileEnv) ([]string, string) {
		dir := h.mkdir("not-a-layout")
		return withOperators(h, "oci:"+dir, "etcd"), dir
	}, "is not an OCI layout (no oci-layout file)")
	add("catalog", "a layout naming its image by a tag alone", func(h *hostileEnv) ([]string, string) {
		img := operatorstest.Image("amd64", operatorstest.ImageOptions{Files: operatorstest.Sample().PerPackage(false)})
		dir := h.path("catalog")
		operatorstest.WriteLayout(h.t, dir, "v4.19", img.Manifest, img)
		return withOperators(h, "oci:"+dir, "etcd"), dir
	}, `the layout names its image "v4.19", not a full reference`)
	add("catalog", "an index without the arch", func(h *hostileEnv) ([]string, string) {
		x := operatorstest.Index{Arches: []string{"arm64"}, Images: map[string]operatorstest.Built{"arm64": operatorstest.Image("arm64", operatorstest.ImageOptions{Files: operatorstest.Sample().PerPackage(false)})}}
		dir := h.path("catalog")
		operatorstest.WriteLayout(h.t, dir, operatorstest.SampleRepository+":v1", x.Raw(), x.Images["arm64"])
		return withOperators(h, "oci:"+dir, "etcd"), dir
	}, "has no linux/amd64 image (it has linux/arm64)")
	add("catalog", "a layer that is not what its digest says", func(h *hostileEnv) ([]string, string) {
		cat := sample(h)
		dir := strings.TrimPrefix(cat, "oci:")
		img := operatorstest.Image("amd64", operatorstest.ImageOptions{Files: operatorstest.Sample().PerPackage(false), Cache: true})
		p := filepath.Join(dir, "blobs", "sha256", img.Layers[1].Desc.Digest.Hex)
		data, err := os.ReadFile(p)
		if err != nil {
			h.t.Fatal(err)
		}
		data[len(data)-20] ^= 0xff
		h.write(p, string(data))
		return withOperators(h, cat, "etcd"), cat
	}, "layer 1")

	// Configs directories that are bombs.
	add("bomb", "deep nesting", func(h *hostileEnv) ([]string, string) {
		return withOperators(h, fbc(h, []byte(`{"schema":"olm.package","name":"a","x":`+strings.Repeat("[", 200000))), "a"), "configs/catalog.json:1"
	}, "exceeded max depth")
	add("bomb", "deep YAML", func(h *hostileEnv) ([]string, string) {
		cat := h.imageLayout("catalog", operatorstest.ImageOptions{Files: map[string][]byte{"c.yaml": []byte("schema: olm.package\nname: a\nx: " + strings.Repeat("[", 100000))}})
		return withOperators(h, cat, "a"), "configs/c.yaml:1"
	}, "exceeded max depth")
	add("bomb", "YAML aliases", func(h *hostileEnv) ([]string, string) {
		var b strings.Builder
		b.WriteString("schema: olm.package\nname: a\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
		for i := 1; i < 12; i++ {
			fmt.Fprintf(&b, "a%d: &a%d [", i, i)
			for j := range 10 {
				if j > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "*a%d", i-1)
			}
			b.WriteString("]\n")
		}
		cat := h.imageLayout("catalog", operatorstest.ImageOptions{Files: map[string][]byte{"c.yaml": []byte(b.String())}})
		return withOperators(h, cat, "a"), "configs/c.yaml:1"
	}, "excessive aliasing")
	add("bomb", "a huge object", func(h *hostileEnv) ([]string, string) {
		data := []byte(`{"schema":"olm.package","name":"a","description":"` + strings.Repeat("x", 33<<20) + `"}`)
		return withOperators(h, fbc(h, data), "a"), "configs/catalog.json:1"
	}, "an object of more than 33554432 bytes")
	add("bomb", "a huge YAML document", func(h *hostileEnv) ([]string, string) {
		data := []byte("schema: olm.package\nname: a\ndescription: " + strings.Repeat("x", 33<<20) + "\n")
		cat := h.imageLayout("catalog", operatorstest.ImageOptions{Files: map[string][]byte{"c.yaml": data}})
		return withOperators(h, cat, "a"), "configs/c.yaml:1"
	}, "a document of more than 33554432 bytes")
	add("bomb", "a file of more than a GiB", func(h *hostileEnv) ([]string, string) {
		layer := operatorstest.GzipLayer(tarOf(tarEntry{name: "configs/huge.json", data: []byte(`{"schema":`), size: 1<<30 + 1}))
		cat := h.imageLayout("catalog", operatorstest.ImageOptions{Raw: []testutil.Layer{layer}})
		return withOperators(h, cat, "a"), "/configs/huge.json"
	}, "larger than 1073741824 bytes")
	add("bomb", "many files", func(h *hostileEnv) ([]string, string) {
		var entries []tarEntry
		for i := range operators.DefaultLimits.Files + 1 {
			entries = append(entries, tarEntry{name: fmt.Sprintf("configs/p%d/catalog.json", i), data: []byte("{}\n")})
		}
		cat := h.imageLayout("catalog", operatorstest.ImageOptions{Raw: []testutil.Layer{operatorstest.GzipLayer(tarOf(entries...))}})
		return withOperators(h, cat, "a"), cat
	}, "more than 50000 files in the configs directory /configs")

	// The composition file.
	add("file", "an operator without a package", func(h *hostileEnv) ([]string, string) {
		f := h.write("device.toml", "profile = \"minimal\"\narch = \"x86_64\"\noperator_catalog = \"oci:catalog\"\n\n[[operators]]\nchannel = \"stable\"\n")
		sample(h)
		return []string{"build", "-f", f, "--output", h.out}, f
	}, "operators[0]: package is required")
	add("file", "a catalog layout that is not there", func(h *hostileEnv) ([]string, string) {
		f := h.write("device.toml", "profile = \"minimal\"\narch = \"x86_64\"\noperator_catalog = \"oci:gone\"\n\n[[operators]]\npackage = \"etcd\"\n")
		return []string{"build", "-f", f, "--output", h.out}, f
	}, `"gone" (`)
	usage("file", "mirror of a file with operators, without the build's lock", func(h *hostileEnv) ([]string, string) {
		f := h.write("device.toml", "profile = \"minimal\"\narch = \"x86_64\"\noperator_catalog = \"oci:catalog\"\n\n[[operators]]\npackage = \"etcd\"\n")
		sample(h)
		return []string{"mirror", "-f", f, "--to", "oci:" + h.path("layout")}, f
	}, "its operators are built by 'build'")
	return cases
}
