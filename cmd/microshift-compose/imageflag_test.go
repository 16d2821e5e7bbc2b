package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestImageFlagsOneCharacterRepository: a repository of one character
// (registry.example.com/m:5.0), which podman takes, is taken by every flag
// that names an image or a registry prefix; what podman refuses is
// refused.
func TestImageFlagsOneCharacterRepository(t *testing.T) {
	const digest = "@sha256:" + "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
	for _, tc := range []struct {
		ref, want string // want: the error, "" for none
	}{
		{"registry.example.com/m:5.0", ""},
		{"registry.example.com:5000/0" + digest, ""},
		{"registry.example.com/m/os:5.0", ""},
		{"registry.example.com/M:5.0", "not a reference containers/image takes: invalid reference format: repository name must be lowercase"},
		{"registry.example.com/_:5.0", "not a reference containers/image takes"},
		{"registry.example.com/m:-5.0", "not a reference containers/image takes"},
		{"m:5.0", "is not an image reference"},
	} {
		for _, flag := range []string{"--bootc-base", "--bootc-image"} {
			err := checkImageFlag(flag, tc.ref)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), flag)) {
				t.Errorf("checkImageFlag(%s, %q) = %v, want %q", flag, tc.ref, err, tc.want)
			}
		}
		if strings.Contains(tc.ref, "@") {
			if err := checkExtraImage(tc.ref, false); (err == nil) != (tc.want == "") {
				t.Errorf("checkExtraImage(%q) = %v", tc.ref, err)
			}
		}
	}

	// Through the commands: the image, the base and the mirror's prefix
	// of one character reach the composition file as given.
	dir := t.TempDir()
	fileFixtures(t, dir)
	out := mustRun(t, "build", "--profile", "minimal", "--arch", "x86_64", "--bootc", "--bootc-base", "registry.example.com/b:9.8",
		"--kickstart", "--bootc-image", "registry.example.com/m:5.0", "--user", "admin", "--ssh-key", filepath.Join(dir, "admin.pub"),
		"--mirror-registry", "registry.example.com/r", "--print-file")
	for _, want := range []string{`base = "registry.example.com/b:9.8"`, `bootc_image = "registry.example.com/m:5.0"`, `mirror = "registry.example.com/r"`} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("build --print-file lacks %s:\n%s", want, out)
		}
	}
}
