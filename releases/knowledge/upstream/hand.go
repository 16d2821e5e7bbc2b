package upstream

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/internal/stricttoml"
)

// Hand is what the data says that upstream's source does not state in a
// form the generator reads: judgement about what a device does, facts from
// Red Hat's documentation, and where upstream's own machine-readable
// description is incomplete. handkept.toml; every entry says why.
type Hand struct {
	ConfigFile        []HandConfigFile        `toml:"config_file"`
	MissingCapability []HandMissingCapability `toml:"missing_capability"`
	// DistroMajor says per RHEL major what the generated distros of that
	// major are: their osbuild image type and whether one is the default.
	DistroMajor map[string]HandDistroMajor `toml:"distro_major"`
	// Distro adds distros upstream's branch does not build images for.
	Distro []HandDistro `toml:"distro"`
	// LVMSStorageClasses completes the StorageClass facts read from
	// MicroShift's default StorageClass asset.
	LVMSStorageClasses HandStorage `toml:"lvms_storage_classes"`
	// Lvmd is what MicroShift does with an empty lvmd.yaml where its
	// source states no error of its own.
	Lvmd []HandLvmd `toml:"lvmd"`
	// Key overrides or completes the config keys read from each branch's
	// config OpenAPI spec.
	Key []HandKey `toml:"key"`
	// ExistingNamespaces are the namespaces a device has before its
	// manifests are applied, written through.
	ExistingNamespaces []HandExistingNamespaces `toml:"existing_namespaces"`
	// FIPS, FIPSOS and CIS are the hardening facts, from upstream's FIPS
	// tests and CIS guide (../shared/reference/*/microshift-hardening),
	// written through.
	FIPS   []HandFIPS   `toml:"fips"`
	FIPSOS []HandFIPSOS `toml:"fips_os"`
	CIS    []HandCIS    `toml:"cis"`
}

// HandFIPS is a [[fips]] entry: FIPS mode per release.
type HandFIPS struct {
	Release      string         `toml:"release"`
	Arches       []string       `toml:"arches"`
	ImageMode    bool           `toml:"image_mode"`
	ImageModeWhy string         `toml:"image_mode_why,omitempty"`
	ConfigWhy    string         `toml:"config_why,omitempty"`
	Warning      string         `toml:"warning,omitempty"`
	Config       map[string]any `toml:"config,omitempty"`
}

// HandFIPSOS is a [[fips_os]] entry: what FIPS mode needs of a RHEL major.
type HandFIPSOS struct {
	RHEL          int      `toml:"rhel"`
	BootcPackages []string `toml:"bootc_packages,omitempty"`
	KickstartPost []string `toml:"kickstart_post,omitempty"`
}

// HandCIS is a [[cis]] entry: the tailoring CIS needs on a RHEL major.
type HandCIS struct {
	Release     string         `toml:"release"`
	RHEL        int            `toml:"rhel"`
	Unselect    []string       `toml:"unselect"`
	AuditRule   string         `toml:"audit_rule"`
	Unavoidable []HandCISRules `toml:"unavoidable"`
}

// HandCISRules are rules a CIS scan of a device fails, and why.
type HandCISRules struct {
	Rules []string `toml:"rules"`
	Why   string   `toml:"why"`
}

// HandExistingNamespaces is an [[existing_namespaces]] entry, written
// through.
type HandExistingNamespaces struct {
	Release  string   `toml:"release"`
	Names    []string `toml:"names"`
	Prefixes []string `toml:"prefixes"`
}

// HandConfigFile is a [[config_file]] entry, written through.
type HandConfigFile struct {
	Release string `toml:"release"`
	Path    string `toml:"path"`
	Why     string `toml:"why"`
}

// HandMissingCapability is a [[missing_capability]] entry, written through.
type HandMissingCapability struct {
	Capability string `toml:"capability"`
	Release    string `toml:"release"`
	// RedBoot: without the capability the device never becomes healthy.
	RedBoot bool   `toml:"red_boot,omitempty"`
	Warning string `toml:"warning"`
}

// HandDistroMajor is how distros of one RHEL major are built.
type HandDistroMajor struct {
	// ImageType is the osbuild image type blueprints are validated for;
	// "" when the major has no rpm-ostree image types.
	ImageType string `toml:"image_type"`
	// Default: the release's distro of this major is its default one.
	Default bool   `toml:"default"`
	Why     string `toml:"why"`
}

// HandDistro is a distro a release range is built for that its branch
// does not show.
type HandDistro struct {
	Release   string `toml:"release"`
	Name      string `toml:"name"`
	BootcBase string `toml:"bootc_base"`
	Why       string `toml:"why"`
}

// HandStorage completes [[lvms_storage_classes]].
type HandStorage struct {
	NamePrefix             string   `toml:"name_prefix"`
	DeviceClassParameter   string   `toml:"device_class_parameter"`
	OtherFSTypes           []string `toml:"other_fstypes"`
	SnapshotDeletionPolicy string   `toml:"snapshot_deletion_policy"`
	Why                    string   `toml:"why"`
}

// HandLvmd is what a release range does with an empty lvmd.yaml.
type HandLvmd struct {
	Release   string `toml:"release"`
	EmptyFile string `toml:"empty_file"`
}

// HandKey is a config key's attributes that the OpenAPI spec lacks or
// states wrongly, for the releases Release matches (every release when
// empty). Set fields replace the generated ones.
type HandKey struct {
	Path    string `toml:"path"`
	Release string `toml:"release"`
	Why     string `toml:"why"`

	Type            string            `toml:"type"`
	Items           string            `toml:"items"`
	Values          []any             `toml:"values"`
	CaseInsensitive bool              `toml:"case_insensitive"`
	Format          string            `toml:"format"`
	Min             *int64            `toml:"min"`
	Max             *int64            `toml:"max"`
	MinDuration     string            `toml:"min_duration"`
	MaxItems        int               `toml:"max_items"`
	Zero            string            `toml:"zero"`
	Default         any               `toml:"default"`
	NoDefault       bool              `toml:"no_default"`
	Check           string            `toml:"check"`
	Needs           map[string]string `toml:"needs"`
	Off             map[string]string `toml:"off"`
	Note            string            `toml:"note"`

	constraint *semver.Constraints
}

// ParseHand reads handkept.toml; name is for messages.
func ParseHand(name string, data []byte) (*Hand, error) {
	var h Hand
	// Values of free-form config tables are not checked (stricttoml).
	if _, err := stricttoml.Decode(name, data, &h, "key.default", "key.needs", "key.off", "fips.config"); err != nil {
		return nil, err
	}
	for i := range h.Key {
		k := &h.Key[i]
		if k.Path == "" || strings.TrimSpace(k.Why) == "" {
			return nil, fmt.Errorf("%s: key[%d] %q: path and why are required", name, i, k.Path)
		}
		if k.Release != "" {
			c, err := semver.NewConstraint(k.Release)
			if err != nil {
				return nil, fmt.Errorf("%s: key[%d] %q: release: invalid semver constraint %q", name, i, k.Path, k.Release)
			}
			k.constraint = c
		}
		if k.NoDefault && k.Default != nil {
			return nil, fmt.Errorf("%s: key[%d] %q: default and no_default together", name, i, k.Path)
		}
	}
	for i, d := range h.Distro {
		if _, err := semver.NewConstraint(d.Release); err != nil || d.Name == "" || strings.TrimSpace(d.Why) == "" {
			return nil, fmt.Errorf("%s: distro[%d]: release, name and why are required", name, i)
		}
	}
	for major, d := range h.DistroMajor {
		if strings.TrimSpace(d.Why) == "" {
			return nil, fmt.Errorf("%s: distro_major.%s: why is required", name, major)
		}
	}
	for i, l := range h.Lvmd {
		if _, err := semver.NewConstraint(l.Release); err != nil || strings.TrimSpace(l.EmptyFile) == "" {
			return nil, fmt.Errorf("%s: lvmd[%d]: release and empty_file are required", name, i)
		}
	}
	return &h, nil
}

// matches reports whether the hand-kept key applies to release v.
func (k *HandKey) matches(v *semver.Version) bool {
	return k.constraint == nil || k.constraint.Check(v)
}
