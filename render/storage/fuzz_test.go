package storage

import (
	"bytes"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// twoClasses is an lvmd.yaml of two device classes: thick on rhel, thin
// on a pool.
const twoClasses = `socket-name: /run/lvmd/lvmd.socket
device-classes:
- name: default
  volume-group: rhel
  spare-gb: 10
  default: true
- name: thin
  volume-group: data
  type: thin
  thin-pool:
    name: pool0
    overprovision-ratio: 5.5
`

// FuzzStorageClasses feeds any lvmd.yaml and any --storage-class values
// (separated by ';') through ParseClassChoice, StorageClasses and the
// rendering of their manifests:
// every refusal is one line, and what is accepted is a StorageClass per
// non-default class (none named MicroShift's own default class, no two with
// one name), a VolumeSnapshotClass per thin class, each decoding strictly
// into the Kubernetes API types, the same bytes twice.
func FuzzStorageClasses(f *testing.F) {
	f.Add([]byte(twoClasses), "")
	f.Add([]byte("device-classes:\n- name: ssd\n  volume-group: rhel\n  default: true\n- name: hdd\n  volume-group: data\n- name: Fast_Thin\n  volume-group: rhel\n  type: thin\n  thin-pool:\n    name: thinpool\n    overprovision-ratio: 10\n"), "hdd=bulk,fstype=ext4")
	f.Add([]byte("device-classes:\n- name: a_b\n  volume-group: vg1\n  default: true\n- name: c_d\n  volume-group: vg2\n- name: c-d\n  volume-group: vg3\n"), "c_d=x;c-d=x")
	f.Add([]byte("device-classes:\n- name: t\n  volume-group: vg\n  default: true\n  type: thin\n  thin-pool:\n    name: p\n    overprovision-ratio: 2\n- name: z\n  volume-group: vg\n"), "z=topolvm-provisioner,fstype=btrfs")
	know, err := knowledge.Default()
	if err != nil {
		f.Fatal(err)
	}
	facts, err := know.For(semver.MustParse("4.19.0"))
	if err != nil || facts.LVMSStorageClasses == nil {
		f.Fatalf("knowledge for 4.19: %v", err)
	}
	rules := facts.LVMSStorageClasses
	oneLine := func(t *testing.T, err error) {
		if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\n\r") {
			t.Fatalf("error is not one line: %q", msg)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, flags string) {
		c, err := lvmdconfig.Parse("fuzz/lvmd.yaml", data)
		if err != nil {
			return // FuzzParse covers the file's refusals
		}
		var choices []lvmdconfig.ClassChoice
		if flags != "" {
			for _, s := range strings.Split(flags, ";") {
				ch, err := lvmdconfig.ParseClassChoice(s)
				if err != nil {
					oneLine(t, err)
					return
				}
				choices = append(choices, ch)
			}
		}
		classes, err := lvmdconfig.StorageClasses(c, choices, rules)
		if err != nil {
			oneLine(t, err)
			return
		}
		if len(classes) != len(c.DeviceClasses) {
			t.Fatalf("%d classes for %d device classes", len(classes), len(c.DeviceClasses))
		}
		wantSC, wantVSC := 0, 0
		for i, cl := range classes {
			dc := c.DeviceClasses[i]
			if dc.Default != (cl.StorageClass == "") {
				t.Fatalf("device class %q (default %v) gets StorageClass %q", dc.Name, dc.Default, cl.StorageClass)
			}
			if !dc.Default {
				wantSC++
			}
			if (dc.Type == lvmdconfig.TypeThin) != (cl.SnapshotClass != "") {
				t.Fatalf("device class %q (type %q) gets VolumeSnapshotClass %q", dc.Name, dc.Type, cl.SnapshotClass)
			}
			if cl.SnapshotClass != "" {
				wantVSC++
			}
		}
		out, err := manifestStream(classes, rules)
		if err != nil {
			t.Fatalf("manifestStream of accepted classes: %v", err)
		}
		again, _ := manifestStream(classes, rules)
		if !bytes.Equal(out, again) {
			t.Fatal("manifestStream is not deterministic")
		}
		names := map[string]bool{}
		gotSC, gotVSC := 0, 0
		for _, doc := range splitDocs(out) {
			var head struct{ Kind string }
			if err := yaml.Unmarshal(doc, &head); err != nil {
				t.Fatalf("reading a rendered document: %v\n%s", err, doc)
			}
			switch head.Kind {
			case "StorageClass":
				var sc storagev1.StorageClass
				if err := yaml.UnmarshalStrict(doc, &sc); err != nil {
					t.Fatalf("StorageClass does not decode strictly: %v\n%s", err, doc)
				}
				if sc.Name == rules.DefaultClass || names[sc.Name] || len(sc.Annotations) != 0 || sc.Provisioner != rules.Provisioner {
					t.Fatalf("StorageClass %q: default class, duplicate or annotated\n%s", sc.Name, doc)
				}
				names[sc.Name] = true
				gotSC++
			case "VolumeSnapshotClass":
				var vsc snapshotv1.VolumeSnapshotClass
				if err := yaml.UnmarshalStrict(doc, &vsc); err != nil {
					t.Fatalf("VolumeSnapshotClass does not decode strictly: %v\n%s", err, doc)
				}
				if vsc.Driver != rules.Provisioner || len(vsc.Annotations) != 0 {
					t.Fatalf("VolumeSnapshotClass %q: wrong driver or annotated\n%s", vsc.Name, doc)
				}
				gotVSC++
			default:
				t.Fatalf("unexpected kind %q\n%s", head.Kind, doc)
			}
		}
		if gotSC != wantSC || gotVSC != wantVSC {
			t.Fatalf("%d StorageClasses and %d VolumeSnapshotClasses, want %d and %d", gotSC, gotVSC, wantSC, wantVSC)
		}
	})
}

func splitDocs(stream []byte) [][]byte {
	if len(stream) == 0 {
		return nil
	}
	return bytes.Split(stream, []byte("---\n"))
}
