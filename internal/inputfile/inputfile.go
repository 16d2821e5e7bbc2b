// Package inputfile reads the files users hand to the tool (config.yaml,
// lvmd.yaml, lock files, payloads, CSVs) with the same checks and messages
// everywhere: it must exist, be a regular file, and be no larger than its
// parser expects.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Read returns the contents of path, at most limit bytes. what names the
// kind of input in messages: "config", "lvmd config", "lock file".
func Read(what, path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s %s does not exist", what, path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", what, path, unwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", what, path, unwrapPath(err))
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s %s is not a regular file", what, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", what, path, unwrapPath(err))
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: file is larger than %d bytes", path, limit)
	}
	return data, nil
}

// unwrapPath drops fs.PathError's repetition of the path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
