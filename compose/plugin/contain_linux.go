//go:build linux

package plugin

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/microshift-compose/microshift-compose/internal/text"
)

// reaperArg makes this very binary a plugin's reaper (see contain): any
// program that links this package can be one, tests included.
const reaperArg = "__microshift-compose-plugin-reaper"

func init() {
	if len(os.Args) == 5 && os.Args[1] == reaperArg {
		parent, _ := strconv.Atoi(os.Args[2])
		os.Exit(reap(parent, os.Args[3], os.Args[4]))
	}
}

// contain starts the plugin under a reaper: this binary again
// (/proc/self/exe), made the child subreaper of everything below it
// (PR_SET_CHILD_SUBREAPER), so that every process the plugin starts, in
// whatever session or process group, stays its descendant. The reaper runs
// the plugin in a new session, waits for it, then kills every descendant
// left, and reports on a pipe of its own (fd 3) how the plugin ended. The
// plugin's stdout and stderr are the pipes given, and reach their end as
// soon as the reaper is done: a background process holding them is killed,
// not waited for. The reaper dies with this process (PR_SET_PDEATHSIG,
// handled by killing the plugin's processes first).
func contain(dir string, env []string, command string, stdout, stderr *os.File) (contained, error) {
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/proc/self/exe", reaperArg, strconv.Itoa(os.Getpid()), filepath.Join(dir, PluginFile), command)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, stdout, stderr
	cmd.ExtraFiles = []*os.File{statusW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	err = cmd.Start()
	statusW.Close()
	if err != nil {
		statusR.Close()
		// No /proc to re-execute from (a bare chroot): run it directly.
		return startDirect(dir, env, command, stdout, stderr)
	}
	r := &reaper{cmd: cmd, statusDone: make(chan struct{}), exited: make(chan struct{})}
	go r.readStatus(statusR)
	return r, nil
}

// reaper is the parent's handle on a reaper process.
type reaper struct {
	cmd        *exec.Cmd
	statusDone chan struct{}
	exited     chan struct{}
	killOnce   sync.Once

	mu        sync.Mutex
	pluginPid int
	res       outcome
	reported  bool
	finished  bool // every descendant was killed
}

// readStatus reads the reaper's report: "pid N", then "start REASON" or
// "exit EXITED CODE SIGNAL LEFT COMPLETE".
func (r *reaper) readStatus(f *os.File) {
	defer close(r.statusDone)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		r.mu.Lock()
		switch kind {
		case "pid":
			r.pluginPid, _ = strconv.Atoi(rest)
		case "start":
			r.res = outcome{startErr: rest}
			r.reported, r.finished = true, true
		case "exit":
			var exited, complete bool
			var code, sig, left int
			if _, err := fmt.Sscanf(rest, "%t %d %d %d %t", &exited, &code, &sig, &left, &complete); err == nil {
				r.res = outcome{exited: exited, code: code, signal: syscall.Signal(sig), left: left}
				r.reported, r.finished = true, complete
			}
		}
		r.mu.Unlock()
	}
}

func (r *reaper) wait() outcome {
	err := r.cmd.Wait()
	close(r.exited)
	<-r.statusDone
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.reported {
		// The reaper itself died (killed after a timeout that it did not
		// answer): take down the plugin's group at least.
		if r.pluginPid > 0 {
			_ = syscall.Kill(-r.pluginPid, syscall.SIGKILL)
		}
		return outcomeOf(r.cmd.ProcessState, err)
	}
	return r.res
}

// kill asks the reaper to kill the plugin and every process it started
// (SIGTERM, which it handles); a reaper that does not exit in time is
// killed with the plugin's process group.
func (r *reaper) kill() {
	r.killOnce.Do(func() {
		_ = syscall.Kill(r.cmd.Process.Pid, syscall.SIGTERM)
		go func() {
			select {
			case <-r.exited:
			case <-time.After(killGrace + time.Second):
				_ = syscall.Kill(r.cmd.Process.Pid, syscall.SIGKILL)
				r.mu.Lock()
				pid := r.pluginPid
				r.mu.Unlock()
				if pid > 0 {
					_ = syscall.Kill(-pid, syscall.SIGKILL)
				}
			}
		}()
	})
}

func (r *reaper) complete() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.finished
}

// killGrace bounds how long the reaper keeps killing processes that do not
// die (uninterruptible in the kernel).
const killGrace = 5 * time.Second

// reap is the reaper process: it runs the plugin and kills whatever the
// plugin leaves. It returns the reaper's exit code; how the plugin ended
// goes to fd 3.
func reap(parent int, plugin, command string) int {
	status := os.NewFile(3, "status")
	if status == nil {
		return 70
	}
	syscall.CloseOnExec(3) // the plugin must not hold the report open
	report := func(format string, args ...any) { fmt.Fprintf(status, format+"\n", args...) }
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		report("start cannot contain it: %s", text.OneLine(err.Error()))
		return 0
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if os.Getppid() != parent {
		return 0 // the caller died before PR_SET_PDEATHSIG took hold
	}
	cmd := exec.Command(plugin, command)
	cmd.Env = os.Environ()
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		report("start %s", text.OneLine(unwrapExec(err)))
		return 0
	}
	pid := cmd.Process.Pid
	report("pid %d", pid)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-sigs:
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		killTree(pid)
		<-done
	}
	left, complete := killTree(pid)
	o := outcomeOf(cmd.ProcessState, nil)
	report("exit %t %d %d %d %t", o.exited, o.code, int(o.signal), left, complete)
	return 0
}

// killTree kills every descendant of this process with SIGKILL until none
// is left (a process forked meanwhile is a descendant too: its parent's
// death makes it this subreaper's child) or killGrace passes, and reaps
// them. plugin, the reaper's own child, is left to its cmd.Wait. It
// returns how many processes it killed, not counting plugin, and whether
// none is left.
func killTree(plugin int) (killed int, complete bool) {
	self := os.Getpid()
	signaled := map[int]bool{}
	deadline := time.Now().Add(killGrace)
	for {
		living, zombies := descendants(self)
		for _, z := range zombies {
			if z != plugin {
				var ws syscall.WaitStatus
				_, _ = syscall.Wait4(z, &ws, syscall.WNOHANG, nil)
			}
		}
		if len(living) == 0 {
			delete(signaled, plugin)
			return len(signaled), true
		}
		if time.Now().After(deadline) {
			delete(signaled, plugin)
			return len(signaled), false
		}
		for _, p := range living {
			_ = syscall.Kill(p, syscall.SIGKILL)
			signaled[p] = true
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// descendants lists the processes below pid, from /proc: those running
// and the zombies among its own children (others are reaped by their
// parents, or become its children when their parents die).
func descendants(pid int) (living, zombies []int) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, nil
	}
	children := map[int][]int{}
	zombie := map[int]bool{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// "pid (comm) S ppid ...": comm may hold spaces and parentheses.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], p)
		if f[0] == "Z" || f[0] == "X" {
			zombie[p] = true
		}
	}
	queue := []int{pid}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, c := range children[cur] {
			if zombie[c] {
				if cur == pid {
					zombies = append(zombies, c)
				}
				continue
			}
			living = append(living, c)
			queue = append(queue, c)
		}
	}
	return living, zombies
}
