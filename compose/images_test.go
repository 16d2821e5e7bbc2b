package compose_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/releases"
)

// TestImagesAIModelServing covers the one component whose upstream images
// are mostly tags: with --allow-unpinned its images.txt is still the union,
// tags included, since the device needs every one of them.
func TestImagesAIModelServing(t *testing.T) {
	p := mustResolve(t, defaultCatalog(t), embeddedRelease(t, "5.0"),
		compose.Request{Profile: "minimal", With: []string{"ai-model-serving"}, Arch: releases.X86_64, AllowUnpinned: true})
	out := mustBuild(t, p)
	got := lines(outputFile(t, out, compose.ImagesFile))
	want := upstreamImages(t, upstreamDir(t, "main"), releases.X86_64, p.ComponentNames())
	if !reflect.DeepEqual(got, want) {
		t.Errorf("images.txt = %q, want %q", got, want)
	}
}

// checkBlueprintContainers decodes the blueprint's [[containers]] and
// compares their sources with want.
func checkBlueprintContainers(t *testing.T, blueprint []byte, want []string) {
	t.Helper()
	var got []string
	for _, l := range lines(blueprint) {
		if src, ok := strings.CutPrefix(l, `source = "`); ok {
			got = append(got, strings.TrimSuffix(src, `"`))
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("blueprint [[containers]] sources = %q, want %q", got, want)
	}
}

func upstreamCoreFile(t *testing.T, stream string, arch releases.Arch) map[string]string {
	t.Helper()
	var doc struct {
		Images map[string]string `json:"images"`
	}
	path := filepath.Join(upstreamDir(t, upstreamBranch[stream]), "release-"+string(arch)+".json")
	if err := json.Unmarshal(mustRead(t, path), &doc); err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	return doc.Images
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
