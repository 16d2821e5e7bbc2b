package lvmdconfig

import (
	"fmt"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/internal/suggest"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// StorageClassFlag is the flag ClassChoice is written with.
const StorageClassFlag = "--storage-class"

// ClassChoice is what the user chose for one device class's StorageClass:
// --storage-class CLASS[=NAME][,fstype=FS].
type ClassChoice struct {
	// Class is the device class's name in lvmd.yaml.
	Class string
	// Name is the StorageClass name; "" derives it from the class.
	Name string
	// FSType is the filesystem; "" is the release's default.
	FSType string
	// Flag is the value as written, for messages.
	Flag string
}

// classChoiceKeys are the keys a choice may set after CLASS[=NAME].
var classChoiceKeys = []string{"fstype"}

// ParseClassChoice parses one --storage-class value, CLASS[=NAME] followed
// by comma-separated key=value options (fstype=ext4), as podman's --mount
// and --secret take them. The values are checked against lvmd.yaml and the
// release by StorageClasses.
func ParseClassChoice(s string) (ClassChoice, error) {
	c := ClassChoice{Flag: s}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s %q: %s", StorageClassFlag, text.Escape(s), fmt.Sprintf(format, args...))
	}
	if text.HasUnsafe(s) {
		return c, bad("contains a control character")
	}
	parts := strings.Split(s, ",")
	c.Class, c.Name, _ = strings.Cut(parts[0], "=")
	if c.Class == "" {
		return c, bad("want CLASS[=NAME][,fstype=FS]: the device class name is empty")
	}
	if strings.Contains(parts[0], "=") && c.Name == "" {
		return c, bad("the StorageClass name after %q is empty", c.Class+"=")
	}
	seen := map[string]bool{}
	for _, opt := range parts[1:] {
		k, v, ok := strings.Cut(opt, "=")
		if !slices.Contains(classChoiceKeys, k) {
			if sug := suggest.Closest(k, classChoiceKeys); sug != "" {
				return c, bad("unknown option %q; did you mean %q?", k, sug)
			}
			return c, bad("unknown option %q (want %s)", k, strings.Join(classChoiceKeys, ", "))
		}
		if !ok || v == "" {
			return c, bad("%s needs a value (%s=ext4)", k, k)
		}
		if seen[k] {
			return c, bad("%s is given twice", k)
		}
		seen[k] = true
		c.FSType = v
	}
	return c, nil
}

// Class is how one device class is exposed to workloads.
type Class struct {
	// DeviceClass is the lvmd device class.
	DeviceClass string
	Thin        bool
	// StorageClass is the StorageClass written for it; "" for the default
	// class, which MicroShift's own default StorageClass serves.
	StorageClass string
	// FSType is the StorageClass's filesystem ("" for the default class).
	FSType string
	// SnapshotClass is the VolumeSnapshotClass written for a thin class,
	// named as the StorageClass that serves it; "" for a thick class.
	SnapshotClass string
}

// StorageClasses decides the StorageClass and VolumeSnapshotClass of every
// device class of c: a StorageClass for each class but the default one
// (MicroShift's own default StorageClass, rules.DefaultClass, serves it and
// stays the only default), named rules.NamePrefix + the class name
// (lowercase, '_' as '-') unless a choice names it, with the filesystem a
// choice gives or the release's default; a VolumeSnapshotClass for each
// thin class, default class included, named as its StorageClass. Classes
// are in lvmd.yaml's order. Every error is one line naming the file, the
// device class and the fix.
func StorageClasses(c *Config, choices []ClassChoice, rules *knowledge.LVMSStorageClasses) ([]Class, error) {
	byClass := map[string]ClassChoice{}
	var names []string
	for _, dc := range c.DeviceClasses {
		names = append(names, dc.Name)
	}
	for _, ch := range choices {
		if !slices.Contains(names, ch.Class) {
			msg := fmt.Sprintf("%s %q: %s has no device class %q", StorageClassFlag, ch.Flag, c.Source, ch.Class)
			if sug := suggest.Closest(ch.Class, names); sug != "" {
				return nil, fmt.Errorf("%s; did you mean %q?", msg, sug)
			}
			return nil, fmt.Errorf("%s (it has %s)", msg, strings.Join(names, ", "))
		}
		if prev, dup := byClass[ch.Class]; dup {
			return nil, fmt.Errorf("%s %q: device class %q is already chosen by %s %q", StorageClassFlag, ch.Flag, ch.Class, StorageClassFlag, prev.Flag)
		}
		byClass[ch.Class] = ch
	}
	var out []Class
	owner := map[string]string{rules.DefaultClass: ""} // StorageClass name -> device class
	for i, dc := range c.DeviceClasses {
		where := fmt.Sprintf("%s: device-classes[%d] %q", c.Source, i, dc.Name)
		cl := Class{DeviceClass: dc.Name, Thin: dc.Type == TypeThin}
		ch, chosen := byClass[dc.Name]
		if dc.Default {
			if chosen {
				return nil, fmt.Errorf("%s %q: device class %q is the default one, which MicroShift's own default StorageClass %s serves; no other StorageClass is written for it (a second default is never written)",
					StorageClassFlag, ch.Flag, dc.Name, rules.DefaultClass)
			}
			if cl.Thin {
				cl.SnapshotClass = rules.DefaultClass
			}
			out = append(out, cl)
			continue
		}
		cl.FSType = rules.DefaultFSType()
		if ch.FSType != "" {
			if !slices.Contains(rules.FSTypes, ch.FSType) {
				return nil, fmt.Errorf("%s %q: fstype %q is not one %s makes (want %s)", StorageClassFlag, ch.Flag, ch.FSType, rules.Provisioner, strings.Join(rules.FSTypes, " or "))
			}
			cl.FSType = ch.FSType
		}
		if ch.Name != "" {
			cl.StorageClass = ch.Name
			if problem := nameProblem(ch.Name); problem != "" {
				return nil, fmt.Errorf("%s %q: %q is not a valid StorageClass name (%s)", StorageClassFlag, ch.Flag, ch.Name, problem)
			}
		} else {
			cl.StorageClass = rules.NamePrefix + strings.ReplaceAll(strings.ToLower(dc.Name), "_", "-")
			if problem := nameProblem(cl.StorageClass); problem != "" {
				return nil, fmt.Errorf("%s: its StorageClass name would be %q, which is not a valid Kubernetes name (%s); choose one with %s %s=NAME",
					where, cl.StorageClass, problem, StorageClassFlag, dc.Name)
			}
		}
		if prev, taken := owner[cl.StorageClass]; taken {
			if prev == "" {
				return nil, fmt.Errorf("%s: StorageClass name %q is MicroShift's own default StorageClass; choose another with %s %s=NAME", where, cl.StorageClass, StorageClassFlag, dc.Name)
			}
			return nil, fmt.Errorf("%s: StorageClass name %q is also device class %q's; give one another name with %s %s=NAME", where, cl.StorageClass, prev, StorageClassFlag, dc.Name)
		}
		owner[cl.StorageClass] = dc.Name
		if cl.Thin {
			cl.SnapshotClass = cl.StorageClass
		}
		out = append(out, cl)
	}
	return out, nil
}

// nameProblem says why s is not a valid StorageClass (or
// VolumeSnapshotClass) name, an RFC 1123 subdomain; "" when it is.
func nameProblem(s string) string {
	if len(s) > 253 || !dns1123Subdomain.MatchString(s) {
		return "a StorageClass name is an RFC 1123 subdomain: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters"
	}
	return ""
}

var dns1123Subdomain = lazyregexp.New(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
