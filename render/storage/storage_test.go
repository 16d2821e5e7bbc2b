package storage_test

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"testing"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/render/storage"
)

const threeClasses = `device-classes:
- name: ssd
  volume-group: rhel
  default: true
- name: hdd
  volume-group: data
- name: Fast_Thin
  volume-group: rhel
  type: thin
  thin-pool:
    name: thinpool
    overprovision-ratio: 10
`

// TestStorageClassesPerRelease builds `full` with three device classes on
// every release that has lvmd and decodes what it writes strictly with the
// Kubernetes API types: a StorageClass per non-default class, a
// VolumeSnapshotClass for the thin one, never a second default.
func TestStorageClassesPerRelease(t *testing.T) {
	cat := assembletest.Catalog(t)
	for _, stream := range []string{"4.14", "4.16", "4.17", "4.18", "4.19", "4.21", "5.0"} {
		t.Run(stream, func(t *testing.T) {
			l, err := lvmdconfig.Parse("lvmd.yaml", []byte(threeClasses))
			if err != nil {
				t.Fatal(err)
			}
			p := assembletest.Plan(t, cat, assembletest.Release(t, stream), compose.Request{
				Profile: "full", Arch: releases.X86_64, Lvmd: l,
				StorageClasses: assembletest.ClassChoices(t, "hdd=bulk,fstype=ext4"),
			})
			out := assembletest.Build(t, p, assemble.Options{})
			var dir string
			for _, f := range out.Files {
				if strings.HasPrefix(f.Path, "manifests.d/") && strings.Contains(f.Path, storage.DeviceClassesSuffix+"/") {
					dir = path.Dir(f.Path)
				}
			}
			if dir == "" {
				t.Fatalf("no manifests.d/*%s directory written", storage.DeviceClassesSuffix)
			}
			bulk := decodeStrict[storagev1.StorageClass](t, assembletest.File(t, out, dir+"/storage.k8s.io_v1_storageclass_bulk.yaml"))
			thin := decodeStrict[storagev1.StorageClass](t, assembletest.File(t, out, dir+"/storage.k8s.io_v1_storageclass_topolvm-provisioner-fast-thin.yaml"))
			vsc := decodeStrict[snapshotv1.VolumeSnapshotClass](t, assembletest.File(t, out, dir+"/snapshot.storage.k8s.io_v1_volumesnapshotclass_topolvm-provisioner-fast-thin.yaml"))
			for _, sc := range []*storagev1.StorageClass{bulk, thin} {
				if sc.Provisioner != "topolvm.io" || *sc.ReclaimPolicy != "Delete" || *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer ||
					sc.AllowVolumeExpansion == nil || !*sc.AllowVolumeExpansion {
					t.Errorf("StorageClass %s = %+v", sc.Name, sc)
				}
				if sc.Annotations["storageclass.kubernetes.io/is-default-class"] != "" {
					t.Errorf("StorageClass %s is marked default: MicroShift's own stays the default", sc.Name)
				}
			}
			if bulk.Parameters["topolvm.io/device-class"] != "hdd" || bulk.Parameters["csi.storage.k8s.io/fstype"] != "ext4" {
				t.Errorf("bulk parameters = %v", bulk.Parameters)
			}
			if thin.Parameters["topolvm.io/device-class"] != "Fast_Thin" || thin.Parameters["csi.storage.k8s.io/fstype"] != "xfs" {
				t.Errorf("thin parameters = %v", thin.Parameters)
			}
			if vsc.Driver != "topolvm.io" || vsc.DeletionPolicy != snapshotv1.VolumeSnapshotContentDelete {
				t.Errorf("VolumeSnapshotClass = %+v", vsc)
			}
			for _, f := range out.Files {
				if strings.Contains(f.Path, "storageclass_topolvm-provisioner.yaml") || strings.Contains(f.Path, "storageclass_topolvm-provisioner-ssd") {
					t.Errorf("%s: a StorageClass for the default device class", f.Path)
				}
			}
			if !strings.Contains(string(assembletest.File(t, out, output.BlueprintFile)), dir) {
				t.Errorf("the blueprint does not place %s", dir)
			}
			again := assembletest.Build(t, assembletest.Plan(t, cat, assembletest.Release(t, stream), compose.Request{
				Profile: "full", Arch: releases.X86_64, Lvmd: l, StorageClasses: assembletest.ClassChoices(t, "hdd=bulk,fstype=ext4"),
			}), assemble.Options{})
			if !bytes.Equal(assembletest.File(t, again, dir+"/kustomization.yaml"), assembletest.File(t, out, dir+"/kustomization.yaml")) {
				t.Errorf("the device-class manifests are not deterministic")
			}
		})
	}
}

func decodeStrict[T any](t *testing.T, data []byte) *T {
	t.Helper()
	var v T
	if err := yaml.UnmarshalStrict(data, &v); err != nil {
		t.Fatalf("decoding %T strictly: %v\n%s", v, err, data)
	}
	return &v
}

// TestStorageClassErrors is every way a device class or a --storage-class
// choice is refused, one line each, nothing resolved.
func TestStorageClassErrors(t *testing.T) {
	cat := assembletest.Catalog(t)
	rel := assembletest.Release(t, "5.0")
	for _, tc := range []struct {
		name, lvmd, profile string
		without             []string
		choices             []string
		want                string
	}{
		{name: "thin class without the snapshot controller", lvmd: threeClasses, profile: "full", without: []string{"snapshot-controller"},
			want: `device class "Fast_Thin" is thin, and its VolumeSnapshotClass needs the CSI snapshot controller, which the plan leaves out; select it (--with snapshot-controller) or make the class thick`},
		{name: "a choice for a class lvmd.yaml lacks", lvmd: threeClasses, profile: "full", choices: []string{"nvme=fast"}, want: `--storage-class "nvme=fast"`},
		{name: "two choices for one class", lvmd: threeClasses, profile: "full", choices: []string{"hdd=a", "hdd=b"}, want: `device class "hdd" is already chosen by --storage-class "hdd=a"`},
		{name: "a choice for the default class", lvmd: threeClasses, profile: "full", choices: []string{"ssd=fast"}, want: `device class "ssd" is the default one`},
		{name: "an fstype topolvm does not make", lvmd: threeClasses, profile: "full", choices: []string{"hdd,fstype=btrfs"}, want: `fstype "btrfs" is not one topolvm.io makes (want xfs or ext4)`},
		{name: "an invalid StorageClass name", lvmd: threeClasses, profile: "full", choices: []string{"hdd=Bad_Name"}, want: `"Bad_Name" is not a valid StorageClass name`},
		{name: "MicroShift's own default name", lvmd: threeClasses, profile: "full", choices: []string{"hdd=topolvm-provisioner"}, want: `StorageClass name "topolvm-provisioner" is MicroShift's own default StorageClass`},
		{name: "two classes mapped to one name", lvmd: threeClasses, profile: "full", choices: []string{"hdd=same", "Fast_Thin=same"}, want: `StorageClass name "same" is also device class`},
		{name: "names colliding after mapping", profile: "full",
			lvmd: "device-classes:\n- name: ssd\n  volume-group: a\n  default: true\n- name: big_disk\n  volume-group: b\n- name: big-disk\n  volume-group: c\n",
			want: `StorageClass name "topolvm-provisioner-big-disk" is also device class`},
		{name: "no LVMS in the plan", lvmd: threeClasses, profile: "minimal", want: "storage-lvms is not in the plan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := lvmdconfig.Parse("lvmd.yaml", []byte(tc.lvmd))
			if err != nil {
				t.Fatalf("Parse = %v", err)
			}
			var choices []lvmdconfig.ClassChoice
			for _, c := range tc.choices {
				ch, err := lvmdconfig.ParseClassChoice(c)
				if err != nil {
					t.Fatalf("ParseClassChoice(%q) = %v", c, err)
				}
				choices = append(choices, ch)
			}
			p, err := compose.Resolve(context.Background(), cat, rel, compose.Request{
				Profile: tc.profile, Arch: releases.X86_64, Lvmd: l, Without: tc.without, StorageClasses: choices,
			})
			if err == nil {
				t.Fatalf("Resolve = plan with %d manifests, want an error containing %q", len(p.Manifests), tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Resolve error = %q\nwant one line containing %q", err, tc.want)
			}
		})
	}
}

// TestParseClassChoice is the --storage-class syntax.
func TestParseClassChoice(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"hdd", "hdd||"},
		{"hdd=bulk", "hdd|bulk|"},
		{"hdd,fstype=ext4", "hdd||ext4"},
		{"hdd=bulk,fstype=xfs", "hdd|bulk|xfs"},
		{"", "error"},
		{"=bulk", "error"},
		{"hdd=", "error"},
		{"hdd,size=3", "error"},
		{"hdd,fstype", "error"},
		{"hdd\n=x", "error"},
	} {
		c, err := lvmdconfig.ParseClassChoice(tc.in)
		got := fmt.Sprintf("%s|%s|%s", c.Class, c.Name, c.FSType)
		if err != nil {
			got = "error"
			if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "--storage-class ") {
				t.Errorf("ParseClassChoice(%q) error %q: want one line naming the flag", tc.in, err)
			}
		}
		if got != tc.want {
			t.Errorf("ParseClassChoice(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestStorageClassesMatchUpstreamDefault compares the settings of the
// StorageClasses we write with MicroShift's own default StorageClass of
// every branch (../shared/reference/microshift-storage): same provisioner,
// reclaim policy, binding mode, expansion and fstype parameter key, and
// the name our data says MicroShift's default has.
func TestStorageClassesMatchUpstreamDefault(t *testing.T) {
	dir := testutil.Shared(t, "reference", "microshift-storage")
	cat := assembletest.Catalog(t)
	for branch, stream := range map[string]string{"release-4.14": "4.14", "release-4.16": "4.16", "release-4.18": "4.18", "release-4.20": "4.20", "release-4.22": "4.22", "main": "5.0"} {
		t.Run(branch, func(t *testing.T) {
			up := decodeStrict[storagev1.StorageClass](t, testutil.ReadFile(t, filepath.Join(dir, "default-storage-class.yaml."+branch)))
			l, err := lvmdconfig.Parse("lvmd.yaml", []byte(threeClasses))
			if err != nil {
				t.Fatal(err)
			}
			p := assembletest.Plan(t, cat, assembletest.Release(t, stream), compose.Request{Profile: "full", Arch: releases.X86_64, Lvmd: l})
			out := assembletest.Build(t, p, assemble.Options{})
			var ours *storagev1.StorageClass
			for _, f := range out.Files {
				if strings.Contains(f.Path, "storageclass_topolvm-provisioner-hdd.yaml") {
					ours = decodeStrict[storagev1.StorageClass](t, f.Data)
				}
			}
			if ours == nil {
				t.Fatal("no StorageClass for device class hdd")
			}
			if ours.Provisioner != up.Provisioner || *ours.ReclaimPolicy != *up.ReclaimPolicy || *ours.VolumeBindingMode != *up.VolumeBindingMode ||
				(up.AllowVolumeExpansion != nil) != (ours.AllowVolumeExpansion != nil) {
				t.Errorf("ours %+v\nupstream default %+v", ours, up)
			}
			if up.Parameters["csi.storage.k8s.io/fstype"] != ours.Parameters["csi.storage.k8s.io/fstype"] {
				t.Errorf("fstype %q, upstream default %q", ours.Parameters["csi.storage.k8s.io/fstype"], up.Parameters["csi.storage.k8s.io/fstype"])
			}
			if up.Name != "topolvm-provisioner" || up.Annotations["storageclass.kubernetes.io/is-default-class"] != "true" {
				t.Errorf("upstream default is %s (annotations %v): the data's default_class is out of date", up.Name, up.Annotations)
			}
		})
	}
}
