package pass

import "testing"

func TestOne(t *testing.T) { t.Log("a passing test's log is not printed") }

func TestTable(t *testing.T) {
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
		})
	}
}
