package compose

import (
	"fmt"
	"strconv"

	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
	"github.com/microshift-compose/microshift-compose/releases/rpmrepo"
)

// enabledRepositories are the RPM repositories the bootc Containerfile
// enables itself, in order: those the release's build needs besides the
// OS's (microshift-io's dependencies mirror, from the release knowledge),
// then the enabled repositories of each --repo-file (the build's
// MicroShift RPMs). A --repo-file's variables are the plan's: $basearch its
// arch, $releasever its distro's major.
func enabledRepositories(in *inputs, p *plan.Plan) ([]plan.Repository, error) {
	var out []plan.Repository
	noCheck := false
	for _, r := range in.facts.Repositories {
		out = append(out, plan.Repository{ID: r.ID, Name: r.Name, BaseURL: expandArch(r.BaseURL, in.req.Arch), Packages: []string{}, Components: []string{},
			Enable: true, GPGCheck: &noCheck, Source: in.facts.Build.Title + " (release knowledge)"})
	}
	releasever := ""
	if major, ok := knowledge.DistroMajor(p.Target.OSBuildDistro()); ok {
		releasever = strconv.Itoa(major)
	}
	vars := rpmrepo.NewVars(string(in.req.Arch), releasever)
	seen := map[string]string{}
	for _, r := range out {
		seen[r.ID] = r.Source
	}
	for _, f := range in.req.RepoFiles {
		source := "--repo-file " + f.Source
		repos, err := rpmrepo.ParseRepoFile(source, f.Data, vars)
		if err != nil {
			return nil, err
		}
		enabled := 0
		for _, r := range repos {
			if !r.Enabled {
				continue
			}
			enabled++
			where := fmt.Sprintf("%s [%s]", source, r.ID)
			if other, dup := seen[r.ID]; dup {
				return nil, fmt.Errorf("%s: repository %s is named by %s too: give each repository one ID", where, r.ID, other)
			}
			seen[r.ID] = source
			if err := checkImageRepository(where, r); err != nil {
				return nil, err
			}
			pr := plan.Repository{ID: r.ID, Name: r.Name, Packages: []string{}, Components: []string{}, Enable: true, GPGCheck: r.GPGCheck, GPGKey: r.GPGKeys, Source: source}
			for i, u := range r.BaseURLs {
				if i > 0 {
					pr.BaseURL += " "
				}
				pr.BaseURL += u.String()
			}
			out = append(out, pr)
		}
		if enabled == 0 {
			return nil, fmt.Errorf("%s: no enabled repository: an image build enables what it names", source)
		}
	}
	return out, nil
}

// checkImageRepository refuses what an image build cannot use or must not
// carry: a repository on this host's filesystem, credentials (in the URL,
// username and password, client certificates), and a proxy or CA file of
// this host. The Containerfile and the lock would carry the rest.
func checkImageRepository(where string, r *rpmrepo.Repo) error {
	for _, u := range r.BaseURLs {
		switch {
		case u.Scheme != "http" && u.Scheme != "https":
			return fmt.Errorf("%s: baseurl %s is on this host's filesystem, which an image build does not see: serve the directory over HTTP (createrepo_c, then python3 -m http.server) and name its URL", where, u.Redacted())
		case u.User != nil:
			return fmt.Errorf("%s: baseurl %s holds credentials, which the Containerfile and compose.lock.json would carry: name a repository that needs none", where, u.Redacted())
		}
	}
	if r.Username != "" || r.Password != "" || r.ClientCert != "" || r.ClientKey != "" {
		return fmt.Errorf("%s: the repository needs credentials (username, password, sslclientcert, sslclientkey), which the Containerfile and compose.lock.json would carry: name a repository that needs none", where)
	}
	if r.CACert != "" || r.Proxy != nil {
		return fmt.Errorf("%s: sslcacert and proxy name files and hosts of this machine, which an image build does not have: drop them", where)
	}
	return nil
}
