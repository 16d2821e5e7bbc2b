package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/attest"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

func newMirrorCmd() *cobra.Command {
	var (
		cat          catalogOptions
		rel          releaseOptions
		sel          selectionOptions
		rnd          renderOptions
		lock         lockOptions
		reg          registryOptions
		format       formatOptions
		trust        trustOptions
		sign         signOptions
		bnd          bundleOptions
		file         fileOptions
		to, from     string
		allPlatforms bool
		referrers    bool
		quiet        bool
	)
	cmd := &cobra.Command{
		Use:   "mirror --to DESTINATION (--profile NAME | --lock compose.lock.json | --from oci:DIR|oci-archive:FILE) [--since OLD]... [--image REF]... [--max-size SIZE]",
		Short: "Copy every image of a plan into an OCI layout, an archive file or a mirror registry, verified and resumable",
		Long: `mirror copies every image a plan needs, by digest, from its registry (or from
an OCI layout with --from) to a destination:

  --to oci:DIR                 one OCI image layout with all images; blobs shared by
                               images are stored once. Each image is named in index.json
                               by its reference (org.opencontainers.image.ref.name and
                               io.containerd.image.name), so
                               skopeo copy oci:DIR:REF containers-storage:REF loads it.
  --to dir:DIR                 the layout of oci:DIR plus one skopeo dir: directory per
                               image (DIR/<sha256 of the reference and a newline>/, listed
                               in DIR/image-list.txt), blobs hard-linked: every skopeo
                               version reads it. What build --bootc's Containerfile embeds.
  --to oci-archive:FILE        the layout in one tar file, to carry across an air gap;
                               it is staged in .FILE.partial/ (resumable) and renamed into
                               place when complete. An existing FILE's images are kept.
  --to docker://REGISTRY/PREFIX  push to a registry: quay.io/org/repo@sha256:X goes to
                               REGISTRY/PREFIX/org/repo@sha256:X, digests unchanged. A blob
                               several repositories need is uploaded once and mounted
                               into the others.

--from oci:DIR or --from oci-archive:FILE (oci:FILE works too) reads the images from
a layout instead of their registries (the disconnected side: an archive into a
registry), in place: every image the layout names, or the plan's with --lock or
--profile.

Of a multi-arch index, oci: and dir: get only the plan arch's manifest and blobs;
the index itself is kept, so the reference keeps the digest the release pins (the
layout spec allows the other platforms' manifests to be absent). A registry cannot
hold part of an index, so docker:// gets every platform, and so does oci-archive:,
which is made to be loaded into a registry. --all-platforms copies every platform
everywhere.

Sources: registries.conf mirrors of a registry are tried first, as podman and skopeo
do; credentials come from --authfile or $REGISTRY_AUTH_FILE, else the auth files
podman reads; TLS is verified with the host's certs.d certificates unless
--tls-verify=false or --insecure-registry. Every blob and manifest is checked against
its digest; content that does not match is refused. Each request is retried with
backoff on timeouts (--timeout), dropped connections, 408, 429 and 5xx. A rerun
skips blobs already present (after re-checking them). Progress goes to stderr (bars
on a terminal), the summary to stdout.

Signatures: with --policy FILE (a containers-policy.json) or --verify-key FILE
(sigstore public keys, repeatable), every image is checked against the trust
policy with containers/image, as podman and CRI-O check it, before anything is
copied: its sigstore signatures (the sha256-<digest>.sig attachments cosign
pushes beside it) are verified offline (no transparency log, no Fulcio). One
refused image (unsigned, signed by another key, signed for another repository,
a signature that does not match) fails the command, naming each image and the
policy rule, with the destination untouched. What is attached to the images
is then copied with them (--referrers, on by default here), so the next hop
can verify it again. Without --policy or --verify-key, signatures are not
checked (the build host's /etc/containers/policy.json is not read: pass it
with --policy to apply it).

Attachments (--referrers): with each digest-pinned image, cosign's
sha256-<digest>.sig, .att and .sbom tags and its OCI 1.1 referrers (cosign
signature bundles, attestations, SBOMs: manifests whose subject is the image,
listed by the registry's referrers API or the sha256-<digest> referrers tag).
A referrer whose subject is not the image is refused, before anything is
written. A registry destination gets the referrers with their subject (and
the referrers tag where it lacks the API); oci: and oci-archive: name them in
index.json (REPO@sha256:<referrer>, with their artifactType), where mirror
--from --referrers finds them again by subject. With --verify-key, every
sigstore bundle among them must be signed by one of the keys for its image
(offline), or nothing is mirrored; with --policy, bundles are
copied unverified (containers/image reads only the .sig tags).

Day 2, across the air gap:

  --since OLD                  (repeatable) writes a differential bundle to oci:DIR or
                               oci-archive:FILE: every image of the plan is named in
                               index.json and every manifest and index is there, but the
                               config and layer blobs OLD reaches are left out. OLD is what
                               the site holds already: a compose.lock.json (its images'
                               manifests are read from the source: the registries, or
                               --from), an oci:DIR layout, or an oci-archive:FILE (split or
                               not; a bundle itself, whose own base then counts too). A lock
                               for another arch is refused. The layout's
                               microshift-compose-bundle.json records the composition IDs,
                               the images, the base (composition IDs, index.json digests)
                               and every blob left out, by digest and size.
  --from BUNDLE                applies a differential bundle: before anything is written,
                               every blob it leaves out must be at the destination (a
                               layout: present, right size and digest; a registry: in the
                               image's repository, or mountable from another); if not, one
                               line names a missing blob and an image that needs it, and
                               nothing is written. Blobs go first, manifests after them,
                               index.json last (renamed into place); tags after their
                               manifests. Applying twice changes nothing. Into a new
                               oci-archive:FILE, a bundle is copied as a bundle (joined,
                               or cut into other parts).
  --image REF                  (repeatable) copies an image beyond the plan, first of all
                               the bootc OS image built from build --bootc's Containerfile,
                               verified with --policy/--verify-key like the plan's; digest-
                               pinned unless --allow-unpinned. With --since it is
                               differential too (give the previous bundle as a --since: a
                               lock does not list it).
  --max-size SIZE              writes oci-archive:FILE as parts FILE.001, FILE.002, … of
                               at most SIZE (4GiB, 700MB; 4000MB for FAT32 media) and
                               FILE.parts.json (order, size and sha256 of each, the total).
                               The parts are byte ranges of the one archive: cat FILE.0*
                               gives it back. --from takes FILE, FILE.001 or
                               FILE.parts.json and checks every part before reading; a
                               missing, truncated, corrupt or misordered part is named. A
                               rerun writes only the parts missing or different.
  --sign-key KEY               signs the oci-archive:FILE written, as cosign sign-blob
                               does (KEY is cosign.key, its password $COSIGN_PASSWORD):
                               FILE.sig over the archive, or FILE.parts.json.sig over
                               the list of a split archive (which holds each part's
                               sha256). cosign verify-blob --key cosign.pub --signature
                               FILE.sig --insecure-ignore-tlog FILE accepts it.
  --verify-key KEY (--from)    with --from oci-archive:FILE, --verify-key names the
                               bundle's key: before anything is read or written, FILE.sig (or
                               FILE.parts.json.sig) must verify with one of the keys; an
                               unsigned bundle, one signed with another key or one
                               changed after signing is refused in one line. The images'
                               own signatures were verified when the bundle was made and
                               travel in it (--policy and identities need a registry).`,
		Example: `  microshift-compose mirror --profile full --arch x86_64 --to oci:out/images
  microshift-compose mirror --lock out/compose.lock.json --to dir:out/images
  microshift-compose mirror --lock out/compose.lock.json --to oci-archive:microshift-images.tar
  microshift-compose mirror --from oci-archive:microshift-images.tar --to docker://mirror.example.com:5000/microshift
  microshift-compose mirror --lock out/compose.lock.json --to docker://mirror.example.com:5000/microshift --authfile auth.json
  microshift-compose mirror --lock out/compose.lock.json --verify-key redhat-release-key3.pub --to oci-archive:microshift-images.tar
  microshift-compose mirror --lock new/compose.lock.json --since old/compose.lock.json --image quay.io/example/microshift-os@sha256:… --to oci-archive:day2.tar --max-size 4000MB
  microshift-compose mirror --from oci-archive:day2.tar.001 --to docker://mirror.example.com:5000/microshift
  microshift-compose mirror --lock out/compose.lock.json --to oci-archive:bundle.tar --sign-key cosign.key
  microshift-compose mirror --from oci-archive:bundle.tar --verify-key cosign.pub --to docker://mirror.example.com:5000/microshift
  microshift-compose mirror -f device.toml --to docker://mirror.example.com:5000/microshift`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := file.apply(cmd, false); err != nil {
				return err
			}
			if to == "" {
				return usageError{errors.New("--to is required: oci:DIR, dir:DIR, oci-archive:FILE or docker://REGISTRY/PREFIX")}
			}
			target, err := airgap.ParseDestination(to)
			if err != nil {
				return usageError{fmt.Errorf("--to: %w", err)}
			}
			var source airgap.Target
			if from != "" {
				if source, err = airgap.ParseSource(from); err != nil {
					return usageError{fmt.Errorf("--from: %w", err)}
				}
			}
			if err := reg.Validate(); err != nil {
				return err
			}
			if err := format.Validate(); err != nil {
				return err
			}
			if err := trust.Validate(); err != nil {
				return err
			}
			if err := bnd.Validate(target, sel.AllowUnpinned); err != nil {
				return err
			}
			if err := checkInputsKept(target, mirrorInputs(&lock, &bnd, &trust, &sign, &file)); err != nil {
				return err
			}
			if sign.Key != "" && target.Transport != airgap.TransportArchive {
				return usageError{fmt.Errorf("--sign-key signs an oci-archive:FILE bundle, and --to is %s: sign images with cosign sign", target)}
			}
			if from != "" && (trust.Policy != "" || trust.Identity.Enabled()) {
				return usageError{errors.New("--policy and the certificate identity flags check signatures in the images' registries, and --from reads a layout: verify when mirroring from the registries (the signatures are copied into the layout with the images), or load the layout into a registry and verify there; --verify-key with --from checks the bundle's signature")}
			}
			signer, err := sign.start()
			if err != nil {
				return err
			}
			// With --from, --verify-key is the bundle's key: its signature
			// is checked before anything else is read or written. The
			// images' own signatures were checked when the bundle was made
			// (mirror --verify-key from the registries) and travel in it.
			imageTrust := trust.enabled() && from == ""
			if from != "" && len(trust.Keys) > 0 {
				if err := verifyBundleSignature(cmd.Context(), cmd.ErrOrStderr(), source, trust.Keys); err != nil {
					return err
				}
			}
			var refs, compositions []string
			var arch releases.Arch
			// built are the layouts build wrote that the lock (and the
			// locks of --since) names: the filtered operator catalogs,
			// read from there. builtRefs are their images, which build
			// made, so that no registry has signatures of them.
			var built []airgap.Target
			builtRefs := map[string]bool{}
			if from != "" && lock.Path == "" && sel.Profile == "" {
				for _, n := range selectionFlags {
					if f := cmd.Flags().Lookup(n); f != nil && f.Changed {
						return usageError{fmt.Errorf("--%s selects a plan: add --profile (or --lock), or drop it to copy every image of %s", n, from)}
					}
				}
				if len(bnd.Images) > 0 {
					return usageError{fmt.Errorf("--image adds images beyond the plan; without --lock or --profile, every image of %s is copied already", from)}
				}
				if refs, err = airgap.LayoutImages(source, registryclient.Options{}); err != nil {
					return err
				}
			} else {
				// --allow-unpinned is for the --image references too,
				// with a lock.
				var keep []string
				if len(bnd.Images) > 0 {
					keep = []string{"allow-unpinned"}
				}
				p, err := planFrom(cmd, &lock, &cat, &rel, &sel, &rnd, keep...)
				if err != nil {
					return err
				}
				refs, arch = bnd.withImages(p.ImageRefs()), releases.Arch(p.Arch)
				if t, ok := airgap.BuiltLayout(lock.Path, p); ok {
					built = append(built, t)
					builtRefs[p.Operators.Filtered.Ref] = true
				}
				if p.ID != "" {
					compositions = []string{p.ID}
				}
			}
			bases, err := bnd.bases()
			if err != nil {
				return err
			}
			built = append(built, bnd.built...)
			partSize, err := bnd.partSize()
			if err != nil {
				return err
			}
			// Nothing to copy is a mistake (an edited or truncated lock, an
			// empty layout), not a mirror of nothing that exits 0.
			if len(refs) == 0 {
				switch {
				case lock.Path != "":
					return fmt.Errorf("lock file %s lists no images: nothing to mirror", lock.Path)
				case from != "" && sel.Profile == "":
					return fmt.Errorf("--from %s holds no images: nothing to mirror", from)
				}
				return errors.New("the plan has no images: nothing to mirror")
			}
			rc, err := reg.client()
			if err != nil {
				return err
			}
			copyRefs := refs
			// What registries hold: the images build made have no
			// signatures or attachments anywhere.
			fromRegistries := slices.DeleteFunc(slices.Clone(refs), func(r string) bool { return builtRefs[r] })
			if imageTrust {
				// Every image is verified before anything is copied: a
				// refused image leaves the destination untouched.
				if err := trust.verify(cmd.Context(), cmd.ErrOrStderr(), fromRegistries, rc, "nothing was mirrored"); err != nil {
					return err
				}
				for _, r := range slices.Sorted(maps.Keys(builtRefs)) {
					fmt.Fprintf(cmd.ErrOrStderr(), "%s is the filtered operator catalog build made (%s): no registry signed it; it is copied unverified (sign it, e.g. with cosign, where the devices check it)\n", r, output.OperatorCatalogLayout)
				}
			}
			// Without a plan, --from copies every image of the layout,
			// what is attached to them included.
			planned := from == "" || lock.Path != "" || sel.Profile != ""
			if !cmd.Flags().Changed("referrers") {
				referrers = imageTrust
			}
			switch {
			case referrers && planned:
				atts, err := airgap.Attachments(cmd.Context(), fromRegistries, source, rc)
				if err != nil {
					return err
				}
				if err := trust.verifyBundles(cmd.ErrOrStderr(), atts, "nothing was mirrored"); err != nil {
					return err
				}
				copyRefs = slices.Clone(refs)
				for _, a := range atts {
					copyRefs = append(copyRefs, a.Ref)
				}
			case imageTrust:
				// What is copied is what was verified: the signatures.
				sigs, err := trust.signatureRefs(cmd.Context(), fromRegistries, rc)
				if err != nil {
					return err
				}
				copyRefs = append(slices.Clone(refs), sigs...)
			}
			opts := airgap.Options{
				Registry:     rc,
				Arch:         arch,
				AllPlatforms: allPlatforms,
				From:         source,
				Built:        built,
				PartSize:     partSize,
				Progress:     newProgress(cmd.ErrOrStderr(), quiet),
			}
			if sign.Key != "" {
				// The key decrypted beside the planning; a wrong password
				// fails here, before anything is copied.
				if _, err := signer(); err != nil {
					return err
				}
				opts.Sign = airgap.SignFunc(signer)
			}
			if len(bases) > 0 {
				opts.Bundle = &airgap.BundleOptions{Since: bases, Compositions: compositions, Extra: bnd.Images}
			}
			sum, err := airgap.Mirror(cmd.Context(), copyRefs, target, opts)
			if err != nil {
				return fmt.Errorf("mirroring to %s: %w", target, err)
			}
			if format.json() {
				return printJSON(cmd.OutOrStdout(), sum)
			}
			printMirrorSummary(cmd.OutOrStdout(), target, sum)
			return nil
		},
	}
	cat.addFlags(cmd)
	rel.addFlags(cmd)
	sel.addFlags(cmd)
	rnd.addFlags(cmd)
	lock.addFlags(cmd)
	reg.addFlags(cmd)
	format.addFlags(cmd)
	file.addFlags(cmd)
	trust.addFlags(cmd, "every image must satisfy before anything is copied; the signatures are copied with the images")
	bnd.addFlags(cmd)
	sign.addMirrorFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&to, "to", "", "destination: oci:DIR, dir:DIR, oci-archive:FILE or docker://REGISTRY/PREFIX")
	f.StringVar(&from, "from", "", "read the images from an OCI layout, oci:DIR or oci-archive:FILE, instead of their registries")
	f.BoolVar(&allPlatforms, "all-platforms", false, "copy every platform of multi-arch images, not only the plan's arch")
	f.BoolVar(&referrers, "referrers", false, "copy what is attached to each image with it: OCI 1.1 referrers (cosign signature bundles, attestations, SBOMs; through the referrers API or the sha256-<digest> tag) and cosign's sha256-<digest>.sig, .att and .sbom tags (default: on with --policy or --verify-key)")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress on stderr")
	markPaths(cmd, "to", "from")
	return cmd
}

// mirrorInputs are the files mirror reads, by the flag that names them:
// none of them may be what --to replaces. The layouts of --from and
// --since are airgap.Mirror's to check (it compares them as layouts).
func mirrorInputs(lock *lockOptions, bnd *bundleOptions, trust *trustOptions, sign *signOptions, file *fileOptions) [][2]string {
	in := [][2]string{{"-f", file.Path}, {"--lock", lock.Path}, {"--policy", trust.Policy}, {"--sign-key", sign.Key}}
	for _, k := range trust.Keys {
		in = append(in, [2]string{"--verify-key", k})
	}
	for _, s := range bnd.Since {
		if !isLayoutArg(s) {
			in = append(in, [2]string{"--since", s})
		}
	}
	return in
}

// checkInputsKept refuses a destination that would replace or change a
// file the command reads (each input is {flag, path}): resolved, so that
// "./x" and "x", symlinks and hard links are one file.
func checkInputsKept(to airgap.Target, inputs [][2]string) error {
	for _, in := range inputs {
		if to.Replaces(in[1]) {
			return usageError{fmt.Errorf("--to %s would replace %s %s, which this command reads: write to another destination", to, in[0], in[1])}
		}
	}
	return nil
}

// verifyBundleSignature checks the signature of the bundle src names with
// the --verify-key keys, and says on stderr which key verified it.
func verifyBundleSignature(ctx context.Context, stderr io.Writer, src airgap.Target, keyFiles []string) error {
	keys := make([]*attest.Verifier, len(keyFiles))
	for i, k := range keyFiles {
		v, err := attest.LoadVerifier(k)
		if err != nil {
			return err
		}
		keys[i] = v
	}
	v, err := airgap.VerifyArchive(ctx, src, keys)
	if err != nil {
		return fmt.Errorf("%w; nothing was mirrored", err)
	}
	fmt.Fprintf(stderr, "verified %s: %s is signed by %s\n", src, filepath.Base(v.Signed), v.Key)
	return nil
}

// printMirrorSummary prints the one-line summary of a mirror.
func printMirrorSummary(w io.Writer, to airgap.Target, sum *airgap.Summary) {
	what := fmt.Sprintf("%d images", sum.Images)
	var attached []string
	for _, a := range []struct {
		n            int
		one, several string
	}{
		{sum.Signatures, "signature", "signatures"},
		{sum.Attestations, "attestation", "attestations"},
		{sum.SBOMs, "SBOM", "SBOMs"},
		{sum.Referrers, "referrer", "referrers"},
	} {
		if a.n > 0 {
			attached = append(attached, fmt.Sprintf("%d %s", a.n, text.Plural(a.n, a.one, a.several)))
		}
	}
	if len(attached) > 0 {
		what += " and " + strings.Join(attached, ", ")
	}
	verb := "mirrored"
	switch sum.Bundle {
	case airgap.BundleWritten:
		verb = "wrote a differential bundle of"
	case airgap.BundleApplied:
		verb = "applied a differential bundle of"
	}
	head := fmt.Sprintf("%s %s (%d blobs, %d manifests) to %s", verb, what, sum.Blobs, sum.Manifests, sum.Destination)
	var detail string
	if to.Transport == airgap.TransportDocker {
		detail = fmt.Sprintf("%s uploaded in %d %s, %s mounted from other repositories in %d %s, %s already present",
			humanBytes(sum.Fetched), sum.Uploads, text.Plural(sum.Uploads, "blob", "blobs"),
			humanBytes(sum.Mounted), sum.Mounts, text.Plural(sum.Mounts, "blob", "blobs"), humanBytes(sum.Skipped))
	} else {
		detail = fmt.Sprintf("%s fetched, %s already present", humanBytes(sum.Fetched), humanBytes(sum.Skipped))
	}
	switch sum.Bundle {
	case airgap.BundleWritten:
		detail += fmt.Sprintf("; %d %s (%s) left out, held by the base", sum.Omitted, text.Plural(sum.Omitted, "blob", "blobs"), humanBytes(sum.OmittedBytes))
	case airgap.BundleApplied:
		detail += fmt.Sprintf("; the %d %s (%s) it leaves out were there", sum.Omitted, text.Plural(sum.Omitted, "blob", "blobs"), humanBytes(sum.OmittedBytes))
	}
	if sum.Parts > 0 {
		detail += fmt.Sprintf("; %s in %d %s, %d written", humanBytes(sum.ArchiveBytes), sum.Parts, text.Plural(sum.Parts, "part", "parts"), sum.PartsWritten)
	} else if sum.ArchiveBytes > 0 {
		detail += fmt.Sprintf("; archive %s", humanBytes(sum.ArchiveBytes))
	}
	fmt.Fprintf(w, "%s: %s, in %.1fs\n", head, detail, sum.Duration.Seconds())
}

// planFrom is the plan a registry command works on: the lock file's, or
// the selection's.
// keep are selection flags allowed beside --lock.
func planFrom(cmd *cobra.Command, lock *lockOptions, cat *catalogOptions, rel *releaseOptions, sel *selectionOptions, rnd *renderOptions, keep ...string) (*plan.Plan, error) {
	if err := lock.Validate(cmd, keep...); err != nil {
		return nil, err
	}
	if lock.Path != "" {
		return lock.load()
	}
	if sel.Profile == "" {
		return nil, usageError{errors.New("--profile or --lock is required")}
	}
	if err := sel.Validate(); err != nil {
		return nil, err
	}
	return resolvePlan(cmd, cat, rel, sel, rnd, nil)
}
