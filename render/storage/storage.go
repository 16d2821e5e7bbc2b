// Package storage renders the StorageClasses and VolumeSnapshotClasses that
// expose --lvmd's device classes to workloads: a manifests.d directory of
// their own (NNN-storage-lvms-device-classes), rendered by kustomize like a
// component's, beside MicroShift's own default StorageClass. It is a
// function of the plan and the request's lvmd.yaml and --storage-class
// choices, which compose has checked; it resolves nothing.
package storage

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
	"github.com/microshift-compose/microshift-compose/compose/manifests"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// DeviceClassesSuffix names the manifests.d directory of the StorageClasses
// and VolumeSnapshotClasses of --lvmd's device classes:
// NNN-storage-lvms-device-classes, beside any directory of storage-lvms's
// own.
const DeviceClassesSuffix = "-device-classes"

// Apply adds to p the manifests.d directory that exposes --lvmd's device
// classes to workloads, after the manifests of storage-lvms and of the
// components applied before it, with a note saying what the classes
// became. Nothing is added when p has no --lvmd (l is nil) or every class
// is served by MicroShift's own default StorageClass.
func Apply(p *plan.Plan, l *lvmdconfig.Config, choices []lvmdconfig.ClassChoice, rules *knowledge.LVMSStorageClasses) error {
	if l == nil {
		return nil
	}
	c := p.Component(compose.LVMSComponent)
	if c == nil {
		return nil
	}
	classes, err := lvmdconfig.StorageClasses(l, choices, rules)
	if err != nil {
		return err
	}
	stream, err := manifestStream(classes, rules)
	if err != nil || stream == nil {
		return err
	}
	job, err := manifests.Prepare(manifests.Input{Component: c.Name, Resources: stream})
	if err != nil {
		return fmt.Errorf("--lvmd %s: %w", l.Source, err)
	}
	res, err := job.Render()
	if err != nil {
		return fmt.Errorf("component %q: rendering %s: %w", c.Name, plan.FromLvmd, err)
	}
	dir := fmt.Sprintf("%s%03d-%s%s/", output.ManifestsDevicePath, c.Order, c.Name, DeviceClassesSuffix)
	m, files, err := compose.RenderedDir(p, c.Name, plan.FromLvmd, dir, res)
	if err != nil {
		return err
	}
	p.Manifests = compose.InsertManifest(p, m)
	p.Notes = append(p.Notes, note(l, m, rules))
	return p.AddFiles(files...)
}

// note says what the device classes became, for the plan.
func note(l *lvmdconfig.Config, m plan.Manifest, rules *knowledge.LVMSStorageClasses) string {
	var scs, vscs []string
	for _, res := range m.Resources {
		if n, ok := strings.CutPrefix(res, "StorageClass "); ok {
			scs = append(scs, n)
		}
		if n, ok := strings.CutPrefix(res, "VolumeSnapshotClass "); ok {
			vscs = append(vscs, n)
		}
	}
	what := text.Plural(len(scs), "StorageClass ", "StorageClasses ") + strings.Join(scs, ", ")
	if len(scs) == 0 {
		what = "no StorageClass"
	}
	if len(vscs) > 0 {
		what += " and " + text.Plural(len(vscs), "VolumeSnapshotClass ", "VolumeSnapshotClasses ") + strings.Join(vscs, ", ")
	}
	return fmt.Sprintf("--lvmd %s: %s has %s; the default device class %q keeps MicroShift's own default StorageClass %s",
		filepath.Base(l.Source), m.Dir, what, l.Default().Name, rules.DefaultClass)
}

// manifestStream renders the StorageClasses and VolumeSnapshotClasses of
// classes as one YAML stream, typed with the Kubernetes storage/v1 and
// the CSI snapshotter's snapshot/v1 API types; nil when there are none.
func manifestStream(classes []lvmdconfig.Class, rules *knowledge.LVMSStorageClasses) ([]byte, error) {
	var docs [][]byte
	reclaim := corev1.PersistentVolumeReclaimPolicy(rules.ReclaimPolicy)
	binding := storagev1.VolumeBindingMode(rules.VolumeBindingMode)
	for _, cl := range classes {
		if cl.StorageClass == "" {
			continue
		}
		expand := rules.AllowVolumeExpansion
		sc := storagev1.StorageClass{
			TypeMeta:    metav1.TypeMeta{APIVersion: storagev1.SchemeGroupVersion.String(), Kind: "StorageClass"},
			ObjectMeta:  metav1.ObjectMeta{Name: cl.StorageClass},
			Provisioner: rules.Provisioner,
			Parameters: map[string]string{
				rules.FSTypeParameter:      cl.FSType,
				rules.DeviceClassParameter: cl.DeviceClass,
			},
			ReclaimPolicy:        &reclaim,
			VolumeBindingMode:    &binding,
			AllowVolumeExpansion: &expand,
		}
		data, err := marshal(sc)
		if err != nil {
			return nil, fmt.Errorf("encoding StorageClass %s: %w", cl.StorageClass, err)
		}
		docs = append(docs, data)
	}
	for _, cl := range classes {
		if cl.SnapshotClass == "" {
			continue
		}
		vsc := snapshotv1.VolumeSnapshotClass{
			TypeMeta:       metav1.TypeMeta{APIVersion: snapshotv1.SchemeGroupVersion.String(), Kind: "VolumeSnapshotClass"},
			ObjectMeta:     metav1.ObjectMeta{Name: cl.SnapshotClass},
			Driver:         rules.Provisioner,
			DeletionPolicy: snapshotv1.DeletionPolicy(rules.SnapshotDeletionPolicy),
		}
		data, err := marshal(vsc)
		if err != nil {
			return nil, fmt.Errorf("encoding VolumeSnapshotClass %s: %w", cl.SnapshotClass, err)
		}
		docs = append(docs, data)
	}
	if len(docs) == 0 {
		return nil, nil
	}
	return bytes.Join(docs, []byte("---\n")), nil
}

// marshal encodes an API object as YAML without the fields a client never
// sets (metadata.creationTimestamp: null, an empty status).
func marshal(obj any) ([]byte, error) {
	js, err := yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(js, &m); err != nil {
		return nil, err
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		for k, v := range md {
			if v == nil {
				delete(md, k)
			}
		}
	}
	if len(m) == 0 {
		return nil, errors.New("empty object")
	}
	return yaml.Marshal(m)
}
