package compose_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose"
)

// The capabilities step alone: a capability without a provider gets the
// release's warning, or is refused where the device can never become
// healthy without it (4.18 without a CNI) unless --allow-red-boot.
func TestStepCapabilities(t *testing.T) {
	const (
		noCNI    = "no CNI: MicroShift deploys no pod network (network.cniPlugin: none), so DNS, the router and service-ca never become ready"
		noCNI418 = noCNI + ", and the 4.18 greenboot check always waits for OVN-Kubernetes pods: greenboot marks every boot red, even with a CNI of your own"
	)
	for _, tc := range []struct {
		name, base   string
		provided     bool
		allowRedBoot bool
		wantWarnings []string
		wantErr      string
	}{
		{name: "provided", base: "5.0.0", provided: true},
		{name: "no CNI on 5.0", base: "5.0.0", wantWarnings: []string{noCNI + " and greenboot marks the boot red unless the image brings a CNI of its own (a --catalog component that provides cni)"}},
		{name: "no CNI on 4.18", base: "4.18.7",
			wantErr: "release 4.18: the device never becomes healthy: " + noCNI418 + "; add a cni provider (--with net-a), or pass --allow-red-boot to build a device that rolls back on every boot"},
		{name: "no CNI on 4.18, allowed", base: "4.18.7", allowRedBoot: true, wantWarnings: []string{noCNI418 + " (built anyway: --allow-red-boot)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := selectedPlan("minimal", "core")
			if tc.provided {
				p.Capabilities["cni"] = "net-a"
			}
			got, err := runStep(t, "capabilities", nil, stepRelease(t, tc.base, false), compose.Request{Profile: "minimal", AllowRedBoot: tc.allowRedBoot}, p)
			if !checkStepErr(t, err, tc.wantErr) {
				if !errors.Is(err, compose.ErrRedBoot) {
					t.Errorf("err does not wrap ErrRedBoot")
				}
				return
			}
			if !slices.Equal(got.Warnings, tc.wantWarnings) {
				t.Errorf("warnings = %q\nwant       %q", got.Warnings, tc.wantWarnings)
			}
		})
	}
}
