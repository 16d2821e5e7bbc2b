//go:build unix

package write

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive flock on a directory, waiting for it when
// wait, else failing at once when another process holds it. The lock goes
// with the process: a build killed with SIGKILL holds none.
func lockDir(dir string, wait bool) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		err = unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
