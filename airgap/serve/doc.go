// Package serve serves an OCI image layout or archive read-only over the
// OCI distribution API, for a site that has no registry: the registry is
// CNCF distribution (distribution/distribution/v3) used as a library: its
// handlers (handlers.NewApp), htpasswd authentication and read-only
// maintenance mode as it configures them, in an HTTP server of serve's own
// (header, request and idle timeouts, a bound on headers; TLS 1.2 or
// later), which spares every command the registry package's OpenTelemetry
// exporters and gRPC. The one piece of our own is a storage driver, the
// library's extension point, that presents the layout (read in place
// through airgap.ReadLayout, an archive never unpacked) as the registry's
// on-disk storage layout: each image under the repository `mirror --to
// docker://REGISTRY/PREFIX` pushes it to, by digest and, when its
// reference has one, by tag.
//
// It must not write anything: not to the layout, not to a temporary
// directory; it holds no cobra and prints nothing (the caller is told the
// address and the images through Options.Ready).
package serve
