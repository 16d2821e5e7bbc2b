package compose_test

import (
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/plan"
)

// The inputs step alone: the plan records the request, catalog, release
// and knowledge it was resolved from, and its ID is of them: the same
// request gives the same ID, another request another.
func TestStepInputs(t *testing.T) {
	rel := stepRelease(t, "5.0.0", false)
	id := func(req compose.Request) (string, *plan.Inputs) {
		t.Helper()
		p, err := runStep(t, "inputs", nil, rel, req, selectedPlan("full", "core", "net-a", "app"))
		checkStepErr(t, err, "")
		return p.ID, p.Inputs
	}
	full, in := id(compose.Request{Profile: "full"})
	if len(full) != 64 || strings.Trim(full, "0123456789abcdef") != "" || in == nil || in.Release == "" || in.Knowledge == "" {
		t.Fatalf("ID %q, inputs %+v", full, in)
	}
	if again, _ := id(compose.Request{Profile: "full"}); again != full {
		t.Errorf("the same request: ID %s, then %s", full, again)
	}
	if other, _ := id(compose.Request{Profile: "full", With: []string{"net-b"}}); other == full {
		t.Errorf("--with net-b left the ID %s", full)
	}
}
