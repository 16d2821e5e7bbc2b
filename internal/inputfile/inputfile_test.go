package inputfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(small, []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, make([]byte, 11), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Read("config", small, 10); err != nil || string(got) != "a: 1\n" {
		t.Errorf("Read(small) = %q, %v", got, err)
	}
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "nope"), "config " + filepath.Join(dir, "nope") + " does not exist"},
		{dir, "config " + dir + " is not a regular file"},
		{big, big + ": file is larger than 10 bytes"},
	} {
		if _, err := Read("config", tc.path, 10); err == nil || err.Error() != tc.want {
			t.Errorf("Read(%s) = %v, want %q", tc.path, err, tc.want)
		}
	}
	unreadable := filepath.Join(dir, "unreadable")
	if err := os.WriteFile(unreadable, []byte("x"), 0o000); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 { // root reads it anyway
		if _, err := Read("config", unreadable, 10); err == nil || err.Error() != "reading config "+unreadable+": permission denied" {
			t.Errorf("Read(unreadable) = %v", err)
		}
	}
}
