package fail

import (
	"fmt"
	"testing"
)

func TestPasses(t *testing.T) { t.Log("not printed: this test passed") }

func TestFails(t *testing.T) {
	t.Log("printed: the test failed")
	t.Errorf("got %d, want %d", 1, 2)
}

func TestSubtest(t *testing.T) {
	t.Run("ok", func(t *testing.T) { t.Log("not printed: this subtest passed") })
	t.Run("broken", func(t *testing.T) { t.Fatal("the broken subtest") })
}

func TestPrints(t *testing.T) {
	fmt.Println("printed on stdout by a failing test")
	t.Fail()
}
