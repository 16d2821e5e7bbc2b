package airgap

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
)

// What is attached to a kept image stays with it, wherever prune judges
// what goes: cosign's tags beside it (sha256-HEX.sig, .att, .sbom), the
// referrers tag of a registry without the referrers API (sha256-HEX, an
// index of the referrers), and OCI 1.1 referrers, manifests whose subject
// it is. Attached to what is attached counts too: a signature of an SBOM
// of a kept image stays.

// attachmentSubject is the digest ("sha256:HEX") a tag is attached to by
// its name: cosign's sha256-HEX.sig, .att and .sbom, and the referrers tag
// sha256-HEX; ok is false for any other tag.
func attachmentSubject(tag string) (digest string, ok bool) {
	rest, found := strings.CutPrefix(tag, "sha256-")
	if !found || len(rest) < 64 {
		return "", false
	}
	hex, suffix := rest[:64], rest[64:]
	if !compositionID.MatchString(hex) {
		return "", false
	}
	switch suffix {
	case "", ".sig", ".att", ".sbom":
		return "sha256:" + hex, true
	}
	return "", false
}

// candidate is something a layout or registry holds that may be attached
// to a kept image: a tag, or a manifest named by digest.
type candidate struct {
	// Repo is its repository, as the kept digests name theirs.
	Repo string
	// Tag is its tag, "" for a manifest named by digest.
	Tag string
	// Digest is the manifest's digest ("sha256:HEX").
	Digest string
	// Subject is its manifest's subject digest, "" for none.
	Subject string
	// Lists are the manifests it lists, for an index (the referrers tag's
	// index lists the referrers).
	Lists []string
}

// attachedTo marks the candidates attached to the kept manifests
// (kept holds "REPO@sha256:HEX" keys), directly or through one another,
// and adds what each marked one is and lists to kept.
func attachedTo(kept map[string]bool, cands []candidate) []bool {
	marked := make([]bool, len(cands))
	for changed := true; changed; {
		changed = false
		for i, c := range cands {
			if marked[i] || !isAttached(kept, c) {
				continue
			}
			marked[i], changed = true, true
			kept[c.Repo+"@"+c.Digest] = true
			for _, d := range c.Lists {
				kept[c.Repo+"@"+d] = true
			}
		}
	}
	return marked
}

// isAttached reports whether c is attached to one of the kept manifests.
func isAttached(kept map[string]bool, c candidate) bool {
	if c.Subject != "" && kept[c.Repo+"@"+c.Subject] {
		return true
	}
	if d, ok := attachmentSubject(c.Tag); ok && kept[c.Repo+"@"+d] {
		return true
	}
	return false
}

// attachedEntries finds, among the layout's other entries, those attached
// to the kept entries (recursively), keyed by "DIGEST NAME", with their
// kind (KindSignature, KindAttestation, KindSBOM, KindReferrer). An entry
// whose manifest cannot be read has no subject: it is attached by its
// name or not at all.
func (s *layoutSource) attachedEntries(ctx context.Context, kept, others []v1.Descriptor, reg registryclient.Options) (map[string]string, error) {
	keys := map[string]bool{}
	for _, d := range kept {
		ref, err := reg.ParseReference(d.Annotations[AnnotationRefName])
		if err != nil {
			continue
		}
		r, err := s.reachEntries(ctx, []v1.Descriptor{d}, reachOptions{referenced: true})
		if err != nil {
			return nil, fmt.Errorf("reading what the kept images need: %w", err)
		}
		for _, b := range r.Blobs() {
			if b.Manifest {
				keys[ref.Context().Name()+"@"+b.Digest.String()] = true
			}
		}
	}
	cands := make([]candidate, len(others))
	for i, d := range others {
		n := d.Annotations[AnnotationRefName]
		ref, err := reg.ParseReference(n)
		if err != nil {
			continue // attached to nothing: Repo "" matches no key
		}
		c := candidate{Repo: ref.Context().Name(), Digest: d.Digest.String()}
		if t, ok := ref.(name.Tag); ok {
			c.Tag = t.TagStr()
		}
		if d.MediaType.IsImage() || d.MediaType.IsIndex() {
			if m, err := s.manifest(d); err == nil {
				if f, err := parseReferrer(m.Data); err == nil && f.Subject != nil {
					c.Subject = f.Subject.Digest.String()
				}
				if d.MediaType.IsIndex() {
					if idx, err := v1.ParseIndexManifest(bytes.NewReader(m.Data)); err == nil {
						for _, m := range idx.Manifests {
							c.Lists = append(c.Lists, m.Digest.String())
						}
					}
				}
			}
		}
		cands[i] = c
	}
	out := map[string]string{}
	for i, ok := range attachedTo(keys, cands) {
		if !ok {
			continue
		}
		n := others[i].Annotations[AnnotationRefName]
		kind := AttachmentKind(n)
		if kind == "" {
			kind = KindReferrer
		}
		out[others[i].Digest.String()+" "+n] = kind
	}
	return out, nil
}
