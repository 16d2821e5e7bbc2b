package compose_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/releases"
)

// The metrics components' RPMs install scrape configs into
// /etc/microshift/observability/scrape.d, which the observability
// collector reads (its scrape_config_files): a plan with both says which
// files the collector takes, one without the collector says nothing reads
// them, and a plan file never replaces an RPM's.
func TestScrapeFiles(t *testing.T) {
	cat, err := components.Load(testutil.TestdataDir(t, "catalogs", "scrape-overlay"))
	if err != nil {
		t.Fatal(err)
	}
	const (
		reads = "observability: the microshift-observability RPM reads /etc/microshift/observability/scrape.d/*.yaml (scrape_config_files in /etc/microshift/observability/opentelemetry-collector.yaml): "
		ksm   = "/etc/microshift/observability/scrape.d/kube-state-metrics.yaml (the microshift-metrics-kube-state RPM of kube-state-metrics)"
		ms    = "/etc/microshift/observability/scrape.d/metrics-server.yaml (the microshift-metrics-server RPM of metrics-server)"
		ne    = "/etc/microshift/observability/scrape.d/node-exporter.yaml (the microshift-metrics-node-exporter RPM of node-exporter)"
		app   = "/etc/microshift/observability/scrape.d/app.yaml (component app-metrics)"
	)
	for _, tc := range []struct {
		name, stream string
		with         []string
		want         string // the note, "" for none about scrape.d
		err          string
	}{
		{"all three with observability", "5.0", []string{"observability", "metrics-server", "kube-state-metrics", "node-exporter"}, reads + ksm + ", " + ms + ", " + ne, ""},
		{"5.1 the same", "5.1", []string{"observability", "metrics-server", "kube-state-metrics", "node-exporter"}, reads + ksm + ", " + ms + ", " + ne, ""},
		{"one, and a component's own", "5.0", []string{"observability", "node-exporter", "app-metrics"}, reads + ne + ", " + app, ""},
		{"without observability", "5.0", []string{"metrics-server"},
			ms + ": for the microshift-observability RPM's scrape_config_files (/etc/microshift/observability/scrape.d/*.yaml), which the plan leaves out, so nothing reads it; --with observability reads it", ""},
		{"two without observability", "5.0", []string{"metrics-server", "app-metrics"},
			ms + ", " + app + ": for the microshift-observability RPM's scrape_config_files (/etc/microshift/observability/scrape.d/*.yaml), which the plan leaves out, so nothing reads them; --with observability reads them", ""},
		{"observability alone", "5.0", []string{"observability"}, "", ""},
		// 4.22's observability RPM reads no scrape.d, and has no metrics RPMs.
		{"4.22", "4.22", []string{"observability"}, "", ""},
		{"a file at an RPM's path", "5.0", []string{"metrics-server", "metrics-clash"}, "",
			"component metrics-clash places /etc/microshift/observability/scrape.d/metrics-server.yaml, which the microshift-metrics-server RPM (metrics-server) installs on MicroShift 5.0: the plan's file would replace the RPM's; place it elsewhere or leave out metrics-server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := compose.Resolve(context.Background(), cat, assembletest.Release(t, tc.stream), compose.Request{Profile: "minimal", Arch: releases.X86_64, With: tc.with})
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("Resolve = %v\nwant %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var notes []string
			for _, n := range p.Notes {
				if strings.Contains(n, "scrape.d") {
					notes = append(notes, n)
				}
			}
			want := []string{}
			if tc.want != "" {
				want = []string{tc.want}
			}
			if !slices.Equal(notes, want) && !(len(notes) == 0 && len(want) == 0) {
				t.Errorf("scrape.d notes:\n%q\nwant\n%q", notes, want)
			}
		})
	}
}

// The package files step alone: a plan file at a path an RPM of the plan
// installs is refused, one at a path of an RPM the plan leaves out is not.
func TestStepPackageFiles(t *testing.T) {
	rel := stepRelease(t, "5.0.0", false)
	for _, tc := range []struct {
		name     string
		packages []plan.Package
		wantErr  string
	}{
		{name: "the RPM is in the plan", packages: []plan.Package{{Name: "microshift", Components: []string{"core"}}},
			wantErr: "component app places /etc/microshift/config.yaml.default, which the microshift RPM (core) installs on MicroShift 5.0: the plan's file would replace the RPM's; place it elsewhere or leave out core"},
		{name: "the RPM is not", packages: []plan.Package{{Name: "app-tools", Components: []string{"app"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := selectedPlan("full", "core", "net-a", "app")
			p.Packages = tc.packages
			p.Files = []plan.File{{Path: "/etc/microshift/config.yaml.default", Mode: "0644", Component: "app"}}
			got, err := runStep(t, "packagefiles", nil, rel, compose.Request{Profile: "full"}, p)
			if checkStepErr(t, err, tc.wantErr) && len(got.Notes) != 0 {
				t.Errorf("notes %q, want none", got.Notes)
			}
		})
	}
}
