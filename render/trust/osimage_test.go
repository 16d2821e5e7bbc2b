package trust_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containers/image/v5/signature"

	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/render/registry"
	"github.com/microshift-compose/microshift-compose/render/trust"
)

func publicKey(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "release.pub")
	testutil.WriteFile(t, p, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	return p
}

func fileOf(p *plan.Plan, path string) []byte {
	for _, f := range p.Files {
		if f.Path == path {
			return f.Data
		}
	}
	return nil
}

// TestDeviceTrustOSImage: the bootc image the device updates from gets the
// plan's rule in the generated policy (a sigstore signature by the key,
// for its repository) and sigstore attachments in registries.d; without
// it, the policy's default rejects it. The mirror drop-in sends its
// registry to the mirror.
func TestDeviceTrustOSImage(t *testing.T) {
	const osImage = "quay.io/example/microshift-os:4.19"
	key := publicKey(t)
	for _, tc := range []struct {
		name    string
		osImage string
		want    string // the requirement type for quay.io/example/microshift-os
	}{
		{"named", osImage, "sigstoreSigned"},
		{"not named", "", "reject"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := assembletest.FullPlan(t)
			if err := trust.Add(p, trust.Options{Keys: []string{key}, OSImage: tc.osImage}); err != nil {
				t.Fatal(err)
			}
			policy, err := signature.NewPolicyFromBytes(fileOf(p, trust.PolicyPath))
			if err != nil {
				t.Fatal(err)
			}
			reqs := policy.Transports["docker"]["quay.io/example/microshift-os"]
			if reqs == nil {
				reqs = policy.Default
			}
			if len(reqs) != 1 {
				t.Fatalf("%d requirements for the OS image", len(reqs))
			}
			data, err := json.Marshal(reqs[0])
			if err != nil || !strings.Contains(string(data), `"type":"`+tc.want+`"`) {
				t.Errorf("the OS image's requirement is %s (%v), want %s", data, err, tc.want)
			}
			if tc.want == "sigstoreSigned" && !strings.Contains(string(data), "matchRepository") {
				t.Errorf("the OS image's rule does not match the repository: %s", data)
			}
			regD := string(fileOf(p, trust.RegistriesDPath))
			if got := strings.Contains(regD, "quay.io/example/microshift-os:"); got != (tc.osImage != "") {
				t.Errorf("registries.d names the OS image's repository: %t\n%s", got, regD)
			}
		})
	}
	t.Run("mirror", func(t *testing.T) {
		p := assembletest.FullPlan(t)
		if _, err := registry.Add(p, registry.Options{Mirror: "mirror.example.com:5000/microshift", OSImage: osImage}); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		testutil.WriteFile(t, filepath.Join(dir, "registries.conf.d", filepath.Base(registry.MirrorConfPath)), fileOf(p, registry.MirrorConfPath))
		testutil.WriteFile(t, filepath.Join(dir, "registries.conf"), nil)
		got, err := registry.ResolveThroughRegistriesConf(filepath.Join(dir, "registries.conf"), filepath.Join(dir, "registries.conf.d"), []string{osImage})
		if err != nil {
			t.Fatal(err)
		}
		if want := "mirror.example.com:5000/microshift/example/microshift-os:4.19"; got[osImage] != want {
			t.Errorf("the OS image resolves to %q, want %q", got[osImage], want)
		}
	})
}
