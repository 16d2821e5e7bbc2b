package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
	"github.com/microshift-compose/microshift-compose/releases/rebase"
	"github.com/microshift-compose/microshift-compose/releases/rpmrepo"
)

// dnfRepoOptions choose the dnf repositories release-info RPMs are fetched
// from, the way dnf is told: --repo (a baseurl, or the ID of a repository
// of the .repo files, enabled or not, as dnf --repo takes it), .repo files,
// the host's /etc/yum.repos.d.
type dnfRepoOptions struct {
	Repos      []string
	RepoFiles  []string
	ReposDir   string
	Arch       string
	Releasever string
	Timeout    time.Duration
	// timeout is --timeout as given, for messages.
	timeout *durationValue
}

func (o *dnfRepoOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&o.Repos, "repo", nil, "a dnf repository: its baseurl (https://, http://, file:///), or the ID of a repository of --repo-file or --reposdir, enabled or not (globs as dnf --repo); repeat")
	f.StringArrayVar(&o.RepoFiles, "repo-file", nil, "a .repo file: its enabled repositories (or those --repo names), with their sslcacert, sslclientcert, sslclientkey; repeat")
	f.StringVar(&o.ReposDir, "reposdir", rpmrepo.SystemReposDir, "the directory of .repo files read when no --repo URL or --repo-file is given, or --repo names an ID")
	f.StringVar(&o.Arch, "arch", "", "$basearch of the repositories' URLs: x86_64 or aarch64 (default: this machine's)")
	f.StringVar(&o.Releasever, "releasever", "", "$releasever of the repositories' URLs (default for the host's repositories: /etc/dnf/vars/releasever, else the major VERSION_ID of /etc/os-release)")
	o.timeout = durationVar(f, &o.Timeout, "timeout", rpmrepo.DefaultTimeout, "how long to wait to connect and for an answer; a download must then keep 16 KiB/s over each --timeout")
}

func (o *dnfRepoOptions) Validate() error {
	if o.Arch != "" {
		if _, err := releases.ParseArch(o.Arch); err != nil {
			return usageError{fmt.Errorf("--arch: %w", err)}
		}
	}
	if o.Timeout <= 0 {
		return usageError{fmt.Errorf("--timeout must be positive, got %s", spelled(o.timeout, o.Timeout))}
	}
	for _, r := range o.Repos {
		if strings.TrimSpace(r) == "" {
			return usageError{errors.New("--repo: empty value")}
		}
	}
	return nil
}

func (o *dnfRepoOptions) arch() string {
	if o.Arch == "" {
		return hostArch()
	}
	a, _ := releases.ParseArch(o.Arch)
	return string(a)
}

// repos reads the repositories the flags name.
func (o *dnfRepoOptions) repos() ([]*rpmrepo.Repo, error) {
	var urls, ids []string
	for _, r := range o.Repos {
		if rpmrepo.IsURL(r) {
			urls = append(urls, r)
		} else {
			ids = append(ids, r)
		}
	}
	var out []*rpmrepo.Repo
	var defined []*rpmrepo.Repo
	from := ""
	switch {
	case len(o.RepoFiles) > 0:
		vars := rpmrepo.NewVars(o.arch(), o.Releasever)
		for _, f := range o.RepoFiles {
			repos, err := rpmrepo.LoadRepoFile(f, vars)
			if err != nil {
				return nil, err
			}
			defined = append(defined, repos...)
		}
		if err := rpmrepo.CheckUnique(defined); err != nil {
			return nil, err
		}
		from = strings.Join(o.RepoFiles, ", ")
	case len(ids) > 0 || len(urls) == 0:
		vars := rpmrepo.NewVars(o.arch(), o.Releasever)
		if o.ReposDir == rpmrepo.SystemReposDir {
			var err error
			if vars, err = rpmrepo.HostVars(o.arch(), o.Releasever); err != nil {
				return nil, err
			}
		}
		repos, err := rpmrepo.LoadReposDir(o.ReposDir, vars)
		if err != nil {
			return nil, err
		}
		defined, from = repos, o.ReposDir
	}
	if defined != nil || from != "" {
		sel, err := rpmrepo.Select(defined, ids, from)
		if err != nil {
			return nil, err
		}
		out = append(out, sel...)
	}
	for _, u := range urls {
		r, err := rpmrepo.URLRepo(u)
		if err != nil {
			return nil, usageError{err}
		}
		out = append(out, r)
	}
	return out, nil
}

// storeOptions say where release-info RPMs' release files go: a release
// directory (--output), or the per-user store --release X.Y.Z reads.
type storeOptions struct {
	Output string
	Force  bool
}

func (o *storeOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.Output, "output", "", "write the release directory here (as /usr/share/microshift/release, for --release-dir) instead of storing it for --release VERSION")
	cmd.Flags().BoolVar(&o.Force, "force", false, "replace a stored release (or --output directory) that holds other files")
}

// write stores or writes rel with the tags resolved for it, returning
// where and what happened.
func (o *storeOptions) write(rel *rpmrepo.Release, resolved map[string]string) (*releases.WriteResult, error) {
	dir := o.Output
	if dir == "" {
		var err error
		if dir, err = releases.StoredDir(rel.Release.Version.String()); err != nil {
			return nil, err
		}
	}
	return releases.WriteRecorded(dir, rel.Files, releases.Record{RPMs: rel.RPMs, Resolved: resolved}, o.Force)
}

// resolveTags resolves the tag references of rel's files to digests when
// its build's release files name images by tag (microshift-io's TopoLVM):
// release fetch talks to the network anyway, so that build need not. A tag
// a registry does not resolve stays a tag, with a warning: build refuses it
// unless --allow-unpinned.
func resolveTags(ctx context.Context, rel *rpmrepo.Release, reg *registryOptions, stderr io.Writer) (map[string]string, error) {
	know, err := knowledge.Default()
	if err != nil {
		return nil, err
	}
	if b := know.Build(rel.Release.Build); b == nil || !b.ResolveTags {
		return nil, nil
	}
	rc, err := reg.client()
	if err != nil {
		return nil, err
	}
	resolved, failed, err := rebase.ResolveTags(ctx, rel.Release.Files(), rc)
	if err != nil {
		return nil, fmt.Errorf("resolving the release's tags: %w", err)
	}
	for _, u := range failed {
		warn(stderr, fmt.Sprintf("%s: not resolved to a digest, so build refuses it unless --allow-unpinned; fetch again where the registry answers", u))
	}
	return resolved, nil
}
