package chart

import (
	"encoding/base64"
	"fmt"
	"path"
	"strings"

	"github.com/gobwas/glob"
	"helm.sh/helm/v3/pkg/chart"
)

// files is .Files: the chart's files that are not templates, values or
// Chart.yaml, by path, with the methods Helm's templates call on it.
// TestFilesMatchHelm checks each against `helm template`.
type files map[string][]byte

func newFiles(list []*chart.File) files {
	f := files{}
	for _, file := range list {
		f[file.Name] = file.Data
	}
	return f
}

// GetBytes is a file's content, empty when there is no such file.
func (f files) GetBytes(name string) []byte {
	if data, ok := f[name]; ok {
		return data
	}
	return []byte{}
}

// Get is a file's content as a string.
func (f files) Get(name string) string { return string(f.GetBytes(name)) }

// Glob is the files whose path the pattern matches (a * stays within a
// directory, ** does not); a pattern that does not compile matches all.
func (f files) Glob(pattern string) files {
	g, err := glob.Compile(pattern, '/')
	if err != nil {
		g = glob.MustCompile("**")
	}
	out := files{}
	for name, data := range f {
		if g.Match(name) {
			out[name] = data
		}
	}
	return out
}

// AsConfig is the files as the YAML of a ConfigMap's data: base name to
// content.
func (f files) AsConfig() string {
	if f == nil {
		return ""
	}
	m := make(map[string]string, len(f))
	for name, data := range f {
		m[path.Base(name)] = string(data)
	}
	return toYAML(m)
}

// AsSecrets is the files as the YAML of a Secret's data: base name to
// content in base64.
func (f files) AsSecrets() string {
	if f == nil {
		return ""
	}
	m := make(map[string]string, len(f))
	for name, data := range f {
		m[path.Base(name)] = base64.StdEncoding.EncodeToString(data)
	}
	return toYAML(m)
}

// Lines is a file's lines, a final newline ending the last one. Helm
// fails on a file that is there but empty; so does this.
func (f files) Lines(name string) ([]string, error) {
	data := f[name]
	if data == nil {
		return []string{}, nil
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("file %s is empty", name)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"), nil
}
