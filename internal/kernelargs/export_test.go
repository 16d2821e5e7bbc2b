package kernelargs

// Refused and the tables are the package's rule, for its tests: why a key
// (as the kernel compares it) is refused, if it is.
var (
	Refused        = refused
	RefusedSystemd = refusedSystemd
	RefusedKeys    = refusedKeys
)
