package config

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan"
)

// FuzzConfigDropIn writes the config drop-in of a plan whose value and
// sources hold anything (a source is a --config file name): the header
// stays comment lines, one per source, and the body parses back to exactly
// the plan's config.
func FuzzConfigDropIn(f *testing.F) {
	f.Add("Debug", "user config.yaml", "debugging.logLevel")
	f.Add("a\nb: c", "user conf\nRUN id\n#.yaml", "x\ny")
	f.Add("\u2028", "\x1b[2J", "\u0085")
	f.Fuzz(func(t *testing.T, value, source, path string) {
		if !utf8.ValidString(value) || text.HasUnsafe(value) {
			return // config values are UTF-8 without control characters (microshiftconfig.Parse)
		}
		p := &plan.Plan{
			Profile: "edge", Arch: "x86_64", Release: plan.Release{Stream: "5.0"},
			Config:        map[string]any{"debugging": map[string]any{"logLevel": value}},
			ConfigSources: []plan.ConfigSetting{{Path: path, Value: value, Source: source}, {Path: "debugging.logLevel", Value: value, Source: "core"}},
		}
		data, err := render(p)
		if err != nil {
			t.Fatalf("render = %v", err)
		}
		lines := strings.SplitAfter(string(data), "\n")
		comments := 0
		for _, l := range lines {
			if !strings.HasPrefix(l, "#") {
				break
			}
			comments++
		}
		if comments != 2+len(p.ConfigSources) {
			t.Fatalf("%d comment lines, want %d:\n%s", comments, 2+len(p.ConfigSources), data)
		}
		var back map[string]any
		if err := yaml.Unmarshal(data, &back); err != nil {
			t.Fatalf("the drop-in does not parse: %v\n%s", err, data)
		}
		if !reflect.DeepEqual(back, p.Config) {
			t.Fatalf("the drop-in parses to %#v, want %#v", back, p.Config)
		}
	})
}
