package assemble_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/render/describe"
)

func TestValidate(t *testing.T) {
	rels, err := releases.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	opts := assemble.ValidateOptions{}

	t.Run("embedded catalog", func(t *testing.T) {
		rep, err := assemble.Validate(context.Background(), assembletest.Catalog(t), rels, opts)
		if err != nil {
			t.Fatalf("Validate() = %v", err)
		}
		// Per release: one catalog check, then 4 profiles x 2 arches; the
		// profiles a release cannot build are reported as skipped.
		if got, want := len(rep.Checks), len(rels)*(1+4*2); got != want {
			t.Errorf("Validate() has %d checks, want %d", got, want)
		}
		if !rep.OK() {
			t.Errorf("Validate() is not OK: %+v", rep.Checks)
		}
		for _, c := range rep.Checks {
			if strings.HasSuffix(c.Subject, "catalog and release files") {
				want := 0
				if !versionLess(strings.Fields(c.Subject)[1], "4.19") {
					want = len(assembletest.UpstreamTagOnly(t, "release-ai-model-serving-x86_64.json"))
				}
				if len(c.Warnings) != want {
					t.Errorf("%s: %d warnings, want %d (the tag-only AI model serving images): %q", c.Subject, len(c.Warnings), want, c.Warnings)
				}
			}
		}
	})

	t.Run("a profile that cannot resolve is reported, not returned", func(t *testing.T) {
		cat, err := components.Load(testutil.TestdataDir(t, "catalogs", "resolver-validate"))
		if err != nil {
			t.Fatalf("components.Load() = %v", err)
		}
		rels := rels[:1] // 5.0
		rep, err := assemble.Validate(context.Background(), cat, rels, opts)
		if err != nil {
			t.Fatalf("Validate() = %v", err)
		}
		if rep.OK() {
			t.Fatalf("Validate() is OK, want the clash profile reported")
		}
		want := "storage-hostpath conflicts with storage-lvms (storage-hostpath: profile clash; storage-lvms: profile clash); leave one out with --without"
		failed := 0
		for _, c := range rep.Checks {
			if strings.Contains(c.Subject, "profile clash on") {
				if c.OK || len(c.Problems) != 1 || c.Problems[0] != want {
					t.Errorf("%s: ok=%v problems %q, want [%q]", c.Subject, c.OK, c.Problems, want)
				}
				failed++
			} else if !c.OK {
				t.Errorf("%s: problems %q, want none", c.Subject, c.Problems)
			}
		}
		if failed != len(rels)*2 {
			t.Errorf("%d clash checks, want one per release and arch (%d)", failed, len(rels)*2)
		}
	})

	t.Run("checks run in parallel, the report in order and the same every time", func(t *testing.T) {
		first, err := assemble.Validate(context.Background(), assembletest.Catalog(t), rels, opts)
		if err != nil {
			t.Fatal(err)
		}
		// Per release: the catalog check, then arches in the release's
		// order, each with the profiles in name order.
		cat := assembletest.Catalog(t)
		i := 0
		for _, rel := range rels {
			if !strings.HasPrefix(first.Checks[i].Subject, "release "+rel.String()+": catalog") {
				t.Fatalf("check %d is %q, want release %s's catalog check", i, first.Checks[i].Subject, rel)
			}
			i++
			for _, arch := range rel.Arches() {
				for _, profile := range cat.ProfileNames() {
					want := "profile " + profile + " on " + string(arch) + ":"
					if c := first.Checks[i]; !strings.Contains(c.Subject, want) || c.Subject == "" {
						t.Fatalf("check %d is %q, want %q", i, c.Subject, want)
					}
					i++
				}
			}
		}
		for range 3 {
			again, err := assemble.Validate(context.Background(), assembletest.Catalog(t), rels, opts)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := json.Marshal(first)
			b, _ := json.Marshal(again)
			if !bytes.Equal(a, b) {
				t.Fatalf("two Validate runs differ:\n%s\n%s", a, b)
			}
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := assemble.Validate(ctx, assembletest.Catalog(t), rels, opts); !errors.Is(err, context.Canceled) {
			t.Errorf("Validate(cancelled) = %v, want context.Canceled", err)
		}
	})
}

// TestDescribe checks that resolve --explain says why every component and
// image is there.
func TestDescribe(t *testing.T) {
	p := assembletest.Plan(t, assembletest.Catalog(t), assembletest.Release(t, "5.0"), compose.Request{Profile: "minimal", With: []string{"sriov"}, Arch: releases.X86_64})
	var b bytes.Buffer
	if err := describe.Plan(&b, p, true); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"release 5.0 (embedded, base " + p.Release.Base + "), arch x86_64, profile minimal\n",
		"  004-multus           required by sriov\n",
		"  005-networking-ovnk  required by multus\n",
		"  070-sriov            --with\n",
		"  cni: networking-ovnk\n",
		"      needed by multus (release-multus-x86_64.json multus-cni-microshift)\n",
		"note: network.multus.status is \"Enabled\", set by the microshift-multus RPM (/etc/microshift/config.d/00-enable-multus.yaml); the plan does not write it\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("Describe(explain) lacks %q:\n%s", want, out)
		}
	}
	for _, im := range p.Images {
		if !strings.Contains(out, "  "+im.Ref+"\n      needed by ") {
			t.Errorf("Describe(explain) does not explain image %s", im.Ref)
		}
	}
	b.Reset()
	if err := describe.Plan(&b, p, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "needed by") || !strings.Contains(b.String(), "(--explain for details)") {
		t.Errorf("Describe(no explain) =\n%s\nwant a summary without image details", b.String())
	}
}
