package compose_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

func TestUpgradeFrom(t *testing.T) {
	cat := assembletest.Catalog(t)
	ctx := context.Background()
	for _, tc := range []struct {
		from, to string
		want     string
	}{
		{"4.14", "4.15", ""},
		{"4.14", "4.16", ""},
		{"4.16", "4.19", "upgrading from 4.16: MicroShift 4.19 does not start on data written by 4.16: 4.19 is 3 minor versions newer, and it takes over data at most 2 older; upgrade through 4.18 first"},
		{"4.21", "5.0", ""},
		{"4.20", "5.0", "upgrading from 4.20: MicroShift 5.0 does not start on data written by 4.20: 5.0 is 3 minor versions newer, and it takes over data at most 2 older; upgrade through 4.22 first"},
		{"5.0", "4.22", "upgrading from 5.0: MicroShift 4.22 does not start on data written by 5.0: it never migrates data to an older release"},
	} {
		t.Run(tc.from+"->"+tc.to, func(t *testing.T) {
			p, err := compose.Resolve(ctx, cat, assembletest.Release(t, tc.to), compose.Request{Profile: "full", Arch: releases.X86_64, UpgradeFrom: semver.MustParse(tc.from)})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Resolve() = %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("Resolve() = %v, want %q", err, tc.want)
			case tc.want == "" && (p.Release.UpgradeFrom == nil || p.Release.UpgradeFrom.From != tc.from):
				t.Errorf("lock upgrade_from = %+v, want from %s", p.Release.UpgradeFrom, tc.from)
			}
		})
	}
}

// The upgrade step alone: nothing without --upgrade-from, the upgrade
// recorded, or the release's refusal.
func TestStepUpgrade(t *testing.T) {
	rel := stepRelease(t, "5.0.0", false)
	for _, tc := range []struct {
		from    string
		want    *plan.Upgrade
		wantErr string
	}{
		{from: ""},
		{from: "4.21", want: &plan.Upgrade{From: "4.21", Distance: 2, MaxSkew: 2}},
		{from: "4.20", wantErr: "upgrading from 4.20: MicroShift 5.0 does not start on data written by 4.20: 5.0 is 3 minor versions newer, and it takes over data at most 2 older; upgrade through 4.22 first"},
	} {
		t.Run("from "+tc.from, func(t *testing.T) {
			req := compose.Request{Profile: "full"}
			if tc.from != "" {
				req.UpgradeFrom = semver.MustParse(tc.from)
			}
			p, err := runStep(t, "upgrade", nil, rel, req, selectedPlan("full", "core"))
			if !checkStepErr(t, err, tc.wantErr) {
				return
			}
			if !reflect.DeepEqual(p.Release.UpgradeFrom, tc.want) {
				t.Errorf("upgrade = %+v, want %+v", p.Release.UpgradeFrom, tc.want)
			}
		})
	}
}
