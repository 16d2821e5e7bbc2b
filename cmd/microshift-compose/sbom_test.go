package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestBuildSBOMSourceDateEpoch: build stamps the SBOM with
// SOURCE_DATE_EPOCH and the tool's version; a malformed value is refused
// in one line before anything is written.
func TestBuildSBOMSourceDateEpoch(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	mustRun(t, "build", "--profile", "full", "--arch", "x86_64", "--release", "4.19", "--output", out)
	data, err := os.ReadFile(filepath.Join(out, "sbom.spdx.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		CreationInfo struct {
			Created  string   `json:"created"`
			Creators []string `json:"creators"`
		} `json:"creationInfo"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.CreationInfo.Created != "2023-11-14T22:13:20Z" {
		t.Errorf("created = %s, want SOURCE_DATE_EPOCH's 2023-11-14T22:13:20Z", doc.CreationInfo.Created)
	}
	if want := "Tool: microshift-compose-" + versionString(); len(doc.CreationInfo.Creators) != 1 || doc.CreationInfo.Creators[0] != want {
		t.Errorf("creators = %v, want [%s]", doc.CreationInfo.Creators, want)
	}

	bad := filepath.Join(t.TempDir(), "bad")
	t.Setenv("SOURCE_DATE_EPOCH", "last tuesday")
	_, stderr, code := runCLI(t, "build", "--profile", "minimal", "--arch", "x86_64", "--release", "4.19", "--output", bad)
	if code != exitError || stderr != "error: SOURCE_DATE_EPOCH \"last tuesday\" is not a number of seconds since 1970-01-01\n" {
		t.Errorf("build with a bad SOURCE_DATE_EPOCH: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("build with a bad SOURCE_DATE_EPOCH wrote %s (%v)", bad, err)
	}
}
