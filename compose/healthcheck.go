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

// Validate checks the timeout: whole seconds, 1s to MaxHealthCheckTimeout.
func (o HealthCheckOptions) Validate() error {
	if o.Timeout == 0 {
		return nil
	}
	if o.Timeout < time.Second || o.Timeout > MaxHealthCheckTimeout || o.Timeout%time.Second != 0 {
		return fmt.Errorf("--health-check-timeout %s: want whole seconds from 1s to %s", o.Timeout, MaxHealthCheckTimeout)
	}
	return nil
}
