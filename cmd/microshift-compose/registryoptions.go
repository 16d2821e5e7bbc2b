package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
)

// registryOptions are how commands that talk to registries (mirror,
// footprint, build --resolve-sizes, release update/verify) reach them:
// the containers configuration podman and skopeo read, and the limits.
type registryOptions struct {
	Jobs     int
	Insecure []string
	Retries  int
	// Timeout bounds each wait on a registry before the request is retried.
	Timeout time.Duration
	// timeout is --timeout as given, for messages.
	timeout *durationValue
	// AuthFile is --authfile; $REGISTRY_AUTH_FILE when unset.
	AuthFile string
	// RegistriesConf replaces the system registries.conf.
	RegistriesConf string
	// CertDir holds certificates for every registry instead of certs.d.
	CertDir   string
	TLSVerify bool
}

func (o *registryOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.IntVarP(&o.Jobs, "jobs", "j", registryclient.DefaultJobs, "concurrent registry requests")
	f.StringVar(&o.AuthFile, "authfile", "", "auth file with registry credentials (default: $REGISTRY_AUTH_FILE, else where podman looks: ${XDG_RUNTIME_DIR}/containers/auth.json, ~/.config/containers/auth.json, ~/.docker/config.json)")
	f.StringVar(&o.RegistriesConf, "registries-conf", "", "registries.conf to read instead of /etc/containers/registries.conf (mirrors tried first, blocked and insecure registries); $CONTAINERS_REGISTRIES_CONF works too")
	f.StringVar(&o.CertDir, "cert-dir", "", "directory of CA (*.crt) and client (*.cert, *.key) certificates for every registry (default: the registry's directory in ~/.config/containers/certs.d, /etc/containers/certs.d or /etc/docker/certs.d)")
	f.BoolVar(&o.TLSVerify, "tls-verify", true, "verify registries' TLS certificates; --tls-verify=false also allows plain HTTP")
	f.StringSliceVar(&o.Insecure, "insecure-registry", nil, "registry (host[:port]) to reach without TLS verification or over plain HTTP; TLS is verified for all others")
	f.IntVar(&o.Retries, "retries", registryclient.DefaultRetries, "attempts per request on timeouts, dropped connections, 408, 429 and 5xx, with backoff")
	o.timeout = durationVar(f, &o.Timeout, "timeout", registryclient.DefaultTimeout, "bound on each registry request, headers and whole body (blob downloads: at least 16 KiB/s over each --timeout of reading; uploads: each write); --retries x --timeout is a request's budget, and a Retry-After beyond it fails the image at once")
	markPaths(cmd, "authfile", "registries-conf", "cert-dir")
}

// addAccessFlags binds the flags of how a registry is reached (auth,
// registries.conf, certificates, TLS), for a command that asks registries
// little and has its own --timeout (release fetch resolving tags): the
// limits keep their defaults.
func (o *registryOptions) addAccessFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	o.Jobs, o.Retries, o.Timeout = registryclient.DefaultJobs, registryclient.DefaultRetries, registryclient.DefaultTimeout
	f.StringVar(&o.AuthFile, "authfile", "", "auth file with registry credentials for resolving tags (default: $REGISTRY_AUTH_FILE, else where podman looks)")
	f.StringVar(&o.RegistriesConf, "registries-conf", "", "registries.conf to read instead of /etc/containers/registries.conf when resolving tags")
	f.StringVar(&o.CertDir, "cert-dir", "", "directory of CA and client certificates for every registry (default: the registry's certs.d directory)")
	f.BoolVar(&o.TLSVerify, "tls-verify", true, "verify registries' TLS certificates; --tls-verify=false also allows plain HTTP")
	f.StringSliceVar(&o.Insecure, "insecure-registry", nil, "registry (host[:port]) to reach without TLS verification or over plain HTTP")
}

// Validate checks the flag values; files are checked by client.
func (o *registryOptions) Validate() error {
	if o.Jobs < 1 {
		return usageError{fmt.Errorf("--jobs must be at least 1, got %d", o.Jobs)}
	}
	if o.Retries < 1 {
		return usageError{fmt.Errorf("--retries must be at least 1, got %d", o.Retries)}
	}
	if o.Timeout <= 0 {
		return usageError{fmt.Errorf("--timeout must be positive, got %s", spelled(o.timeout, o.Timeout))}
	}
	for _, h := range o.Insecure {
		if err := registryclient.CheckHost(h); err != nil {
			return usageError{fmt.Errorf("--insecure-registry: %w", err)}
		}
	}
	return nil
}

// client is the registry access these flags describe, prepared once: the
// auth file resolved ($REGISTRY_AUTH_FILE when --authfile is not given),
// registries.conf parsed, the certificate directory checked.
func (o *registryOptions) client() (registryclient.Options, error) {
	authFile, err := registryclient.ResolveAuthFile(o.AuthFile)
	if err != nil {
		return registryclient.Options{}, err
	}
	if o.CertDir != "" {
		st, err := os.Stat(o.CertDir)
		if err != nil {
			return registryclient.Options{}, fmt.Errorf("--cert-dir %s: %w", o.CertDir, unwrapPathErr(err))
		}
		if !st.IsDir() {
			return registryclient.Options{}, fmt.Errorf("--cert-dir %s: not a directory", o.CertDir)
		}
	}
	c := registryclient.Options{
		Jobs:           o.Jobs,
		Insecure:       o.Insecure,
		SkipTLSVerify:  !o.TLSVerify,
		Retries:        o.Retries,
		Timeout:        o.Timeout,
		AuthFile:       authFile,
		RegistriesConf: o.RegistriesConf,
		CertDir:        o.CertDir,
		UserAgent:      "microshift-compose/" + versionString(),
	}
	return c.Prepare()
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
