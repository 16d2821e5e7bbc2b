package operators_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/operators"
	"github.com/microshift-compose/microshift-compose/operators/operatorstest"
	"github.com/microshift-compose/microshift-compose/releases"
)

// run runs a program, failing the test with its output.
func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

// catalogIDs are the (schema, package, name) of each object of a JSON
// stream, sorted.
func catalogIDs(t *testing.T, stream []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(stream))
	var out []string
	for {
		var o struct{ Schema, Package, Name string }
		if err := dec.Decode(&o); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decoding opm's output: %v", err)
		}
		out = append(out, o.Schema+" "+o.Package+" "+o.Name)
	}
	sort.Strings(out)
	return out
}

// writeLayout writes the filtered catalog's layout files into dir.
func writeLayout(t *testing.T, c *operators.Catalog, f *operators.Filtered, dir string) {
	t.Helper()
	files, err := c.Layout(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, lf := range files {
		data := lf.Data
		if lf.Blob != nil {
			rc, err := c.OpenBlob(*lf.Blob)
			if err != nil {
				t.Fatal(err)
			}
			data, err = io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
		testutil.WriteFile(t, filepath.Join(dir, filepath.FromSlash(lf.Path)), data)
	}
}

// TestFilterCatalogImage reads one multi-arch catalog image from an OCI
// layout, an OCI archive and a registry, filters it, and checks the
// filtered image with skopeo (it copies the layout to a registry) and opm
// (it renders the image from the registry, layers and whiteouts applied,
// and validates what it renders): the packages asked for and their
// dependencies, one bundle each, the image's base layer kept and the
// configs and cache layers left out.
func TestFilterCatalogImage(t *testing.T) {
	opm, skopeo := operatorstest.Opm(t), operatorstest.Skopeo(t)
	ctx := context.Background()
	sample := operatorstest.Sample()
	idx := operatorstest.Index{Arches: []string{"amd64", "arm64"}, Images: map[string]operatorstest.Built{}}
	for _, a := range idx.Arches {
		idx.Images[a] = operatorstest.Image(a, operatorstest.ImageOptions{Files: sample.PerPackage(false), Cache: true})
	}
	work := t.TempDir()
	layout := filepath.Join(work, "layout")
	operatorstest.WriteLayout(t, layout, "quay.io/example/catalog:v1", idx.Raw(), idx.Images["amd64"], idx.Images["arm64"])
	archive := filepath.Join(work, "catalog.tar")
	operatorstest.TarDir(t, layout, archive)
	reg := testutil.StartRegistry(t)
	idx.Push(t, reg.Pusher, "example/catalog", "v1")

	// opm reads the original catalog as this package does.
	original := filepath.Join(work, "original")
	for p, data := range sample.PerPackage(false) {
		testutil.WriteFile(t, filepath.Join(original, p), data)
	}
	rendered := run(t, opm, "render", original, "-o", "json")
	model, err := operators.Index(ctx, operators.FSFiles(os.DirFS(original)), operators.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	var ours []string
	for _, p := range model.Packages {
		ours = append(ours, "olm.package  "+p.Name)
		for _, c := range p.Channels {
			ours = append(ours, "olm.channel "+p.Name+" "+c.Name)
		}
		for _, b := range p.Bundles {
			ours = append(ours, "olm.bundle "+p.Name+" "+b.Name)
		}
	}
	sort.Strings(ours)
	if theirs := catalogIDs(t, rendered); !slices.Equal(ours, theirs) {
		t.Fatalf("Index read %q\nopm render %q", ours, theirs)
	}

	amd := idx.Images["amd64"]
	var manifests [][]byte
	for _, src := range []struct{ name, ref string }{
		{"oci", "oci:" + layout},
		{"oci-archive", "oci-archive:" + archive + ":quay.io/example/catalog:v1"},
		{"docker", "docker://" + reg.Host + "/example/catalog:v1"},
	} {
		t.Run(src.name, func(t *testing.T) {
			r, err := operators.ParseRef(src.ref)
			if err != nil {
				t.Fatal(err)
			}
			c, err := operators.Load(ctx, r, releases.X86_64, operators.OpenOptions{Registry: registryclient.Options{}})
			if err != nil {
				t.Fatalf("Load(%s): %v", src.ref, err)
			}
			defer c.Close()
			if got, want := c.Image.Digest.String(), idx.Raw().Digest().String(); got != want {
				t.Errorf("catalog digest %s, want the index's %s", got, want)
			}
			if c.Image.ManifestHash.String() != amd.Digest() {
				t.Errorf("arch manifest %s, want linux/amd64's %s", c.Image.ManifestHash, amd.Digest())
			}
			if c.Image.Resolved != (src.name == "docker") {
				t.Errorf("Resolved = %v: only the registry's tag is resolved", c.Image.Resolved)
			}
			res, err := c.Filter(ctx, mustChoices(t, "prometheus"), operators.ResolveOptions{})
			if err != nil {
				t.Fatalf("Filter: %v", err)
			}
			f := res.Filtered
			if len(f.Kept) != 1 || f.Kept[0].Digest != amd.Layers[0].Desc.Digest || len(f.Dropped) != 2 {
				t.Errorf("kept %v, dropped %v: want the base layer kept, the configs and cache layers dropped", f.Kept, f.Dropped)
			}
			if want := []string{"serve", "/configs", "--cache-dir=/tmp/cache", "--cache-enforce-integrity=false"}; !slices.Equal(f.Cmd, want) {
				t.Errorf("command %q, want %q", f.Cmd, want)
			}
			manifests = append(manifests, f.Manifest)
			if src.name != "oci" {
				return
			}
			// skopeo copies the layout build writes into the registry,
			// and opm renders the image from there.
			out := filepath.Join(t.TempDir(), "filtered")
			writeLayout(t, c, f, out)
			dst := reg.Host + "/example/catalog@" + f.Digest().String()
			run(t, skopeo, "copy", "--preserve-digests", "--dest-tls-verify=false", "oci:"+out+":"+f.Ref, "docker://"+reg.Host+"/example/catalog:filtered")
			stream := run(t, opm, "render", "--use-http", dst, "-o", "json")
			want := []string{
				"olm.bundle etcd etcdoperator.v0.9.4", "olm.bundle prometheus prometheusoperator.0.32.0",
				"olm.channel etcd stable", "olm.channel prometheus beta",
				"olm.package  etcd", "olm.package  prometheus",
			}
			if got := catalogIDs(t, stream); !slices.Equal(got, want) {
				t.Errorf("opm render of the filtered image: %q\nwant %q", got, want)
			}
			dir := filepath.Join(t.TempDir(), "configs")
			testutil.WriteFile(t, filepath.Join(dir, "catalog.json"), stream)
			run(t, opm, "validate", dir)
			// What opm renders is what Configs holds.
			var all []byte
			for _, cf := range res.Configs.Files {
				all = append(all, cf.Data...)
			}
			if got := catalogIDs(t, all); !slices.Equal(got, want) {
				t.Errorf("the filtered configs hold %q\nwant %q", got, want)
			}
		})
	}
	for i := 1; i < len(manifests); i++ {
		if !bytes.Equal(manifests[i], manifests[0]) {
			t.Errorf("the filtered image read from another source differs:\n%s\n%s", manifests[0], manifests[i])
		}
	}
}

// TestFilterLayeredCatalog: a catalog whose configs share a layer with
// the base (kept, the configs hidden by the filtered layer's opaque
// whiteout) and whose last layer removes a package (a whiteout), in
// Docker media types and YAML: opm renders the filtered image with only
// the package asked for, and the removed package is not in the catalog.
func TestFilterLayeredCatalog(t *testing.T) {
	opm := operatorstest.Opm(t)
	ctx := context.Background()
	base := map[string][]byte{"bin/opm": []byte("opm"), "etc/os-release": []byte("ID=test\n")}
	for p, data := range operatorstest.Sample().PerPackage(true) {
		base["catalog/"+p] = data
	}
	img := operatorstest.Image("amd64", operatorstest.ImageOptions{
		ConfigsDir: "/catalog", Base: base, Docker: true,
		Files: map[string][]byte{"extra/README": []byte("not read")},
		Extra: []map[string][]byte{
			{"catalog/hello-microshift-operator/.wh.catalog.yaml": nil},
			{"catalog/.indexignore": []byte("README\n")},
		},
	})
	layout := filepath.Join(t.TempDir(), "layout")
	operatorstest.WriteLayout(t, layout, "registry.example.com/ops/catalog:v2", img.Manifest, img)
	r, err := operators.ParseRef("oci:" + layout)
	if err != nil {
		t.Fatal(err)
	}
	c, err := operators.Load(ctx, r, releases.X86_64, operators.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Filter(ctx, mustChoices(t, "hello-microshift-operator"), operators.ResolveOptions{}); err == nil || !strings.Contains(err.Error(), `no package "hello-microshift-operator"`) {
		t.Errorf("Filter of a package a later layer removes = %v", err)
	}
	res, err := c.Filter(ctx, mustChoices(t, "etcd:alpha"), operators.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Filtered
	if len(f.Kept) != 1 || len(f.Dropped) != 3 || f.MediaType != "application/vnd.docker.distribution.manifest.v2+json" {
		t.Fatalf("kept %d, dropped %d layers, media type %s: want the base kept (it holds opm), the configs, whiteout and .indexignore layers dropped, Docker's type", len(f.Kept), len(f.Dropped), f.MediaType)
	}
	if want := []string{"serve", "/catalog"}; !slices.Equal(f.Cmd, want) {
		t.Errorf("command %q, want %q (no cache, nothing changed)", f.Cmd, want)
	}
	// Debian's skopeo (containers/image before 5.35) reads no Docker-typed
	// manifest out of an OCI layout: the image is pushed as it is.
	reg := testutil.StartRegistry(t)
	for _, l := range append(slices.Clone(img.Layers[:1]), testutil.Layer{Data: f.LayerData, Desc: f.Layer}) {
		if err := reg.Pusher.Blob("ops/catalog", l.Data, l.Desc.MediaType); err != nil {
			t.Fatal(err)
		}
	}
	if err := reg.Pusher.Blob("ops/catalog", f.Config, "application/vnd.docker.container.image.v1+json"); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Pusher.Manifest("ops/catalog", testutil.Raw{Data: f.Manifest, Type: f.MediaType}, ""); err != nil {
		t.Fatal(err)
	}
	stream := run(t, opm, "render", "--use-http", reg.Host+"/ops/catalog@"+f.Digest().String(), "-o", "json")
	want := []string{"olm.bundle etcd etcdoperator.v0.10.0-rc.1", "olm.channel etcd alpha", "olm.package  etcd"}
	if got := catalogIDs(t, stream); !slices.Equal(got, want) {
		t.Errorf("opm render of the filtered image: %q\nwant %q", got, want)
	}
	if !strings.Contains(string(stream), `"defaultChannel": "alpha"`) {
		t.Errorf("the filtered package's default channel is not the chosen one:\n%s", stream)
	}
	if len(res.Configs.Notes) != 1 || !strings.Contains(res.Configs.Notes[0], "default channel of etcd is alpha") {
		t.Errorf("notes %q, want one saying the default channel moved", res.Configs.Notes)
	}
}

// helloBundle writes a bundle directory of MicroShift's own test operator's
// shape (test/assets/olm/hello-microshift-operator: a CSV with one
// deployment of a busybox HTTP server, its annotations naming package
// and channel), its container image image.
func helloBundle(t *testing.T, dir, image string) {
	t.Helper()
	csv := `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: hello-microshift-operator.v0.1.0
  namespace: placeholder
spec:
  displayName: Hello MicroShift Operator
  version: 0.1.0
  installModes:
  - {type: OwnNamespace, supported: true}
  - {type: SingleNamespace, supported: true}
  - {type: MultiNamespace, supported: false}
  - {type: AllNamespaces, supported: true}
  install:
    strategy: deployment
    spec:
      deployments:
      - name: hello-microshift
        spec:
          selector: {matchLabels: {app: hello-microshift}}
          template:
            metadata: {labels: {app: hello-microshift}}
            spec:
              containers:
              - name: hello-microshift
                image: ` + image + `
`
	testutil.WriteFile(t, filepath.Join(dir, "manifests", "hello-microshift-operator.clusterserviceversion.yaml"), []byte(csv))
	testutil.WriteFile(t, filepath.Join(dir, "metadata", "annotations.yaml"), []byte(`annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: hello-microshift-operator
  operators.operatorframework.io.bundle.channels.v1: alpha
  operators.operatorframework.io.bundle.channel.default.v1: alpha
`))
}

// TestMicroShiftCatalogShape builds a catalog as MicroShift's own test
// catalog is built (build-catalog.sh: opm render of a bundle directory,
// indented JSON, then the package and channel appended as compact JSON
// lines): a bundle of objects alone, no bundle image, its CSV in the
// catalog. The filtered catalog is what opm validates, the CSV's
// deployment what greenboot waits for; MicroShift's asset names its
// image by tag (busybox:1.36), which is refused without --allow-unpinned.
func TestMicroShiftCatalogShape(t *testing.T) {
	opm := operatorstest.Opm(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, image   string
		allowUnpinned bool
		err           string
	}{
		{"by digest", operatorstest.Ref("quay.io/microshift/busybox", "1.36"), false, ""},
		{"by tag, refused", "quay.io/microshift/busybox:1.36", false, "image is not pinned by digest: quay.io/microshift/busybox:1.36"},
		{"by tag, allowed", "quay.io/microshift/busybox:1.36", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			helloBundle(t, filepath.Join(dir, "bundle"), tc.image)
			rendered := run(t, opm, "render", filepath.Join(dir, "bundle"), "-o", "json")
			catalog := append(rendered, []byte(`{"schema":"olm.package","name":"hello-microshift-operator","defaultChannel":"alpha"}
{"schema":"olm.channel","name":"alpha","package":"hello-microshift-operator","entries":[{"name":"hello-microshift-operator.v0.1.0"}]}
`)...)
			img := operatorstest.Image("amd64", operatorstest.ImageOptions{Files: map[string][]byte{"hello-microshift-operator/catalog.json": catalog}})
			ref, err := operators.ParseRef(operatorstest.WriteImageLayout(t, filepath.Join(dir, "layout"), img))
			if err != nil {
				t.Fatal(err)
			}
			c, err := operators.Load(ctx, ref, releases.X86_64, operators.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res, err := c.Filter(ctx, mustChoices(t, "hello-microshift-operator"), operators.ResolveOptions{AllowUnpinned: tc.allowUnpinned})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, operators.ErrUnpinned) {
					t.Fatalf("Filter = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sel := res.Set.Get("hello-microshift-operator")
			if sel == nil || sel.Bundle.Image != "" || !slices.ContainsFunc(sel.Bundle.RelatedImages, func(ri operators.RelatedImage) bool { return ri.Image == tc.image }) {
				t.Fatalf("selected %+v: want a bundle of no image whose related images name %s", sel, tc.image)
			}
			installs, _, err := operators.Installs(res)
			if err != nil {
				t.Fatal(err)
			}
			if i := installs[0]; !i.Waited || !slices.Equal(i.CSV.Deployments, []string{"hello-microshift"}) || i.InstallMode != operators.InstallAllNamespaces {
				t.Errorf("install %+v (CSV %+v): want its deployment waited for, all namespaces", i, i.CSV)
			}
			configs := filepath.Join(t.TempDir(), "configs")
			for _, cf := range res.Configs.Files {
				testutil.WriteFile(t, filepath.Join(configs, cf.Path), cf.Data)
			}
			run(t, opm, "validate", configs)
		})
	}
}
