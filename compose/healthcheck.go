package compose

import (
	"fmt"
	"time"
)

// MaxHealthCheckTimeout bounds --health-check-timeout: MicroShift's own
// bound on its greenboot wait (MICROSHIFT_WAIT_TIMEOUT_SEC, 60..9999).
const MaxHealthCheckTimeout = 9999 * time.Second

// HealthCheckOptions are how the device checks the plan's workloads. The
// zero value writes the check with greenboot's own wait.
type HealthCheckOptions struct {
	// Disabled leaves the check out (--no-health-checks).
	Disabled bool
	// Timeout is how long each wait may take, in whole seconds; 0 is
	// greenboot's own (get_wait_timeout: MICROSHIFT_WAIT_TIMEOUT_SEC of
	// /etc/greenboot/greenboot.conf, default 600s, times the boot attempt).
	Timeout time.Duration
}

// CheckHealthCheckTimeout is the rule of a health check's timeout: 0
// (greenboot's own wait) or whole seconds from 1s to
// MaxHealthCheckTimeout. The message says the bounds in seconds, as
// MicroShift's MICROSHIFT_WAIT_TIMEOUT_SEC does; the caller names the
// value as the user wrote it.
func CheckHealthCheckTimeout(d time.Duration) error {
	if d == 0 {
		return nil
	}
	if d < time.Second || d > MaxHealthCheckTimeout || d%time.Second != 0 {
		return fmt.Errorf("want whole seconds from 1s to %ds", MaxHealthCheckTimeout/time.Second)
	}
	return nil
}
