package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/airgap/serve"
	"github.com/microshift-compose/microshift-compose/internal/text"
)

// serveOptions are how serve listens and whom it lets in.
type serveOptions struct {
	Listen          string
	Prefix          string
	TLSCert, TLSKey string
	Htpasswd        string
	LogLevel        string
	AccessLog       bool
}

func (o *serveOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Listen, "listen", "127.0.0.1:5000", "address to listen on, HOST:PORT (port 0: any free port; 0.0.0.0:5000 or :5000 for every interface)")
	f.StringVar(&o.Prefix, "prefix", "", "repository path to serve every image under, the PREFIX of mirror --to docker://REGISTRY/PREFIX and build --mirror-registry REGISTRY/PREFIX")
	f.StringVar(&o.TLSCert, "tls-cert", "", "PEM certificate (chain) to serve HTTPS with; needs --tls-key")
	f.StringVar(&o.TLSKey, "tls-key", "", "PEM private key of --tls-cert")
	f.StringVar(&o.Htpasswd, "htpasswd", "", "htpasswd file of bcrypt entries (htpasswd -B): every request needs one of its users")
	f.StringVar(&o.LogLevel, "log-level", "info", "the registry's log level on stderr: error, warn, info or debug")
	f.BoolVar(&o.AccessLog, "access-log", false, "write an access log line per request to stdout (Apache combined format)")
}

// Validate checks what can be checked without reading files.
func (o *serveOptions) Validate() error {
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return usageError{errors.New("--tls-cert and --tls-key go together: give both for HTTPS, or neither")}
	}
	switch o.LogLevel {
	case "error", "warn", "info", "debug":
	default:
		return usageError{fmt.Errorf("--log-level %q: want error, warn, info or debug", o.LogLevel)}
	}
	return nil
}

func newServeCmd() *cobra.Command {
	var opts serveOptions
	cmd := &cobra.Command{
		Use:   "serve oci:DIR|oci-archive:FILE",
		Short: "Serve an OCI layout or archive read-only as a registry, where a site has none",
		Long: `serve offers the images of an OCI layout or archive (what mirror --to oci: or
oci-archive: writes, a bundle) over the OCI distribution API, read-only, until
interrupted (Ctrl-C or SIGTERM: in-flight pulls get 2 seconds). The registry
is CNCF distribution (the registry docker-registry and most mirrors run) used as
a library, in its read-only mode: pushes and deletes are refused (405). An
archive is read in place, never unpacked; nothing is written anywhere.

Each image is served where mirror --to docker://REGISTRY/PREFIX would push it:
quay.io/org/repo@sha256:X at HOST:PORT/PREFIX/org/repo@sha256:X (and by its tag
when its reference has one). So a device whose registries.conf.d drop-in build
--mirror-registry HOST:PORT/PREFIX wrote pulls from serve --prefix PREFIX
unchanged. A blob the layout lacks (a differential bundle, whose base holds it)
is answered 404 BLOB_UNKNOWN.

HTTPS with --tls-cert/--tls-key (TLS 1.2 or later), basic auth with --htpasswd
(bcrypt entries, htpasswd -B), both as distribution configures them; without
them, plain HTTP open to anyone who reaches the address, so the default listens
on 127.0.0.1 only. The images served are listed on stdout once the registry
answers; the registry's log goes to stderr.`,
		Example: `  microshift-compose serve oci:out/images
  microshift-compose serve oci-archive:microshift-images.tar --listen 0.0.0.0:5000 --prefix microshift \
      --tls-cert mirror.crt --tls-key mirror.key --htpasswd htpasswd
  podman pull --cert-dir certs.d/mirror.example.com:5000 mirror.example.com:5000/microshift/openshift-release-dev/ocp-v4.0-art-dev@sha256:...`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Validate(); err != nil {
				return err
			}
			if !strings.HasPrefix(args[0], "oci:") && !strings.HasPrefix(args[0], "oci-archive:") && !strings.HasPrefix(args[0], "dir:") {
				return usageError{fmt.Errorf("%q: serve takes oci:DIR or oci-archive:FILE, an OCI layout or archive (what mirror --to writes)", args[0])}
			}
			from, err := airgap.ParseSource(args[0])
			if err != nil {
				return usageError{err}
			}
			out := cmd.OutOrStdout()
			err = serve.Serve(cmd.Context(), from, serve.Options{
				Listen:    opts.Listen,
				Prefix:    opts.Prefix,
				TLSCert:   opts.TLSCert,
				TLSKey:    opts.TLSKey,
				Htpasswd:  opts.Htpasswd,
				LogLevel:  opts.LogLevel,
				AccessLog: opts.AccessLog,
				Ready:     func(s *serve.Served) { printServed(out, from, s, opts.Htpasswd != "") },
			})
			if err != nil {
				return err // it names the layout, the file or the address
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "stopped")
			return nil
		},
	}
	opts.addFlags(cmd)
	return cmd
}

// printServed lists what is served, one pull reference per image.
func printServed(w io.Writer, from airgap.Target, s *serve.Served, auth bool) {
	how := "no authentication"
	if auth {
		how = "htpasswd authentication"
	}
	fmt.Fprintf(w, "serving %d %s from %s at %s, read-only, %s\n", len(s.Images), text.Plural(len(s.Images), "image", "images"), from, s.URL, how)
	if s.Missing > 0 {
		fmt.Fprintf(w, "%d %s the images refer to %s not in the layout (its base holds them): answered 404\n", s.Missing, text.Plural(s.Missing, "blob", "blobs"), text.Plural(s.Missing, "is", "are"))
	}
	for _, im := range s.Images {
		ref := im.PullRef(s.Host)
		if im.Tag != "" {
			ref += " (tag " + im.Tag + ")"
		}
		fmt.Fprintf(w, "  %s\n", ref)
	}
}
