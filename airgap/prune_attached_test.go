package airgap_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

// attachedSet is an image and everything attached to it, as mirror
// --referrers copies them: cosign's .sig, .att and .sbom tags, a
// sigstore-bundle referrer, a .sig tag of that referrer and a referrer of
// the referrer (a signature of an SBOM, say).
type attachedSet struct {
	image string
	// attached are the attachments' references; sigs the .sig tags among
	// them.
	attached []string
	sigs     int
}

func pushAttachedSet(t *testing.T, p *testutil.Pusher, seed uint64) attachedSet {
	t.Helper()
	ref, err := p.PushImage("app/one", "amd64", []testutil.Layer{testutil.NewLayer(seed, 4096)})
	if err != nil {
		t.Fatal(err)
	}
	repo, digest, _ := strings.Cut(ref, "@")
	s := attachedSet{image: ref}
	tagOn := func(digest, suffix string, seed uint64) {
		att, err := p.PushImage("app/one", "amd64", []testutil.Layer{testutil.NewLayer(seed, 512)})
		if err != nil {
			t.Fatal(err)
		}
		tag := strings.Replace(digest, ":", "-", 1) + suffix
		if _, err := p.Manifest("app/one", fetchRaw(t, att), tag); err != nil {
			t.Fatal(err)
		}
		s.attached = append(s.attached, repo+":"+tag)
		if suffix == ".sig" {
			s.sigs++
		}
	}
	for i, suffix := range []string{".sig", ".att", ".sbom"} {
		tagOn(digest, suffix, seed*10+uint64(i))
	}
	referrer, _ := bundleReferrer(t, p, ref)
	r, err := p.Manifest("app/one", referrer, "")
	if err != nil {
		t.Fatal(err)
	}
	s.attached = append(s.attached, r)
	tagOn(strings.SplitN(r, "@", 2)[1], ".sig", seed*10+5)
	rr, _ := bundleReferrer(t, p, r)
	rrRef, err := p.Manifest("app/one", rr, "")
	if err != nil {
		t.Fatal(err)
	}
	s.attached = append(s.attached, rrRef)
	return s
}

// TestPruneKeepsAttachments: prune keeps what is attached to a kept image
// (cosign's .sig, .att and .sbom tags, referrers by subject, and what is
// attached to those) and removes what is attached to a dropped one; the
// layout left is, blob for blob, one mirrored with the kept image and its
// attachments alone. The registry report of the same images lists the
// dropped image's attachment tags, never the kept one's.
func TestPruneKeepsAttachments(t *testing.T) {
	reg := testutil.StartRegistry(t)
	p := &testutil.Pusher{Host: reg.Host}
	kept, dropped := pushAttachedSet(t, p, 71), pushAttachedSet(t, p, 72)
	dir := t.TempDir()
	site, want := dir+"/site", dir+"/want"
	all := append(append([]string{kept.image, dropped.image}, kept.attached...), dropped.attached...)
	if _, err := airgap.Mirror(ctx, all, airgap.OCI(site), opts(releases.X86_64, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := airgap.Mirror(ctx, append([]string{kept.image}, kept.attached...), airgap.OCI(want), opts(releases.X86_64, nil)); err != nil {
		t.Fatal(err)
	}
	keep := []airgap.Kept{{Name: "kept.lock.json", Refs: []string{kept.image}}}

	r, err := airgap.Prune(ctx, airgap.OCI(site), keep, airgap.PruneOptions{Apply: true})
	if err != nil {
		t.Fatal(err)
	}
	var gone []string
	for _, im := range r.Images {
		gone = append(gone, im.Name)
	}
	slices.Sort(gone)
	wantGone := append([]string{dropped.image}, dropped.attached...)
	slices.Sort(wantGone)
	if !slices.Equal(gone, wantGone) || r.KeptAttachments != len(kept.attached) || r.KeptSignatures != kept.sigs {
		t.Errorf("prune removed %v, kept %d attachments (%d signatures); want %v removed, %d kept (%d signatures)", gone, r.KeptAttachments, r.KeptSignatures, wantGone, len(kept.attached), kept.sigs)
	}
	if got, w := blobFiles(t, site), blobFiles(t, want); !mapsEqual(got, w) {
		t.Errorf("the pruned layout holds %d blobs, one mirrored with the kept image alone %d", len(got), len(w))
	}
	if !mapsEqual(indexNames(t, site), indexNames(t, want)) {
		t.Errorf("the pruned layout names %v, want %v", indexNames(t, site), indexNames(t, want))
	}

	// The registry report: Debian's docker-registry has no referrers API,
	// so mirror leaves a referrers tag (sha256-HEX) beside each subject.
	siteReg := testutil.StartRegistry(t)
	if _, err := airgap.Mirror(ctx, all, airgap.Target{Transport: airgap.TransportDocker, Registry: siteReg.Host, Prefix: "site"}, opts(releases.X86_64, nil)); err != nil {
		t.Fatal(err)
	}
	rep, err := airgap.PruneRegistryReport(ctx, airgap.Target{Transport: airgap.TransportDocker, Registry: siteReg.Host, Prefix: "site"},
		keep, airgap.PruneOptions{Registry: opts(releases.X86_64, nil).Registry})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Repositories) != 1 || rep.Repositories[0].Name != "site/app/one" {
		t.Fatalf("registry report: %+v", rep)
	}
	tags := rep.Repositories[0].Tags
	for _, tag := range tags {
		for _, a := range append([]string{kept.image}, kept.attached...) {
			if d := strings.SplitN(a, "@", 2); len(d) == 2 && strings.HasPrefix(tag, strings.Replace(d[1], ":", "-", 1)) {
				t.Errorf("the report lists %s, attached to the kept %s", tag, a)
			}
		}
	}
	for _, a := range dropped.attached {
		if _, tag, ok := strings.Cut(strings.TrimPrefix(a, "http://"), "app/one:"); ok && !slices.Contains(tags, tag) {
			t.Errorf("the report does not list %s, attached to the dropped image: %v", tag, tags)
		}
	}
	if rep.Reclaimable == 0 {
		t.Errorf("the report frees nothing: %+v", rep)
	}
}
