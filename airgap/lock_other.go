//go:build !linux

package airgap

import "os"

// tryLock is a no-op where flock is not available: concurrent mirrors into
// one layout are then the user's to avoid.
func tryLock(*os.File) (bool, error) { return true, nil }
