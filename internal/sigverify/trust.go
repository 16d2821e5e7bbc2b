package sigverify

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/containers/image/v5/docker/reference"
	"github.com/containers/image/v5/signature"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
)

// Limits of the files read: a policy of many scopes is a few KiB, a PEM
// public key well under one.
const (
	maxPolicy = 1 << 20
	maxKey    = 64 << 10
)

// ErrBadKey is wrapped when a --verify-key file is not a public key.
var ErrBadKey = errors.New("not a PEM public key")

// ErrBadPolicy is wrapped when a --policy file is not a containers policy.
var ErrBadPolicy = errors.New("invalid containers policy")

// Options say where the trust comes from: a policy file, or public keys.
// Both empty: no trust policy (nothing is verified).
type Options struct {
	// Policy is a containers-policy.json.
	Policy string
	// Keys are PEM public keys (cosign's cosign.pub, or any PEM
	// SubjectPublicKeyInfo) the plan's images must be signed with.
	Keys []string
	// Identity is the certificate identity the images must be signed by.
	Identity Identity
}

// Enabled reports whether a policy, keys or an identity were given.
func (o Options) Enabled() bool {
	return o.Policy != "" || len(o.Keys) > 0 || o.Identity.Enabled()
}

// Validate checks that one source of trust is given, and the identity
// flags' combination.
func (o Options) Validate() error {
	n := 0
	for _, given := range []bool{o.Policy != "", len(o.Keys) > 0, o.Identity.Enabled()} {
		if given {
			n++
		}
	}
	if n > 1 {
		return errors.New("--policy, --verify-key and the certificate identity flags (--certificate-identity, …) each say what to trust: give one (a policy names keys with keyPath, certificates with fulcio or pki)")
	}
	return o.Identity.Validate()
}

// Key is a public key read from a --verify-key file.
type Key struct {
	// Path is the file as the user named it.
	Path string
	// Name is the file's base name without extension, made safe for a
	// device path (/etc/containers/sigstore/<Name>.pub).
	Name string
	// Data is the PEM.
	Data []byte
}

// Trust is a loaded trust policy.
type Trust struct {
	// Source names it in messages: "--policy FILE" or "--verify-key A,B".
	Source string
	// Policy is the parsed policy containers/image evaluates.
	Policy *signature.Policy
	// JSON is the policy as a containers-policy.json: the user's file
	// unchanged, or the one generated from the keys.
	JSON []byte
	// Keys are the --verify-key keys (none with --policy).
	Keys []Key
	// RegistriesDir, when set, is the registries.d directory signatures
	// are looked up with (a device's); unset, sigstore attachments for
	// every registry (RegistriesD).
	RegistriesDir string
}

// Load reads the policy or keys o names. With keys, the policy requires a
// sigstore signature by one of them, for the signed identity of the image
// (matchRepository), on every repository of refs, and rejects any
// other image. It returns nil when o gives neither.
func Load(o Options, refs []string) (*Trust, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	switch {
	case o.Identity.Enabled():
		files, err := ReadIdentityFiles(o.Identity)
		if err != nil {
			return nil, err
		}
		scopes, err := Scopes(refs)
		if err != nil {
			return nil, err
		}
		return IdentityTrust(o.Identity, files, scopes, nil)
	case o.Policy != "":
		return LoadPolicy(o.Policy)
	case len(o.Keys) > 0:
		keys, err := ReadKeys(o.Keys)
		if err != nil {
			return nil, err
		}
		scopes, err := Scopes(refs)
		if err != nil {
			return nil, err
		}
		return KeyTrust(keys, scopes, nil)
	}
	return nil, nil
}

// LoadPolicy reads a containers-policy.json with containers/image's strict
// parser (unknown keys, unknown requirement types and empty requirement
// lists are refused).
//
// Every file the policy names (keys, Rekor keys, CA certificates) is read
// here, through the input gate, and checked; the Policy evaluated holds
// their contents in place of the paths, so that containers/image opens
// none of them. JSON stays the user's file.
func LoadPolicy(path string) (*Trust, error) {
	t, err := ParsePolicy(path)
	if err != nil {
		return nil, err
	}
	inlined, err := inlinePolicyFiles(path, t.JSON)
	if err != nil {
		return nil, err
	}
	if t.Policy, err = signature.NewPolicyFromBytes(inlined); err != nil {
		return nil, fmt.Errorf("policy %s: with the files it names: %w: %s", path, ErrBadPolicy, oneLine(err.Error()))
	}
	return t, nil
}

// ParsePolicy reads and parses a containers-policy.json without reading
// the files it names: for a policy evaluated elsewhere (a device's), whose
// files CheckDevicePolicy checks.
func ParsePolicy(path string) (*Trust, error) {
	data, err := inputfile.Read("policy", path, maxPolicy)
	if err != nil {
		return nil, err
	}
	if err := inputfile.CheckJSON(data); err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	p, err := signature.NewPolicyFromBytes(data)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w: %s", path, ErrBadPolicy, oneLine(err.Error()))
	}
	return &Trust{Source: "--policy " + path, Policy: p, JSON: data}, nil
}

// ReadKeys reads public keys, refusing a file that is not exactly one PEM
// public key (CheckPublicKey: a private key, a certificate, a second block
// or any text beside the key) and two keys with one name.
func ReadKeys(paths []string) ([]Key, error) {
	var keys []Key
	for _, p := range paths {
		data, err := inputfile.Read("key", p, maxKey)
		if err != nil {
			return nil, err
		}
		if err := CheckPublicKey(data); err != nil {
			return nil, fmt.Errorf("key %s: %w: %s", p, ErrBadKey, err)
		}
		k := Key{Path: p, Name: keyName(p), Data: data}
		for _, o := range keys {
			if o.Name == k.Name {
				return nil, fmt.Errorf("keys %s and %s would both be installed as %s.pub: rename one", o.Path, p, k.Name)
			}
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// keyName is the file's base name without its extension, with every byte
// outside [A-Za-z0-9._-] replaced by '-'.
func keyName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	b := []byte(base)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	name := strings.TrimLeft(string(b), ".")
	if name == "" {
		name = "key"
	}
	return name
}

// Scopes are the repositories of refs (registry/path, no tag or digest),
// sorted and unique: the docker scopes a key policy covers.
func Scopes(refs []string) ([]string, error) {
	var scopes []string
	for _, r := range refs {
		named, err := reference.ParseNormalizedNamed(r)
		if err != nil {
			return nil, fmt.Errorf("parsing image reference %q: %w", r, err)
		}
		scopes = append(scopes, named.Name())
	}
	slices.Sort(scopes)
	return slices.Compact(scopes), nil
}

// KeyTrust is the policy for keys: every scope requires a sigstore
// signature by one of the keys for the image's own repository
// (matchRepository), and everything else is rejected. keyPath says
// where a key is on the machine that evaluates the policy (the device);
// nil embeds the keys' data (keyDatas), for checking here.
// accept lists scopes of other transports whose images are accepted
// without signatures (the device's own image directories).
func KeyTrust(keys []Key, scopes []string, keyPath func(Key) string, accept ...Scope) (*Trust, error) {
	if len(keys) == 0 {
		return nil, errors.New("no keys to build a policy from")
	}
	var opt signature.PRSigstoreSignedOption
	var names []string
	if keyPath != nil {
		var paths []string
		for _, k := range keys {
			paths = append(paths, keyPath(k))
		}
		opt = signature.PRSigstoreSignedWithKeyPaths(paths)
	} else {
		var datas [][]byte
		for _, k := range keys {
			datas = append(datas, k.Data)
		}
		opt = signature.PRSigstoreSignedWithKeyDatas(datas)
	}
	for _, k := range keys {
		names = append(names, k.Path)
	}
	if len(keys) == 1 {
		// A single key is written keyPath/keyData, as upstream's policies
		// and podman's documentation spell it.
		if keyPath != nil {
			opt = signature.PRSigstoreSignedWithKeyPath(keyPath(keys[0]))
		} else {
			opt = signature.PRSigstoreSignedWithKeyData(keys[0].Data)
		}
	}
	// matchRepository, not upstream's matchRepoDigestOrExact: cosign's
	// signatures name the repository only (no tag or digest), which
	// matchRepoDigestOrExact never accepts (containers-policy.json(5)).
	// For the digest references a plan holds, the two check the same: the
	// signed digest must be the manifest's, the signed repository the
	// image's.
	req, err := signature.NewPRSigstoreSigned(opt, signature.PRSigstoreSignedWithSignedIdentity(signature.NewPRMMatchRepository()))
	if err != nil {
		return nil, fmt.Errorf("building the policy for %s: %w", strings.Join(names, ", "), err)
	}
	t, err := scopePolicy(req, scopes, accept)
	if err != nil {
		return nil, err
	}
	t.Source = "--verify-key " + strings.Join(names, ",")
	t.Keys = keys
	return t, nil
}

// scopePolicy is the policy requiring req of every docker scope, accepting
// the accept scopes as they are and rejecting everything else; its JSON is
// what is evaluated (parsed back).
func scopePolicy(req signature.PolicyRequirement, scopes []string, accept []Scope) (*Trust, error) {
	docker := signature.PolicyTransportScopes{}
	for _, s := range scopes {
		docker[s] = signature.PolicyRequirements{req}
	}
	p := &signature.Policy{
		Default:    signature.PolicyRequirements{signature.NewPRReject()},
		Transports: map[string]signature.PolicyTransportScopes{"docker": docker},
	}
	for _, a := range accept {
		if p.Transports[a.Transport] == nil {
			p.Transports[a.Transport] = signature.PolicyTransportScopes{}
		}
		p.Transports[a.Transport][a.Scope] = signature.PolicyRequirements{signature.NewPRInsecureAcceptAnything()}
	}
	data, err := json.MarshalIndent(p, "", "    ")
	if err != nil {
		return nil, fmt.Errorf("encoding the policy: %w", err)
	}
	data = append(data, '\n')
	// What is written is what is evaluated: parse it back.
	back, err := signature.NewPolicyFromBytes(data)
	if err != nil {
		return nil, fmt.Errorf("the generated policy does not parse: %w", err)
	}
	return &Trust{Policy: back, JSON: data}, nil
}

// Scope is a policy scope of a transport.
type Scope struct {
	Transport string // "docker", "dir", …
	Scope     string
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
