package serve

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/containers/image/v5/docker/reference"
	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd" // the htpasswd access controller
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/microshift-compose/microshift-compose/airgap"
)

// Options configure Serve.
type Options struct {
	// Listen is host:port; port 0 picks a free one.
	Listen string
	// Prefix is the repository path every image is served under, as in
	// mirror --to docker://REGISTRY/PREFIX ("" for none).
	Prefix string
	// TLSCert and TLSKey are PEM files: with them the registry serves
	// HTTPS (TLS 1.2 or later), else plain HTTP.
	TLSCert, TLSKey string
	// Htpasswd is an htpasswd file of bcrypt entries (htpasswd -B): every
	// request then needs one of its users (basic auth).
	Htpasswd string
	// LogLevel is the registry's: error, warn, info or debug.
	LogLevel string
	// AccessLog writes an access log line per request to stdout (Apache
	// combined format).
	AccessLog bool
	// Ready is called once the registry answers, with what it serves.
	Ready func(*Served)
}

// Served is what a running Serve offers.
type Served struct {
	// Host is host:port as image references name the registry (an
	// unspecified listen address is named localhost).
	Host string
	// URL is the registry's base URL, http:// or https://.
	URL string
	// Images are the images served, in the order of their names.
	Images []Image
	// Blobs counts the blobs served; Missing those the images refer to
	// that the layout does not hold (a differential bundle), answered 404.
	Blobs, Missing int
}

// Image is one image as it is served.
type Image struct {
	// Name is its reference in the layout.
	Name string
	// Repository is where it is served: PREFIX/<its repository path>.
	Repository string
	Digest     string
	// Tag is set when Name has a tag.
	Tag string
}

// PullRef is the reference that pulls the image from the served host by
// digest.
func (im Image) PullRef(host string) string { return host + "/" + im.Repository + "@" + im.Digest }

// Serve serves the layout or archive from names until ctx is done, then
// stops the registry (in-flight requests get 2 seconds) and returns
// nil. Everything the user gives is checked before anything listens.
func Serve(ctx context.Context, from airgap.Target, opts Options) error {
	host, port, err := parseListen(opts.Listen)
	if err != nil {
		return err
	}
	if err := checkPrefix(opts.Prefix); err != nil {
		return err
	}
	if err := checkTLS(opts.TLSCert, opts.TLSKey); err != nil {
		return err
	}
	if opts.Htpasswd != "" {
		if err := checkHtpasswd(opts.Htpasswd); err != nil {
			return err
		}
	}
	level := opts.LogLevel
	if level == "" {
		level = "info"
	}
	if !slices.Contains([]string{"error", "warn", "info", "debug"}, level) {
		return fmt.Errorf("log level %q: want error, warn, info or debug", level)
	}
	content, err := airgap.ReadLayout(ctx, from)
	if err != nil {
		return err
	}
	defer content.Close()
	if len(content.Images) == 0 {
		return fmt.Errorf("%s names no images (its index.json is empty): nothing to serve", from)
	}
	t := newTree(content, time.Now().UTC())
	images, err := plant(t, content, opts.Prefix)
	if err != nil {
		return err
	}

	// The registry opens its own listener; checking the address first
	// names a port in use before it starts (and tells the port 0 picks).
	if port, err = freePort(host, port); err != nil {
		return fmt.Errorf("listening on %s: %w", opts.Listen, unwrapListen(err))
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	config := &configuration.Configuration{}
	config.Log.Level = configuration.Loglevel(level)
	config.Log.AccessLog.Disabled = !opts.AccessLog
	config.HTTP.Addr = addr
	config.HTTP.Secret, err = randomSecret()
	if err != nil {
		return err
	}
	config.HTTP.TLS.Certificate, config.HTTP.TLS.Key = opts.TLSCert, opts.TLSKey
	config.Storage = configuration.Storage{
		driverName: configuration.Parameters{treeParameter: t},
		"maintenance": configuration.Parameters{
			"readonly":      map[any]any{"enabled": true},
			"uploadpurging": map[any]any{"enabled": false},
		},
		"redirect": configuration.Parameters{"disable": true},
	}
	if opts.Htpasswd != "" {
		config.Auth = configuration.Auth{"htpasswd": configuration.Parameters{"realm": "microshift-compose", "path": opts.Htpasswd}}
	}
	// The registry exports OpenTelemetry traces to an OTLP collector on
	// localhost unless told otherwise (distribution issue 4270); a site
	// without a registry has no collector. OTEL_TRACES_EXPORTER set by the
	// user still wins.
	if os.Getenv("OTEL_TRACES_EXPORTER") == "" {
		os.Setenv("OTEL_TRACES_EXPORTER", "none")
	}
	reg, err := newRegistry(ctx, config)
	if err != nil {
		return err
	}

	served := &Served{Host: displayHost(host, port), URL: "http://" + displayHost(host, port), Images: images, Blobs: len(content.Blobs), Missing: len(content.Missing)}
	if opts.TLSCert != "" {
		served.URL = "https://" + served.Host
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- reg.ListenAndServe() }()
	if err := waitListening(ctx, dialHost(host, port), opts.TLSCert != "", serveErr); err != nil {
		reg.Shutdown(context.Background())
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	if opts.Ready != nil {
		opts.Ready(served)
	}
	select {
	case err := <-serveErr:
		return fmt.Errorf("serving on %s: %w", addr, err)
	case <-ctx.Done():
	}
	// In-flight requests get less than the 3 s the CLI gives the work
	// after a signal, so that a clean stop is an exit 0.
	stopCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := reg.Shutdown(stopCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("stopping the registry: %w", err)
	}
	<-serveErr
	return nil
}

// newRegistry builds the registry; the library panics on configuration it
// cannot use, which becomes an error here (what it is given was checked
// already, so this is a backstop).
func newRegistry(ctx context.Context, config *configuration.Configuration) (reg *registry.Registry, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("starting the registry: %v", r)
		}
	}()
	reg, err = registry.NewRegistry(ctx, config)
	if err != nil {
		return nil, fmt.Errorf("starting the registry: %w", err)
	}
	return reg, nil
}

// plant puts every image into the tree under the repository mirror --to
// docker://REGISTRY/PREFIX pushes it to: the manifests by digest, the
// blobs linked, the tag when the reference has one.
func plant(t *tree, content *airgap.LayoutContent, prefix string) ([]Image, error) {
	var out []Image
	tagged := map[string]string{} // repo:tag -> the image that has it
	for _, li := range content.Images {
		repo := li.Ref.Context().RepositoryStr()
		if prefix != "" {
			repo = prefix + "/" + repo
		}
		top := li.Manifests[len(li.Manifests)-1]
		im := Image{Name: li.Name, Repository: repo, Digest: top.Digest.String()}
		for _, m := range li.Manifests {
			t.putManifest(repo, m)
		}
		for _, b := range li.Blobs {
			t.putBlob(repo, b)
		}
		if named, err := reference.ParseNormalizedNamed(li.Name); err == nil {
			if tg, ok := named.(reference.Tagged); ok {
				im.Tag = tg.Tag()
			}
		}
		if im.Tag != "" {
			key := repo + ":" + im.Tag
			if other, ok := tagged[key]; ok {
				if d, _ := t.tagOf(repo, im.Tag); d != im.Digest {
					return nil, fmt.Errorf("%s and %s would both be served as %s with different digests: serve them from separate layouts or with different --prefix", other, li.Name, key)
				}
			}
			tagged[key] = li.Name
			t.putTag(repo, im.Tag, top.Digest)
		}
		out = append(out, im)
	}
	return out, nil
}

func parseListen(listen string) (host string, port int, err error) {
	h, p, err := net.SplitHostPort(listen)
	if err != nil {
		return "", 0, fmt.Errorf("listen address %q: want HOST:PORT, as in 127.0.0.1:5000 (%v)", listen, err)
	}
	port, err = strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("listen address %q: port %q is not a number from 0 to 65535", listen, p)
	}
	if h != "" && net.ParseIP(h) == nil {
		if _, err := net.DefaultResolver.LookupHost(context.Background(), h); err != nil {
			return "", 0, fmt.Errorf("listen address %q: %v", listen, err)
		}
	}
	return h, port, nil
}

// checkPrefix checks --prefix as mirror checks the PREFIX of
// docker://REGISTRY/PREFIX (a registries.conf mirror location).
func checkPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if _, _, err := airgap.ParseRegistryPrefix("localhost:5000/" + prefix); err != nil {
		return err // it names the prefix
	}
	if _, err := name.NewRepository("localhost:5000/"+prefix+"/x", name.StrictValidation); err != nil {
		return fmt.Errorf("prefix %q: %v", prefix, err)
	}
	return nil
}

// checkTLS loads the certificate and key as the registry will, so that a
// file that does not parse is named before anything listens.
func checkTLS(certFile, keyFile string) error {
	switch {
	case certFile == "" && keyFile == "":
		return nil
	case certFile == "":
		return errors.New("a TLS key without a certificate: give both")
	case keyFile == "":
		return errors.New("a TLS certificate without a key: give both")
	}
	for _, f := range []string{certFile, keyFile} {
		st, err := os.Stat(f)
		if err != nil {
			return fmt.Errorf("reading %s: %w", f, unwrapPath(err))
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("reading %s: not a regular file", f)
		}
	}
	if _, err := tls.LoadX509KeyPair(certFile, keyFile); err != nil {
		return fmt.Errorf("loading the TLS certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func randomSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making the registry's HTTP secret: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// freePort checks that port is free on host, or asks the system for a
// free one when port is 0.
func freePort(host string, port int) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func unspecified(host string) bool {
	ip := net.ParseIP(host)
	return host == "" || (ip != nil && ip.IsUnspecified())
}

func displayHost(host string, port int) string {
	if unspecified(host) {
		host = "localhost"
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

func dialHost(host string, port int) string {
	switch {
	case host == "::":
		host = "::1"
	case unspecified(host):
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// waitListening returns once addr accepts connections, or with the
// registry's error if it stopped first (a port in use, a certificate it
// cannot load).
func waitListening(ctx context.Context, addr string, withTLS bool, serveErr chan error) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-serveErr:
			serveErr <- err
			return unwrapListen(err)
		case <-ctx.Done():
			return context.Cause(ctx)
		default:
		}
		var c net.Conn
		var err error
		if withTLS {
			// A whole handshake (the certificate is the one we loaded;
			// nothing is trusted from it), so that the server does not
			// log a failed one.
			c, err = tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
		} else {
			c, err = net.DialTimeout("tcp", addr, time.Second)
		}
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the registry did not answer within 30s: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// unwrapListen shortens "listen tcp 127.0.0.1:5000: bind: address already
// in use" to its cause (the caller names the address).
func unwrapListen(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		var se *os.SyscallError
		if errors.As(oe.Err, &se) {
			return se.Err
		}
		return oe.Err
	}
	return err
}
