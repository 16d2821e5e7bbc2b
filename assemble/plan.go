package assemble

import (
	"context"
	"fmt"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
	"github.com/microshift-compose/microshift-compose/render/config"
	"github.com/microshift-compose/microshift-compose/render/hardening"
	"github.com/microshift-compose/microshift-compose/render/healthcheck"
	"github.com/microshift-compose/microshift-compose/render/operators"
	"github.com/microshift-compose/microshift-compose/render/storage"
)

// Plan resolves req against the catalog and the release (compose.Resolve)
// and renders into the plan the device files it implies, each a function
// of the resolved plan: the StorageClasses of --lvmd's device classes,
// MicroShift's config file, --cis's audit unit, the CatalogSource,
// OperatorGroups and Subscriptions of the operator set, and greenboot's
// check of the rendered workloads and the operators' deployments. The result is the plan the lock records and
// every output of Build is made from.
func Plan(ctx context.Context, cat *components.Catalog, rel *releases.Release, req compose.Request) (*plan.Plan, error) {
	p, err := compose.Resolve(ctx, cat, rel, req)
	if err != nil {
		return nil, err
	}
	know, err := knowledge.Default()
	if err != nil {
		return nil, fmt.Errorf("loading release knowledge: %w", err)
	}
	facts, err := know.ForBuild(rel.Version, rel.Build)
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", rel, err)
	}
	if err := storage.Apply(p, req.Lvmd, req.StorageClasses, facts.LVMSStorageClasses); err != nil {
		return nil, err
	}
	if err := config.Apply(p); err != nil {
		return nil, err
	}
	if err := hardening.Apply(p); err != nil {
		return nil, err
	}
	if err := operators.Apply(p); err != nil {
		return nil, err
	}
	if err := healthcheck.Apply(p, facts.HealthCheck, req.HealthCheck); err != nil {
		return nil, err
	}
	return p, nil
}
