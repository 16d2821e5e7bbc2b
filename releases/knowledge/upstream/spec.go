package upstream

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"
)

// Spec is what the generator reads of MicroShift's RPM spec
// (packaging/rpm/microshift.spec): the packages it builds, the files each
// installs under /etc, and where %install takes each installed file from.
type Spec struct {
	// Packages are the package names, sorted.
	Packages []string
	// EtcFiles maps a package to the regular files it installs under /etc
	// (%files entries without %dir and without globs), sorted.
	EtcFiles map[string][]string
	// Sources maps an installed path to the file of the source tree
	// %install copies there (install SRC DEST lines).
	Sources map[string]string
}

// specMacros are the path macros the spec's %files and %install use.
var specMacros = strings.NewReplacer(
	"%{buildroot}", "",
	"%{_sysconfdir}", "/etc",
	"%{_prefix}", "/usr",
	"%{_datadir}", "/usr/share",
	"%{_unitdir}", "/usr/lib/systemd/system",
	"%{_bindir}", "/usr/bin",
	"%{_libdir}", "/usr/lib64",
)

// sectionStart are the directives that end a %files list.
var sectionStart = []string{"%package", "%description", "%prep", "%build", "%install", "%check", "%clean",
	"%files", "%changelog", "%pre", "%post", "%preun", "%postun", "%posttrans", "%pretrans", "%triggerin", "%triggerun"}

// ParseSpec reads the parts of an RPM spec the generator uses; name is for
// messages.
func ParseSpec(name string, data []byte) (*Spec, error) {
	s := &Spec{EtcFiles: map[string][]string{}, Sources: map[string]string{}}
	base := ""
	var files *string // the package whose %files list is being read
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(fields[0], "%") && slices.Contains(sectionStart, fields[0]) {
			section, files = fields[0], nil
		}
		switch {
		case fields[0] == "Name:" && base == "" && len(fields) == 2:
			base = fields[1]
		case fields[0] == "%package":
			pkg, err := subpackage(base, fields[1:])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			s.Packages = append(s.Packages, pkg)
		case fields[0] == "%files":
			pkg, err := subpackage(base, fields[1:])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			files = &pkg
		case files != nil && !strings.HasPrefix(fields[0], "%if") && fields[0] != "%else" && fields[0] != "%endif":
			p, ok := filesEntry(fields)
			if ok && strings.HasPrefix(p, "/etc/") && !strings.ContainsAny(p, "*?[{") {
				s.EtcFiles[*files] = append(s.EtcFiles[*files], p)
			}
		case section == "%install" && fields[0] == "install":
			src, dest, ok := installArgs(fields[1:])
			if ok {
				if strings.HasSuffix(dest, "/") {
					dest += path.Base(src)
				}
				s.Sources[path.Clean(dest)] = src
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if base == "" {
		return nil, fmt.Errorf("%s: no Name: line", name)
	}
	s.Packages = append(s.Packages, base)
	slices.Sort(s.Packages)
	if dup := slices.Compact(slices.Clone(s.Packages)); len(dup) != len(s.Packages) {
		return nil, fmt.Errorf("%s: a package is declared twice", name)
	}
	for pkg := range s.EtcFiles {
		slices.Sort(s.EtcFiles[pkg])
		s.EtcFiles[pkg] = slices.Compact(s.EtcFiles[pkg])
	}
	return s, nil
}

// subpackage names a %package or %files argument list: "" is the base
// package, "-n NAME" a full name, else base-SUFFIX.
func subpackage(base string, args []string) (string, error) {
	if base == "" {
		return "", fmt.Errorf("%s before the Name: line", "%package")
	}
	switch {
	case len(args) == 0:
		return base, nil
	case args[0] == "-n" && len(args) >= 2:
		return args[1], nil
	case strings.HasPrefix(args[0], "-"):
		return "", fmt.Errorf("unsupported option %s", args[0])
	}
	return base + "-" + args[0], nil
}

// filesEntry is the path a %files line installs; false for a directory,
// a %license or %doc, or a line that is no path.
func filesEntry(fields []string) (string, bool) {
	for len(fields) > 0 && strings.HasPrefix(fields[0], "%") {
		switch {
		case fields[0] == "%dir", fields[0] == "%license", fields[0] == "%doc", fields[0] == "%ghost":
			return "", false
		case strings.HasPrefix(fields[0], "%config"), strings.HasPrefix(fields[0], "%attr"), fields[0] == "%verify":
			fields = fields[1:]
		case strings.HasPrefix(fields[0], "%{"):
			p := specMacros.Replace(fields[0])
			return p, strings.HasPrefix(p, "/") && len(fields) == 1
		default:
			return "", false
		}
	}
	if len(fields) != 1 {
		return "", false
	}
	p := specMacros.Replace(fields[0])
	return p, strings.HasPrefix(p, "/")
}

// installArgs reads "install [-p] [-m MODE] [-D] SRC DEST": false for
// other forms (-d directories, several sources, globs).
func installArgs(args []string) (src, dest string, ok bool) {
	var rest []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-d":
			return "", "", false
		case a == "-m" || a == "-o" || a == "-g":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			rest = append(rest, a)
		}
	}
	if len(rest) != 2 || strings.ContainsAny(rest[0], "*?[{") {
		return "", "", false
	}
	dest = specMacros.Replace(rest[1])
	if !strings.HasPrefix(dest, "/") || strings.Contains(dest, "%") {
		return "", "", false
	}
	if strings.HasSuffix(rest[1], "/") {
		dest = strings.TrimSuffix(path.Clean(dest), "/") + "/"
	} else {
		dest = path.Clean(dest)
	}
	return rest[0], dest, true
}
