package manifests

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestNamesKustomizeCannotHold: a file or directory whose name kustomize's
// in-memory filesystem refuses (an editor's backup, "a..b", a space) is
// left out when no kustomization names it, and refused naming its path
// when one does.
func TestNamesKustomizeCannotHold(t *testing.T) {
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
	for _, tc := range []struct {
		name  string
		files fstest.MapFS
		want  string // "" renders the one ConfigMap
	}{
		{"editor backup of the kustomization", fstest.MapFS{"manifests/kustomization.yaml~": {Data: []byte("resources:\n- cm.yaml\n")}}, ""},
		{"a..b beside", fstest.MapFS{"manifests/a..b": {Data: []byte("x")}}, ""},
		{"#emacs# autosave", fstest.MapFS{"manifests/#cm.yaml#": {Data: []byte("x")}}, ""},
		{"a directory a..b", fstest.MapFS{"manifests/a..b/x.yaml": {Data: []byte(cm)}}, ""},
		{"named by the kustomization", fstest.MapFS{
			"manifests/kustomization.yaml": {Data: []byte("resources:\n- cm.yaml\n- my cm.yaml\n")},
			"manifests/my cm.yaml":         {Data: []byte(cm)},
		}, `manifests/my cm.yaml: a name kustomize cannot read`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := fstest.MapFS{
				"component.toml":               {Data: []byte("name = \"c\"\n")},
				"manifests/kustomization.yaml": {Data: []byte("resources:\n- cm.yaml\n")},
				"manifests/cm.yaml":            {Data: []byte(cm)},
			}
			for k, v := range tc.files {
				files[k] = v
			}
			j, err := Prepare(Input{Component: "c", Dir: "manifests", FS: files})
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Prepare = %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Prepare = %v", err)
			}
			res, err := j.Render()
			if err != nil {
				t.Fatalf("Render = %v", err)
			}
			if len(res.Resources) != 1 || res.Resources[0].ID() != "ConfigMap c" {
				var ids []string
				for _, r := range res.Resources {
					ids = append(ids, r.ID())
				}
				t.Errorf("rendered %v, want the one ConfigMap c", ids)
			}
		})
	}
}
