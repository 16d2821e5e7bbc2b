package upstream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Git reads a MicroShift git directory (bare or not) with git's plumbing:
// ls-tree to list, one cat-file --batch process to read blobs, rev-parse
// and for-each-ref for refs. Nothing is checked out and nothing is written.
type Git struct {
	dir string

	mu    sync.Mutex
	batch *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
}

// ErrNotFound is wrapped when a path does not exist at a commit.
var ErrNotFound = errors.New("not found")

// OpenGit checks that dir is a git directory and returns a reader for it.
func OpenGit(ctx context.Context, dir string) (*Git, error) {
	if dir == "" {
		return nil, errors.New("no MicroShift git directory given (MICROSHIFT=<git dir>)")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("opening git directory %s: %w", dir, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("opening git directory %s: not a directory", dir)
	}
	g := &Git{dir: abs}
	if _, err := g.run(ctx, "rev-parse", "--git-dir"); err != nil {
		return nil, fmt.Errorf("%s is not a git directory: %w", dir, err)
	}
	return g, nil
}

// Close ends the cat-file process.
func (g *Git) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.batch == nil {
		return nil
	}
	g.in.Close()
	err := g.batch.Wait()
	g.batch = nil
	return err
}

func (g *Git) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir", g.dir}, args...)...)
	// No user or system config, no pager, no prompts: the same answers on
	// every machine.
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "LC_ALL=C")
	return cmd
}

func (g *Git) run(ctx context.Context, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := g.command(ctx, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("git %s: %s", args[0], msg)
	}
	return out, nil
}

// Commit resolves rev (a branch, tag or hash) to a full commit hash.
func (g *Git) Commit(ctx context.Context, rev string) (string, error) {
	if strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("resolving %q: not a revision", rev)
	}
	out, err := g.run(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("resolving %s: no such commit in %s", rev, g.dir)
	}
	return strings.TrimSpace(string(out)), nil
}

// Branches lists the local branches (refs/heads) and their commits.
func (g *Git) Branches(ctx context.Context) (map[string]string, error) {
	out, err := g.run(ctx, "for-each-ref", "--format=%(refname:strip=2) %(objectname)", "refs/heads/")
	if err != nil {
		return nil, err
	}
	heads := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, commit, ok := strings.Cut(line, " ")
		if ok {
			heads[name] = commit
		}
	}
	return heads, nil
}

// List returns the paths of the files under dir at commit, sorted.
func (g *Git) List(ctx context.Context, commit, dir string) ([]string, error) {
	out, err := g.run(ctx, "ls-tree", "-r", "-z", "--name-only", "--full-tree", commit, "--", dir)
	if err != nil {
		return nil, fmt.Errorf("listing %s at %s: %w", dir, short(commit), err)
	}
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// Read returns the file at path at commit; ErrNotFound when it is not there.
func (g *Git) Read(ctx context.Context, commit, path string) ([]byte, error) {
	if strings.ContainsAny(path, "\n\x00") {
		return nil, fmt.Errorf("reading %q: not a path", path)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.batch == nil {
		// The process outlives ctx's request: it serves every read.
		cmd := g.command(context.WithoutCancel(ctx), "cat-file", "--batch")
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("starting git cat-file: %w", err)
		}
		g.batch, g.in, g.out = cmd, in, bufio.NewReader(out)
	}
	if _, err := fmt.Fprintf(g.in, "%s:%s\n", commit, path); err != nil {
		return nil, fmt.Errorf("reading %s at %s: %w", path, short(commit), err)
	}
	header, err := g.out.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("reading %s at %s: git cat-file: %w", path, short(commit), err)
	}
	fields := strings.Fields(header)
	if len(fields) == 2 && fields[1] == "missing" {
		return nil, fmt.Errorf("%s at %s: %w", path, short(commit), ErrNotFound)
	}
	if len(fields) != 3 {
		return nil, fmt.Errorf("reading %s at %s: git cat-file: unexpected answer %q", path, short(commit), strings.TrimSpace(header))
	}
	size, err := strconv.ParseInt(fields[2], 10, 64)
	if err != nil || size < 0 || size > maxFile {
		return nil, fmt.Errorf("reading %s at %s: %s bytes is more than the generator reads (%d)", path, short(commit), fields[2], maxFile)
	}
	data := make([]byte, size+1) // and the newline after it
	if _, err := io.ReadFull(g.out, data); err != nil {
		return nil, fmt.Errorf("reading %s at %s: git cat-file: %w", path, short(commit), err)
	}
	if fields[1] != "blob" {
		return nil, fmt.Errorf("reading %s at %s: a %s, not a file", path, short(commit), fields[1])
	}
	return data[:size], nil
}

// maxFile bounds a file the generator reads: the largest it reads (the
// config OpenAPI spec, the RPM spec) are tens of kilobytes.
const maxFile = 16 << 20

// short is a commit's 12-character abbreviation, as the data records it.
func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
