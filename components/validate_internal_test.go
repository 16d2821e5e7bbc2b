package components

import (
	"testing"
	"time"
)

func TestCheckConfigTree(t *testing.T) {
	for _, tc := range []struct {
		name string
		tree map[string]any
		want string
	}{
		{"scalars and nesting", map[string]any{"network": map[string]any{"cniPlugin": "none", "mtu": int64(1400), "x": 1.5, "on": true}}, ""},
		{"array of scalars", map[string]any{"storage": map[string]any{"optionalCsiComponents": []any{"none", int64(1), false}}}, ""},
		{"empty", nil, ""},
		{"array of tables", map[string]any{"apiServer": map[string]any{"namedCertificates": []map[string]any{{"certPath": "/a"}}}},
			"config.selected.apiServer.namedCertificates: arrays of tables are not supported"},
		{"inline tables in an array", map[string]any{"a": []any{map[string]any{"b": int64(1)}}},
			"config.selected.a: arrays may hold only strings, numbers and booleans"},
		{"nested arrays", map[string]any{"a": []any{[]any{"b"}}},
			"config.selected.a: arrays may hold only strings, numbers and booleans"},
		{"datetime", map[string]any{"a": map[string]any{"when": time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}},
			"config.selected.a.when: unsupported value type time.Time"},
		{"quoted key", map[string]any{"a.b": map[string]any{"c\nd": []map[string]any{}}},
			`config.selected."a.b"."c\nd": arrays of tables are not supported`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkConfigTree("config.selected", tc.tree)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("checkConfigTree() = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("checkConfigTree() = %v, want %q", err, tc.want)
			}
		})
	}
}
