package compose

import (
	"fmt"

	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
	"github.com/microshift-compose/microshift-compose/plan"
)

// SnapshotComponent is the component that deploys the CSI snapshot
// controller, which a VolumeSnapshotClass needs.
const SnapshotComponent = "snapshot-controller"

// checkStorageClasses refuses --lvmd's device classes where they cannot
// be exposed to workloads (render/storage renders them): the release has
// no StorageClass rules, a --storage-class choice is wrong, or a thin class
// needs the CSI snapshot controller for its VolumeSnapshotClass and the
// plan leaves it out (it is never pulled in behind the profile's back).
func checkStorageClasses(in *inputs, p *plan.Plan) error {
	l := in.req.Lvmd
	if l == nil {
		return nil
	}
	rules := in.facts.LVMSStorageClasses
	if rules == nil {
		return fmt.Errorf("--lvmd %s: microshift-compose knows no StorageClass rules for release %s (releases/knowledge/data/releases.toml [[lvms_storage_classes]])", l.Source, in.rel.Stream())
	}
	classes, err := lvmdconfig.StorageClasses(l, in.req.StorageClasses, rules)
	if err != nil {
		return err
	}
	if !selection(p).has(SnapshotComponent) {
		for _, cl := range classes {
			if cl.Thin {
				return fmt.Errorf("--lvmd %s: device class %q is thin, and its VolumeSnapshotClass needs the CSI snapshot controller, which the plan leaves out; select it (--with %s) or make the class thick",
					l.Source, cl.DeviceClass, SnapshotComponent)
			}
		}
	}
	return nil
}
