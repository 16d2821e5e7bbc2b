package airgap

import (
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes an exclusive, non-blocking lock on f; the kernel drops it
// when the process exits, however it exits.
func tryLock(f *os.File) (bool, error) {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err == unix.EWOULDBLOCK {
		return false, nil
	}
	return err == nil, err
}
