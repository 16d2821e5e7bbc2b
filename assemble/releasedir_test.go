package assemble_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
	"github.com/microshift-compose/microshift-compose/releases"
)

// TestReleaseDir builds from the real upstream release directories, laid
// out flat as the microshift-release-info RPMs install them in
// /usr/share/microshift/release (what --release-dir reads): the images are
// the upstream union, and the plan is the embedded release's plan except for
// where the release came from.
func TestReleaseDir(t *testing.T) {
	cat := assembletest.Catalog(t)
	for _, stream := range slices.Sorted(maps.Keys(assembletest.UpstreamBranch)) {
		dir := testutil.ReleaseDir(t, assembletest.UpstreamBranch[stream])
		rel, err := releases.LoadDir(dir)
		if err != nil {
			t.Fatalf("releases.LoadDir(%s) = %v", dir, err)
		}
		if rel.Stream() != stream {
			t.Fatalf("releases.LoadDir(%s) is release %s, want %s", dir, rel.Stream(), stream)
		}
		embedded := assembletest.Release(t, stream)
		for _, arch := range goldenArches {
			for _, profile := range goldenProfiles {
				t.Run(stream+"/"+profile+"-"+string(arch), func(t *testing.T) {
					req := compose.Request{Profile: profile, Arch: arch, AllowRedBoot: true}
					p, err := assemble.Plan(context.Background(), cat, rel, req)
					var cannot *compose.CannotHonourError
					if errors.As(err, &cannot) {
						// Both refuse, for the same reason.
						_, eerr := assemble.Plan(context.Background(), cat, embedded, req)
						if eerr == nil || eerr.Error() != err.Error() {
							t.Errorf("%s refuses %s with %q, the embedded release with %v", dir, profile, err, eerr)
						}
						return
					}
					if err != nil {
						t.Fatalf("Resolve(%s %s) = %v", profile, arch, err)
					}
					if p.Release.Source != dir || p.Release.Origin != "" {
						t.Errorf("plan release source, origin = %q, %q, want %q, \"\"", p.Release.Source, p.Release.Origin, dir)
					}
					out := assembletest.Build(t, p, assemble.Options{})

					images := testutil.Lines(assembletest.File(t, out, output.ImagesFile))
					if want := assembletest.UpstreamImages(t, dir, arch, p.ComponentNames()); !reflect.DeepEqual(images, want) {
						t.Errorf("images.txt from %s = %q, want %q", dir, images, want)
					}

					e := assembletest.Plan(t, cat, embedded, req)
					embeddedOut := assembletest.Build(t, e, assemble.Options{})
					if e.Release.Source != releases.EmbeddedSource || e.Release.Origin == "" {
						t.Errorf("embedded plan release source, origin = %q, %q", e.Release.Source, e.Release.Origin)
					}
					e.Release.Source, e.Release.Origin = p.Release.Source, p.Release.Origin
					if !reflect.DeepEqual(p, e) {
						got, _ := lockfile.Encode(p)
						want, _ := lockfile.Encode(e)
						t.Errorf("plan from %s differs from the embedded %s plan beyond release.source/origin:\n%s", dir, stream, testutil.FirstDiff(want, got))
					}
					for _, file := range []string{output.BlueprintFile, output.ImagesFile} {
						if !bytes.Equal(assembletest.File(t, out, file), assembletest.File(t, embeddedOut, file)) {
							t.Errorf("%s from %s differs from the embedded release's", file, dir)
						}
					}
				})
			}
		}
	}
}
