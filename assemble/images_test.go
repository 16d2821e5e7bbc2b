package assemble_test

import (
	"github.com/BurntSushi/toml"

	"reflect"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/releases"
)

// TestImagesAIModelServing covers the one component whose upstream images
// are mostly tags: with --allow-unpinned its images.txt is still the union,
// tags included, since the device needs every one of them.
func TestImagesAIModelServing(t *testing.T) {
	p := assembletest.Plan(t, assembletest.Catalog(t), assembletest.Release(t, "4.22"),
		compose.Request{Profile: "minimal", With: []string{"ai-model-serving"}, Arch: releases.X86_64, AllowUnpinned: true})
	out := assembletest.Build(t, p, assemble.Options{})
	got := testutil.Lines(assembletest.File(t, out, output.ImagesFile))
	want := assembletest.UpstreamImages(t, testutil.ReleaseDir(t, "release-4.22"), releases.X86_64, p.ComponentNames())
	if !reflect.DeepEqual(got, want) {
		t.Errorf("images.txt = %q, want %q", got, want)
	}
}

// blueprintContainers returns the sources of a blueprint's [[containers]],
// decoded as TOML (tag-only sources carry a trailing comment).
func blueprintContainers(blueprint []byte) []string {
	var bp struct {
		Containers []struct {
			Source string `toml:"source"`
		} `toml:"containers"`
	}
	if _, err := toml.Decode(string(blueprint), &bp); err != nil {
		return []string{"blueprint does not parse: " + err.Error()}
	}
	var got []string
	for _, c := range bp.Containers {
		got = append(got, c.Source)
	}
	return got
}
