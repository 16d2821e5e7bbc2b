package airgap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"golang.org/x/sync/errgroup"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
)

// What is attached to an image, and how it is found: cosign's tags beside
// it (sha256-<hex>.sig, .att, .sbom: the "tag fallback" every cosign and
// containers/image version reads), and OCI 1.1 referrers, manifests whose
// subject is the image, listed by the registry's referrers API or, where a
// registry lacks it, by the sha256-<hex> referrers tag schema (an index
// of them). cosign v2 --registry-referrers-mode=oci-1-1 signatures,
// cosign --new-bundle-format attestations (sigstore bundles) and oras
// attachments are referrers.
//
// Mirror copies an attachment as an image of its own: a tag by its tag, a
// referrer by its digest (REPO@sha256:R). A registry destination gets the
// referrer manifest with its subject, which a registry with the referrers
// API indexes and one without gets through the sha256-<hex> tag
// (go-containerregistry maintains it); an OCI layout names it in
// index.json, where readers of OCI layout referrers (oras, and mirror
// --from) find it by its subject.

// Kinds of Attachment.
const (
	KindSignature   = "signature"   // REPO:sha256-HEX.sig
	KindAttestation = "attestation" // REPO:sha256-HEX.att
	KindSBOM        = "sbom"        // REPO:sha256-HEX.sbom
	KindReferrer    = "referrer"    // REPO@sha256:R, an OCI 1.1 referrer
)

// attachmentTags are cosign's tag suffixes and what they hold.
var attachmentTags = []struct{ suffix, kind string }{
	{".sig", KindSignature},
	{".att", KindAttestation},
	{".sbom", KindSBOM},
}

// SigstoreBundleType is the media type (and artifactType) of a sigstore
// bundle v0.3, what cosign --new-bundle-format attaches as a referrer.
const SigstoreBundleType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// sigstoreBundlePrefix matches every sigstore bundle version.
const sigstoreBundlePrefix = "application/vnd.dev.sigstore.bundle"

// maxBundleSize bounds a sigstore bundle read to be verified: a DSSE
// envelope of an attestation, a certificate chain and log entries.
const maxBundleSize = 4 << 20

// ErrSubjectMismatch is wrapped when a referrer's subject is not the
// image it is listed for (or, copied, none of the images copied).
var ErrSubjectMismatch = errors.New("the referrer's subject is not the image")

// Attachment is something attached to an image that Mirror copies with it.
type Attachment struct {
	// Ref is what Mirror copies, in the image's repository as the plan
	// names it: REPO:sha256-HEX.sig|.att|.sbom, or REPO@sha256:R.
	Ref string `json:"ref"`
	// Image is the reference it is attached to, as the plan writes it.
	Image string `json:"image"`
	Kind  string `json:"kind"`
	// ArtifactType is a referrer's artifactType (else its config's media
	// type, as the referrers API reports it).
	ArtifactType string `json:"artifact_type,omitempty"`
	// Bundle is the sigstore bundle a referrer of a sigstore bundle type
	// carries (its layer), read to be verified.
	Bundle []byte `json:"-"`
}

// AttachmentKind says which kind of attachment ref names by its form: a
// cosign tag, else "" (a referrer is known by its subject, not its name).
func AttachmentKind(ref string) string {
	i := strings.LastIndex(ref, ":sha256-")
	if i < 0 || strings.Contains(ref[i:], "/") {
		return ""
	}
	tag := ref[i+1:]
	for _, t := range attachmentTags {
		hex, ok := strings.CutSuffix(strings.TrimPrefix(tag, "sha256-"), t.suffix)
		if ok && compositionID.MatchString(hex) {
			return t.kind
		}
	}
	return ""
}

// bundleLayer is the layer holding a sigstore bundle, if the manifest is
// one.
func (f referrerFields) bundleLayer() (v1.Descriptor, bool) {
	if !strings.HasPrefix(f.artifactType(), sigstoreBundlePrefix) || len(f.Layers) != 1 {
		return v1.Descriptor{}, false
	}
	l := f.Layers[0]
	return l, strings.HasPrefix(string(l.MediaType), sigstoreBundlePrefix)
}

// Attachments lists what is attached to the digest references among refs
// (a reference by tag has none): cosign's .sig, .att and .sbom tags and
// the OCI 1.1 referrers of each image, read from from (an OCI layout), or
// with from zero from the images' registries (registries.conf mirrors
// first, as the images are read). Each referrer's manifest is read and its
// subject must be the image's digest: one that names another is refused.
// The sigstore bundles of bundle referrers are read, to be verified.
// Sorted by image, then reference.
func Attachments(ctx context.Context, refs []string, from Target, reg registryclient.Options) ([]Attachment, error) {
	var lookup func(context.Context, string, name.Digest) ([]Attachment, error)
	if from.Transport == "" {
		lookup = func(ctx context.Context, ref string, d name.Digest) ([]Attachment, error) {
			return registryAttachments(ctx, ref, d, reg)
		}
	} else {
		ls, err := openLayoutSource(from, reg)
		if err != nil {
			return nil, err
		}
		defer ls.close()
		bySubject, err := ls.referrers()
		if err != nil {
			return nil, err
		}
		lookup = func(_ context.Context, ref string, d name.Digest) ([]Attachment, error) {
			return ls.attachments(ref, d, bySubject)
		}
	}
	found := make([][]Attachment, len(refs))
	errs := make([]error, len(refs))
	var g errgroup.Group
	g.SetLimit(jobsOf(reg))
	for i, ref := range refs {
		parsed, err := reg.ParseReference(ref)
		if err != nil {
			return nil, fmt.Errorf("parsing image reference %q: %w", ref, err)
		}
		d, ok := parsed.(name.Digest)
		if !ok {
			continue
		}
		g.Go(func() error {
			found[i], errs[i] = lookup(ctx, ref, d)
			return nil
		})
	}
	g.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("looking up what is attached to the images: %w", err)
	}
	var out []Attachment
	seen := map[string]bool{}
	for _, atts := range found {
		for _, a := range atts {
			if !seen[a.Ref] {
				seen[a.Ref] = true
				out = append(out, a)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Attachment) int {
		if c := strings.Compare(a.Image, b.Image); c != 0 {
			return c
		}
		return strings.Compare(a.Ref, b.Ref)
	})
	return out, nil
}

// registryAttachments looks the attachments of one image up in the first
// of its sources (registries.conf mirrors, then its registry) that holds
// the image.
func registryAttachments(ctx context.Context, ref string, d name.Digest, reg registryclient.Options) ([]Attachment, error) {
	sources, err := reg.PullSources(ref)
	if err != nil {
		return nil, err
	}
	opts := reg.Remote(ctx)
	for _, s := range sources {
		sd, ok := s.Ref.(name.Digest)
		if !ok {
			continue
		}
		err := reg.Retry(ctx, func() error { _, err := remote.Head(sd, opts...); return err })
		if err != nil {
			var te *transport.Error
			if s.Mirror || (errors.As(err, &te) && te.StatusCode == http.StatusNotFound) {
				continue // the mirror lacks it: so did the copy
			}
			return nil, registryclient.Describe(ref, err)
		}
		var out []Attachment
		for _, t := range attachmentTags {
			tag := sd.Context().Tag(attachmentTag(d.DigestStr(), t.suffix))
			err := reg.Retry(ctx, func() error { _, err := remote.Head(tag, opts...); return err })
			var te *transport.Error
			switch {
			case err == nil:
				out = append(out, Attachment{Ref: d.Context().Name() + ":" + tag.TagStr(), Image: ref, Kind: t.kind})
			case errors.As(err, &te) && te.StatusCode == http.StatusNotFound:
			default:
				return nil, registryclient.Describe(tag.String(), err)
			}
		}
		var idx *v1.IndexManifest
		err = reg.Retry(ctx, func() error {
			ii, err := remote.Referrers(sd, opts...)
			if err != nil {
				return err
			}
			idx, err = ii.IndexManifest()
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("listing the referrers of %s: %w", ref, registryclient.Describe(ref, err))
		}
		for _, rd := range idx.Manifests {
			if err := checkDigest(rd); err != nil {
				return nil, fmt.Errorf("listing the referrers of %s: %w", ref, err)
			}
			a, err := readRemoteReferrer(ctx, ref, d, sd.Context(), rd, reg)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		}
		return out, nil
	}
	return nil, nil
}

// readRemoteReferrer reads the referrer rd of image d listed in repo,
// checks its subject and reads the sigstore bundle it carries, if any.
func readRemoteReferrer(ctx context.Context, ref string, d name.Digest, repo name.Repository, rd v1.Descriptor, reg registryclient.Options) (Attachment, error) {
	opts := reg.Remote(ctx)
	var data []byte
	err := reg.Retry(ctx, func() error {
		desc, err := remote.Get(repo.Digest(rd.Digest.String()), opts...)
		if err != nil {
			return err
		}
		data = desc.Manifest
		return nil
	})
	if err != nil {
		return Attachment{}, fmt.Errorf("reading referrer %s of %s: %w", rd.Digest, ref, registryclient.Describe(repo.Digest(rd.Digest.String()).String(), err))
	}
	if err := verifyManifest(data, rd.Digest); err != nil {
		return Attachment{}, fmt.Errorf("reading referrer %s of %s: %w", rd.Digest, ref, err)
	}
	a, layer, err := referrerAttachment(ref, d, rd.Digest, data)
	if err != nil || layer == nil {
		return a, err
	}
	err = reg.Retry(ctx, func() error {
		l, err := remote.Layer(repo.Digest(layer.Digest.String()), opts...)
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		defer rc.Close()
		a.Bundle, err = readBlob(rc, *layer)
		return err
	})
	if err != nil {
		return Attachment{}, fmt.Errorf("reading the sigstore bundle of referrer %s of %s: %w", rd.Digest, ref, err)
	}
	return a, nil
}

// referrerAttachment checks that the manifest data of referrer r (listed
// for image d) has d as its subject and makes its Attachment; layer is the
// sigstore bundle to read, if it carries one.
func referrerAttachment(ref string, d name.Digest, r v1.Hash, data []byte) (Attachment, *v1.Descriptor, error) {
	f, err := parseReferrer(data)
	if err != nil {
		return Attachment{}, nil, fmt.Errorf("reading referrer %s of %s: %w", r, ref, err)
	}
	switch {
	case f.Subject == nil:
		return Attachment{}, nil, fmt.Errorf("refusing referrer %s of %s: %w: it has no subject", r, ref, ErrSubjectMismatch)
	case f.Subject.Digest.String() != d.DigestStr():
		return Attachment{}, nil, fmt.Errorf("refusing referrer %s of %s: %w: its subject is %s", r, ref, ErrSubjectMismatch, f.Subject.Digest)
	}
	a := Attachment{Ref: d.Context().Name() + "@" + r.String(), Image: ref, Kind: KindReferrer, ArtifactType: f.artifactType()}
	if l, ok := f.bundleLayer(); ok {
		if err := checkDigest(l); err != nil {
			return Attachment{}, nil, fmt.Errorf("reading referrer %s of %s: %w", r, ref, err)
		}
		if l.Size > maxBundleSize {
			return Attachment{}, nil, fmt.Errorf("reading referrer %s of %s: its sigstore bundle is %d bytes, more than %d", r, ref, l.Size, maxBundleSize)
		}
		return a, &l, nil
	}
	return a, nil, nil
}

// readBlob reads a small blob and checks its size and digest.
func readBlob(r io.Reader, d v1.Descriptor) ([]byte, error) {
	data, err := readAtMost(r, d.Size)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", d.Digest, err)
	}
	if int64(len(data)) != d.Size {
		return nil, fmt.Errorf("blob %s: %w: got %d bytes, want %d", d.Digest, ErrDigestMismatch, len(data), d.Size)
	}
	got, _, err := v1.SHA256(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if got != d.Digest {
		return nil, fmt.Errorf("blob %s: %w: got %s", d.Digest, ErrDigestMismatch, got)
	}
	return data, nil
}

// referrers reads every manifest the layout names by digest and lists
// those with a subject by "REPO@SUBJECT": a layout's referrers are the
// manifests it names whose subject is an image (as OCI layout readers
// such as oras find them).
func (s *layoutSource) referrers() (map[string][]v1.Hash, error) {
	out := map[string][]v1.Hash{}
	for _, n := range s.names() {
		parsed, err := s.reg.ParseReference(n)
		if err != nil {
			continue // readIndex refused those already
		}
		if _, ok := parsed.(name.Digest); !ok {
			continue
		}
		d := s.byName[n]
		if !d.MediaType.IsImage() && !d.MediaType.IsIndex() {
			continue
		}
		m, err := s.manifest(d)
		if err != nil {
			return nil, fmt.Errorf("reading %s in %s: %w", n, s.desc, err)
		}
		f, err := parseReferrer(m.Data)
		if err != nil {
			return nil, fmt.Errorf("reading %s in %s: %w", n, s.desc, err)
		}
		if f.Subject != nil {
			key := parsed.Context().Name() + "@" + f.Subject.Digest.String()
			out[key] = append(out[key], d.Digest)
		}
	}
	return out, nil
}

// attachments are the attachments of image d the layout names.
func (s *layoutSource) attachments(ref string, d name.Digest, bySubject map[string][]v1.Hash) ([]Attachment, error) {
	var out []Attachment
	for _, t := range attachmentTags {
		tag := d.Context().Name() + ":" + attachmentTag(d.DigestStr(), t.suffix)
		if _, ok := s.byName[tag]; ok {
			out = append(out, Attachment{Ref: tag, Image: ref, Kind: t.kind})
		}
	}
	for _, r := range bySubject[d.Context().Name()+"@"+d.DigestStr()] {
		rref := d.Context().Name() + "@" + r.String()
		m, err := s.manifest(s.byName[rref])
		if err != nil {
			return nil, fmt.Errorf("reading referrer %s of %s: %w", r, ref, err)
		}
		a, layer, err := referrerAttachment(ref, d, r, m.Data)
		if err != nil {
			return nil, err
		}
		if layer != nil {
			rc, size, err := s.store.open(layer.Digest)
			if err != nil {
				return nil, fmt.Errorf("reading the sigstore bundle of referrer %s of %s: %w", r, ref, err)
			}
			if size == layer.Size {
				a.Bundle, err = readBlob(rc, *layer)
			} else {
				err = fmt.Errorf("blob %s: %w: %d bytes in %s, the manifest says %d", layer.Digest, ErrDigestMismatch, size, s.desc, layer.Size)
			}
			rc.Close()
			if err != nil {
				return nil, fmt.Errorf("reading the sigstore bundle of referrer %s of %s: %w", r, ref, err)
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// checkSubjects refuses a referrer among the images whose subject is none
// of the images copied (by digest, in its repository): copied alone, it
// would attach to nothing, or be taken for an attachment of something it
// does not describe. The images are checked before anything is written.
func checkSubjects(refs []string, images []*image, reg registryclient.Options) error {
	have := map[string]bool{}
	for i, ref := range refs {
		if p, err := reg.ParseReference(ref); err == nil {
			if d, ok := p.(name.Digest); ok {
				have[d.Context().Name()+"@"+d.DigestStr()] = true
			}
		}
		if im := images[i]; im != nil {
			for _, mb := range im.Manifests {
				have[im.ref.Context().Name()+"@"+mb.Digest.String()] = true
			}
		}
	}
	for _, im := range images {
		if im == nil || im.Subject == nil {
			continue
		}
		if !have[im.ref.Context().Name()+"@"+im.Subject.Digest.String()] {
			return fmt.Errorf("refusing referrer %s: %w: its subject %s is none of the images copied", im.Ref, ErrSubjectMismatch, im.Subject.Digest)
		}
	}
	return nil
}

// SignatureTag is the tag cosign and containers/image give the sigstore
// signatures of the image with digest ("sha256:HEX"): "sha256-HEX.sig".
func SignatureTag(digest string) string { return attachmentTag(digest, ".sig") }

// attachmentTag is cosign's tag for an attachment of the image with
// digest: sha256-HEX and the suffix (.sig, .att, .sbom).
func attachmentTag(digest, suffix string) string {
	return strings.Replace(digest, ":", "-", 1) + suffix
}
