package sizes

import (
	"errors"
	"fmt"
)

// Bounds. Neither the OCI image spec nor the distribution API bounds a
// descriptor's size (an int64); the largest real layers (AI model weights)
// are tens of GiB, so MaxBlob leaves a wide margin and still refuses a
// stated size no registry could serve. MaxTotal bounds any sum: a
// thousand of the largest blobs.
const (
	MaxBlob  int64 = 1 << 40 // 1 TiB
	MaxTotal int64 = 1 << 50 // 1 PiB
)

// ErrOutOfRange is wrapped by every error of this package.
var ErrOutOfRange = errors.New("size out of range")

// Check refuses n, the size what states (e.g. "blob sha256:… of IMAGE"),
// when it is negative or over limit.
func Check(what string, n, limit int64) error {
	switch {
	case n < 0:
		return fmt.Errorf("%s states a size of %d bytes: %w (a size cannot be negative)", what, n, ErrOutOfRange)
	case n > limit:
		return fmt.Errorf("%s states a size of %d bytes: %w (more than the %s a %s may have)", what, n, ErrOutOfRange, bound(limit), kind(limit))
	}
	return nil
}

func kind(limit int64) string {
	if limit == MaxTotal {
		return "total"
	}
	return "blob"
}

// CheckBlob is Check with MaxBlob.
func CheckBlob(what string, n int64) error { return Check(what, n, MaxBlob) }

// Add adds n to *sum. A negative n, or a sum that would pass MaxTotal (and
// so long before it could overflow), is an error and leaves *sum as it
// was; what names the sum in the message.
func Add(sum *int64, what string, n int64) error {
	if n < 0 {
		return fmt.Errorf("%s: adding %d bytes: %w (a size cannot be negative)", what, n, ErrOutOfRange)
	}
	if *sum < 0 || n > MaxTotal-*sum {
		return fmt.Errorf("%s: the sizes add up to more than %s: %w", what, bound(MaxTotal), ErrOutOfRange)
	}
	*sum += n
	return nil
}

// Sum adds up checked sizes and keeps the first error: for the loops that
// add many sizes to several totals, checking once at the end.
type Sum struct {
	err error
}

// Add adds n to *total, unless an earlier Add failed; what names the
// total in the message.
func (s *Sum) Add(total *int64, what string, n int64) {
	if s.err == nil {
		s.err = Add(total, what, n)
	}
}

// Blob checks n with CheckBlob, unless an earlier check failed, and
// reports whether it is in range.
func (s *Sum) Blob(what string, n int64) bool {
	if s.err == nil {
		s.err = CheckBlob(what, n)
	}
	return s.err == nil
}

// Err is the first error of the sum's checks, nil when all passed.
func (s *Sum) Err() error { return s.err }

// Human prints a byte count in IEC units with one decimal (1.5 GiB), as
// diff and footprint do.
func Human(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	neg := ""
	u := uint64(n)
	if n < 0 {
		neg, u = "-", uint64(-(n+1))+1
	}
	div, exp := uint64(unit), 0
	for m := u / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%s%.1f %ciB", neg, float64(u)/float64(div), "KMGTPE"[exp])
}

// bound prints a limit: whole units when it is a power of 1024 (1 TiB),
// else the bytes.
func bound(n int64) string {
	if n == 0 {
		return "0 B"
	}
	for i, unit := range []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"} {
		if n%1024 != 0 || i == 6 {
			return fmt.Sprintf("%d %s", n, unit)
		}
		n /= 1024
	}
	return ""
}
