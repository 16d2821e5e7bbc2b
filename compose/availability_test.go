package compose_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/releases"
)

// Availability says what build makes of one component: nil where a plan
// takes it with what it requires, ErrUnpinned where its images are named by
// tag only, and the resolver's refusal otherwise.
func TestAvailability(t *testing.T) {
	for _, tc := range []struct {
		name      string
		component string
		tagOnly   bool
		arch      releases.Arch
		want      string // "" for nil
		unpinned  bool
	}{
		{name: "taken with what it requires", component: "app", arch: releases.X86_64},
		{name: "its image named by tag", component: "net-a", tagOnly: true, arch: releases.X86_64, unpinned: true, want: "not pinned by digest"},
		{name: "conflicts with nothing it pulls in", component: "net-b", arch: releases.X86_64},
		{name: "an arch the release has no file for", component: "app", arch: releases.AArch64, want: "release-aarch64.json"},
		{name: "not in the catalog", component: "nope", arch: releases.X86_64, want: `"nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := compose.Availability(context.Background(), stepCatalog(), stepRelease(t, "5.0.0", tc.tagOnly), tc.arch, tc.component)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Availability(%s) = %v, want nil", tc.component, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Availability(%s) = %v, want an error saying %q", tc.component, err, tc.want)
			case errors.Is(err, compose.ErrUnpinned) != tc.unpinned:
				t.Fatalf("Availability(%s) = %v: ErrUnpinned %v, want %v", tc.component, err, errors.Is(err, compose.ErrUnpinned), tc.unpinned)
			}
		})
	}
}
