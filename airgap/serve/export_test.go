package serve

import "time"

// SetTimeouts sets the server's header, request and idle timeouts for a
// test, and returns what puts them back.
func SetTimeouts(header, request, idle time.Duration) (restore func()) {
	h, r, i := headerTimeout, requestTimeout, idleTimeout
	headerTimeout, requestTimeout, idleTimeout = header, request, idle
	return func() { headerTimeout, requestTimeout, idleTimeout = h, r, i }
}

// MaxHeaderBytes is the server's bound on a request's headers.
const MaxHeaderBytes = maxHeaderBytes
