package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestMatrixEmitHardening: --fips, --karg (in order) and --cis reach the
// emitted jobs' build arguments, and a build with those arguments has the
// composition ID the matrix planned; resolve and build of the same flags
// agree on it too.
func TestMatrixEmitHardening(t *testing.T) {
	line := runWarned(t, "matrix", "--profile", "minimal", "--arch", "x86_64", "--image-type", "qcow2", "--fips", "--karg", "b=2", "--karg", "a=1", "--cis", "level2", "--emit", "github")
	var m struct {
		Include []map[string]string `json:"include"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil || len(m.Include) != 1 {
		t.Fatalf("--emit github = %q: %v", line, err)
	}
	cell := m.Include[0]
	args := cell["build_args"]
	for _, want := range []string{" --fips", " --cis=level2", " --karg=b=2 --karg=a=1"} {
		if !strings.Contains(args, want) {
			t.Errorf("build_args %q lack %q", args, want)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	stdout := runWarned(t, append(append([]string{"build"}, strings.Fields(args)...), "--output", out, "--format", "json")...)
	var s struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(stdout), &s); err != nil || s.ID != cell["id"] {
		t.Errorf("build %s: ID %q (%v), want the planned %s", args, s.ID, err, cell["id"])
	}
	stdout = runWarned(t, "resolve", "--profile", "minimal", "--arch", "x86_64", "--fips", "--karg", "b=2", "--karg", "a=1", "--cis", "level2", "--output", "json")
	var lock struct {
		Hardening struct {
			FIPS       map[string]any `json:"fips"`
			KernelArgs []string       `json:"kernel_args"`
			CIS        struct {
				Profile string `json:"profile"`
			} `json:"cis"`
		} `json:"hardening"`
	}
	if err := json.Unmarshal([]byte(stdout), &lock); err != nil {
		t.Fatal(err)
	}
	h := lock.Hardening
	if h.FIPS == nil || strings.Join(h.KernelArgs, " ") != "b=2 a=1" || h.CIS.Profile != "xccdf_org.ssgproject.content_profile_cis" {
		t.Errorf("resolve's plan hardening = %+v", h)
	}
}
