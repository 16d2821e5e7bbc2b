package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Round three of the hostile suite (issue 25): every file a trust setting
// names through the input gate, exactly public keys, image references
// that climb out of their repository or carry a transport, and the rough
// edges (names kustomize cannot hold, a pull secret's auth without its
// colon, a lock whose config and config_sources disagree, mirrors of
// nothing, a JSON summary of a non-UTF-8 path).

// readOutput reads a file of the previous build.
func (h *hostileEnv) readOutput(rel string) string {
	h.t.Helper()
	data, err := os.ReadFile(filepath.Join(h.out, rel))
	if err != nil {
		h.t.Fatal(err)
	}
	return string(data)
}

// trustMaterial is a key pair and a CA certificate, PEM.
type trustMaterial struct{ pub, priv, cert []byte }

func newTrustMaterial() trustMaterial {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	pder, _ := x509.MarshalECPrivateKey(k)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hostile CA"}, NotBefore: time.Unix(0, 0),
		NotAfter: time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	cder, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		panic(err)
	}
	return trustMaterial{
		pub:  pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}),
		priv: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: pder}),
		cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cder}),
	}
}

var hostileTrust = newTrustMaterial()

// policyNaming is a containers-policy.json whose quay.io rule names path
// in field: a sigstoreSigned key or Rekor key, the Fulcio or PKI CA, or a
// signedBy keyring.
func policyNaming(h *hostileEnv, field, path string) string {
	good := h.write("good.pub", string(hostileTrust.pub))
	ca := h.write("ca.pem", string(hostileTrust.cert))
	req := map[string]any{"type": "sigstoreSigned", "signedIdentity": map[string]any{"type": "matchRepository"}}
	switch field {
	case "keyPath":
		req["keyPath"] = path
	case "keyPaths":
		req["keyPaths"] = []string{good, path}
	case "rekorPublicKeyPath":
		req["fulcio"] = map[string]any{"caPath": ca, "oidcIssuer": "https://issuer.example.com", "subjectEmail": "a@example.com"}
		req["rekorPublicKeyPath"] = path
	case "fulcio.caPath":
		req["fulcio"] = map[string]any{"caPath": path, "oidcIssuer": "https://issuer.example.com", "subjectEmail": "a@example.com"}
		req["rekorPublicKeyPath"] = good
	case "pki.caRootsPath":
		req["pki"] = map[string]any{"caRootsPath": path, "subjectEmail": "a@example.com"}
	case "signedBy keyPath":
		req = map[string]any{"type": "signedBy", "keyType": "GPGKeys", "keyPath": path}
	}
	data, _ := json.Marshal(map[string]any{
		"default":    []any{map[string]any{"type": "reject"}},
		"transports": map[string]any{"docker": map[string]any{"quay.io": []any{req}}},
	})
	return h.write("policy.json", string(data))
}

func trustCases() []hostileCase {
	var cases []hostileCase
	// The commands that take a policy: build places it on the device,
	// mirror and release verify evaluate it.
	commands := []struct {
		name string
		args func(h *hostileEnv, policy string) []string
	}{
		{"build --policy", func(h *hostileEnv, p string) []string { return build(h, "--policy", p) }},
		{"mirror --policy", func(h *hostileEnv, p string) []string {
			return []string{"mirror", "--lock", filepath.Join(h.out, "compose.lock.json"), "--to", "oci:" + h.path("layout"), "--policy", p, "--timeout", "5s"}
		}},
		{"release verify --policy", func(h *hostileEnv, p string) []string {
			return []string{"release", "verify", "--release", "5.0", "--policy", p, "--timeout", "5s"}
		}},
	}
	// What the file a policy names may be.
	files := []struct {
		name string
		make func(h *hostileEnv) string
		want string
	}{
		{"a named pipe", func(h *hostileEnv) string { return h.fifo("keys/fifo.pub") }, "is not a regular file (a named pipe)"},
		{"/dev/zero", func(*hostileEnv) string { return "/dev/zero" }, "is not a regular file (a character device)"},
		{"a socket", func(h *hostileEnv) string { return h.socket("keys/sock.pub") }, "is not a regular file (a socket)"},
		{"a directory", func(h *hostileEnv) string { return h.mkdir("keys/dir.pub") }, "is not a regular file (a directory)"},
		{"a 2 GiB sparse file", func(h *hostileEnv) string { return h.sparse("keys/big.pub", 2<<30) }, "file is larger than"},
		{"a symlink to the secret", func(h *hostileEnv) string { return h.symlink(h.secret, "keys/link.pub") }, "PEM decoding failed"},
		{"a public key followed by its private key", func(h *hostileEnv) string {
			return h.write("keys/both.pub", string(hostileTrust.pub)+string(hostileTrust.priv))
		}, "holds a private key"},
		{"a certificate", func(h *hostileEnv) string { return h.write("keys/cert.pub", string(hostileTrust.cert)) }, "unknown Public key PEM file type: CERTIFICATE"},
	}
	for _, c := range commands {
		for _, f := range files {
			cases = append(cases, hostileCase{class: "trust/policy-file", name: c.name + ": keyPath " + f.name,
				setup: func(h *hostileEnv) ([]string, string) {
					p := policyNaming(h, "keyPath", f.make(h))
					return c.args(h, p), p + `: transports.docker["quay.io"][0].keyPath: `
				}, want: f.want})
		}
		// Every other field that names a file, as a named pipe (the hang)
		// and /dev/zero (the memory).
		for _, field := range []string{"keyPaths", "rekorPublicKeyPath", "fulcio.caPath", "pki.caRootsPath", "signedBy keyPath"} {
			at := map[string]string{"keyPaths": "keyPaths[1]", "signedBy keyPath": "keyPath"}[field]
			if at == "" {
				at = field
			}
			cases = append(cases,
				hostileCase{class: "trust/policy-file", name: c.name + ": " + field + " a named pipe",
					setup: func(h *hostileEnv) ([]string, string) {
						p := policyNaming(h, field, h.fifo("keys/fifo"))
						return c.args(h, p), `[0].` + at + `: `
					}, want: "is not a regular file (a named pipe)"},
				hostileCase{class: "trust/policy-file", name: c.name + ": " + field + " /dev/zero",
					setup: func(h *hostileEnv) ([]string, string) {
						return c.args(h, policyNaming(h, field, "/dev/zero")), `[0].` + at + `: `
					}, want: "/dev/zero is not a regular file (a character device)"},
			)
		}
	}
	cases = append(cases,
		hostileCase{class: "trust/policy-file", name: "build --policy: a relative keyPath",
			setup: func(h *hostileEnv) ([]string, string) {
				return build(h, "--policy", policyNaming(h, "keyPath", "keys/cosign.pub")), "keyPath"
			}, want: "is not an absolute path"},
	)

	// --verify-key: exactly one public key.
	keyCommands := []struct {
		name string
		args func(h *hostileEnv, key string) []string
	}{
		{"build --verify-key", func(h *hostileEnv, k string) []string { return build(h, "--verify-key", k) }},
		{"build --bootc --verify-key", func(h *hostileEnv, k string) []string { return build(h, "--bootc", "--verify-key", k) }},
		{"mirror --verify-key", func(h *hostileEnv, k string) []string {
			return []string{"mirror", "--lock", filepath.Join(h.out, "compose.lock.json"), "--to", "oci:" + h.path("layout"), "--verify-key", k}
		}},
		{"release verify --verify-key", func(h *hostileEnv, k string) []string {
			return []string{"release", "verify", "--release", "5.0", "--verify-key", k}
		}},
	}
	keys := []struct{ name, data, want string }{
		{"public key followed by its private key", string(hostileTrust.pub) + string(hostileTrust.priv), "holds a private key (block EC PRIVATE KEY)"},
		{"public key followed by an OpenSSH private key as text", string(hostileTrust.pub) + "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n", "holds a private key"},
		{"two public keys", string(hostileTrust.pub) + string(newTrustMaterial().pub), "2 PEM blocks"},
		{"public key and a note after it", string(hostileTrust.pub) + "backup: see the vault\n", "data after the PUBLIC KEY block"},
	}
	for _, c := range keyCommands {
		for _, k := range keys {
			cases = append(cases, hostileCase{class: "trust/verify-key", name: c.name + ": " + k.name,
				setup: func(h *hostileEnv) ([]string, string) {
					p := h.write("cosign.pub", k.data)
					return c.args(h, p), "key " + p
				}, want: k.want})
		}
	}
	return cases
}

func referenceCases() []hostileCase {
	const digest = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	climbing := "quay.io/openshift/../../v2/_catalog" + digest
	lockWith := func(h *hostileEnv) string {
		data := h.readOutput("compose.lock.json")
		i := strings.Index(data, `"ref": "`)
		j := strings.Index(data[i+8:], `"`)
		return h.write("lock.json", data[:i+8]+climbing+data[i+8+j:])
	}
	var cases []hostileCase
	for _, c := range []struct {
		name string
		args func(h *hostileEnv) ([]string, string)
	}{
		{"mirror --lock", func(h *hostileEnv) ([]string, string) {
			p := lockWith(h)
			return []string{"mirror", "--lock", p, "--to", "oci:" + h.path("layout")}, p
		}},
		{"mirror --lock to a registry", func(h *hostileEnv) ([]string, string) {
			p := lockWith(h)
			return []string{"mirror", "--lock", p, "--to", "docker://127.0.0.1:9/mirror", "--timeout", "2s"}, p
		}},
		{"footprint --lock", func(h *hostileEnv) ([]string, string) {
			p := lockWith(h)
			return []string{"footprint", "--lock", p}, p
		}},
		{"diff NEW", func(h *hostileEnv) ([]string, string) {
			p := lockWith(h)
			return []string{"diff", filepath.Join(h.out, "compose.lock.json"), p}, p
		}},
		{"build --release-dir", func(h *hostileEnv) ([]string, string) {
			d := h.releaseDir("rel")
			h.write(filepath.Join(d, "release-x86_64.json"), `{"release": {"base": "5.0.0"}, "images": {"pod": "`+climbing+`"}}`)
			return build(h, "--release-dir", d), "release-x86_64.json"
		}},
		{"validate --release-dir", func(h *hostileEnv) ([]string, string) {
			d := h.releaseDir("rel")
			h.write(filepath.Join(d, "release-x86_64.json"), `{"release": {"base": "5.0.0"}, "images": {"pod": "`+climbing+`"}}`)
			return []string{"validate", "--release-dir", d}, "release-x86_64.json"
		}},
		{"release update DIR", func(h *hostileEnv) ([]string, string) {
			d := h.releaseDir("rel")
			h.write(filepath.Join(d, "release-x86_64.json"), `{"release": {"base": "5.0.0"}, "images": {"pod": "quay.io/a/../b:latest"}}`)
			return []string{"release", "update", d, "--resolve-tags", "--timeout", "2s"}, "release-x86_64.json"
		}},
		{"a component's release file", func(h *hostileEnv) ([]string, string) {
			h.component("edge", "")
			h.write("catalog/components/edge/release/release-edge-x86_64.json", `{"release": {"base": "5.0.0"}, "images": {"edge": "`+climbing+`"}}`)
			return withEdge(h), "release-edge-x86_64.json"
		}},
	} {
		cases = append(cases, hostileCase{class: "refs/path-segment", name: c.name + ": a .. path segment", setup: c.args, want: `path segment ".."`})
	}
	// Flags naming an image: .., ., an empty segment and a transport.
	flags := []struct {
		name string
		args func(h *hostileEnv, ref string) []string
	}{
		{"--bootc-image", func(h *hostileEnv, ref string) []string {
			return build(h, "--bootc", "--kickstart", "--bootc-image", ref)
		}},
		{"--bootc-base", func(h *hostileEnv, ref string) []string { return build(h, "--bootc", "--bootc-base", ref) }},
		{"--runner-image", func(h *hostileEnv, ref string) []string {
			return []string{"matrix", "--profile", "minimal", "--arch", "x86_64", "--release", "5.0", "--emit", "tekton", "--runner-image", ref}
		}},
	}
	for _, f := range flags {
		for _, r := range []struct{ name, ref, want string }{
			{"a .. path segment", "quay.io/example/../../v2/x:4.19", `path segment ".."`},
			{"a . path segment", "quay.io/./x:4.19", `path segment "."`},
			{"an empty path segment", "quay.io/example//x:4.19", "empty path segment"},
			{"a docker:// prefix", "docker://quay.io/example/microshift:4.19", "starts with the transport docker://, which is no part of an image reference: give quay.io/example/microshift:4.19"},
		} {
			cases = append(cases, hostileCase{class: "refs/flag", name: f.name + ": " + r.name,
				setup: func(h *hostileEnv) ([]string, string) { return f.args(h, r.ref), f.name }, want: r.want, code: exitUsage})
		}
	}
	return cases
}

func round3RoughEdgeCases() []hostileCase {
	return []hostileCase{
		{class: "rough/round3", name: "a kustomization naming a file kustomize cannot hold",
			setup: func(h *hostileEnv) ([]string, string) {
				h.manifests("edge", map[string]string{
					"kustomization.yaml": "resources:\n- cm.yaml\n- my cm.yaml\n",
					"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
					"my cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
				})
				return withEdge(h), "manifests/my cm.yaml"
			}, want: "a name kustomize cannot read"},
		{class: "rough/round3", name: "--pull-secret auth without the colon",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.write("pull-secret.json", `{"auths": {"quay.io": {"auth": "`+base64.StdEncoding.EncodeToString([]byte(h.token))+`"}}}`)
				return build(h, "--pull-secret", p), p
			}, want: `auths["quay.io"].auth is base64 of a value without the colon`},
		{class: "rough/round3", name: "diff: a lock whose config differs from its config_sources",
			setup: func(h *hostileEnv) ([]string, string) {
				p := h.lock("lock.json", `"cniPlugin": "none"`, `"cniPlugin": "ovnk"`)
				return []string{"diff", filepath.Join(h.out, "compose.lock.json"), p}, p
			}, want: "config: network.cniPlugin is \"ovnk\", but config_sources says \"none\""},
		{class: "rough/round3", name: "mirror --lock of a lock with no images",
			setup: func(h *hostileEnv) ([]string, string) {
				data := h.readOutput("compose.lock.json")
				i := strings.Index(data, `"images": [`)
				j := strings.Index(data[i:], "\n  ],\n")
				p := h.write("lock.json", data[:i]+`"images": [],`+data[i+j+len("\n  ],"):])
				return []string{"mirror", "--lock", p, "--to", "oci:" + h.path("layout")}, p
			}, want: "lists no images: nothing to mirror"},
		{class: "rough/round3", name: "build --format json to a path that is not UTF-8",
			setup: func(h *hostileEnv) ([]string, string) {
				return []string{"build", "--profile", "minimal", "--arch", "x86_64", "--format", "json", "--output", h.path("out\xff\xfe")}, `out\xff\xfe`
			}, want: "not valid UTF-8", code: exitUsage},
	}
}

// TestHostileRound3Accepted: what round three must keep accepting: a
// device policy naming a key this build places, a key this machine has
// and one neither has (a warning naming the field); a public key with
// blank lines around it; a component directory holding an editor's backup
// and a file a..b that no kustomization names.
func TestHostileRound3Accepted(t *testing.T) {
	h := newHostileEnv(t)
	key := h.write("keys/cosign.pub", "\n"+string(hostileTrust.pub)+"\n\n")
	host := h.write("keys/host.pub", string(newTrustMaterial().pub))
	rule := func(keyPaths ...string) []any {
		return []any{map[string]any{"type": "sigstoreSigned", "keyPaths": keyPaths, "signedIdentity": map[string]any{"type": "matchRepository"}}}
	}
	data, _ := json.Marshal(map[string]any{"default": []any{map[string]any{"type": "reject"}}, "transports": map[string]any{"docker": map[string]any{
		"quay.io": rule("/etc/containers/sigstore/cosign.pub", host, "/etc/pki/nowhere/release.pub"),
	}}})
	policy := h.write("policy.json", string(data))
	h.manifests("edge", map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: edge\n"})
	h.write("catalog/components/edge/manifests/kustomization.yaml~", "resources:\n- gone.yaml\n")
	h.write("catalog/components/edge/manifests/a..b", "not yaml")
	out := filepath.Join(h.dir, "built")
	stdout, stderr, code := runGuarded(t, 60*time.Second, "build", "--profile", "minimal", "--arch", "x86_64", "--output", out,
		"--catalog", h.catalogDir(), "--with", "edge", "--policy", policy, "--verify-key", key)
	if code != exitOK {
		t.Fatalf("build = exit %d\nstderr: %s", code, stderr)
	}
	if !strings.Contains(stdout, "composition") {
		t.Errorf("build printed %q", stdout)
	}
	want := `warning: policy ` + policy + `: transports.docker["quay.io"][0].keyPaths[2] names /etc/pki/nowhere/release.pub, which this build does not place (--verify-key) nor this machine has`
	if !strings.Contains(stderr, want) || strings.Count(stderr, "/etc/pki/nowhere") != 1 {
		t.Errorf("stderr lacks the one warning %q:\n%s", want, stderr)
	}
	for path, data := range map[string]string{"files/etc/containers/policy.json": string(mustReadFile(t, policy)), "files/etc/containers/sigstore/cosign.pub": string(mustReadFile(t, key))} {
		if got := string(mustReadFile(t, filepath.Join(out, path))); got != data {
			t.Errorf("%s is not the user's file as it is:\n%s", path, got)
		}
	}
	entries, err := os.ReadDir(filepath.Join(out, "manifests.d"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("manifests.d: %v, %v", entries, err)
	}
	if kust := string(mustReadFile(t, filepath.Join(out, "manifests.d", entries[0].Name(), "kustomization.yaml"))); strings.Contains(kust, "gone") {
		t.Errorf("the editor's backup was rendered:\n%s", kust)
	}
}
