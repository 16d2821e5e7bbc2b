package atomicfile_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/atomicfile"
)

// crashEnv makes the test binary a helper that commits the files named in
// it and kills itself with SIGKILL after that many renames.
const crashEnv = "ATOMICFILE_TEST_CRASH_AFTER"

func TestMain(m *testing.M) {
	if n := os.Getenv(crashEnv); n != "" {
		after, _ := strconv.Atoi(n)
		dir := os.Getenv("ATOMICFILE_TEST_DIR")
		atomicfile.TestHookAfterRename = (func(i int) {
			if i == after {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		})
		err := atomicfile.Commit(filepath.Join(dir, "journal"), []atomicfile.File{
			{Path: filepath.Join(dir, "a.json"), Data: []byte("new a\n")},
			{Path: filepath.Join(dir, "b.json"), Data: []byte("new b\n")},
			{Path: filepath.Join(dir, "c.json"), Data: []byte("new c\n")},
		})
		if err != nil {
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestCommitKilled kills a commit with SIGKILL after 1 to 3 renames (and
// lets one finish: 4) and checks that the journal is there, and that
// Recover leaves every file new.
func TestCommitKilled(t *testing.T) {
	for after := 1; after <= 4; after++ {
		t.Run(strconv.Itoa(after), func(t *testing.T) {
			dir := t.TempDir()
			for _, n := range []string{"a", "b", "c"} {
				write(t, filepath.Join(dir, n+".json"), "old "+n+"\n", 0o640)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), crashEnv+"="+strconv.Itoa(after), "ATOMICFILE_TEST_DIR="+dir)
			err := cmd.Run()
			var ee *exec.ExitError
			killed := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
			journal := filepath.Join(dir, "journal")
			if after <= 3 {
				if !killed {
					t.Fatalf("helper = %v, want killed by SIGKILL", err)
				}
				if !atomicfile.Pending(journal) {
					t.Fatalf("killed after %d renames and no journal", after)
				}
				if got := read(t, filepath.Join(dir, "a.json")); got != "new a\n" {
					t.Fatalf("a.json = %q after the first rename", got)
				}
				if got := read(t, filepath.Join(dir, "c.json")); after < 3 && got != "old c\n" {
					t.Fatalf("c.json = %q before its rename", got)
				}
				// A second commit refuses while the journal is there.
				if err := atomicfile.Commit(journal, []atomicfile.File{{Path: filepath.Join(dir, "a.json"), Data: []byte("x")}}); !errors.Is(err, atomicfile.ErrInterrupted) {
					t.Errorf("Commit with a pending journal = %v, want ErrInterrupted", err)
				}
				n, err := atomicfile.Recover(journal)
				if err != nil || n != 3-after {
					t.Fatalf("Recover = %d, %v; want %d renames", n, err, 3-after)
				}
			}
			if after > 3 && err != nil {
				t.Fatalf("helper = %v, want a clean commit", err)
			}
			if atomicfile.Pending(journal) {
				t.Fatalf("journal still there")
			}
			for _, n := range []string{"a", "b", "c"} {
				p := filepath.Join(dir, n+".json")
				if got := read(t, p); got != "new "+n+"\n" {
					t.Errorf("%s = %q, want the new content", p, got)
				}
				if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
					t.Errorf("%s mode %v, want 0640 kept", p, st.Mode().Perm())
				}
			}
			if l := leftovers(t, dir); len(l) > 0 {
				t.Errorf("left %v", l)
			}
		})
	}
}

// TestRecoverBeforeCommitPoint: a commit killed while writing its
// temporary files leaves every file old and no journal; Recover removes
// the temporary files.
func TestRecoverBeforeCommitPoint(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.json"), "old\n", 0o644)
	write(t, filepath.Join(dir, ".a.json.tmp-123"), "half", 0o644)
	if n, err := atomicfile.Recover(filepath.Join(dir, "journal")); n != 0 || err != nil {
		t.Fatalf("Recover = %d, %v", n, err)
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("left %v", l)
	}
	if got := read(t, filepath.Join(dir, "a.json")); got != "old\n" {
		t.Errorf("a.json = %q", got)
	}
}

func TestRecoverDamagedJournal(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, "journal")
	write(t, journal, `{"version": 1, "files": [{"target": "a.json", "temp": ".a.json.tmp-1", "sha256": "00"}]}`, 0o644)
	write(t, filepath.Join(dir, "a.json"), "something else\n", 0o644)
	if _, err := atomicfile.Recover(journal); !errors.Is(err, atomicfile.ErrInterrupted) {
		t.Errorf("Recover(damaged) = %v, want ErrInterrupted", err)
	}
	write(t, journal, "{", 0o644)
	if _, err := atomicfile.Recover(journal); !errors.Is(err, atomicfile.ErrInterrupted) {
		t.Errorf("Recover(garbage) = %v, want ErrInterrupted", err)
	}
}

// TestRecoverRefusesForeignPaths: a journal planted in a directory (a
// release directory from someone else) cannot make Recover rename
// anything but the files beside it.
func TestRecoverRefusesForeignPaths(t *testing.T) {
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	write(t, victim, "precious\n", 0o644)
	for _, entry := range []string{
		`{"target": "` + victim + `", "temp": ".victim.tmp-1", "sha256": "x"}`,
		`{"target": "../victim", "temp": "..victim.tmp-1", "sha256": "x"}`,
		`{"target": "a.json", "temp": "` + filepath.Join(outside, ".a.json.tmp-1") + `", "sha256": "x"}`,
		`{"target": "a.json", "temp": "evil", "sha256": "x"}`,
	} {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "evil"), "evil\n", 0o644)
		journal := filepath.Join(dir, "journal")
		write(t, journal, `{"version": 1, "files": [`+entry+`]}`, 0o644)
		if _, err := atomicfile.Recover(journal); !errors.Is(err, atomicfile.ErrInterrupted) {
			t.Errorf("Recover(%s) = %v, want it refused", entry, err)
		}
		if got := read(t, victim); got != "precious\n" {
			t.Fatalf("Recover(%s) changed a file outside its directory", entry)
		}
	}
}

// FuzzRecover finishes arbitrary journals: never a panic, never a change
// outside the journal's directory, one-line errors, and the journal gone
// when it succeeds.
func FuzzRecover(f *testing.F) {
	f.Add([]byte(`{"version": 1, "files": [{"target": "a.json", "temp": ".a.json.tmp-1", "sha256": "` + sha("new\n") + `"}]}`))
	f.Add([]byte(`{"version": 1, "files": [{"target": "../victim", "temp": ".a.json.tmp-1", "sha256": "x"}]}`))
	f.Add([]byte(`{"version": 1, "files": []}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, journal []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, "dir")
		os.Mkdir(dir, 0o755)
		victim := filepath.Join(root, "victim")
		write(t, victim, "precious\n", 0o644)
		write(t, filepath.Join(dir, "a.json"), "old\n", 0o644)
		write(t, filepath.Join(dir, ".a.json.tmp-1"), "new\n", 0o644)
		jpath := filepath.Join(dir, "journal")
		write(t, jpath, string(journal), 0o644)
		_, err := atomicfile.Recover(jpath)
		if got := read(t, victim); got != "precious\n" {
			t.Fatalf("Recover changed a file outside its directory")
		}
		if entries, _ := os.ReadDir(root); len(entries) != 2 {
			t.Fatalf("Recover left %d entries beside its directory", len(entries))
		}
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		if atomicfile.Pending(jpath) {
			t.Fatalf("Recover succeeded and left the journal")
		}
	})
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
