// Package usercache says where microshift-compose keeps what it caches
// for the user: $MICROSHIFT_COMPOSE_CACHE, else the microshift-compose
// directory of the user's cache directory ($XDG_CACHE_HOME, ~/.cache).
// It only names directories; what goes in them is each user's business.
package usercache

import (
	"errors"
	"os"
	"path/filepath"
)

// Env overrides the cache directory (tests, CI, a shared cache).
const Env = "MICROSHIFT_COMPOSE_CACHE"

// Root returns the cache directory: $MICROSHIFT_COMPOSE_CACHE, else
// os.UserCacheDir()/microshift-compose. It is not created here.
func Root() (string, error) {
	if root := os.Getenv(Env); root != "" {
		return root, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", errors.New("no cache directory: set $XDG_CACHE_HOME or $HOME, or " + Env)
	}
	return filepath.Join(cache, "microshift-compose"), nil
}

// Dir returns the subdirectory name of the cache root.
func Dir(name string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, name), nil
}
