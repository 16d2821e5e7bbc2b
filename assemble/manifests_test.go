package assemble_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
	"github.com/microshift-compose/microshift-compose/compose/microshiftconfig"
	"github.com/microshift-compose/microshift-compose/compose/plugin"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/render/describe"

	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// edgeLight is the selection that renders every manifest-based component
// of the default catalog: the hostpath CSI driver (static manifests).
var edgeLight = compose.EdgeLight("")

// TestGoldenManifests compares the whole output of the edge-light
// selection, rendered manifests and the bootc Containerfile included, on
// both arches with
// testdata/golden/manifests/<stream>-<arch>/. Regenerate with
// go test ./assemble -run Golden -update, and review the diff.
func TestGoldenManifests(t *testing.T) {
	cat := assembletest.Catalog(t)
	for _, stream := range []string{"4.17", "4.19", "5.0"} {
		rel := assembletest.Release(t, stream)
		for _, arch := range goldenArches {
			t.Run(stream+"/"+string(arch), func(t *testing.T) {
				req := edgeLight
				req.Arch = arch
				// With the bootc Containerfile: it copies the manifests.d
				// directories through the same output paths.
				out, err := assemble.Build(context.Background(), assembletest.Plan(t, cat, rel, req), assemble.Options{Bootc: true})
				if err != nil {
					t.Fatalf("Build(edge-light %s %s, bootc) = %v", stream, arch, err)
				}
				dir := testutil.TestdataDir(t, "golden", "manifests", stream+"-"+string(arch))
				if *update {
					if err := os.RemoveAll(dir); err != nil {
						t.Fatal(err)
					}
				}
				assembletest.CheckListedFiles(t, assembletest.Files(out))
				var got []string
				for _, f := range out.Files {
					got = append(got, f.Path)
					path := filepath.Join(dir, filepath.FromSlash(f.Path))
					if *update {
						testutil.WriteFile(t, path, f.Data)
						continue
					}
					want, err := os.ReadFile(path)
					if err != nil {
						t.Errorf("reading golden file (regenerate with -update): %v", err)
						continue
					}
					if !bytes.Equal(f.Data, want) {
						t.Errorf("%s differs from %s (go test ./assemble -run Golden -update, then review the diff):\n%s", f.Path, path, testutil.FirstDiff(want, f.Data))
					}
				}
				var have []string
				_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						rel, _ := filepath.Rel(dir, p)
						have = append(have, filepath.ToSlash(rel))
					}
					return nil
				})
				slices.Sort(got)
				if !reflect.DeepEqual(got, have) {
					t.Errorf("output files %v\ngolden files %v", got, have)
				}
				for _, want := range []string{
					"manifests.d/009-storage-hostpath/kustomization.yaml",
					"manifests.d/009-storage-hostpath/apps_v1_daemonset_csi-hostpath-provisioner.yaml",
				} {
					if !slices.Contains(got, want) {
						t.Errorf("output lacks %s", want)
					}
				}
			})
		}
	}
}

// Every image a rendered manifest runs is one the plan embeds, pinned by
// digest, and the blueprint carries the rendered files.
func TestManifestsArePinnedAndInTheBlueprint(t *testing.T) {
	cat := assembletest.Catalog(t)
	rel := assembletest.Release(t, "5.0")
	for _, arch := range goldenArches {
		req := edgeLight
		req.Arch = arch
		p := assembletest.Plan(t, cat, rel, req)
		if len(p.Manifests) != 1 || p.Manifests[0].Component != "storage-hostpath" {
			t.Fatalf("manifests = %+v, want storage-hostpath's", p.Manifests)
		}
		// The hostpath driver is published by tag only; everything else is
		// pinned by digest.
		const tagged = "quay.io/kubevirt/hostpath-csi-driver:v0.23.0"
		refs := p.ImageRefs()
		for _, m := range p.Manifests {
			for _, im := range m.Images {
				if !slices.Contains(refs, im) {
					t.Errorf("%s runs %s, which is not a plan image", m.Component, im)
				}
				if pinned := releases.IsDigestPinned(im); pinned == (im == tagged) {
					t.Errorf("%s runs %s: pinned = %v", m.Component, im, pinned)
				}
			}
		}
		if got := len(p.Manifests[0].Images); got != 4 || !slices.Contains(p.Manifests[0].Images, tagged) {
			t.Errorf("storage-hostpath runs %q, want 4 images including %s", p.Manifests[0].Images, tagged)
		}
		if w := assembletest.DeviceWarnings(p); len(w) != 1 || !strings.Contains(w[0], tagged) {
			t.Errorf("warnings = %q, want one about %s", w, tagged)
		}
		bp := string(assembletest.File(t, assembletest.Build(t, p, assemble.Options{}), output.BlueprintFile))
		for _, path := range []string{
			"/etc/microshift/manifests.d/009-storage-hostpath/storage.k8s.io_v1_csidriver_kubevirt.io.hostpath-provisioner.yaml",
		} {
			if !strings.Contains(bp, "path = \""+path+"\"") {
				t.Errorf("blueprint has no [[customizations.files]] for %s", path)
			}
		}
	}
}

func TestManifestsDeterministic(t *testing.T) {
	cat := assembletest.Catalog(t)
	rel := assembletest.Release(t, "5.0")
	req := edgeLight
	req.Arch = releases.AArch64
	a := assembletest.Build(t, assembletest.Plan(t, cat, rel, req), assemble.Options{})
	b := assembletest.Build(t, assembletest.Plan(t, cat, rel, req), assemble.Options{})
	if len(a.Files) != len(b.Files) {
		t.Fatalf("%d files, then %d", len(a.Files), len(b.Files))
	}
	for i := range a.Files {
		if a.Files[i].Path != b.Files[i].Path || !bytes.Equal(a.Files[i].Data, b.Files[i].Data) {
			t.Errorf("second build differs at %s", a.Files[i].Path)
		}
	}
}

// The documented cross-check and plugin errors, each naming the component.
func TestManifestErrors(t *testing.T) {
	cat := assembletest.ManifestsCatalog(t)
	rel := assembletest.Release(t, "5.0")
	for _, tc := range []struct {
		with string
		want string
		is   error
	}{
		{
			with: "unmapped-image",
			want: `component "unmapped-image": Deployment edge/web: container "nginx" image "docker.io/library/nginx:1.27": image is not in the plan; map "docker.io/library/nginx" to a key of images.keys in [manifests.images] so it is pinned to the release digest (an airgapped device cannot pull it)`,
			is:   compose.ErrImageNotInPlan,
		},
		{
			// Pinned, but not an image of the plan: still unpullable offline.
			with: "cronjob-init-image",
			want: `component "cronjob-init-image": CronJob edge/backup: container "prepare" image "quay.io/example/backup-init@sha256:4444444444444444444444444444444444444444444444444444444444444444": image is not in the plan; map "quay.io/example/backup-init" to a key of images.keys in [manifests.images] so it is pinned to the release digest (an airgapped device cannot pull it)`,
			is:   compose.ErrImageNotInPlan,
		},
		{
			with: "ephemeral-image",
			want: `component "ephemeral-image": Pod edge/debug: container "debugger" image "quay.io/example/toolbox:latest": image is not in the plan; map "quay.io/example/toolbox" to a key of images.keys in [manifests.images] so it is pinned to the release digest (an airgapped device cannot pull it)`,
			is:   compose.ErrImageNotInPlan,
		},
		{
			with: "remote-base",
			want: `component "remote-base": manifests/kustomization.yaml: resource "github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v5.7.1" is not a file or directory of the component (remote resources are not fetched: builds are offline; vendor it into the component)`,
		},
		{
			with: "plugin-bad-config",
			want: `component "plugin-bad-config": plugin run: bad configuration (exit 2): MICROSHIFT_NODEIP is empty: set node.nodeIP in --config`,
			is:   plugin.ErrConfig,
		},
		{
			with: "plugin-garbage",
			want: `component "plugin-garbage": plugin run printed bad output: document 1: not a Kubernetes resource or kustomization: got a scalar`,
		},
	} {
		t.Run(tc.with, func(t *testing.T) {
			p, err := assemble.Plan(context.Background(), cat, rel, compose.Request{Profile: "minimal", With: []string{tc.with}, Arch: releases.X86_64})
			if err == nil {
				t.Fatalf("Resolve(--with %s) = %d files, nil; want an error", tc.with, len(p.Files))
			}
			if err.Error() != tc.want {
				t.Errorf("Resolve(--with %s) error:\n got: %s\nwant: %s", tc.with, err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error is not %v", tc.is)
			}
		})
	}
}

func TestManifestsFromACatalogComponent(t *testing.T) {
	cat := assembletest.ManifestsCatalog(t)
	rel := assembletest.Release(t, "4.18")
	p := assembletest.Plan(t, cat, rel, compose.Request{Profile: "networking-only", With: []string{"edge-app", "plugin-empty"}, Arch: releases.AArch64})
	wantWarnings := []string{`component "edge-app": image "unused" (quay.io/example/unused@sha256:3333333333333333333333333333333333333333333333333333333333333333) is embedded but no rendered manifest or device file uses it`}
	if w := assembletest.DeviceWarnings(p); !reflect.DeepEqual(w, wantWarnings) {
		t.Errorf("warnings = %q\nwant %q", w, wantWarnings)
	}
	for _, note := range []string{
		"release-edge-app-aarch64.json comes from component edge-app: release 4.18 (embedded) does not ship it",
		"component plugin-empty: its plugin printed no manifests, so /etc/microshift/manifests.d/ has no 098-plugin-empty directory",
	} {
		if !slices.Contains(p.Notes, note) {
			t.Errorf("notes %q lack %q", p.Notes, note)
		}
	}
	want := plan.Manifest{
		Component: "edge-app",
		Dir:       "/etc/microshift/manifests.d/091-edge-app/",
		From:      plan.FromManifests,
		Resources: []string{"Namespace edge", "Deployment edge/edge-app", "CronJob edge/edge-report"},
		Images: []string{
			"quay.io/example/edge-app@sha256:1111111111111111111111111111111111111111111111111111111111111111",
			"quay.io/example/sidecar@sha256:2222222222222222222222222222222222222222222222222222222222222222",
		},
	}
	if len(p.Manifests) != 1 || !reflect.DeepEqual(p.Manifests[0], want) {
		t.Errorf("manifests = %+v\nwant [%+v]", p.Manifests, want)
	}
	cron := p.File(want.Dir + "batch_v1_cronjob_edge-report.yaml")
	if cron == nil || !strings.Contains(string(cron.Data), "image: quay.io/example/edge-app@sha256:1111") {
		t.Errorf("the CronJob's container is not pinned: %v", cron)
	}
	kust := p.File(want.Dir + "kustomization.yaml")
	wantKust := "# Rendered by microshift-compose; do not edit.\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- v1_namespace_edge.yaml\n- apps_v1_deployment_edge-app.yaml\n- batch_v1_cronjob_edge-report.yaml\n"
	if kust == nil || string(kust.Data) != wantKust {
		t.Errorf("kustomization.yaml = %q\nwant %q", kust.Data, wantKust)
	}
	if got := output.Path(want.Dir + "kustomization.yaml"); got != "manifests.d/091-edge-app/kustomization.yaml" {
		t.Errorf("OutputPath = %s", got)
	}
}

// Through Resolve, a plugin sees the config's values and none of the
// caller's environment.
func TestPluginEnvironmentThroughResolve(t *testing.T) {
	t.Setenv("MICROSHIFT_COMPOSE_LEAK_CANARY", "leaked")
	t.Setenv("MICROSHIFT_CLUSTER_CLUSTERCIDR", "192.0.2.0/24")
	cfg, err := microshiftconfig.Parse("config.yaml", []byte("network:\n  clusterNetwork: [10.100.0.0/16]\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := assembletest.Plan(t, assembletest.ManifestsCatalog(t), assembletest.Release(t, "5.0"), compose.Request{Profile: "minimal", With: []string{"plugin-env"}, Arch: releases.X86_64, Config: cfg})
	f := p.File("/etc/microshift/manifests.d/096-plugin-env/v1_configmap_plugin-env.yaml")
	if f == nil {
		t.Fatalf("no rendered config map in %d files", len(p.Files))
	}
	data := string(f.Data)
	if !strings.Contains(data, `MICROSHIFT_CLUSTER_CLUSTERCIDR: 10.100.0.0/16`) {
		t.Errorf("plugin did not get the config's cluster network:\n%s", data)
	}
	for _, leak := range []string{"LEAK_CANARY", "192.0.2.0/24", "HOME:", "GOFLAGS"} {
		if strings.Contains(data, leak) {
			t.Errorf("caller environment leaked into the plugin (%s):\n%s", leak, data)
		}
	}
}

func TestLvmd(t *testing.T) {
	cat := assembletest.Catalog(t)
	rel := assembletest.Release(t, "5.0")
	doc := "# edge storage\ndevice-classes:\n- name: ssd\n  volume-group: data\n  default: true\n"
	l, err := lvmdconfig.Parse("conf/lvmd.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	p := assembletest.Plan(t, cat, rel, compose.Request{Profile: "storage-only", Arch: releases.X86_64, Lvmd: l})
	f := p.File(lvmdconfig.DevicePath)
	if f == nil || string(f.Data) != doc || f.Source != "--lvmd lvmd.yaml" || f.Component != "storage-lvms" || f.Mode != "0644" {
		t.Fatalf("lvmd.yaml device file = %+v, want the file as written", f)
	}
	for _, n := range p.Notes {
		if strings.Contains(n, "--lvmd") {
			t.Errorf("note %q with --lvmd given", n)
		}
	}
	if got := output.Path(lvmdconfig.DevicePath); got != "files/etc/microshift/lvmd.yaml" {
		t.Errorf("OutputPath(lvmd.yaml) = %s", got)
	}
	if bp := string(assembletest.File(t, assembletest.Build(t, p, assemble.Options{}), output.BlueprintFile)); !strings.Contains(bp, `path = "/etc/microshift/lvmd.yaml"`) {
		t.Errorf("blueprint does not place lvmd.yaml")
	}

	_, err = assemble.Plan(context.Background(), cat, rel, compose.Request{Profile: "minimal", Arch: releases.X86_64, Lvmd: l})
	want := "--lvmd conf/lvmd.yaml: storage-lvms is not in the plan, so nothing would read it; select it (--with storage-lvms, or profile storage-only or full) or drop --lvmd"
	if err == nil || err.Error() != want {
		t.Errorf("Resolve(minimal, --lvmd) = %v\nwant %s", err, want)
	}

	p = assembletest.Plan(t, cat, rel, compose.Request{Profile: "full", Arch: releases.X86_64})
	note := "storage-lvms: no --lvmd given, so /etc/microshift/lvmd.yaml is not written and MicroShift's runtime defaulting applies on the device (LVMS picks the host's volume group itself)"
	if !slices.Contains(p.Notes, note) || p.File(lvmdconfig.DevicePath) != nil {
		t.Errorf("full without --lvmd: notes %q, want %q and no lvmd.yaml", p.Notes, note)
	}
	var explain bytes.Buffer
	if err := describe.Plan(&explain, p, true); err != nil || !strings.Contains(explain.String(), "note: "+note) {
		t.Errorf("resolve --explain does not show the note:\n%s", explain.String())
	}
}

// An empty lvmd.yaml is refused, with what the release's MicroShift does
// with it (release knowledge): 5.0 refuses to start ("lvmd config file ...
// is empty", pkg/config/lvmd), earlier releases crash reading it. It is
// refused before --storage-class looks for its device classes.
func TestLvmdEmpty(t *testing.T) {
	cat := assembletest.Catalog(t)
	l, err := lvmdconfig.Parse("conf/lvmd.yaml", []byte("# to be filled in\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ stream, want string }{
		{"5.0", `--lvmd conf/lvmd.yaml: the file is empty (no document): on MicroShift 5.0: MicroShift does not start: lvmd config file "/var/lib/microshift/lvms/lvmd.yaml" is empty (its copy of /etc/microshift/lvmd.yaml); list at least one device class, or drop --lvmd and MicroShift picks the host's volume group itself`},
		{"5.1", `--lvmd conf/lvmd.yaml: the file is empty (no document): on MicroShift 5.1: MicroShift does not start: lvmd config file "/var/lib/microshift/lvms/lvmd.yaml" is empty (its copy of /etc/microshift/lvmd.yaml); list at least one device class, or drop --lvmd and MicroShift picks the host's volume group itself`},
		{"4.22", `--lvmd conf/lvmd.yaml: the file is empty (no document): on MicroShift 4.22: MicroShift crashes: yaml.Unmarshal leaves no config and NewLvmdConfigFromFile dereferences it (upstream fixed it in 5.0 by refusing the file); list at least one device class, or drop --lvmd and MicroShift picks the host's volume group itself`},
	} {
		t.Run(tc.stream, func(t *testing.T) {
			_, err := assemble.Plan(context.Background(), cat, assembletest.Release(t, tc.stream),
				compose.Request{Profile: "full", Arch: releases.X86_64, Lvmd: l, StorageClasses: assembletest.ClassChoices(t, "hdd")})
			if err == nil || err.Error() != tc.want {
				t.Errorf("Resolve(--lvmd empty) = %v\nwant %s", err, tc.want)
			}
		})
	}
}

// Values that change nothing stay out of the plan's config: unset, zero
// values MicroShift reads as unset, and its defaults.
func TestConfigDefaultsLeftOut(t *testing.T) {
	cfg, err := microshiftconfig.Parse("/etc/edge/config.yaml", []byte("network:\n  cniPlugin: \"\"\n  clusterNetwork: [10.42.0.0/16]\n  serviceNodePortRange: 30000-32767\ndebugging:\n  logLevel: Debug\ndns:\n  baseDomain: example.com\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := assembletest.Plan(t, assembletest.Catalog(t), assembletest.Release(t, "5.0"), compose.Request{Profile: "full", Arch: releases.X86_64, Config: cfg})
	want := map[string]any{"debugging": map[string]any{"logLevel": "Debug"}}
	if !reflect.DeepEqual(p.Config, want) {
		t.Errorf("config = %#v\nwant %#v", p.Config, want)
	}
	note := "user config.yaml: 4 values are unset, or MicroShift's defaults, and are left out of the plan's config (dns.baseDomain, network.clusterNetwork, network.cniPlugin, network.serviceNodePortRange)"
	if !slices.Contains(p.Notes, note) {
		t.Errorf("notes %q lack %q", p.Notes, note)
	}

	// MicroShift's own default config, copied as is, changes nothing.
	ref, err := microshiftconfig.Load(testutil.Shared(t, "reference", "microshift-config", "config.yaml.release-4.18"))
	if err != nil {
		t.Fatal(err)
	}
	for _, profile := range goldenProfiles {
		withRef := assembletest.Plan(t, assembletest.Catalog(t), assembletest.Release(t, "4.18"), compose.Request{Profile: profile, Arch: releases.X86_64, Config: ref, AllowRedBoot: true})
		without := assembletest.Plan(t, assembletest.Catalog(t), assembletest.Release(t, "4.18"), compose.Request{Profile: profile, Arch: releases.X86_64, AllowRedBoot: true})
		if !reflect.DeepEqual(withRef.Config, without.Config) {
			t.Errorf("%s: the reference config changed the plan's config: %#v, without it %#v", profile, withRef.Config, without.Config)
		}
	}
}
