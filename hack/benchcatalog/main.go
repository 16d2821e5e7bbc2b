// Command benchcatalog writes the operator catalog `make bench` filters: a
// file-based catalog of a real index's shape (by default 200 packages of 25
// bundles each, 5,000 bundles in all, each with its CSV and a CRD as
// olm.bundle.object, three related images, some requiring another
// package), as a configs directory (what opm render reads) and as a
// catalog image in an OCI layout (what build --operator-catalog reads).
// Bench code only.
//
//	go run ./hack/benchcatalog -out /tmp/catalog
//
// It prints the catalog's size: packages, bundles, bytes of FBC.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/microshift-compose/microshift-compose/operators"
	"github.com/microshift-compose/microshift-compose/operators/operatorstest"
)

func main() {
	var (
		out      = flag.String("out", "", "directory to write configs/ and layout/ into")
		packages = flag.Int("packages", 200, "packages")
		bundles  = flag.Int("bundles", 25, "bundles per package")
		crd      = flag.Int("crd", 6000, "bytes of each bundle's CRD")
	)
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "benchcatalog: -out is required")
		os.Exit(2)
	}
	if err := run(*out, *packages, *bundles, *crd); err != nil {
		fmt.Fprintln(os.Stderr, "benchcatalog:", err)
		os.Exit(1)
	}
}

func run(out string, packages, bundles, crd int) error {
	c := &operatorstest.Catalog{}
	for p := range packages {
		pkg := fmt.Sprintf("operator-%03d", p)
		gvk := operators.GVK{Group: pkg + ".example.com", Version: "v1", Kind: "Widget"}
		var stable, fast []string
		for b := range bundles {
			v := fmt.Sprintf("%d.%d.%d", 1+b/10, b%10, p%3)
			name := pkg + ".v" + v
			if b%5 == 4 {
				fast = append(fast, name)
			} else {
				stable = append(stable, name)
			}
			repo := "registry.example.com/catalog/" + pkg
			bundle := operatorstest.Bundle{
				Package: pkg, Name: name, Version: v,
				Image: operatorstest.Ref(repo+"-bundle", v),
				Related: []operators.RelatedImage{
					{Name: "manager", Image: operatorstest.Ref(repo, v)},
					{Name: "kube-rbac-proxy", Image: operatorstest.Ref("registry.example.com/openshift4/ose-kube-rbac-proxy", fmt.Sprint(p%7))},
					{Name: "", Image: operatorstest.Ref(repo+"-operand", v)},
				},
				Provides: []operators.GVK{gvk, {Group: gvk.Group, Version: "v1", Kind: "Gadget"}},
				CSV: &operatorstest.CSV{Deployments: []string{pkg + "-controller-manager"}, SuggestedNamespace: pkg,
					InstallModes: []string{operators.InstallOwnNamespace, operators.InstallAllNamespaces}, Images: []string{operatorstest.Ref(repo, v)}},
				Padding: crd,
			}
			if p%10 == 9 {
				dep := fmt.Sprintf("operator-%03d", p-1)
				bundle.RequiresPackages = []operators.PackageRequirement{{Package: dep, Range: ">=1.0.0"}}
			}
			c.Bundle(bundle)
		}
		c.Package(pkg, "stable")
		c.Channel(pkg, "stable", operatorstest.Chain(stable...)...)
		c.Channel(pkg, "fast", operatorstest.Chain(fast...)...)
	}
	files := c.PerPackage(false)
	var total int64
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(out, "configs", filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			return err
		}
		total += int64(len(files[n]))
	}
	img := operatorstest.Image("amd64", operatorstest.ImageOptions{Files: files, Cache: true})
	if err := operatorstest.WriteLayoutDir(filepath.Join(out, "layout"), operatorstest.SampleRepository+":bench", img.Manifest, img); err != nil {
		return err
	}
	fmt.Printf("%d packages, %d bundles, %.1f MB of FBC in %d files\n", packages, packages*bundles, float64(total)/1e6, len(files))
	return nil
}
