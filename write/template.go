package write

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/microshift-compose/microshift-compose/plan"
)

// Output path placeholders: build --output 'out/{id}'.
var placeholders = []string{"{id}", "{profile}", "{arch}", "{release}"}

// CheckTemplate checks an --output path's placeholders before
// anything is resolved: each is one of {id}, {profile}, {arch},
// {release}, and no ".." follows one (it would step out of the directory
// the placeholder names).
func CheckTemplate(tmpl string) error {
	if !strings.ContainsAny(tmpl, "{}") {
		return nil
	}
	seen := false
	for _, elem := range strings.Split(filepath.ToSlash(tmpl), "/") {
		rest := elem
		for _, ph := range placeholders {
			rest = strings.ReplaceAll(rest, ph, "")
		}
		if strings.ContainsAny(rest, "{}") {
			return fmt.Errorf("--output %s: unknown placeholder in %q (have %s)", tmpl, elem, strings.Join(placeholders, ", "))
		}
		if rest != elem {
			seen = true
		} else if seen && elem == ".." {
			return fmt.Errorf("--output %s: \"..\" after a placeholder steps out of the directory it names", tmpl)
		}
	}
	return nil
}

// Expand replaces the placeholders of an --output path with p's
// values. A value that is not one plain path element (a user catalog's
// profile named "../x") is refused.
func Expand(tmpl string, p *plan.Plan) (string, error) {
	if err := CheckTemplate(tmpl); err != nil {
		return "", err
	}
	if !strings.Contains(tmpl, "{") {
		return tmpl, nil
	}
	values := map[string]string{"{id}": p.ID, "{profile}": p.Profile, "{arch}": p.Arch, "{release}": p.Release.Stream}
	out := tmpl
	for _, ph := range placeholders {
		v := values[ph]
		if !strings.Contains(out, ph) {
			continue
		}
		if v == "" || v == "." || v == ".." || strings.ContainsAny(v, "/\\\x00") {
			return "", fmt.Errorf("--output %s: %s is %q, which is not a directory name", tmpl, ph, v)
		}
		out = strings.ReplaceAll(out, ph, v)
	}
	return out, nil
}
