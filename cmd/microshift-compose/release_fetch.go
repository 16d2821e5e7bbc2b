package main

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/Masterminds/semver/v3"
	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/rpmrepo"
)

func newReleaseFetchCmd() *cobra.Command {
	var (
		repo  dnfRepoOptions
		store storeOptions
		reg   registryOptions
		quiet bool
	)
	cmd := &cobra.Command{
		Use:   "fetch VERSION",
		Short: "Fetch a shipped version's release files from its microshift-release-info RPMs in a dnf repository",
		Long: `fetch finds the microshift-release-info RPM of exactly VERSION (X.Y.Z) in dnf
repositories, and the microshift-<component>-release-info RPMs of the same
build, downloads them, checks each against the checksum the repository's
metadata lists, and reads the release files they install in
/usr/share/microshift/release.

Without Red Hat's X.Y.Z there, it takes the newest microshift-io build of
it (X.Y.Z_<time>_g<commit>_<OKD tag>, github.com/microshift-io/microshift:
OKD images, kindnet and TopoLVM, no subscription); VERSION may name one such
build exactly. Its release files name TopoLVM's image by tag: fetch resolves
each tag to a digest with the registry (--authfile, --cert-dir, --tls-verify
as podman takes them) and records it, so that build stays offline; a tag
that does not resolve is kept, with a warning.

The release is stored in the per-user cache
($MICROSHIFT_COMPOSE_CACHE/releases, else ~/.cache/microshift-compose/releases),
where --release VERSION finds it, with the RPMs' NEVRA and sha256 (the lock
of a build names them); --output DIR writes the release directory instead.

Repositories are given as dnf takes them: --repo URL (the directory holding
repodata/), a .repo file (--repo-file; baseurl, sslcacert, sslclientcert,
sslclientkey, sslverify, proxy, as RHEL's CDN and Satellite are reached), or
the host's /etc/yum.repos.d (the default), where --repo ID picks repositories
by ID, enabled or not. $basearch is --arch, $releasever --releasever.

A repository's credentials (user information of its URL, username and
password) and client certificate go only to its own origins, the scheme, host
and port of its baseurls: a mirror its metadata names (xml:base, an absolute
href) or a redirect to another origin is read without them.`,
		Example: `  # On a subscribed RHEL host: its rhocp repository, with its entitlement certificate
  microshift-compose release fetch 4.18.7 --repo rhocp-4.18-for-rhel-9-x86_64-rpms
  microshift-compose build --release 4.18.7 --profile full --output out/

  # From a mirror, or a .repo file copied from a subscribed host
  microshift-compose release fetch 4.18.7 --repo https://mirror.example/rhocp/4.18/os/
  microshift-compose release fetch 4.18.7 --repo-file redhat.repo --repo 'rhocp-4.18-*'

  # microshift-io's build of 4.21.0, from a repository of its RPMs
  microshift-compose release fetch 4.21.0 --repo-file microshift-io.repo`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := repo.Validate(); err != nil {
				return err
			}
			if err := reg.Validate(); err != nil {
				return err
			}
			version := args[0]
			if v, err := semver.StrictNewVersion(version); err != nil || v.Prerelease() != "" || v.Metadata() != "" {
				if _, ioErr := releases.ParseMicroShiftIOVersion(version); ioErr != nil {
					return usageError{fmt.Errorf("VERSION %q: want a shipped version, X.Y.Z (e.g. 4.18.7), or a microshift-io build of one (X.Y.Z_<time>_g<commit>_<OKD tag>)", text.Escape(version))}
				}
			}
			repos, err := repo.repos()
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			c := &rpmrepo.Client{Timeout: repo.Timeout, UserAgent: "microshift-compose/" + versionString()}
			var progress rpmrepo.Progress
			if !quiet {
				progress = func(format string, a ...any) {
					fmt.Fprintln(stderr, text.Escape(fmt.Sprintf(format, a...)))
				}
			}
			downloads, err := c.Fetch(cmd.Context(), repos, version, repo.arch(), progress)
			if err != nil {
				return fmt.Errorf("fetching release %s: %w", version, err)
			}
			rel, err := rpmrepo.FromDownloads(downloads)
			if err != nil {
				return fmt.Errorf("fetching release %s: %w", version, err)
			}
			reg.Timeout = repo.Timeout
			resolved, err := resolveTags(cmd.Context(), rel, &reg, stderr)
			if err != nil {
				return err
			}
			res, err := store.write(rel, resolved)
			if err != nil {
				return err
			}
			printStored(cmd.OutOrStdout(), rel, resolved, res, store.Output == "")
			return nil
		},
	}
	repo.addFlags(cmd)
	store.addFlags(cmd)
	reg.addAccessFlags(cmd)
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress on stderr")
	return cmd
}

// printStored says what fetch (or import FILE.rpm) stored or wrote, and
// the tags it resolved.
func printStored(w io.Writer, rel *rpmrepo.Release, resolved map[string]string, res *releases.WriteResult, stored bool) {
	r := rel.Release
	verb := "stored"
	switch {
	case res.Unchanged:
		verb = "already stored"
		if !stored {
			verb = "already in"
		}
	case res.Replaced:
		verb = "replaced"
	case !stored:
		verb = "wrote"
	}
	images := 0
	for _, f := range r.Files() {
		images += len(f.Images)
	}
	kind := releases.BaseKind(r.Base(r.Arches()[0]))
	if v := r.MicroShiftIO; v != nil {
		kind += ", microshift-io's build, OKD " + v.OKD
	}
	fmt.Fprintf(w, "%s release %s (stream %s, %s) in %s: %d files, %d images\n", verb, r.Version, r.Stream(), kind, text.Escape(res.Dir), len(r.Files()), images)
	for _, p := range rel.RPMs {
		fmt.Fprintf(w, "  %s  sha256:%s  %s\n", p.NEVRA, p.SHA256, text.Escape(p.From))
	}
	for _, tag := range slices.Sorted(maps.Keys(resolved)) {
		fmt.Fprintf(w, "  resolved %s to %s\n", text.Escape(tag), text.Escape(resolved[tag]))
	}
	if stored {
		fmt.Fprintf(w, "build it with: microshift-compose build --release %s --profile PROFILE --output DIR\n", r.Version)
	} else {
		fmt.Fprintf(w, "build it with: microshift-compose build --release-dir %s --profile PROFILE --output DIR\n", text.Escape(res.Dir))
	}
}
