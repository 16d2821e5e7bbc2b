package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMirrorBundleFlags: wrong --since, --image and --max-size are refused
// in one line, before any registry is reached, and nothing is written.
func TestMirrorBundleFlags(t *testing.T) {
	lock := filepath.Join(root(t), "testdata", "golden", "5.0", "minimal-x86_64", "compose.lock.json")
	work := t.TempDir()
	digest := "@sha256:" + strings.Repeat("a", 64)
	for _, tc := range []struct {
		name string
		args []string
		want string
		code int
	}{
		{"--since to a registry", []string{"--lock", lock, "--since", lock, "--to", "docker://mirror.example.com:5000/edge"},
			"--since writes a differential bundle to oci:DIR or oci-archive:FILE, which the site applies with 'mirror --from'; --to docker://mirror.example.com:5000/edge is not one", exitUsage},
		{"--since to dir:", []string{"--lock", lock, "--since", lock, "--to", "dir:{work}/d"},
			"--since writes a differential bundle to oci:DIR or oci-archive:FILE, which the site applies with 'mirror --from'; --to dir:{work}/d is not one", exitUsage},
		{"--max-size to a layout", []string{"--lock", lock, "--max-size", "700MB", "--to", "oci:{work}/o"},
			"--max-size cuts an oci-archive:FILE into parts; --to oci:{work}/o is not one", exitUsage},
		{"--max-size not a size", []string{"--lock", lock, "--max-size", "4 gigs", "--to", "oci-archive:{work}/a.tar"},
			`--max-size "4 gigs" is not a size (e.g. 4GiB, 700MB, 4000MB for FAT32 media)`, exitUsage},
		{"--max-size lowercase unit", []string{"--lock", lock, "--max-size", "4gib", "--to", "oci-archive:{work}/a.tar"},
			`--max-size "4gib" is not a size (e.g. 4GiB, 700MB, 4000MB for FAT32 media)`, exitUsage},
		{"--max-size too small", []string{"--lock", lock, "--max-size", "64KiB", "--to", "oci-archive:{work}/a.tar"},
			`--max-size "64KiB" is smaller than 1 MiB`, exitUsage},
		{"--image by tag", []string{"--lock", lock, "--image", "quay.io/example/os:4.19", "--to", "oci:{work}/o"},
			"--image quay.io/example/os:4.19 is not pinned by digest: name it as quay.io/example/os@sha256:… (podman push --digestfile, skopeo inspect), or add --allow-unpinned to copy what the tag names now", exitUsage},
		{"--image without a registry", []string{"--lock", lock, "--image", "example/os" + digest, "--to", "oci:{work}/o"},
			`--image "example/os` + digest + `" is not a full image reference (registry/repository@sha256:…)`, exitUsage},
		{"--image with credentials", []string{"--lock", lock, "--image", "robot:secret@quay.io/example/os" + digest, "--to", "oci:{work}/o"},
			"--image holds credentials (user:password@ before the registry): give them in the auth file (--authfile, podman login), not in the reference", exitUsage},
		{"--image without a plan", []string{"--from", "oci:{work}/layout", "--image", "quay.io/example/os" + digest, "--to", "oci:{work}/o"},
			"--image adds images beyond the plan; without --lock or --profile, every image of oci:{work}/layout is copied already", exitUsage},
		{"--since an archive without its transport", []string{"--lock", lock, "--since", "{work}/day1.tar", "--to", "oci-archive:{work}/a.tar"},
			"--since {work}/day1.tar: name a layout as oci:{work}/day1.tar or an archive as oci-archive:{work}/day1.tar (a bare path is a compose.lock.json)", exitUsage},
		{"--since a lock that is not there", []string{"--lock", lock, "--since", "{work}/old.lock.json", "--to", "oci-archive:{work}/a.tar"},
			"--since: lock file {work}/old.lock.json does not exist", exitError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"mirror"}
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "{work}", work))
			}
			stdout, stderr, code := runCLI(t, args...)
			want := "error: " + strings.ReplaceAll(tc.want, "{work}", work) + "\n"
			if code != tc.code || stdout != "" || stderr != want {
				t.Errorf("mirror %q = exit %d, stdout %q, stderr %q; want exit %d and %q", args[1:], code, stdout, stderr, tc.code, want)
			}
			entries, _ := os.ReadDir(work)
			if len(entries) != 0 {
				t.Errorf("a refused mirror wrote %v", entries)
			}
		})
	}
}
