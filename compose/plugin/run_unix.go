//go:build unix

package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Run runs "plugin api-version" and then "plugin run" in dir with exactly
// env as environment, and returns what run printed on stdout. Each
// invocation gets opts.Timeout. The plugin runs in a session and process
// group of its own, and when it exits, times out or overflows its output,
// every process it started is killed, those that started sessions of
// their own included (see contain). Failures are *Error values wrapping a
// sentinel.
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
	mu       sync.Mutex
	buf      []byte
	limit    int64
	over     bool
	overflow func()
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.over {
		return len(p), nil
	}
	if int64(len(c.buf)+len(p)) > c.limit {
		c.over = true
		go c.overflow()
		return len(p), nil
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// outcome is how a contained plugin ended.
type outcome struct {
	// startErr: the plugin could not be started.
	startErr string
	exited   bool
	code     int
	signal   syscall.Signal
	// left is how many processes it left running that were killed.
	left int
}

// contained is a started plugin.
type contained interface {
	// wait returns once the plugin and every process it started are gone
	// (or could not be killed).
	wait() outcome
	// kill kills the plugin and every process it started; wait then
	// returns.
	kill()
	// complete reports whether every process it started was killed, so
	// that its stdout and stderr reach their end.
	complete() bool
}

// drainGrace is how long output pipes may stay open after the plugin and
// its processes are gone: only a process that escaped being killed holds
// them (never where contain has a reaper).
const drainGrace = 2 * time.Second

func invoke(ctx context.Context, dir string, env []string, command string, opts Options) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, &Error{Command: command, Kind: ErrFailed, Detail: "could not be started: " + err.Error()}
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, &Error{Command: command, Kind: ErrFailed, Detail: "could not be started: " + err.Error()}
	}
	p, err := contain(dir, env, command, outW, errW)
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, &Error{Command: command, Kind: ErrFailed, Detail: "could not be started: " + unwrapExec(err)}
	}
	stdout := &capped{limit: opts.MaxOutput, overflow: p.kill}
	stderr := &lastLine{log: opts.Logger, command: command, limit: opts.MaxOutput}
	var readers sync.WaitGroup
	for _, c := range []struct {
		r *os.File
		w io.Writer
	}{{outR, stdout}, {errR, stderr}} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			_, _ = io.Copy(c.w, c.r)
		}()
	}
	done := make(chan outcome, 1)
	go func() { done <- p.wait() }()
	var res outcome
	select {
	case res = <-done:
	case <-ctx.Done():
		p.kill()
		res = <-done
	}
	// Every process holding the pipes is gone: they reach their end at
	// once. Only where a process escaped (no reaper) may they stay open.
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	escaped := false
	select {
	case <-drained:
	case <-time.After(drainGrace):
		escaped = true
		outR.SetReadDeadline(time.Now())
		errR.SetReadDeadline(time.Now())
		<-drained
	}
	outR.Close()
	errR.Close()
	stderr.flush()
	fail := func(kind error, detail string) error {
		return &Error{Command: command, Kind: kind, Detail: detail, Stderr: stderr.last}
	}
	if res.left > 0 {
		opts.Logger.Warn("plugin left processes running; killed them", "command", command, "processes", res.left)
	}
	switch {
	case stdout.over:
		return nil, fail(ErrFailed, fmt.Sprintf("wrote more than %d bytes to stdout; killed it", opts.MaxOutput))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fail(ErrTimeout, fmt.Sprintf("did not finish within %s (raise --plugin-timeout); killed it and every process it started", opts.Timeout))
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case res.startErr != "":
		return nil, fail(ErrFailed, "could not be started: "+res.startErr)
	case !res.exited && res.signal != 0:
		return nil, fail(ErrFailed, fmt.Sprintf("crashed (killed by signal %s: %s)", unix.SignalName(res.signal), res.signal))
	case !res.exited:
		return nil, fail(ErrFailed, "failed: its runner stopped without reporting how the plugin ended")
	case res.code == 1:
		return nil, fail(ErrPrecondition, "exit 1")
	case res.code == 2:
		return nil, fail(ErrConfig, "exit 2")
	case res.code != 0:
		return nil, fail(ErrFailed, fmt.Sprintf("failed (exit %d)", res.code))
	case escaped || !p.complete():
		return nil, fail(ErrFailed, "exited, but a process it started kept its output open and could not be killed")
	}
	return stdout.buf, nil
}

// direct runs the plugin itself in a new session (its own process group)
// and, once it exits or is killed, kills that process group. A descendant
// that started a session of its own escapes this; contain uses a reaper
// where the kernel offers one.
type direct struct {
	cmd *exec.Cmd
	mu  sync.Mutex
}

// startDirect starts the plugin itself, in a new session.
func startDirect(dir string, env []string, command string, stdout, stderr *os.File) (contained, error) {
	cmd := exec.Command(filepath.Join(dir, PluginFile), command)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &direct{cmd: cmd}, nil
}

func (d *direct) wait() outcome {
	err := d.cmd.Wait()
	// Reap what the plugin left behind in its group, even on success.
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	return outcomeOf(d.cmd.ProcessState, err)
}

func (d *direct) kill() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cmd.Process != nil {
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	}
}

func (d *direct) complete() bool { return true }

// outcomeOf reads how a process ended.
func outcomeOf(st *os.ProcessState, err error) outcome {
	if st == nil {
		if err != nil {
			return outcome{startErr: unwrapExec(err)}
		}
		return outcome{}
	}
	ws, ok := st.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled():
		return outcome{signal: ws.Signal()}
	case ok && ws.Exited():
		return outcome{exited: true, code: ws.ExitStatus()}
	}
	return outcome{exited: st.Exited(), code: st.ExitCode()}
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
