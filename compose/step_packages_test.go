package compose_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/plan"
)

// The packages step alone: MicroShift's RPMs pinned as the release's pin
// says, a component's RPM from its own repository unpinned, the repository
// with a note; one repository ID with two base URLs refused.
func TestStepPackages(t *testing.T) {
	rel := stepRelease(t, "5.0.0", false)
	appRepo := plan.Repository{ID: "app-x86_64", Name: "app", BaseURL: "https://example.com/app/x86_64/", Packages: []string{"app-tools"}, Components: []string{"app"}}
	for _, tc := range []struct {
		name      string
		pin       string
		edit      func(cat *components.Catalog)
		want      []plan.Package
		wantRepos []plan.Repository
		wantNotes []string
		wantErr   string
	}{
		{name: "exact", pin: plan.PinExact,
			want:      []plan.Package{{Name: "app-tools", Components: []string{"app"}}, {Name: "microshift", Version: "5.0.0", Components: []string{"core"}}},
			wantRepos: []plan.Repository{appRepo},
			wantNotes: []string{"app: app-tools comes from the RPM repository app-x86_64 (https://example.com/app/x86_64/): add it to osbuild's sources (composer-cli sources add), and enable it on a bootc build host"}},
		{name: "to the stream", pin: plan.PinStream,
			want:      []plan.Package{{Name: "app-tools", Components: []string{"app"}}, {Name: "microshift", Version: "5.0.*", Components: []string{"core"}}},
			wantRepos: []plan.Repository{appRepo},
			wantNotes: []string{"app: app-tools comes from the RPM repository app-x86_64 (https://example.com/app/x86_64/): add it to osbuild's sources (composer-cli sources add), and enable it on a bootc build host"}},
		{name: "one repository, two base URLs", pin: plan.PinExact,
			edit: func(cat *components.Catalog) {
				cat.Components["net-a"].Repositories = []components.Repository{{ID: "app-$basearch", BaseURL: "https://mirror.example.com/$basearch/"}}
			},
			wantErr: "components net-a and app name repository app-x86_64 with different base URLs (https://mirror.example.com/x86_64/, https://example.com/app/x86_64/)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat := stepCatalog()
			if tc.edit != nil {
				tc.edit(cat)
			}
			p := selectedPlan("full", "core", "net-a", "app")
			p.Release.Pin = tc.pin
			got, err := runStep(t, "packages", cat, rel, compose.Request{Profile: "full"}, p)
			if !checkStepErr(t, err, tc.wantErr) {
				return
			}
			if !reflect.DeepEqual(got.Packages, tc.want) || !reflect.DeepEqual(got.Repositories, tc.wantRepos) || !slices.Equal(got.Notes, tc.wantNotes) {
				t.Errorf("packages %+v\nrepositories %+v\nnotes %q", got.Packages, got.Repositories, got.Notes)
			}
		})
	}
}
