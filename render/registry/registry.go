package registry

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/containers/image/v5/docker/reference"
	"github.com/containers/image/v5/pkg/docker/config"
	"github.com/containers/image/v5/pkg/sysregistriesv2"
	"github.com/containers/image/v5/types"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/imageref"
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/safetext"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan"
)

// Where the device reads its registry configuration.
const (
	// PullSecretPath is the pull secret CRI-O reads on a MicroShift device
	// (MicroShift's CRI-O drop-in sets global_auth_file to it).
	PullSecretPath = "/etc/crio/openshift-pull-secret"
	// MirrorConfPath is the registries.conf.d drop-in that sends the plan's
	// images to the mirror registry.
	MirrorConfPath = "/etc/containers/registries.conf.d/90-microshift-compose-mirror.conf"
	// CertsDPath holds the CA of the mirror registry, per host.
	CertsDPath = "/etc/containers/certs.d"
)

// Options are how the device pulls the plan's images.
type Options struct {
	// PullSecret is an auth file (podman login's auth.json, or the pull
	// secret of console.redhat.com) placed at PullSecretPath, 0600.
	PullSecret string
	// Mirror is REGISTRY[/PREFIX], the registry `mirror --to
	// docker://REGISTRY/PREFIX` fills: a registries.conf.d drop-in maps
	// every source registry of the plan to it.
	Mirror string
	// MirrorCA is the PEM CA that signed the mirror's certificate, placed
	// at /etc/containers/certs.d/<REGISTRY>/ca.crt.
	MirrorCA string
	// MirrorInsecure lets the device reach the mirror over plain HTTP or
	// without verifying its certificate.
	MirrorInsecure bool
	// OSImage is the bootc image the device updates from (build
	// --bootc-image): its registry is sent to the mirror too, where
	// `mirror --image` puts it.
	OSImage string
}

// ErrBadPullSecret is wrapped by the pull secret's errors.
var ErrBadPullSecret = errors.New("invalid pull secret")

// maxPullSecret bounds the pull secret file: console.redhat.com's is ~3 KB.
const maxPullSecret = 1 << 20

// Add adds the device files d asks for to the plan: the pull
// secret (marked secret: the lock records its path, never its content or
// digest, and build writes it only into the blueprint), the mirror's
// registries.conf.d drop-in, validated by parsing it with containers/image
// and resolving every image of the plan through it, and the mirror's CA.
// It returns warnings for registries the device will reach without
// credentials.
func Add(p *plan.Plan, d Options) ([]string, error) {
	var files []plan.File
	var warnings []string
	var mirror airgap.Target
	if d.Mirror != "" {
		if safetext.RegistryCredentials(d.Mirror) {
			return nil, fmt.Errorf("--mirror-registry holds credentials (user:password@ before the registry), which the device's registries.conf.d drop-in and compose.lock.json would carry: name the mirror without them and give its credentials in the --pull-secret auth file (written 0600)")
		}
		host, prefix, err := airgap.ParseRegistryPrefix(strings.TrimSuffix(strings.TrimPrefix(d.Mirror, "docker://"), "/"))
		if err != nil {
			return nil, fmt.Errorf("--mirror-registry %q: %w", d.Mirror, err)
		}
		mirror = airgap.Target{Transport: airgap.TransportDocker, Registry: host, Prefix: prefix}
		refs := p.ImageRefs()
		if d.OSImage != "" {
			refs = append(refs, d.OSImage)
		}
		conf, err := MirrorConf(refs, mirror, d.MirrorInsecure)
		if err != nil {
			return nil, err
		}
		files = append(files, plan.File{Path: MirrorConfPath, Mode: "0644", Source: "--mirror-registry " + d.Mirror, Data: conf})
	} else if d.MirrorCA != "" || d.MirrorInsecure {
		return nil, errors.New("--mirror-ca and --mirror-insecure configure the mirror registry: add --mirror-registry")
	}
	if d.MirrorCA != "" {
		data, err := inputfile.ReadCA("--mirror-ca", d.MirrorCA)
		if err != nil {
			return nil, err
		}
		files = append(files, plan.File{Path: CertsDPath + "/" + mirror.Registry + "/ca.crt", Mode: "0644", Source: "--mirror-ca " + d.MirrorCA, Data: data})
	}
	if d.PullSecret != "" {
		data, hosts, err := readPullSecret(d.PullSecret)
		if err != nil {
			return nil, err
		}
		files = append(files, plan.File{Path: PullSecretPath, Mode: "0600", Source: "--pull-secret " + d.PullSecret, Secret: true, Data: data})
		warnings = pullSecretWarnings(p, hosts, mirror)
	}
	if len(files) == 0 {
		return nil, nil
	}
	return warnings, p.AddDeviceFiles(files)
}

// readPullSecret reads and checks an auth file with containers/image, the
// parser CRI-O uses on the device, and returns it with the registries it
// has credentials for. Messages name the file and a position, never its
// content.
func readPullSecret(path string) ([]byte, []string, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("--pull-secret %s: %w: %s", path, ErrBadPullSecret, fmt.Sprintf(format, args...))
	}
	data, err := inputfile.Read("pull secret", path, maxPullSecret)
	if err != nil {
		return nil, nil, fmt.Errorf("--pull-secret: %w", err)
	}
	// The shape first, with a position for syntax errors: containers/image
	// would run credential helpers of the build machine, which the device
	// does not have.
	var shape struct {
		Auths       map[string]json.RawMessage `json:"auths"`
		CredHelpers map[string]string          `json:"credHelpers"`
		CredsStore  string                     `json:"credsStore"`
	}
	if err := inputfile.CheckJSON(data); err != nil {
		return nil, nil, bad("%v", err)
	}
	if err := json.Unmarshal(data, &shape); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			// Offset is just past the byte that broke the syntax.
			line, col := text.Position(data, max(se.Offset-1, 0))
			return nil, nil, bad("not valid JSON at line %d, column %d", line, col)
		case errors.As(err, &te):
			return nil, nil, bad("%s is a JSON %s, want an object of registries (an auth file: {\"auths\": {\"quay.io\": {\"auth\": \"...\"}}})", orTop(te.Field), te.Value)
		}
		return nil, nil, bad("not an auth file")
	}
	if len(shape.CredHelpers) > 0 || shape.CredsStore != "" {
		return nil, nil, bad("it names credential helpers (credHelpers, credsStore), which CRI-O on the device cannot run; export the credentials into \"auths\" (podman login --authfile FILE)")
	}
	// Each "auth" is base64 of user:password; containers/image skips one
	// without the colon with a warning of its own (a second line before
	// ours), so it is checked here first. The value is never quoted.
	for _, host := range slices.Sorted(maps.Keys(shape.Auths)) {
		var entry struct {
			Auth string `json:"auth"`
		}
		if json.Unmarshal(shape.Auths[host], &entry) != nil || entry.Auth == "" {
			continue // containers/image says what is wrong with it
		}
		decoded, err := base64.StdEncoding.DecodeString(entry.Auth)
		if err != nil {
			return nil, nil, bad("auths[%q].auth is not base64 of user:password (as podman login writes it)", host)
		}
		if !bytes.Contains(decoded, []byte(":")) {
			return nil, nil, bad("auths[%q].auth is base64 of a value without the colon between user and password (want base64 of user:password, as podman login writes it)", host)
		}
	}
	sys, cleanup, err := isolatedAuth(path)
	if err != nil {
		return nil, nil, err
	}
	creds, err := config.GetAllCredentials(sys)
	cleanup()
	if err != nil {
		var ce base64.CorruptInputError
		if errors.As(err, &ce) {
			return nil, nil, bad("an \"auth\" value is not base64 of user:password (as podman login writes it)")
		}
		return nil, nil, bad("%s", scrub(err, path))
	}
	var hosts []string
	for host := range creds {
		hosts = append(hosts, host)
	}
	if len(hosts) == 0 {
		return nil, nil, bad("it has no credentials (want \"auths\" with an entry per registry, as podman login writes)")
	}
	sort.Strings(hosts)
	return data, hosts, nil
}

func orTop(field string) string {
	if field == "" {
		return "the file"
	}
	return field
}

// isolatedAuth reads only the auth file at path: an empty registries.conf
// (so no credential helper of this machine runs) and no other auth file.
func isolatedAuth(path string) (*types.SystemContext, func(), error) {
	dir, err := os.MkdirTemp("", "microshift-compose-auth-")
	if err != nil {
		return nil, nil, err
	}
	conf := filepath.Join(dir, "registries.conf")
	if err := os.WriteFile(conf, nil, 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	sys := &types.SystemContext{AuthFilePath: path, SystemRegistriesConfPath: conf, SystemRegistriesConfDirPath: filepath.Join(dir, "registries.conf.d")}
	return sys, func() { os.RemoveAll(dir) }, nil
}

// scrub keeps containers/image's message about an auth file and drops its
// repetition of the path (the caller's message names it).
func scrub(err error, path string) string {
	msg := text.OneLine(err.Error())
	for _, p := range []string{fmt.Sprintf("reading JSON file %q: ", path), fmt.Sprintf("unmarshaling JSON at %q: ", path)} {
		msg = strings.ReplaceAll(msg, p, "")
	}
	return msg
}

// pullSecretWarnings names the registries the device pulls from that the
// pull secret has no credentials for: the mirror, or the plan's registries.
func pullSecretWarnings(p *plan.Plan, hosts []string, mirror airgap.Target) []string {
	has := func(host string) bool {
		for _, h := range hosts {
			if h == host || strings.HasPrefix(h, host+"/") {
				return true
			}
		}
		return false
	}
	if mirror.Registry != "" {
		if !has(mirror.Registry) {
			return []string{fmt.Sprintf("the pull secret has no credentials for the mirror %s: the device will pull from it anonymously", mirror.Registry)}
		}
		return nil
	}
	var missing []string
	for _, host := range sourceRegistries(p.ImageRefs()) {
		if !has(host) {
			missing = append(missing, host)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("the pull secret has no credentials for %s: the device will pull from %s anonymously", strings.Join(missing, ", "), text.Plural(len(missing), "it", "them"))}
}

// sourceRegistries are the registries (as registries.conf and auth files
// name them: docker.io for Docker Hub) the references are on, sorted.
func sourceRegistries(refs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range refs {
		named, err := reference.ParseNormalizedNamed(r)
		if err != nil {
			continue
		}
		if d := reference.Domain(named); !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// MirrorConf renders the registries.conf.d drop-in that sends every image
// of refs to mirror, with the mapping `mirror --to docker://` uses:
// <registry>/<path> is pulled from <mirror>/<path> first, then from its
// registry. A registry whose references are all digests gets
// mirror-by-digest-only = true (what MicroShift's documentation and
// OpenShift's ImageDigestMirrorSets do: a tag is never taken from the
// mirror); one with tags (--allow-unpinned) does not, so that the tag,
// which mirror pushes too, resolves on an airgapped device. The result is
// parsed with containers/image and every reference resolved through it
// before it is returned.
func MirrorConf(refs []string, mirror airgap.Target, insecure bool) ([]byte, error) {
	digestOnly := map[string]bool{}
	for _, r := range refs {
		named, err := reference.ParseNormalizedNamed(r)
		if err != nil {
			return nil, fmt.Errorf("parsing image reference %q: %w", r, err)
		}
		d := reference.Domain(named)
		_, isDigest := named.(reference.Canonical)
		if prev, ok := digestOnly[d]; !ok || prev {
			digestOnly[d] = isDigest
		}
	}
	loc := mirror.MirrorLocation()
	var conf registriesConfDropIn
	for _, d := range sourceRegistries(refs) {
		conf.Registries = append(conf.Registries, sysregistriesv2.Registry{
			Prefix:             d,
			Endpoint:           sysregistriesv2.Endpoint{Location: d},
			Mirrors:            []sysregistriesv2.Endpoint{{Location: loc, Insecure: insecure}},
			MirrorByDigestOnly: digestOnly[d],
		})
	}
	var b bytes.Buffer
	// The header is the only text not encoded; loc is a registry host and
	// repository path ParseRegistryPrefix accepted: no newline, no quote.
	b.WriteString("# Generated by microshift-compose; do not edit.\n")
	fmt.Fprintf(&b, "# The plan's images are pulled from the mirror registry %s first (filled\n", safetext.Comment(loc))
	fmt.Fprintf(&b, "# with `microshift-compose mirror --to docker://%s`), then from their registries.\n\n", safetext.Comment(loc))
	enc := toml.NewEncoder(&b)
	enc.Indent = ""
	if err := enc.Encode(conf); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", MirrorConfPath, err)
	}
	if err := checkMirrorConf(b.Bytes(), refs, mirror); err != nil {
		return nil, fmt.Errorf("checking the generated %s: %w", MirrorConfPath, err)
	}
	return b.Bytes(), nil
}

// registriesConfDropIn is the part of sysregistriesv2.V2RegistriesConf a
// mirror drop-in sets, in containers/image's own types: encoding
// V2RegistriesConf whole would write its other fields' empty values
// (short-name-mode = "", additional-layer-store-auth-helper = ""), which
// have no omitempty, into a file the device merges.
type registriesConfDropIn struct {
	Registries []sysregistriesv2.Registry `toml:"registry"`
}

// checkMirrorConf parses conf as the device will (a registries.conf.d
// drop-in, with containers/image) and checks every reference resolves to
// the mirror first.
func checkMirrorConf(conf []byte, refs []string, mirror airgap.Target) error {
	dir, err := os.MkdirTemp("", "microshift-compose-registries-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	confD := filepath.Join(dir, "registries.conf.d")
	if err := os.Mkdir(confD, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(confD, filepath.Base(MirrorConfPath)), conf, 0o644); err != nil {
		return err
	}
	// The device's own registries.conf is not ours to know: an empty one.
	if err := os.WriteFile(filepath.Join(dir, "registries.conf"), nil, 0o644); err != nil {
		return err
	}
	got, err := ResolveThroughRegistriesConf(filepath.Join(dir, "registries.conf"), confD, refs)
	if err != nil {
		return err
	}
	for _, r := range refs {
		src, err := imageref.ParseReference(r, name.StrictValidation)
		if err != nil {
			return err
		}
		repo, err := mirror.Repository(registryclient.Options{}, src.Context())
		if err != nil {
			return err
		}
		sep := "@"
		if _, ok := src.(name.Tag); ok {
			sep = ":"
		}
		want := repo.Name() + sep + src.Identifier()
		if got[r] != want {
			return fmt.Errorf("%s resolves to %q, want the mirror's %s", r, got[r], want)
		}
	}
	return nil
}

// ResolveThroughRegistriesConf is where the device pulls each reference
// from first, by containers/image's reading of a registries.conf and its
// .d directory: the first pull source of each.
func ResolveThroughRegistriesConf(confPath, confDir string, refs []string) (map[string]string, error) {
	sys := &types.SystemContext{SystemRegistriesConfPath: confPath, SystemRegistriesConfDirPath: confDir}
	if _, err := sysregistriesv2.GetRegistries(sys); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range refs {
		named, err := reference.ParseNormalizedNamed(r)
		if err != nil {
			return nil, fmt.Errorf("parsing image reference %q: %w", r, err)
		}
		reg, err := sysregistriesv2.FindRegistry(sys, named.String())
		if err != nil {
			return nil, err
		}
		if reg == nil {
			out[r] = named.String()
			continue
		}
		sources, err := reg.PullSourcesFromReference(named)
		if err != nil || len(sources) == 0 {
			return nil, fmt.Errorf("%s: no pull source: %v", r, err)
		}
		out[r] = sources[0].Reference.String()
	}
	return out, nil
}
