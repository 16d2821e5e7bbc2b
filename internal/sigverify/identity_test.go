package sigverify

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containers/image/v5/signature"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// TestIdentityValidate: each combination of identity flags that
// containers/image cannot check is one error naming the flags.
func TestIdentityValidate(t *testing.T) {
	keyless := Identity{Subject: "a@example.com", Issuer: "https://issuer.example", FulcioCA: "ca.pem", RekorKey: "rekor.pub"}
	pki := Identity{Subject: "a@example.com", CARoots: "roots.pem"}
	with := func(id Identity, f func(*Identity)) Identity { f(&id); return id }
	tests := []struct {
		name string
		id   Identity
		want string
	}{
		{"none", Identity{}, ""},
		{"keyless", keyless, ""},
		{"pki e-mail", pki, ""},
		{"pki host name", with(pki, func(i *Identity) { i.Subject = "build.example.com" }), ""},
		{"pki with intermediates", with(pki, func(i *Identity) { i.CAIntermediates = "int.pem" }), ""},
		{"no subject", with(keyless, func(i *Identity) { i.Subject = "" }), "--certificate-identity is required"},
		{"subject alone", Identity{Subject: "a@example.com"}, "--certificate-identity needs the CA"},
		{"no fulcio CA", with(keyless, func(i *Identity) { i.FulcioCA = "" }), "--fulcio-ca is required"},
		{"no issuer", with(keyless, func(i *Identity) { i.Issuer = "" }), "--certificate-oidc-issuer is required"},
		{"no rekor key", with(keyless, func(i *Identity) { i.RekorKey = "" }), "--rekor-key is required"},
		{"URI subject", with(keyless, func(i *Identity) { i.Subject = "https://github.com/o/r/.github/workflows/w.yml@refs/heads/main" }), "a URI identity"},
		{"not an e-mail address", with(keyless, func(i *Identity) { i.Subject = "release" }), "not an e-mail address"},
		{"display name", with(keyless, func(i *Identity) { i.Subject = "Release <a@example.com>" }), "not an e-mail address"},
		{"pki and rekor", with(pki, func(i *Identity) { i.RekorKey = "rekor.pub" }), "both say what issued"},
		{"pki and fulcio", with(pki, func(i *Identity) { i.FulcioCA = "ca.pem" }), "both say what issued"},
		{"intermediates alone", Identity{Subject: "a@example.com", CAIntermediates: "int.pem"}, "--ca-intermediates needs --ca-roots"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.id.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
				t.Errorf("Validate() = %v, want one line with %q", err, tc.want)
			}
		})
	}
	if err := (Options{Keys: []string{"k.pub"}, Identity: keyless}).Validate(); err == nil || !strings.Contains(err.Error(), "give one") {
		t.Errorf("keys and an identity: %v", err)
	}
}

// TestIdentityTrust: the policy an identity makes is containers/image's
// fulcio or pki rule for every scope, with the files inline for checking
// here, or named by their device paths; files that would share a device
// name are refused.
func TestIdentityTrust(t *testing.T) {
	ss := testutil.NewTestSigstore(t)
	dir := t.TempDir()
	scopes := []string{"quay.io/a", "quay.io/b"}
	device := func(f IdentityFile) string { return f.DevicePath("/etc/containers/sigstore") }

	keyless := Identity{Subject: "a@example.com", Issuer: "https://issuer.example", FulcioCA: ss.CAPath, RekorKey: ss.RekorKeyPath}
	files, err := ReadIdentityFiles(keyless)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Name != "fulcio.pem" || files[1].Name != "rekor.pub" {
		t.Fatalf("files = %+v", files)
	}
	for _, tc := range []struct {
		name string
		id   Identity
		path func(IdentityFile) string
		want []string
	}{
		{"keyless inline", keyless, nil, []string{`"fulcio":{"caData":"`, `"oidcIssuer":"https://issuer.example"`, `"subjectEmail":"a@example.com"`, `"rekorPublicKeyData":"`}},
		{"keyless device", keyless, device, []string{`"caPath":"/etc/containers/sigstore/fulcio.pem"`, `"rekorPublicKeyPath":"/etc/containers/sigstore/rekor.pub"`}},
		{"pki e-mail", Identity{Subject: "a@example.com", CARoots: ss.CAPath}, device, []string{`"pki":{"caRootsPath":"/etc/containers/sigstore/fulcio.pem","subjectEmail":"a@example.com"}`}},
		{"pki host name", Identity{Subject: "build.example.com", CARoots: ss.CAPath}, nil, []string{`"subjectHostname":"build.example.com"`, `"caRootsData":"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, err := ReadIdentityFiles(tc.id)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := IdentityTrust(tc.id, files, scopes, tc.path)
			if err != nil {
				t.Fatal(err)
			}
			var compact map[string]any
			if err := json.Unmarshal(tr.JSON, &compact); err != nil {
				t.Fatal(err)
			}
			flat, _ := json.Marshal(compact)
			for _, w := range append(tc.want, `"default":[{"type":"reject"}]`, `"matchRepository"`) {
				if !strings.Contains(string(flat), w) {
					t.Errorf("policy lacks %s:\n%s", w, flat)
				}
			}
			if n := strings.Count(string(flat), `"type":"sigstoreSigned"`); n != len(scopes) {
				t.Errorf("%d sigstoreSigned rules, want one per scope (%d)", n, len(scopes))
			}
			if _, err := signature.NewPolicyFromBytes(tr.JSON); err != nil {
				t.Errorf("containers/image does not parse the policy: %v", err)
			}
		})
	}

	// Two files that would both be <name>.pem on the device.
	ca, err := os.ReadFile(ss.CAPath)
	if err != nil {
		t.Fatal(err)
	}
	other := writeFile(t, t.TempDir(), "fulcio.crt", ca)
	_, err = ReadIdentityFiles(Identity{Subject: "a@example.com", CARoots: ss.CAPath, CAIntermediates: other})
	if err == nil || !strings.Contains(err.Error(), "would both be installed as fulcio.pem") {
		t.Errorf("two files named fulcio: %v", err)
	}
	// A public key where the Fulcio CA's certificates belong; a Rekor key
	// that is not there.
	pub, _ := publicKeyPEM(t)
	ecdsaKey := writeFile(t, dir, "ec.pub", pub)
	if _, err := ReadIdentityFiles(Identity{Subject: "a@example.com", Issuer: "https://i.example", FulcioCA: ecdsaKey, RekorKey: ss.RekorKeyPath}); err == nil || !strings.Contains(err.Error(), "--fulcio-ca: certificates "+ecdsaKey+": no PEM certificate") {
		t.Errorf("a key as the Fulcio CA: %v", err)
	}
	if _, err := ReadIdentityFiles(Identity{Subject: "a@example.com", Issuer: "https://i.example", FulcioCA: ss.CAPath, RekorKey: filepath.Join(dir, "missing.pub")}); err == nil || !strings.Contains(err.Error(), "--rekor-key: ") {
		t.Errorf("a missing Rekor key: %v", err)
	}
}
