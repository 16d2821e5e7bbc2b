package compose_test

import (
	"context"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// stepCatalog is a small catalog for the tests of Resolve's steps: core
// (MicroShift's RPM, the image "pod", a service and a port), two providers
// of the capability "cni" (net-a its default, net-b), and app, which needs
// a CNI, conflicts with net-b and installs an RPM from a repository of its
// own. Profile minimal is core; full is core, net-a and app.
func stepCatalog() *components.Catalog {
	return &components.Catalog{
		Components: map[string]*components.Component{
			"core": {Name: "core", Description: "core", Order: 0, Packages: []string{compose.MicroShiftPackage},
				Images:   components.Images{Keys: []string{"pod"}},
				Services: components.Services{Enabled: []string{"microshift.service"}},
				Firewall: components.Firewall{Ports: []string{"6443:tcp"}}},
			"net-a": {Name: "net-a", Description: "net-a", Order: 1, Provides: []string{"cni"}, Requires: []string{"core"},
				Images: components.Images{Keys: []string{"net-a"}}, Firewall: components.Firewall{Ports: []string{"4789:udp"}}},
			"net-b": {Name: "net-b", Description: "net-b", Order: 2, Provides: []string{"cni"}, Requires: []string{"core"}},
			"app": {Name: "app", Description: "app", Order: 5, Requires: []string{"core", "cni"}, Conflicts: []string{"net-b"},
				Packages:     []string{"app-tools"},
				Repositories: []components.Repository{{ID: "app-$basearch", Name: "app", BaseURL: "https://example.com/app/$basearch/", Packages: []string{"app-tools"}}},
				Services:     components.Services{Disabled: []string{"microshift.service", "app-cleanup.service"}}},
		},
		Capabilities: map[string]*components.Capability{"cni": {Name: "cni", Default: "net-a", Description: "a CNI"}},
		Profiles: map[string]*components.Profile{
			"minimal": {Name: "minimal", Description: "minimal", Components: []string{"core"}},
			"full":    {Name: "full", Description: "full", Components: []string{"core", "net-a", "app"}},
		},
	}
}

// stepRelease is a release for stepCatalog: x86_64 only, with base (a
// shipped version such as 5.0.0, or a nightly), and the images "pod"
// (pinned) and "net-a" (pinned, or by tag with tagOnly).
func stepRelease(t testing.TB, base string, tagOnly bool) *releases.Release {
	t.Helper()
	netA := `quay.io/x/net-a@sha256:` + strings.Repeat("b", 64)
	if tagOnly {
		netA = "quay.io/x/net-a:1.0"
	}
	data := `{"release": {"base": "` + base + `"}, "images": {"pod": "quay.io/x/pod@sha256:` + strings.Repeat("a", 64) + `", "net-a": "` + netA + `"}}`
	f, err := releases.ParseFile("release-x86_64.json", "release-x86_64.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := releases.New("steps", []*releases.File{f})
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// selectedPlan is a plan so far whose selection is names, each with the
// reason of the profile.
func selectedPlan(profile string, names ...string) *plan.Plan {
	p := &plan.Plan{Profile: profile, Arch: string(releases.X86_64), Capabilities: map[string]string{}}
	for _, n := range names {
		p.Components = append(p.Components, plan.Component{Name: n, Reasons: []plan.Reason{{Kind: plan.ReasonProfile, Profile: profile}}})
	}
	return p
}

// runStep runs Resolve's step name alone on p, with the inputs of cat
// (stepCatalog when nil), rel and req (on x86_64 unless it says).
func runStep(t testing.TB, name string, cat *components.Catalog, rel *releases.Release, req compose.Request, p *plan.Plan) (*plan.Plan, error) {
	t.Helper()
	if cat == nil {
		cat = stepCatalog()
	}
	if req.Arch == "" {
		req.Arch = releases.X86_64
	}
	out, _, err := compose.RunStep(context.Background(), name, cat, rel, req, p, nil)
	return out, err
}

// checkStepErr fails unless err's message is want ("" = no error).
func checkStepErr(t testing.TB, err error, want string) bool {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("error = %v, want none", err)
	case want != "" && err == nil:
		t.Fatalf("no error, want %q", want)
	case want != "" && err.Error() != want:
		t.Fatalf("error = %q\nwant    %q", err, want)
	}
	return err == nil
}
