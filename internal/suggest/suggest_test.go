package suggest

import "testing"

func TestClosest(t *testing.T) {
	profiles := []string{"full", "minimal", "networking-only", "storage-only"}
	for _, tc := range []struct {
		in, want string
	}{
		{"ful", "full"},
		{"fulll", "full"},
		{"minimla", "minimal"},
		{"storage-onyl", "storage-only"},
		{"flul", "full"},
		{"x", ""},
		{"everything", ""},
		{"", ""},
	} {
		if got := Closest(tc.in, profiles); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Closest("a", nil); got != "" {
		t.Errorf("Closest with no candidates = %q, want empty", got)
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"é", "e", 1},
		{"kyes", "keys", 1}, {"biuld", "build", 1}, {"ca", "abc", 3},
	} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
