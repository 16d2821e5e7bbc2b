//go:build unix

package plugin

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Run runs "plugin api-version" and then "plugin run" in dir with exactly
// env as environment, and returns what run printed on stdout. Each
// invocation gets opts.Timeout; on timeout the plugin's whole process
// group is killed. Failures are *Error values wrapping a sentinel.
func Run(ctx context.Context, dir string, env []string, opts Options) ([]byte, error) {
	opts = opts.withDefaults()
	// exec resolves a relative program path against the child's working
	// directory, which is dir itself.
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, &Error{Command: "api-version", Kind: ErrFailed, Detail: "could not be started: " + err.Error()}
	}
	dir = abs
	out, err := invoke(ctx, dir, env, "api-version", opts)
	if err != nil {
		return nil, err
	}
	if err := checkAPIVersion(out); err != nil {
		return nil, err
	}
	return invoke(ctx, dir, env, "run", opts)
}

// capped collects stdout up to limit bytes and calls overflow once beyond.
type capped struct {
	buf      []byte
	limit    int64
	over     bool
	overflow func()
}

func (c *capped) Write(p []byte) (int, error) {
	if c.over {
		return len(p), nil
	}
	if int64(len(c.buf)+len(p)) > c.limit {
		c.over = true
		c.overflow()
		return len(p), nil
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

func invoke(ctx context.Context, dir string, env []string, command string, opts Options) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, PluginFile), command)
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	killGroup := func() error {
		if cmd.Process == nil {
			return nil
		}
		// The negative pid is the process group: the plugin and whatever
		// it started.
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return nil
		}
		return err
	}
	cmd.Cancel = killGroup
	cmd.WaitDelay = 5 * time.Second
	stdout := &capped{limit: opts.MaxOutput, overflow: func() { _ = killGroup() }}
	stderr := &lastLine{log: opts.Logger, command: command, limit: opts.MaxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	// Reap what the plugin left behind in its group, even on success.
	_ = killGroup()
	stderr.flush()
	fail := func(kind error, detail string) error {
		return &Error{Command: command, Kind: kind, Detail: detail, Stderr: stderr.last}
	}
	switch {
	case stdout.over:
		return nil, fail(ErrFailed, fmt.Sprintf("wrote more than %d bytes to stdout; killed it", opts.MaxOutput))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fail(ErrTimeout, fmt.Sprintf("did not finish within %s (raise --plugin-timeout); killed its process group", opts.Timeout))
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err == nil:
		return stdout.buf, nil
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		return nil, fail(ErrFailed, "could not be started: "+unwrapExec(err))
	}
	ws, ok := exitErr.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled():
		return nil, fail(ErrFailed, fmt.Sprintf("crashed (killed by signal %s: %s)", unix.SignalName(ws.Signal()), ws.Signal()))
	case exitErr.ExitCode() == 1:
		return nil, fail(ErrPrecondition, "exit 1")
	case exitErr.ExitCode() == 2:
		return nil, fail(ErrConfig, "exit 2")
	}
	return nil, fail(ErrFailed, fmt.Sprintf("failed (exit %d)", exitErr.ExitCode()))
}

// unwrapExec keeps the reason of an exec error without repeating the path.
func unwrapExec(err error) string {
	var pe interface{ Unwrap() error }
	for errors.As(err, &pe) {
		inner := pe.Unwrap()
		if inner == nil {
			break
		}
		err = inner
	}
	return err.Error()
}
