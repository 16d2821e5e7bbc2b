package compose

import (
	"context"
	"fmt"

	"github.com/microshift-compose/microshift-compose/plan"
)

// checkUpgrade refuses a release that would not start on the data of the
// release the request upgrades from, by the plan's release's own rule, and
// records the upgrade.
func checkUpgrade(_ context.Context, in *inputs, p soFar) (soFar, error) {
	from := in.req.UpgradeFrom
	if from == nil {
		return p, nil
	}
	u, err := in.know.AcceptsDataFrom(in.facts, from)
	if err != nil {
		return p, fmt.Errorf("release %s: %w", in.rel, err)
	}
	if u.Err != nil {
		return p, fmt.Errorf("upgrading from %s: %w", u.From, u.Err)
	}
	p.Release.UpgradeFrom = &plan.Upgrade{From: u.From, Distance: u.Distance, MaxSkew: u.MaxSkew}
	return p, nil
}
