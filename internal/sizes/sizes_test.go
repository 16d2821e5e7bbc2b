package sizes_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/sizes"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string // "" for accepted
	}{
		{0, ""},
		{1, ""},
		{sizes.MaxBlob, ""},
		{-1, "blob sha256:ab of quay.io/x states a size of -1 bytes: size out of range (a size cannot be negative)"},
		{math.MinInt64, "states a size of -9223372036854775808 bytes"},
		{sizes.MaxBlob + 1, "blob sha256:ab of quay.io/x states a size of 1099511627777 bytes: size out of range (more than the 1 TiB a blob may have)"},
		{math.MaxInt64, "states a size of 9223372036854775807 bytes"},
	} {
		err := sizes.CheckBlob("blob sha256:ab of quay.io/x", tc.n)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckBlob(%d) = %v, want nil", tc.n, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, sizes.ErrOutOfRange)):
			t.Errorf("CheckBlob(%d) = %v, want %q", tc.n, err, tc.want)
		}
	}
}

func TestAdd(t *testing.T) {
	for _, tc := range []struct {
		sum, n int64
		want   int64
		err    string
	}{
		{0, 5, 5, ""},
		{sizes.MaxTotal - 1, 1, sizes.MaxTotal, ""},
		{sizes.MaxTotal, 1, sizes.MaxTotal, "the total: the sizes add up to more than 1 PiB"},
		{1, math.MaxInt64, 1, "add up to more than"},
		{math.MaxInt64, math.MaxInt64, math.MaxInt64, "add up to more than"},
		{-5, 1, -5, "add up to more than"},
		{3, -1, 3, "adding -1 bytes"},
	} {
		sum := tc.sum
		err := sizes.Add(&sum, "the total", tc.n)
		if sum != tc.want || (err == nil) != (tc.err == "") || err != nil && (!strings.Contains(err.Error(), tc.err) || !errors.Is(err, sizes.ErrOutOfRange)) {
			t.Errorf("Add(%d, %d) = %d, %v; want %d, %q", tc.sum, tc.n, sum, err, tc.want, tc.err)
		}
	}
}

// TestSumKeepsFirstError: after a failed check nothing more is added, and
// the first failure is the one reported.
func TestSumKeepsFirstError(t *testing.T) {
	var s sizes.Sum
	var a, b int64
	if !s.Blob("blob 1", 10) {
		t.Fatal("blob 1 refused")
	}
	s.Add(&a, "a", 10)
	if s.Blob("blob 2", -3) {
		t.Fatal("a negative blob accepted")
	}
	s.Add(&b, "b", 7)
	s.Blob("blob 3", math.MaxInt64)
	if a != 10 || b != 0 || s.Err() == nil || !strings.HasPrefix(s.Err().Error(), "blob 2 states a size of -3 bytes") {
		t.Errorf("a %d, b %d, err %v", a, b, s.Err())
	}
}

func TestHuman(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", sizes.MaxBlob: "1.0 TiB",
		-2048: "-2.0 KiB", math.MaxInt64: "8.0 EiB", math.MinInt64: "-8.0 EiB",
	} {
		if got := sizes.Human(n); got != want {
			t.Errorf("Human(%d) = %q, want %q", n, got, want)
		}
	}
}
