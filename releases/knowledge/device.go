package knowledge

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// LVMSStorageClasses is how a release's lvmd device classes are exposed to
// workloads: the settings of the StorageClass written for each non-default
// device class (those of MicroShift's own default StorageClass, which
// serves the default class) and of the VolumeSnapshotClass of each thin
// class.
type LVMSStorageClasses struct {
	Range
	// Provisioner is the CSI driver name, the StorageClasses' provisioner
	// and the VolumeSnapshotClasses' driver.
	Provisioner string
	// DefaultClass is MicroShift's own default StorageClass.
	DefaultClass string
	// NamePrefix starts the StorageClass name derived from a device class.
	NamePrefix           string
	DeviceClassParameter string
	FSTypeParameter      string
	// FSTypes are the filesystems the provisioner makes; the first is the
	// default.
	FSTypes                []string
	ReclaimPolicy          string
	VolumeBindingMode      string
	AllowVolumeExpansion   bool
	SnapshotDeletionPolicy string
}

// DefaultFSType is the filesystem a StorageClass gets unless chosen.
func (l *LVMSStorageClasses) DefaultFSType() string { return l.FSTypes[0] }

// Health check methods.
const (
	// HealthCheckCommand is one `microshift healthcheck --custom` call.
	HealthCheckCommand = "microshift-healthcheck"
	// HealthCheckFunctions uses the greenboot functions library.
	HealthCheckFunctions = "greenboot-functions"
)

// HealthCheck is how a release's greenboot check waits for workloads.
type HealthCheck struct {
	Range
	// Method is HealthCheckCommand or HealthCheckFunctions.
	Method string
	// FailMarker: the library has exit_if_fail_marker_exists and
	// create_fail_marker_and_exit.
	FailMarker bool
	// NamespaceFunctions maps a workload kind (Deployment, DaemonSet,
	// StatefulSet) to the library function that waits for every workload
	// of that kind in a namespace (HealthCheckFunctions only).
	NamespaceFunctions map[string]NamespaceFunction
}

// NamespaceFunction is a greenboot library function and the environment
// variable it reads its namespace from.
type NamespaceFunction struct {
	Function string `toml:"function"`
	Env      string `toml:"env"`
}

// WorkloadKinds are the kinds a health check waits for, in the order a
// check lists them.
var WorkloadKinds = []string{"Deployment", "DaemonSet", "StatefulSet"}

// Lvmd is what a release does with an empty lvmd.yaml.
type Lvmd struct {
	Range
	// EmptyFile says what MicroShift does with an lvmd.yaml that holds no
	// document (empty, or only comments): one line.
	EmptyFile string
}

type deviceTOML struct {
	Lvmd []struct {
		Release   string `toml:"release"`
		EmptyFile string `toml:"empty_file"`
	} `toml:"lvmd"`
	LVMSStorageClasses []struct {
		Release                string   `toml:"release"`
		Provisioner            string   `toml:"provisioner"`
		DefaultClass           string   `toml:"default_class"`
		NamePrefix             string   `toml:"name_prefix"`
		DeviceClassParameter   string   `toml:"device_class_parameter"`
		FSTypeParameter        string   `toml:"fstype_parameter"`
		FSTypes                []string `toml:"fstypes"`
		ReclaimPolicy          string   `toml:"reclaim_policy"`
		VolumeBindingMode      string   `toml:"volume_binding_mode"`
		AllowVolumeExpansion   bool     `toml:"allow_volume_expansion"`
		SnapshotDeletionPolicy string   `toml:"snapshot_deletion_policy"`
	} `toml:"lvms_storage_classes"`
	HealthCheck []struct {
		Release            string                       `toml:"release"`
		Method             string                       `toml:"method"`
		FailMarker         bool                         `toml:"fail_marker"`
		NamespaceFunctions map[string]NamespaceFunction `toml:"namespace_functions"`
	} `toml:"health_check"`
}

// parseDevice checks and adds the device storage and health check facts.
func (k *Knowledge) parseDevice(name string, doc deviceTOML, rng func(where, s string) (Range, error)) error {
	for i, l := range doc.Lvmd {
		where := fmt.Sprintf("lvmd[%d]", i)
		r, err := rng(where, l.Release)
		if err != nil {
			return err
		}
		if strings.TrimSpace(l.EmptyFile) == "" {
			return fmt.Errorf("%s: %s: empty_file: required", name, where)
		}
		k.Lvmds = append(k.Lvmds, Lvmd{Range: r, EmptyFile: oneLine(l.EmptyFile)})
	}
	for i, s := range doc.LVMSStorageClasses {
		where := fmt.Sprintf("lvms_storage_classes[%d]", i)
		r, err := rng(where, s.Release)
		if err != nil {
			return err
		}
		for _, f := range []struct{ key, v string }{
			{"provisioner", s.Provisioner}, {"default_class", s.DefaultClass}, {"name_prefix", s.NamePrefix},
			{"device_class_parameter", s.DeviceClassParameter}, {"fstype_parameter", s.FSTypeParameter},
			{"reclaim_policy", s.ReclaimPolicy}, {"volume_binding_mode", s.VolumeBindingMode},
			{"snapshot_deletion_policy", s.SnapshotDeletionPolicy},
		} {
			if strings.TrimSpace(f.v) == "" {
				return fmt.Errorf("%s: %s: %s: required", name, where, f.key)
			}
		}
		if len(s.FSTypes) == 0 {
			return fmt.Errorf("%s: %s: fstypes: list at least one filesystem (the first is the default)", name, where)
		}
		k.LVMSStorageClasses = append(k.LVMSStorageClasses, LVMSStorageClasses{
			Range: r, Provisioner: s.Provisioner, DefaultClass: s.DefaultClass, NamePrefix: s.NamePrefix,
			DeviceClassParameter: s.DeviceClassParameter, FSTypeParameter: s.FSTypeParameter, FSTypes: s.FSTypes,
			ReclaimPolicy: s.ReclaimPolicy, VolumeBindingMode: s.VolumeBindingMode,
			AllowVolumeExpansion: s.AllowVolumeExpansion, SnapshotDeletionPolicy: s.SnapshotDeletionPolicy,
		})
	}
	for i, h := range doc.HealthCheck {
		where := fmt.Sprintf("health_check[%d]", i)
		r, err := rng(where, h.Release)
		if err != nil {
			return err
		}
		switch h.Method {
		case HealthCheckCommand:
			if len(h.NamespaceFunctions) > 0 {
				return fmt.Errorf("%s: %s: namespace_functions: only for method %q", name, where, HealthCheckFunctions)
			}
		case HealthCheckFunctions:
		default:
			return fmt.Errorf("%s: %s: method: %q is not %q or %q", name, where, h.Method, HealthCheckCommand, HealthCheckFunctions)
		}
		for _, kind := range slices.Sorted(maps.Keys(h.NamespaceFunctions)) {
			f := h.NamespaceFunctions[kind]
			if !slices.Contains(WorkloadKinds, kind) {
				return fmt.Errorf("%s: %s: namespace_functions: %q is not one of %s", name, where, kind, strings.Join(WorkloadKinds, ", "))
			}
			if !shellName(f.Function) || !shellName(f.Env) {
				return fmt.Errorf("%s: %s: namespace_functions.%s: function and env must be shell names", name, where, kind)
			}
		}
		k.HealthChecks = append(k.HealthChecks, HealthCheck{Range: r, Method: h.Method, FailMarker: h.FailMarker, NamespaceFunctions: h.NamespaceFunctions})
	}
	return nil
}

// shellName reports whether s is a shell function or variable name.
func shellName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// deviceFacts picks the first matching entry of each table for v.
func (k *Knowledge) deviceFacts(v *semver.Version) (*LVMSStorageClasses, *HealthCheck, *Lvmd) {
	var lvmd *Lvmd
	for i := range k.Lvmds {
		if k.Lvmds[i].Matches(v) {
			lvmd = &k.Lvmds[i]
			break
		}
	}
	var storage *LVMSStorageClasses
	for i := range k.LVMSStorageClasses {
		if k.LVMSStorageClasses[i].Matches(v) {
			storage = &k.LVMSStorageClasses[i]
			break
		}
	}
	var check *HealthCheck
	for i := range k.HealthChecks {
		if k.HealthChecks[i].Matches(v) {
			check = &k.HealthChecks[i]
			break
		}
	}
	return storage, check, lvmd
}
