package rpmrepo

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gopkg.in/ini.v1"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/suggest"
	"github.com/microshift-compose/microshift-compose/internal/text"
)

// MaxRepoFileSize bounds a .repo file and a dnf variable file.
const MaxRepoFileSize = 1 << 20

// Where dnf keeps the host's repositories and variables.
const (
	SystemReposDir = "/etc/yum.repos.d"
)

// SystemVarsDirs are where dnf reads variables ($releasever, custom ones)
// from, each file one variable named by the file.
var SystemVarsDirs = []string{"/etc/dnf/vars", "/etc/yum/vars"}

// Repo is one dnf repository: a --repo URL, or a section of a .repo file.
type Repo struct {
	// ID is the section name, or the URL for a --repo URL.
	ID string
	// Where says where the repository was defined: "--repo", or
	// "FILE [ID]".
	Where string
	// BaseURLs are tried in order until one answers (dnf's failover).
	BaseURLs []*url.URL
	Enabled  bool
	// CACert, ClientCert and ClientKey are sslcacert, sslclientcert and
	// sslclientkey: paths of PEM files.
	CACert, ClientCert, ClientKey string
	// SSLVerify is sslverify (default on).
	SSLVerify bool
	// Proxy is the repository's proxy; nil means the environment's, unless
	// NoProxy (proxy=_none_) says none.
	Proxy              *url.URL
	NoProxy            bool
	Username, Password string
	// SkipIfUnavailable lets a fetch go on without the repository when it
	// cannot be reached (skip_if_unavailable).
	SkipIfUnavailable bool
	// Name is its name; GPGCheck its gpgcheck, nil when the file does not
	// set it; GPGKeys its gpgkey URLs. A build that enables the repository
	// in an image writes them as they are.
	Name     string
	GPGCheck *bool
	GPGKeys  []string
}

// URLRepo is a repository given by its baseurl (--repo URL): TLS verified
// with the system's CAs.
func URLRepo(raw string) (*Repo, error) {
	u, err := parseBaseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("--repo %s: %w", raw, err)
	}
	return &Repo{ID: redact(u), Where: "--repo", BaseURLs: []*url.URL{u}, Enabled: true, SSLVerify: true}, nil
}

// IsURL reports whether s is a repository URL rather than a repository ID.
func IsURL(s string) bool { return strings.Contains(s, "://") }

func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("not a URL: %v", text.OneLine(err.Error()))
	}
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" {
			return nil, errors.New("the URL names no host")
		}
	case "file":
		if u.Host != "" && u.Host != "localhost" || !path.IsAbs(u.Path) {
			return nil, errors.New("a file URL must be file:///absolute/path")
		}
	default:
		return nil, fmt.Errorf("unsupported scheme %q (want https, http or file)", u.Scheme)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/" // the repository is a directory: resolve repodata/ inside it
	}
	return u, nil
}

// Vars are dnf's variables: basearch, arch, releasever and those of the
// variable files.
type Vars map[string]string

// HostVars returns the variables of this host's dnf for arch: basearch and
// arch, $releasever from a vars file (subscription-manager release --set
// writes one) or else the major VERSION_ID of /etc/os-release, and the
// other files of the vars directories. releasever, when set, wins.
func HostVars(arch, releasever string) (Vars, error) {
	v := Vars{"basearch": arch, "arch": arch}
	for _, dir := range SystemVarsDirs {
		if err := v.readDir(dir); err != nil {
			return nil, err
		}
	}
	if _, ok := v["releasever"]; !ok {
		if rv := osReleaseMajor("/etc/os-release"); rv != "" {
			v["releasever"] = rv
		}
	}
	if releasever != "" {
		v["releasever"] = releasever
	}
	v.splitReleasever()
	return v, nil
}

// NewVars returns the variables for arch and releasever ("" leaves
// $releasever unset: a URL using it is then an error).
func NewVars(arch, releasever string) Vars {
	v := Vars{"basearch": arch, "arch": arch}
	if releasever != "" {
		v["releasever"] = releasever
	}
	v.splitReleasever()
	return v
}

func (v Vars) splitReleasever() {
	rv, ok := v["releasever"]
	if !ok {
		return
	}
	major, minor, _ := strings.Cut(rv, ".")
	v["releasever_major"], v["releasever_minor"] = major, minor
}

// readDir reads a dnf vars directory: each regular file is a variable, its
// first line the value.
func (v Vars) readDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading dnf variables: %w", err)
	}
	for _, e := range entries {
		if !validVarName(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		data, err := inputfile.Read("dnf variable file", filepath.Join(dir, e.Name()), MaxRepoFileSize)
		if err != nil {
			return err
		}
		line, _, _ := strings.Cut(string(data), "\n")
		v[e.Name()] = strings.TrimSpace(line)
	}
	return nil
}

func validVarName(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0
}

// osReleaseMajor is the major part of VERSION_ID in os-release, "" when
// there is none.
func osReleaseMajor(file string) string {
	data, err := inputfile.Read("os-release", file, MaxRepoFileSize)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "VERSION_ID="); ok {
			v = strings.Trim(v, `"'`)
			major, _, _ := strings.Cut(v, ".")
			return major
		}
	}
	return ""
}

// expand substitutes $name and ${name}; a variable that is not set is an
// error (dnf would leave it in the URL, to fail later as a 404).
func (v Vars) expand(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			b.WriteByte(s[i])
			continue
		}
		var name string
		rest := s[i+1:]
		if strings.HasPrefix(rest, "{") {
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return "", fmt.Errorf("unterminated ${ in %q", s)
			}
			name = rest[1:end]
			i += end + 1
		} else {
			n := strings.IndexFunc(rest, func(r rune) bool {
				return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
			})
			if n < 0 {
				n = len(rest)
			}
			name = rest[:n]
			i += n
		}
		if name == "" {
			b.WriteByte('$')
			continue
		}
		val, ok := v[name]
		if !ok {
			hint := ""
			if name == "releasever" || strings.HasPrefix(name, "releasever_") {
				hint = " (pass --releasever)"
			}
			return "", fmt.Errorf("$%s is not set%s", name, hint)
		}
		b.WriteString(val)
	}
	return b.String(), nil
}

// ParseRepoFile reads the repositories of a .repo file (INI, as dnf reads
// it): baseurl (one or more, whitespace or comma separated), enabled,
// sslverify, sslcacert, sslclientcert, sslclientkey, proxy, username,
// password, skip_if_unavailable. Paths relative to the file's directory are
// taken from there. A section with only a mirrorlist or metalink is an
// error: only baseurl is supported. display names the file in errors.
func ParseRepoFile(display string, data []byte, vars Vars) ([]*Repo, error) {
	if strings.ContainsRune(string(data), 0) {
		return nil, fmt.Errorf("%s: not a text file (holds a NUL byte)", display)
	}
	f, err := ini.LoadSources(ini.LoadOptions{
		IgnoreInlineComment:        true,
		AllowPythonMultilineValues: true,
		KeyValueDelimiters:         "=",
		AllowNonUniqueSections:     false,
	}, data)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid .repo file: %v", display, text.OneLine(err.Error()))
	}
	dir := filepath.Dir(display)
	var repos []*Repo
	for _, sec := range f.Sections() {
		id := sec.Name()
		if id == ini.DefaultSection {
			if len(sec.Keys()) > 0 {
				return nil, fmt.Errorf("%s: %q is outside any [repository] section", display, sec.Keys()[0].Name())
			}
			continue
		}
		if id == "main" {
			continue // dnf.conf's own section
		}
		r, err := parseSection(sec, vars, dir)
		if err != nil {
			return nil, fmt.Errorf("%s [%s]: %w", display, text.Escape(id), err)
		}
		r.Where = fmt.Sprintf("%s [%s]", display, id)
		repos = append(repos, r)
	}
	return repos, nil
}

func parseSection(sec *ini.Section, vars Vars, dir string) (*Repo, error) {
	// dnf expands variables in repository IDs too.
	id, err := vars.expand(sec.Name())
	if err != nil {
		return nil, fmt.Errorf("repository ID: %w", err)
	}
	if strings.TrimSpace(id) == "" || text.HasUnsafe(id) || strings.ContainsAny(id, " /") {
		return nil, errors.New("the repository ID must be one word without / or control characters")
	}
	r := &Repo{ID: id, Enabled: true, SSLVerify: true}
	get := func(key string) (string, error) {
		if !sec.HasKey(key) {
			return "", nil
		}
		v, err := vars.expand(strings.TrimSpace(sec.Key(key).Value()))
		if err != nil {
			return "", fmt.Errorf("%s: %w", key, err)
		}
		return v, nil
	}
	boolean := func(key string, def bool) (bool, error) {
		v, err := get(key)
		if err != nil || v == "" {
			return def, err
		}
		switch strings.ToLower(v) {
		case "1", "yes", "true", "on":
			return true, nil
		case "0", "no", "false", "off":
			return false, nil
		}
		return def, fmt.Errorf("%s: %q is not a boolean (1 or 0)", key, v)
	}
	if r.Enabled, err = boolean("enabled", true); err != nil {
		return nil, err
	}
	if r.SSLVerify, err = boolean("sslverify", true); err != nil {
		return nil, err
	}
	if r.SkipIfUnavailable, err = boolean("skip_if_unavailable", false); err != nil {
		return nil, err
	}
	base, err := get("baseurl")
	if err != nil {
		return nil, err
	}
	for _, raw := range strings.FieldsFunc(base, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		u, err := parseBaseURL(raw)
		if err != nil {
			return nil, fmt.Errorf("baseurl %s: %w", raw, err)
		}
		r.BaseURLs = append(r.BaseURLs, u)
	}
	if len(r.BaseURLs) == 0 {
		for _, k := range []string{"mirrorlist", "metalink"} {
			if sec.HasKey(k) {
				return nil, fmt.Errorf("only baseurl is supported, not %s", k)
			}
		}
		return nil, errors.New("no baseurl")
	}
	for _, p := range []struct {
		key string
		to  *string
	}{{"sslcacert", &r.CACert}, {"sslclientcert", &r.ClientCert}, {"sslclientkey", &r.ClientKey}} {
		v, err := get(p.key)
		if err != nil {
			return nil, err
		}
		if v != "" && !filepath.IsAbs(v) {
			v = filepath.Join(dir, v)
		}
		*p.to = v
	}
	if v, err := get("proxy"); err != nil {
		return nil, err
	} else if v == "_none_" {
		r.NoProxy = true
	} else if v != "" {
		u, err := url.Parse(v)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("proxy %q is not a URL", v)
		}
		r.Proxy = u
	}
	if r.Username, err = get("username"); err != nil {
		return nil, err
	}
	if r.Name, err = get("name"); err != nil {
		return nil, err
	}
	if sec.HasKey("gpgcheck") {
		check, err := boolean("gpgcheck", true)
		if err != nil {
			return nil, err
		}
		r.GPGCheck = &check
	}
	keys, err := get("gpgkey")
	if err != nil {
		return nil, err
	}
	r.GPGKeys = strings.FieldsFunc(keys, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	if sec.HasKey("password") {
		r.Password = sec.Key("password").Value() // never expanded, never printed
	}
	return r, nil
}

// LoadRepoFile reads the repositories of a .repo file.
func LoadRepoFile(file string, vars Vars) ([]*Repo, error) {
	data, err := inputfile.Read(".repo file", file, MaxRepoFileSize)
	if err != nil {
		return nil, err
	}
	return ParseRepoFile(file, data, vars)
}

// LoadReposDir reads every *.repo file of dir (dnf's reposdir), in name
// order. A repository ID defined twice is an error, as in dnf.
func LoadReposDir(dir string, vars Vars) ([]*Repo, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("repository directory %s does not exist: pass --repo URL or --repo-file FILE", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("reading repository directory: %w", err)
	}
	var all []*Repo
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".repo") || e.IsDir() {
			continue
		}
		repos, err := LoadRepoFile(filepath.Join(dir, e.Name()), vars)
		if err != nil {
			return nil, err
		}
		all = append(all, repos...)
	}
	return all, CheckUnique(all)
}

// CheckUnique refuses a repository ID defined twice.
func CheckUnique(repos []*Repo) error {
	seen := map[string]*Repo{}
	for _, r := range repos {
		if prev := seen[r.ID]; prev != nil {
			return fmt.Errorf("repository %s is defined twice: %s and %s", r.ID, prev.Where, r.Where)
		}
		seen[r.ID] = r
	}
	return nil
}

// Select returns the repositories a fetch reads: those whose ID matches
// one of ids (globs, as dnf --repo takes them; enabled or not), or, with no
// ids, the enabled ones. An ID that matches nothing is an error.
func Select(repos []*Repo, ids []string, from string) ([]*Repo, error) {
	if len(ids) == 0 {
		var out []*Repo
		for _, r := range repos {
			if r.Enabled {
				out = append(out, r)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%s enables no repository: name one with --repo ID, or pass --repo URL", from)
		}
		return out, nil
	}
	var out []*Repo
	var names []string
	for _, r := range repos {
		names = append(names, r.ID)
	}
	sort.Strings(names)
	for _, id := range ids {
		found := false
		for _, r := range repos {
			if ok, err := path.Match(id, r.ID); err != nil {
				return nil, fmt.Errorf("--repo %s: %v", id, err)
			} else if ok {
				found = true
				if !slices.Contains(out, r) {
					out = append(out, r)
				}
			}
		}
		if !found {
			if m := suggest.Closest(id, names); m != "" {
				return nil, fmt.Errorf("--repo %s: %s has no such repository; did you mean %q?", id, from, m)
			}
			if len(names) == 0 {
				return nil, fmt.Errorf("--repo %s: %s defines no repositories", id, from)
			}
			return nil, fmt.Errorf("--repo %s: %s has no such repository (it has %s)", id, from, strings.Join(names, ", "))
		}
	}
	return out, nil
}
