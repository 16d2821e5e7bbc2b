package inputfile

import (
	"fmt"
	"math"
	"strconv"

	yaml2 "go.yaml.in/yaml/v2"
)

// CheckYAMLKeys refuses a mapping of YAML's first document with two keys
// that sigs.k8s.io/yaml's YAML-to-JSON conversion turns into one JSON key:
// 0 and .0, "1" and 1, true and on (YAML 1.1, which it reads). Its strict
// mode lets them through, and which value survives then depends on Go's
// map order: the same file would give a different config from run to run
// (and on the device, whose MicroShift reads it the same way). Data that
// does not parse, or repeats a key as written, passes: the conversion
// reports that in its own words, with the line.
func CheckYAMLKeys(data []byte) error {
	var doc yaml2.MapSlice
	if err := yaml2.Unmarshal(data, &doc); err != nil {
		return nil
	}
	return checkKeys(doc, "")
}

func checkKeys(v any, path string) error {
	switch x := v.(type) {
	case yaml2.MapSlice:
		seen := map[string]any{}
		for _, item := range x {
			k, ok := jsonKey(item.Key)
			if !ok {
				continue // refused by the conversion itself
			}
			// The same key twice is the conversion's own error, with its line.
			if first, dup := seen[k]; dup && first != item.Key {
				return fmt.Errorf("%sduplicate key %q (written as %s and %s)", path, k, spell(first), spell(item.Key))
			}
			seen[k] = item.Key
			if err := checkKeys(item.Value, path+k+": "); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := checkKeys(e, fmt.Sprintf("%s[%d]: ", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonKey is the JSON object key sigs.k8s.io/yaml makes of a YAML key.
func jsonKey(k any) (string, bool) {
	switch t := k.(type) {
	case string:
		return t, true
	case int:
		return strconv.Itoa(t), true
	case int64:
		return strconv.FormatInt(t, 10), true
	case uint64:
		return strconv.FormatUint(t, 10), true
	case float64:
		switch {
		case math.IsInf(t, 1):
			return ".inf", true
		case math.IsInf(t, -1):
			return "-.inf", true
		case math.IsNaN(t):
			return ".nan", true
		}
		return strconv.FormatFloat(t, 'g', -1, 32), true
	case bool:
		return strconv.FormatBool(t), true
	}
	return "", false
}

// spell names a key as YAML resolved it: a quoted string, an integer, a
// float in exponent form (1e+01 where 10 is the integer), a bool.
func spell(k any) string {
	switch t := k.(type) {
	case string:
		return strconv.Quote(t)
	case float64:
		return strconv.FormatFloat(t, 'e', -1, 64)
	}
	return fmt.Sprint(k)
}
