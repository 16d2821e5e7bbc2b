package airgap_test

import (
	"archive/tar"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

// TestLayoutIndexEntries reads layouts whose index.json is rewritten to
// hold malformed, unnamed, duplicated or no entries: each is refused with
// one line naming the entry, as a directory and as an oci-archive, and
// nothing is copied (never part of the layout, never "0 images").
func TestLayoutIndexEntries(t *testing.T) {
	reg := testutil.StartRegistry(t)
	f := newFixture(t, reg.Host)
	src := filepath.Join(t.TempDir(), "images")
	if _, err := airgap.Mirror(ctx, f.refs, airgap.OCI(src), opts(releases.X86_64, nil)); err != nil {
		t.Fatal(err)
	}
	var idx v1.IndexManifest
	if err := json.Unmarshal(mustRead(t, filepath.Join(src, "index.json")), &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Manifests) != len(f.refs) {
		t.Fatalf("the layout has %d entries, want %d", len(idx.Manifests), len(f.refs))
	}
	first := idx.Manifests[0]
	named := func(d v1.Descriptor, n string) v1.Descriptor {
		d.Annotations = map[string]string{airgap.AnnotationRefName: n}
		return d
	}
	with := func(edit func(ms []v1.Descriptor) []v1.Descriptor) []v1.Descriptor {
		return edit(append([]v1.Descriptor(nil), idx.Manifests...))
	}
	badName := reg.Host + "/app/one\n../../etc@" + first.Digest.String()
	for _, tc := range []struct {
		name    string
		entries []v1.Descriptor
		want    string // after "reading index.json of SRC: "
	}{
		{"name with a newline and ../", with(func(ms []v1.Descriptor) []v1.Descriptor {
			ms[1] = named(ms[1], badName)
			return ms
		}), `entry 2 (` + idx.Manifests[1].Digest.String() + `): org.opencontainers.image.ref.name "` + strings.ReplaceAll(badName, "\n", `\n`) + `" is not a full image reference`},
		{"name without a registry", with(func(ms []v1.Descriptor) []v1.Descriptor {
			ms[0] = named(ms[0], "latest")
			return ms
		}), `entry 1 (` + first.Digest.String() + `): org.opencontainers.image.ref.name "latest" is not a full image reference`},
		{"duplicate name", with(func(ms []v1.Descriptor) []v1.Descriptor {
			return append(ms, named(ms[2], ms[0].Annotations[airgap.AnnotationRefName]))
		}), "entries 1 and " + itoa(len(f.refs)+1) + " both name " + first.Annotations[airgap.AnnotationRefName]},
		{"second, empty entry", with(func(ms []v1.Descriptor) []v1.Descriptor {
			return append(ms[:1], v1.Descriptor{MediaType: first.MediaType, Digest: first.Digest, Size: first.Size})
		}), "entry 2 (" + first.Digest.String() + ") has no org.opencontainers.image.ref.name annotation: mirror reads a layout's images by the full references it names"},
	} {
		for _, archive := range []bool{false, true} {
			name := tc.name
			if archive {
				name += " (oci-archive)"
			}
			t.Run(name, func(t *testing.T) {
				from := writeLayoutWithIndex(t, src, tc.entries, archive)
				want := "reading index.json of " + from.String() + ": " + tc.want
				if got, err := airgap.LayoutImages(from, registryclient.Options{}); err == nil || err.Error() != want {
					t.Fatalf("LayoutImages() = %v, %v\nwant %q", got, err, want)
				}
				o := opts("", nil)
				o.From = from
				out := filepath.Join(t.TempDir(), "copy")
				if _, err := airgap.Mirror(ctx, f.refs, airgap.OCI(out), o); err == nil || err.Error() != want {
					t.Fatalf("Mirror() = %v\nwant %q", err, want)
				}
				if _, err := os.Stat(filepath.Join(out, "index.json")); err == nil {
					t.Errorf("Mirror() wrote %s from a refused layout", out)
				}
			})
		}
	}
	t.Run("no entries", func(t *testing.T) {
		from := writeLayoutWithIndex(t, src, []v1.Descriptor{}, true)
		want := from.String() + " names no images (its index.json is empty): nothing to mirror"
		if got, err := airgap.LayoutImages(from, registryclient.Options{}); err == nil || err.Error() != want {
			t.Fatalf("LayoutImages() = %v, %v\nwant %q", got, err, want)
		}
	})
}

// writeLayoutWithIndex copies the layout src with index.json holding
// entries, as a directory or an oci-archive tar.
func writeLayoutWithIndex(t *testing.T, src string, entries []v1.Descriptor, archive bool) airgap.Target {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "layout")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(v1.IndexManifest{SchemaVersion: 2, MediaType: "application/vnd.oci.image.index.v1+json", Manifests: entries})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if !archive {
		return airgap.OCI(dir)
	}
	file := dir + ".tar"
	out, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(out)
	if err := tw.AddFS(os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	target, err := airgap.ParseDestination("oci-archive:" + file)
	if err != nil {
		t.Fatal(err)
	}
	return target
}
