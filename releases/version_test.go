package releases_test

import (
	"testing"

	"github.com/microshift-compose/microshift-compose/releases"
)

func TestBaseKind(t *testing.T) {
	for _, tc := range []struct{ base, want string }{
		{"4.18.7", releases.Shipped},
		{"5.0.0", releases.Shipped},
		{"4.18.0-0.nightly-2026-08-12-221652", releases.Nightly},
		{"5.0.0-0.nightly-arm64-2026-07-27-004356", releases.Nightly},
		{"4.19.0-rc.3", releases.Candidate},
		{"5.0.0-ec.2", releases.Candidate},
		{"4.20.0-0.okd-scos.ec.1", releases.Candidate},
		{"4.18.0-0.okd-2025-01-01", releases.Prerelease},
		{"4.18.7+build.5", releases.Prerelease},
		{"4.18", releases.Prerelease}, // not X.Y.Z: no RPM is published as "4.18"
		{"latest", releases.Unknown},
		{"", releases.Unknown},
	} {
		if got := releases.BaseKind(tc.base); got != tc.want {
			t.Errorf("BaseKind(%q) = %q, want %q", tc.base, got, tc.want)
		}
	}
}
