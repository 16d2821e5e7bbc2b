package registryclient

// AllowsInsecure reports whether host (host[:port]) may be reached without
// TLS verification or over plain HTTP: --tls-verify=false,
// --insecure-registry, registries.conf's insecure = true, or a loopback
// address. Callers that reach registries through containers/image's own
// client (signature lookups) set its DockerInsecureSkipTLSVerify from it.
func (o Options) AllowsInsecure(host string) bool {
	return o.insecureHost(host) || isLoopback(host)
}
