package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
)

func newPruneCmd() *cobra.Command {
	var (
		keep   []string
		images []string
		apply  bool
		reg    registryOptions
		format formatOptions
	)
	cmd := &cobra.Command{
		Use:   "prune --keep compose.lock.json... [--apply] oci:DIR|docker://REGISTRY/PREFIX",
		Short: "Remove from an OCI layout the images and blobs no kept composition reaches",
		Long: `prune removes from an OCI image layout (what mirror --to oci:DIR or a
differential bundle applied to it filled) every image that none of the
--keep compositions names, and every blob no kept image reaches: the
layout keeps only what the site still runs. What mirror --referrers
copied with a kept image stays with it: cosign's sha256-<digest>.sig,
.att and .sbom tags and OCI 1.1 referrers whose subject it is (sigstore
bundles, SBOMs), and what is attached to those in turn; --image keeps an
image no lock names (the bootc OS image mirror --image carried).

Without --apply nothing is removed: prune prints the images that would go,
how many blobs and the bytes freed (--output json lists every blob) (a dry run, as for 'podman image prune'
without --force). --apply removes them: index.json is replaced first, in one
rename, then the blobs are deleted; an interrupted prune leaves every kept
image whole and a rerun finishes it.

Every image of a kept lock must be in the layout, named as the lock writes
it: a lock the layout was not mirrored from would keep nothing there, and
is refused before anything is removed. The layout is locked as mirror
locks it: one that a mirror (or another prune) is writing is refused.
A differential bundle is not pruned (prune the layout it was applied to),
nor an archive (mirror writes it anew), nor a dir: layout: it holds the
images of one build's bootc Containerfile, each also as a directory of hard
links listed in image-list.txt, which prune would leave behind; mirror the
lock of the build you keep into a new dir: instead. Only blobs under
blobs/sha256 are removed, and files there that a killed mirror left half
written; other files are left alone.

docker://REGISTRY/PREFIX (where mirror pushed) is reported on, never
pruned: prune checks that the registry serves every kept image whole,
lists the repositories under PREFIX (the registry's catalog API) and their
tags no kept image has (its cosign and referrers tags, attached to it,
stay), and the bytes only those tags reach. Deleting is the registry's:
'skopeo delete docker://REPO:TAG', then its garbage collection. mirror
pushes pinned images by digest only, untagged, so a collection that
deletes untagged manifests ('registry garbage-collect --delete-untagged')
would remove kept images too. The distribution API lists tags, not
manifests: images no longer kept that were pushed by digest are not
listed, and the report says so, with the repositories scanned where they
may remain (a repository with no tags at all, which holds nothing else, is
listed as such); the bytes reported are a lower bound. A kept image the
registry lacks makes the report exit 1.`,
		Example: `  # What would go once the site runs only the new release:
  microshift-compose prune --keep day2/compose.lock.json oci:/srv/site
  # Keep two releases and the OS image, and remove the rest:
  microshift-compose prune --keep day1/compose.lock.json --keep day2/compose.lock.json \
    --image registry.example.com/microshift-os@sha256:… --apply oci:/srv/site
  # What a site registry holds beyond the kept compositions:
  microshift-compose prune --keep day2/compose.lock.json docker://mirror.example.com:5000/microshift`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := format.Validate(); err != nil {
				return err
			}
			// What prune acts on first: a target it does not take is
			// said as such, whatever else is missing.
			target, err := parsePruneTarget(args[0])
			if err != nil {
				return err
			}
			if len(keep) == 0 && len(images) == 0 {
				return usageError{fmt.Errorf("prune: %w: give --keep compose.lock.json (repeatable) for every composition the site still runs; prune removes everything else", airgap.ErrNothingKept)}
			}
			if err := reg.Validate(); err != nil {
				return err
			}
			if target.Transport == airgap.TransportDocker && apply {
				return usageError{fmt.Errorf("prune reports on a registry and removes nothing from it: drop --apply, then delete what it lists with 'skopeo delete' and run the registry's garbage collection")}
			}
			for _, ref := range images {
				if err := checkExtraImage(ref, true); err != nil {
					return err
				}
			}
			var kept []airgap.Kept
			for _, path := range keep {
				p, err := lockfile.Load(path)
				if err != nil {
					return fmt.Errorf("--keep: %w", err)
				}
				kept = append(kept, airgap.Kept{Name: path, Refs: p.ImageRefs()})
			}
			for _, ref := range images {
				kept = append(kept, airgap.Kept{Name: "--image", Refs: []string{ref}})
			}
			if target.Transport == airgap.TransportDocker {
				rc, err := reg.client()
				if err != nil {
					return err
				}
				r, err := airgap.PruneRegistryReport(cmd.Context(), target, kept, airgap.PruneOptions{Registry: rc})
				if err != nil {
					return err
				}
				if format.json() {
					err = printJSON(cmd.OutOrStdout(), r)
				} else {
					printRegistryReport(cmd.OutOrStdout(), r)
				}
				if err == nil && len(r.Missing) > 0 {
					err = fmt.Errorf("%s lacks %d of the %d kept images, %s first: %s", r.Registry, len(r.Missing), r.KeptImages, r.Missing[0].Ref, r.Missing[0].Reason)
				}
				return err
			}
			r, err := airgap.Prune(cmd.Context(), target, kept, airgap.PruneOptions{Apply: apply})
			if err != nil {
				return err
			}
			if format.json() {
				return printJSON(cmd.OutOrStdout(), r)
			}
			printPrune(cmd.OutOrStdout(), r)
			if !r.Applied && len(r.Images)+len(r.Blobs)+len(r.Partials) > 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "dry run: nothing was removed; add --apply to remove it")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&keep, "keep", nil, "compose.lock.json of a composition the site still runs: its images, and every blob they reach, stay (repeatable; at least one)")
	f.StringArrayVar(&images, "image", nil, "keep this image too, named as in the layout, beyond the locks' (the bootc OS image mirror --image carried); repeatable")
	f.BoolVar(&apply, "apply", false, "remove what the report lists (without it, prune only reports); not for a registry")
	reg.addFlags(cmd)
	format.addFlags(cmd)
	return cmd
}

// parsePruneTarget parses prune's argument: what prune acts on is checked
// first, so that the message names only oci:DIR and docker://, never the
// destinations mirror writes that prune refuses.
func parsePruneTarget(s string) (airgap.Target, error) {
	if !strings.HasPrefix(s, airgap.TransportOCI+":") && !strings.HasPrefix(s, "docker://") {
		why := ""
		switch {
		case strings.HasPrefix(s, airgap.TransportArchive+":"):
			why = " (an archive is written anew by mirror, not pruned)"
		case strings.HasPrefix(s, airgap.TransportDir+":"):
			why = ": " + airgap.DirNotPruned
		}
		return airgap.Target{}, usageError{fmt.Errorf("prune takes oci:DIR, an OCI image layout to prune, or docker://REGISTRY/PREFIX, a registry to report on; %q is neither%s", clipArg(s), why)}
	}
	t, err := airgap.ParseDestination(s)
	if err != nil {
		return airgap.Target{}, usageError{err}
	}
	return t, nil
}

func printPrune(w io.Writer, r *airgap.PruneReport) {
	verb, blobs := "would remove", "would free"
	if r.Applied {
		verb, blobs = "removed", "freed"
	}
	for _, im := range r.Images {
		n := im.Name
		if n == "" {
			n = "(an entry without a name)"
		}
		fmt.Fprintf(w, "%s image %s (%s)\n", verb, n, im.Digest)
	}
	if len(r.Partials) > 0 {
		fmt.Fprintf(w, "%s %d partial files an interrupted mirror left\n", verb, len(r.Partials))
	}
	fmt.Fprintf(w, "%s: kept %d images and %d %s (%d signatures; %d blobs, %s); %s %d images and %d blobs: %s %s\n",
		r.Layout, r.KeptImages, r.KeptAttachments, text.Plural(r.KeptAttachments, "attachment", "attachments"), r.KeptSignatures, r.KeptBlobs, humanBytes(r.KeptBytes), verb, len(r.Images), len(r.Blobs)+len(r.Partials), blobs, humanBytes(r.Freed))
}

func printRegistryReport(w io.Writer, r *airgap.RegistryReport) {
	for _, m := range r.Missing {
		fmt.Fprintf(w, "missing kept image %s: %s\n", m.Ref, m.Reason)
	}
	untaggedOnly := 0
	for _, repo := range r.Repositories {
		what := "no kept image lives in it"
		if repo.Kept {
			what = "kept images live in it"
		}
		if repo.UntaggedOnly {
			untaggedOnly++
			fmt.Fprintf(w, "%s (%s): no tags: it holds images pushed by digest only, untagged, which the registry API cannot list\n", repo.Name, what)
			continue
		}
		fmt.Fprintf(w, "%s (%s): %d %s no kept image has", repo.Name, what, len(repo.Tags), text.Plural(len(repo.Tags), "tag", "tags"))
		if len(repo.Tags) > 0 {
			fmt.Fprintf(w, ": %s", strings.Join(repo.Tags, ", "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%s: %d kept images, %d missing; %d repositories hold what no kept image is; %s only their tags reach; %s; nothing was removed\n",
		r.Registry, r.KeptImages, len(r.Missing), len(r.Repositories), humanBytes(r.Reclaimable), untaggedNote(r.Scanned, untaggedOnly))
}

// untaggedNote says what a registry report cannot see: images pushed by
// digest (untagged, as mirror pushes) that no kept lock names, in any of
// the scanned repositories, untaggedOnly of which hold nothing else.
func untaggedNote(scanned, untaggedOnly int) string {
	if scanned == 0 {
		return "the prefix holds no repository"
	}
	note := fmt.Sprintf("untagged manifests are not listed by the registry API, so images no kept lock names that were pushed by digest (as mirror pushes) may remain in the %d %s scanned, uncounted", scanned, text.Plural(scanned, "repository", "repositories"))
	if untaggedOnly > 0 {
		note += fmt.Sprintf(" (they do in the %d listed with no tags)", untaggedOnly)
	}
	return note
}
