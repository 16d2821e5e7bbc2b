//go:build !unix

package plugin

import "context"

// Run is not supported here: plugins need Unix process groups.
func Run(ctx context.Context, dir string, env []string, opts Options) ([]byte, error) {
	return nil, &Error{Command: "run", Kind: ErrFailed, Detail: "cannot run: plugins need a Unix system"}
}
