package stricttoml

import (
	"strings"
	"testing"
)

type inner struct {
	Name  string   `toml:"name"`
	Keys  []string `toml:"keys"`
	Count int      `toml:"count"`
}

type schema struct {
	Profile string           `toml:"profile"`
	Enabled bool             `toml:"enabled"`
	Images  inner            `toml:"images"`
	Named   map[string]inner `toml:"named"`
	Free    map[string]any   `toml:"free"`
	List    []inner          `toml:"list"`
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"ok", "profile = 'full'\n[images]\nkeys = ['a']\n[named.x]\nname = 'y'\n[free.a.b.c]\nd = 1\n", ""},
		{"unknown key suggested", "profle = 'full'\n", `f.toml: line 1: unknown key "profle"; did you mean "profile"?`},
		{"unknown nested key suggested", "[images]\nkyes = ['a']\n", `f.toml: line 2: unknown key "images.kyes"; did you mean "images.keys"?`},
		{"unknown key under a map", "[named.x]\nnmae = 'y'\n", `f.toml: line 2: unknown key "named.x.nmae"; did you mean "named.x.name"?`},
		{"unknown key in the second element of an array of tables", "[[list]]\nkeys = ['a']\n\n[[list]]\nkeys = ['b']\nkyes = ['c']\n", `f.toml: line 6: unknown key "list.kyes"; did you mean "list.keys"?`},
		{"unknown table reported once", "[extra]\na = 1\nb = 2\n", `f.toml: line 1: unknown key "extra"`},
		{"wrong type", "profile = 'full'\nenabled = 'yes'\n", `f.toml: line 2: key "enabled": must be a boolean, got a string`},
		{"wrong nested type", "[images]\ncount = 'many'\n", `f.toml: line 2: key "images.count": must be an integer, got a string`},
		{"syntax", "profile = \n", `f.toml: line 1: key "profile"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v schema
			_, err := Decode("f.toml", []byte(tc.data), &v, "free")
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Decode = %v, want nil", err)
				}
				if v.Profile != "full" || v.Images.Keys[0] != "a" || v.Named["x"].Name != "y" {
					t.Fatalf("Decode = %+v, values lost", v)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("Decode = %v, want prefix %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q is more than one line", err)
			}
		})
	}
}
