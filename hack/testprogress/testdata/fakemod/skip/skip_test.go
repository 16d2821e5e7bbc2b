package skip

import "testing"

func TestRuns(t *testing.T) {}

func TestSkipped(t *testing.T) { t.Skip("needs podman") }

func TestSkippedSubtest(t *testing.T) {
	t.Run("inner", func(t *testing.T) { t.Skipf("needs %s", "../shared") })
}
