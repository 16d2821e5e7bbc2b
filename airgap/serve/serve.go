package serve

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/containers/image/v5/docker/reference"
	"github.com/distribution/distribution/v3/configuration"
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd" // the htpasswd access controller
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/google/go-containerregistry/pkg/name"
	gorhandlers "github.com/gorilla/handlers"
	"github.com/sirupsen/logrus"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/imageref"
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

	// Listening first names a port in use before the registry starts
	// (and logs).
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", opts.Listen, unwrapListen(err))
	}
	defer ln.Close()
	port = ln.Addr().(*net.TCPAddr).Port

	config := &configuration.Configuration{}
	config.Log.Level = configuration.Loglevel(level)
	config.Log.AccessLog.Disabled = !opts.AccessLog
	config.HTTP.Secret, err = randomSecret()
	if err != nil {
		return err
	}
	// The catalog (GET /v2/_catalog, what prune docker:// lists) answers
	// pages of up to 1000 repositories, distribution's own default, which
	// only its configuration file parser sets.
	config.Catalog.MaxEntries = maxCatalogEntries
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
	logrus.SetLevel(logLevels[level])
	logrus.SetFormatter(&logrus.TextFormatter{TimestampFormat: time.RFC3339Nano})
	app, err := newApp(ctx, config)
	if err != nil {
		return err
	}
	defer app.Shutdown()
	var handler http.Handler = app
	if opts.AccessLog {
		handler = gorhandlers.CombinedLoggingHandler(os.Stdout, handler)
	}
	srv := newServer(handler)

	served := &Served{Host: displayHost(host, port), URL: "http://" + displayHost(host, port), Images: images, Blobs: len(content.Blobs), Missing: len(content.Missing)}
	serveErr := make(chan error, 1)
	if opts.TLSCert != "" {
		served.URL = "https://" + served.Host
		cert, err := tls.LoadX509KeyPair(opts.TLSCert, opts.TLSKey)
		if err != nil {
			return fmt.Errorf("loading the TLS certificate %s and key %s: %w", opts.TLSCert, opts.TLSKey, err)
		}
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
		go func() { serveErr <- srv.ServeTLS(ln, "", "") }()
	} else {
		go func() { serveErr <- srv.Serve(ln) }()
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
	if err := srv.Shutdown(stopCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("stopping the registry: %w", err)
	}
	srv.Close()
	<-serveErr
	return nil
}

// maxCatalogEntries is the most repositories a catalog page holds.
const maxCatalogEntries = 1000

// The server's bounds. serve is read-only: a request is a GET or HEAD
// with no body (a push is refused without reading one), so a client gets
// headerTimeout to send its headers and requestTimeout for the whole
// request, or the connection is closed; an idle keep-alive connection is
// closed after idleTimeout. No write timeout: a layer of gigabytes takes
// as long as the site's network takes.
var (
	headerTimeout  = 10 * time.Second
	requestTimeout = 30 * time.Second
	idleTimeout    = 2 * time.Minute
)

// maxHeaderBytes bounds a request's headers: a registry client sends a
// few short ones (basic auth, Accept, User-Agent).
const maxHeaderBytes = 64 << 10

// newServer is serve's HTTP server of handler.
func newServer(handler http.Handler) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: headerTimeout,
		ReadTimeout:       requestTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          log.New(logrus.StandardLogger().WriterLevel(logrus.DebugLevel), "", 0),
	}
}

// logLevels are the registry's log levels.
var logLevels = map[string]logrus.Level{"error": logrus.ErrorLevel, "warn": logrus.WarnLevel, "info": logrus.InfoLevel, "debug": logrus.DebugLevel}

// newApp builds distribution's registry application (its handlers, auth,
// storage over the tree); the library panics on configuration it cannot
// use, which becomes an error here (what it is given was checked
// already, so this is a backstop). The HTTP server around it is serve's
// own (newServer), which spares every command distribution's registry
// package and what it links (OpenTelemetry exporters, gRPC).
func newApp(ctx context.Context, config *configuration.Configuration) (app *handlers.App, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("starting the registry: %v", r)
		}
	}()
	return handlers.NewApp(ctx, config), nil
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
	if _, err := imageref.NewRepository("localhost:5000/"+prefix+"/x", name.StrictValidation); err != nil {
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
