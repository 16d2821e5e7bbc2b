package trust_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/render/registry"
	"github.com/microshift-compose/microshift-compose/render/trust"
)

// The device of microshift-io's build reaches and checks the registries of
// its release: OKD's quay.io/okd, kindnet's docker.io and TopoLVM's ghcr.io
// are mirrored by the registries.conf.d drop-in and each has its rule in
// the generated policy and its sigstore attachments in registries.d.
func TestDeviceTrustMicroShiftIO(t *testing.T) {
	p, err := assemble.Plan(context.Background(), assembletest.Catalog(t), assembletest.MicroShiftIO(t, "release-4.21"), compose.Request{Profile: "full", Arch: releases.X86_64})
	if err != nil {
		t.Fatal(err)
	}
	const mirror = "mirror.example.com:5000/edge"
	if _, err := registry.Add(p, registry.Options{Mirror: mirror}); err != nil {
		t.Fatal(err)
	}
	if err := trust.Add(p, trust.Options{Keys: []string{publicKey(t)}, Mirror: mirror}); err != nil {
		t.Fatal(err)
	}
	conf := string(fileOf(p, registry.MirrorConfPath))
	regD := string(fileOf(p, trust.RegistriesDPath))
	var policy struct {
		Transports map[string]map[string]json.RawMessage `json:"transports"`
	}
	if err := json.Unmarshal(fileOf(p, trust.PolicyPath), &policy); err != nil {
		t.Fatal(err)
	}
	for _, repo := range []string{"quay.io/okd/scos-content", "docker.io/kindest/kindnetd", "ghcr.io/topolvm/topolvm-with-sidecar"} {
		host, _, _ := strings.Cut(repo, "/")
		if !strings.Contains(conf, "location = \""+host+"\"") {
			t.Errorf("the mirror drop-in does not send %s to the mirror:\n%s", host, conf)
		}
		if _, ok := policy.Transports["docker"][repo]; !ok {
			t.Errorf("the policy has no rule for %s: %v", repo, policy.Transports["docker"])
		}
		if !strings.Contains(regD, repo) {
			t.Errorf("registries.d does not name %s:\n%s", repo, regD)
		}
	}
	for scope := range policy.Transports["docker"] {
		if strings.HasPrefix(scope, "registry.redhat.io") || strings.HasPrefix(scope, "quay.io/openshift-release-dev") {
			t.Errorf("the policy has a rule for Red Hat's %s, which no image of the plan is from", scope)
		}
	}
}
