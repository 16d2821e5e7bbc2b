package compose

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
	"github.com/microshift-compose/microshift-compose/compose/manifests"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan"
)

// SnapshotComponent is the component that deploys the CSI snapshot
// controller, which a VolumeSnapshotClass needs.
const SnapshotComponent = "snapshot-controller"

// DeviceClassesSuffix names the manifests.d directory of the StorageClasses
// and VolumeSnapshotClasses of --lvmd's device classes:
// NNN-storage-lvms-device-classes, beside any directory of storage-lvms's
// own.
const DeviceClassesSuffix = "-device-classes"

// storageClassJob prepares the manifests.d directory that exposes --lvmd's
// device classes to workloads (lvmdconfig.StorageClasses), rendered by
// kustomize and cross-checked like any component's; ok is false when the
// plan has no --lvmd or every class is served by MicroShift's own default
// StorageClass. A thin class needs the CSI snapshot controller for its
// VolumeSnapshotClass: when the plan leaves it out, the build is refused
// (it is never pulled in behind the profile's back).
func storageClassJob(in *inputs, p *plan.Plan) (mj ManifestJob, ok bool, err error) {
	l := in.req.Lvmd
	if l == nil {
		return mj, false, nil
	}
	c := in.cat.Components[LVMSComponent]
	rules := in.facts.LVMSStorageClasses
	if rules == nil {
		return mj, false, fmt.Errorf("--lvmd %s: microshift-compose knows no StorageClass rules for release %s (releases/knowledge/data/releases.toml [[lvms_storage_classes]])", l.Source, in.rel.Stream())
	}
	classes, err := lvmdconfig.StorageClasses(l, in.req.StorageClasses, rules)
	if err != nil {
		return mj, false, err
	}
	if !selection(p).has(SnapshotComponent) {
		for _, cl := range classes {
			if cl.Thin {
				return mj, false, fmt.Errorf("--lvmd %s: device class %q is thin, and its VolumeSnapshotClass needs the CSI snapshot controller, which the plan leaves out; select it (--with %s) or make the class thick",
					l.Source, cl.DeviceClass, SnapshotComponent)
			}
		}
	}
	stream, err := lvmdconfig.Manifests(classes, rules)
	if err != nil || stream == nil {
		return mj, false, err
	}
	job, err := manifests.Prepare(manifests.Input{Component: LVMSComponent, Resources: stream})
	if err != nil {
		return mj, false, fmt.Errorf("--lvmd %s: %w", l.Source, err)
	}
	return ManifestJob{Component: LVMSComponent, From: plan.FromLvmd, Job: job, Dir: fmt.Sprintf("%03d-%s%s", c.Order, c.Name, DeviceClassesSuffix)}, true, nil
}

// storageClassNote says what the device classes became, for the plan.
func storageClassNote(in *inputs, m plan.Manifest) string {
	l := in.req.Lvmd
	var scs, vscs []string
	for _, res := range m.Resources {
		if n, ok := strings.CutPrefix(res, "StorageClass "); ok {
			scs = append(scs, n)
		}
		if n, ok := strings.CutPrefix(res, "VolumeSnapshotClass "); ok {
			vscs = append(vscs, n)
		}
	}
	what := text.Plural(len(scs), "StorageClass ", "StorageClasses ") + orNone(scs)
	if len(scs) == 0 {
		what = "no StorageClass"
	}
	if len(vscs) > 0 {
		what += " and " + text.Plural(len(vscs), "VolumeSnapshotClass ", "VolumeSnapshotClasses ") + strings.Join(vscs, ", ")
	}
	return fmt.Sprintf("--lvmd %s: %s has %s; the default device class %q keeps MicroShift's own default StorageClass %s",
		filepath.Base(l.Source), m.Dir, what, l.Default().Name, in.facts.LVMSStorageClasses.DefaultClass)
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// insertAfter puts mj among jobs after those of its component and of the
// components applied before it: the plan lists manifests in apply order.
func insertAfter(p *plan.Plan, jobs []ManifestJob, mj ManifestJob) []ManifestJob {
	order := make(map[string]int, len(p.Components))
	for i, c := range p.Components {
		order[c.Name] = i
	}
	at := order[mj.Component]
	i := slices.IndexFunc(jobs, func(j ManifestJob) bool { return order[j.Component] > at })
	if i < 0 {
		return append(jobs, mj)
	}
	return slices.Insert(jobs, i, mj)
}
