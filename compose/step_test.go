package compose_test

import (
	"os"
	"slices"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose"
)

// The steps run in this order (compose/resolve.go), and each has its own
// step_<name>.go and step_<name>_test.go.
func TestStepOrder(t *testing.T) {
	want := []string{"request", "target", "version", "upgrade", "select", "check", "hardening", "capabilities", "images", "operators", "config",
		"devicefiles", "manifests", "files", "unused", "packages", "packagefiles", "services", "inputs"}
	if got := compose.StepNames(); !slices.Equal(got, want) {
		t.Fatalf("steps = %q\nwant    %q", got, want)
	}
	for _, n := range want {
		for _, f := range []string{"step_" + n + ".go", "step_" + n + "_test.go"} {
			if _, err := os.Stat(f); err != nil {
				t.Errorf("step %s: %v", n, err)
			}
		}
	}
}
