package panic

import "testing"

func TestBefore(t *testing.T) {}

func TestPanics(t *testing.T) {
	var m map[string]int
	m["boom"] = 1
}

func TestNeverRuns(t *testing.T) {}
