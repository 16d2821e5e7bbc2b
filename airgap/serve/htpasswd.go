package serve

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"golang.org/x/crypto/bcrypt"
)

// maxHtpasswd bounds the htpasswd file read (a line per user).
const maxHtpasswd = 1 << 20

// checkHtpasswd reads the file as the registry's htpasswd access controller
// will, before anything listens: the library creates a missing file with a
// generated user of its own and accepts only bcrypt entries, so a missing
// file, a line without a colon or a user whose hash is not bcrypt (apr1,
// SHA, crypt: what htpasswd writes without -B) would lock every user out
// at the first pull instead. The messages name the line, never its hash.
func checkHtpasswd(file string) error {
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("reading the htpasswd file %s: %w", file, unwrapPath(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("reading the htpasswd file %s: not a regular file", file)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxHtpasswd+1))
	if err != nil {
		return fmt.Errorf("reading the htpasswd file %s: %w", file, err)
	}
	if len(data) > maxHtpasswd {
		return fmt.Errorf("the htpasswd file %s is larger than %d bytes", file, maxHtpasswd)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	users, line := 0, 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || t[0] == '#' {
			continue
		}
		user, hash, ok := strings.Cut(t, ":")
		if !ok || user == "" {
			return fmt.Errorf("%s:%d: not USER:HASH", file, line)
		}
		if _, err := bcrypt.Cost([]byte(hash)); err != nil {
			return fmt.Errorf("%s:%d: user %q: the hash is not bcrypt, the only kind the registry accepts (make it with htpasswd -B)", file, line, user)
		}
		users++
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: line too long", file, line+1)
		}
		return fmt.Errorf("reading the htpasswd file %s: %w", file, err)
	}
	if users == 0 {
		return fmt.Errorf("the htpasswd file %s has no users", file)
	}
	return nil
}
