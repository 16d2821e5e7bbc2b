package registryclient

import (
	"fmt"
	"os"
	"strings"

	"github.com/containers/image/v5/pkg/docker/config"
	"github.com/containers/image/v5/types"
	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
)

// AuthFileEnv is the variable podman, skopeo and buildah read the auth
// file from when --authfile is not given.
const AuthFileEnv = "REGISTRY_AUTH_FILE"

// AuthLookup describes, for messages, where credentials are looked up.
const AuthLookup = "$REGISTRY_AUTH_FILE, ${XDG_RUNTIME_DIR}/containers/auth.json, ~/.config/containers/auth.json, ~/.docker/config.json"

// Keychain resolves credentials with containers/image's
// pkg/docker/config, exactly as podman, skopeo and buildah do: the auth
// file sys names (and only it), else $XDG_RUNTIME_DIR/containers/auth.json
// (/run/containers/$UID/auth.json when XDG_RUNTIME_DIR is unset),
// ~/.config/containers/auth.json, ~/.docker/config.json (or
// $DOCKER_CONFIG/config.json) and ~/.dockercfg, with per-repository
// entries and credential helpers. The caller resolves REGISTRY_AUTH_FILE
// into sys.AuthFilePath, as those tools do for --authfile.
func Keychain(sys *types.SystemContext) authn.Keychain { return containersKeychain{sys: sys} }

type containersKeychain struct{ sys *types.SystemContext }

var _ authn.Keychain = containersKeychain{}

func (k containersKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	creds, err := config.GetCredentials(k.sys, authKey(target.String()))
	if err != nil {
		// containers/image's messages name the file, never its contents.
		return nil, fmt.Errorf("looking up credentials for %s: %w", target.RegistryStr(), err)
	}
	if creds == (types.DockerAuthConfig{}) {
		return authn.Anonymous, nil
	}
	return authn.FromConfig(authn.AuthConfig{Username: creds.Username, Password: creds.Password, IdentityToken: creds.IdentityToken}), nil
}

// authKey is the auth file key for a registry or repository as
// go-containerregistry names it: Docker Hub is index.docker.io there and
// docker.io in auth files.
func authKey(s string) string {
	if rest, ok := strings.CutPrefix(s, "index.docker.io"); ok && (rest == "" || rest[0] == '/') {
		return "docker.io" + rest
	}
	return s
}

// ResolveAuthFile is the auth file to use: flag, else $REGISTRY_AUTH_FILE,
// else "" (the default lookup). A file that is named but missing is an
// error, as it is for podman.
func ResolveAuthFile(flag string) (string, error) {
	path, from := flag, "--authfile"
	if path == "" {
		path, from = os.Getenv(AuthFileEnv), "$"+AuthFileEnv
	}
	if path == "" {
		return "", nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", from, path, unwrapPath(err))
	}
	if st.IsDir() {
		return "", fmt.Errorf("%s %s: is a directory, not an auth file", from, path)
	}
	// Through the input gate before containers/image opens it: a named
	// pipe would block it for ever, a device feed it without end.
	if _, err := inputfile.Read(from, path, MaxConfigFile); err != nil {
		return "", err
	}
	return path, nil
}

// MaxConfigFile bounds the containers configuration files read here (auth
// files, registries.conf, certificates and keys): each is a few KB.
const MaxConfigFile = 1 << 20
