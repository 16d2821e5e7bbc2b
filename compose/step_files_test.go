package compose_test

import (
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/plan"
)

// The files step alone: the device files so far and the rendered ones in
// the plan, in path order, with digests and sizes; two at one path
// refused.
func TestStepFiles(t *testing.T) {
	rel := stepRelease(t, "5.0.0", false)
	file := func(path, component, data string) plan.File {
		return plan.File{Path: path, Mode: "0644", Component: component, Data: []byte(data)}
	}
	for _, tc := range []struct {
		name            string
		files, rendered []plan.File
		want            []string
		wantErr         string
	}{
		{name: "none"},
		{name: "sorted, the rendered ones among them", files: []plan.File{file("/etc/b", "app", "b"), file("/etc/a", "core", "a")},
			rendered: []plan.File{file("/etc/microshift/manifests.d/005-app/kustomization.yaml", "app", "k"), file("/etc/c", "app", "c")},
			want:     []string{"/etc/a", "/etc/b", "/etc/c", "/etc/microshift/manifests.d/005-app/kustomization.yaml"}},
		{name: "two at one path", files: []plan.File{file("/etc/x", "app", "1")}, rendered: []plan.File{file("/etc/x", "net-a", "2")},
			wantErr: `components "app" and "net-a" both place /etc/x on the device`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := selectedPlan("full", "core", "net-a", "app")
			p.Files = tc.files
			got, rendered, err := compose.RunStep(t.Context(), "files", stepCatalog(), rel, compose.Request{Profile: "full", Arch: "x86_64"}, p, tc.rendered)
			if !checkStepErr(t, err, tc.wantErr) {
				return
			}
			var paths []string
			for _, f := range got.Files {
				paths = append(paths, f.Path)
				sum := sha256.Sum256(f.Data)
				if f.SHA256 != hex.EncodeToString(sum[:]) || f.Size != len(f.Data) {
					t.Errorf("%s: sha256 %q size %d", f.Path, f.SHA256, f.Size)
				}
			}
			if !reflect.DeepEqual(paths, tc.want) || rendered != nil {
				t.Errorf("files %q, rendered left %d; want %q and none", paths, len(rendered), tc.want)
			}
		})
	}
}
