package rpmrepo

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	rpmutils "github.com/sassoftware/go-rpmutils"

	"github.com/microshift-compose/microshift-compose/releases"
)

// Downloaded is a release-info RPM fetched from a repository.
type Downloaded struct {
	*Package
	// URL is where it was downloaded from (without credentials), Repo
	// the repository's ID.
	URL, Repo string
}

// found is a release-info package listed in a repository's metadata.
type found struct {
	repo *Repo
	base *url.URL
	pkg  primaryPackage
}

// ErrVersionNotFound is matched (errors.Is) by the error for a version no
// repository has.
var ErrVersionNotFound = errors.New("no such version")

// versionNotFound is that error: its message says what the repositories
// have instead.
type versionNotFound struct{ msg string }

func (e *versionNotFound) Error() string        { return e.msg }
func (e *versionNotFound) Is(target error) bool { return target == ErrVersionNotFound }

// Progress receives one line per step (the metadata of each repository,
// each download), for stderr; nil discards them.
type Progress func(format string, args ...any)

// Fetch finds the microshift-release-info RPM of version (X.Y.Z) in repos,
// and the microshift-<component>-release-info RPMs of the same build
// (version and release), downloads each, checks its size and checksum
// against the repository metadata, and reads it. The core package comes
// first. A repository that cannot be read fails the fetch unless it is
// skip_if_unavailable; arch is the arch a package may have besides noarch.
func (c *Client) Fetch(ctx context.Context, repos []*Repo, version, arch string, progress Progress) ([]*Downloaded, error) {
	if progress == nil {
		progress = func(string, ...any) {}
	}
	if len(repos) == 0 {
		return nil, errors.New("no repositories to fetch from")
	}
	var all []found
	for _, r := range repos {
		progress("reading the metadata of %s", r.ID)
		pkgs, base, err := c.metadata(ctx, r, progress)
		if err != nil {
			if r.SkipIfUnavailable && ctx.Err() == nil {
				progress("skipping %s (skip_if_unavailable): %v", r.ID, err)
				continue
			}
			return nil, err
		}
		for _, p := range pkgs {
			if p.Arch == "noarch" || p.Arch == arch {
				all = append(all, found{repo: r, base: base, pkg: p})
			}
		}
	}
	core, err := pickCore(all, version, repos)
	if err != nil {
		return nil, err
	}
	picked := []found{core}
	seen := map[string]bool{core.pkg.Name: true}
	for _, f := range all {
		if seen[f.pkg.Name] || f.pkg.nevra().EVR() != core.pkg.nevra().EVR() {
			continue
		}
		seen[f.pkg.Name] = true
		picked = append(picked, f)
	}
	slices.SortStableFunc(picked[1:], func(a, b found) int { return strings.Compare(a.pkg.Name, b.pkg.Name) })
	var out []*Downloaded
	for _, f := range picked {
		d, err := c.download(ctx, f, progress)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// pickCore returns the newest build of the core package at version; when
// there is none, the error lists the versions nearest to it.
func pickCore(all []found, version string, repos []*Repo) (found, error) {
	var cores []found
	var versions []string
	for _, f := range all {
		if f.pkg.Name != CorePackage {
			continue
		}
		cores = append(cores, f)
		if !slices.Contains(versions, f.pkg.Version.Ver) {
			versions = append(versions, f.pkg.Version.Ver)
		}
	}
	var ids []string
	for _, r := range repos {
		ids = append(ids, r.ID)
	}
	if len(cores) == 0 {
		return found{}, &versionNotFound{fmt.Sprintf("%s has no %s package (is it the repository MicroShift ships in, such as rhocp-<X.Y>-for-rhel-9-<arch>-rpms?)", strings.Join(ids, ", "), CorePackage)}
	}
	var best *found
	for i := range cores {
		f := &cores[i]
		if !VersionMatches(f.pkg.Version.Ver, version) {
			continue
		}
		// X.Y.Z itself before a microshift-io build of it; else the
		// newest release (and build) of the version, the first
		// repository's among equals.
		if exact, bestExact := f.pkg.Version.Ver == version, best != nil && best.pkg.Version.Ver == version; best != nil && exact != bestExact {
			if exact {
				best = f
			}
			continue
		}
		if best == nil || rpmutils.Vercmp(f.pkg.nevra().EVR(), best.pkg.nevra().EVR()) > 0 {
			best = f
		}
	}
	if best != nil {
		return *best, nil
	}
	slices.SortFunc(versions, rpmutils.Vercmp)
	span := fmt.Sprintf("1 version, %s", versions[0])
	if len(versions) > 1 {
		span = fmt.Sprintf("%d versions, %s to %s", len(versions), versions[0], versions[len(versions)-1])
	}
	return found{}, &versionNotFound{fmt.Sprintf("%s has no %s %s; nearest: %s (%s)",
		strings.Join(ids, ", "), CorePackage, version, strings.Join(Nearest(versions, version, 5), ", "), span)}
}

// VersionMatches reports whether an RPM version is the one a fetch asks
// for: exactly it, or, for X.Y.Z, a microshift-io build of X.Y.Z
// (X.Y.Z_..._gCOMMIT_OKD-TAG, releases.ParseMicroShiftIOVersion).
func VersionMatches(rpmVersion, want string) bool {
	if rpmVersion == want {
		return true
	}
	if !strings.HasPrefix(rpmVersion, want+"_") {
		return false
	}
	v, err := releases.ParseMicroShiftIOVersion(rpmVersion)
	return err == nil && v.Version.String() == want && v.Prerelease == ""
}

// Nearest returns up to n of sorted (rpm version order) around where
// version would be, in order.
func Nearest(sorted []string, version string, n int) []string {
	i, _ := slices.BinarySearchFunc(sorted, version, rpmutils.Vercmp)
	lo, hi := i, i
	for hi-lo < n && (lo > 0 || hi < len(sorted)) {
		if hi < len(sorted) {
			hi++
		}
		if hi-lo < n && lo > 0 {
			lo--
		}
	}
	return sorted[lo:hi]
}

// metadata reads a repository's repomd.xml and primary metadata, trying
// each baseurl in turn, and returns its release-info packages and the
// baseurl that answered.
func (c *Client) metadata(ctx context.Context, r *Repo, progress Progress) ([]primaryPackage, *url.URL, error) {
	var errs []string
	for _, base := range r.BaseURLs {
		pkgs, err := c.metadataAt(ctx, r, base, progress)
		if err == nil {
			return pkgs, base, nil
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		errs = append(errs, err.Error())
	}
	return nil, nil, fmt.Errorf("repo %s (%s): %s", r.ID, r.Where, strings.Join(errs, "; "))
}

func (c *Client) metadataAt(ctx context.Context, r *Repo, base *url.URL, progress Progress) ([]primaryPackage, error) {
	mdURL := base.JoinPath("repodata", "repomd.xml")
	data, err := c.readAll(ctx, r, mdURL, MaxRepomdSize)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("%s: %w: is %s the repository's root, the directory holding repodata/?", redact(mdURL), err, redact(base))
		}
		return nil, fmt.Errorf("%s: %w", redact(mdURL), err)
	}
	d, err := primaryLocation(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", redact(mdURL), err)
	}
	pu, err := resolve(base, d.Location)
	if err != nil {
		return nil, fmt.Errorf("%s: primary metadata: %w", redact(mdURL), err)
	}
	noteOtherOrigin(r, pu, "the primary metadata", progress)
	body, err := c.open(ctx, r, pu)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", redact(pu), err)
	}
	defer body.Close()
	pkgs, err := readPrimary(body, d, IsReleaseInfo)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", redact(pu), err)
	}
	return pkgs, nil
}

// resolve is where a metadata location points: href relative to xml:base
// or the repository's baseurl. It must stay on the base's scheme, so that
// an https repository cannot point at a local file; it may name another
// host (a mirror's xml:base, as dnf follows it), which is then read
// without the repository's credentials (originGate).
func resolve(base *url.URL, loc location) (*url.URL, error) {
	from := base
	if loc.Base != "" {
		b, err := url.Parse(loc.Base)
		if err != nil {
			return nil, fmt.Errorf("xml:base %q is not a URL", loc.Base)
		}
		from = base.ResolveReference(b)
		if !strings.HasSuffix(from.Path, "/") {
			from.Path += "/"
		}
	}
	h, err := url.Parse(loc.Href)
	if err != nil || loc.Href == "" {
		return nil, fmt.Errorf("location %q is not a URL", loc.Href)
	}
	u := from.ResolveReference(h)
	if u.Scheme != base.Scheme {
		return nil, fmt.Errorf("location %q leaves the repository's %s scheme", loc.Href, base.Scheme)
	}
	// The URL carries no credentials, neither the repository's (the
	// transport adds them for its own origins only) nor the metadata's.
	u.User = nil
	return u, nil
}

// noteOtherOrigin says when what is read from another origin than the
// repository's own, and so without the credentials it has.
func noteOtherOrigin(r *Repo, u *url.URL, what string, progress Progress) {
	if u.Scheme != "file" && !r.isOwn(u) && r.hasCredentials() {
		progress("%s is at %s, not the origin of %s: reading it without the repository's credentials", what, origin(u), r.ID)
	}
}

// download fetches one package, checks it against the metadata and reads
// it.
func (c *Client) download(ctx context.Context, f found, progress Progress) (*Downloaded, error) {
	want := f.pkg.nevra()
	u, err := resolve(f.base, f.pkg.Location)
	if err != nil {
		return nil, fmt.Errorf("repo %s: %s: %w", f.repo.ID, want, err)
	}
	display := redact(u)
	noteOtherOrigin(f.repo, u, want.String(), progress)
	h, err := newHash(f.pkg.Checksum)
	if err != nil {
		return nil, fmt.Errorf("repo %s: %s: %w", f.repo.ID, want, err)
	}
	limit := int64(MaxRPMSize)
	if s := f.pkg.Size.Package; s > 0 && s < limit {
		limit = s
	}
	progress("downloading %s from %s", want, f.repo.ID)
	data, err := c.readAll(ctx, f.repo, u, limit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", display, err)
	}
	if s := f.pkg.Size.Package; s > 0 && int64(len(data)) < s {
		return nil, fmt.Errorf("%s: truncated download: %d of the %d bytes the repository metadata lists", display, len(data), s)
	}
	h.Write(data)
	if got := hex.EncodeToString(h.Sum(nil)); got != strings.ToLower(strings.TrimSpace(f.pkg.Checksum.Value)) {
		return nil, fmt.Errorf("%s: checksum mismatch: %s %s, the repository metadata lists %s (a damaged download, or metadata out of date: try again)", display, f.pkg.Checksum.Type, got, strings.TrimSpace(f.pkg.Checksum.Value))
	}
	pkg, err := ReadPackage(display, data)
	if err != nil {
		return nil, err
	}
	if pkg.NEVRA.String() != want.String() {
		return nil, fmt.Errorf("%s: the RPM is %s, but the repository metadata lists it as %s", display, pkg.NEVRA, want)
	}
	return &Downloaded{Package: pkg, URL: display, Repo: f.repo.ID}, nil
}
