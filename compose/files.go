package compose

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sort"
	"text/template"

	"github.com/microshift-compose/microshift-compose/compose/plan"
)

// addFiles collects the files the device gets: the config drop-in and every
// selected component's extra files, templates rendered with the config
// parameters.
func (r *resolver) addFiles(p *plan.Plan) error {
	var files []plan.File
	if len(p.Config) > 0 {
		data, err := renderDropIn(p)
		if err != nil {
			return err
		}
		files = append(files, plan.File{Path: DropInPath, Mode: "0644", Data: data})
	}
	params := r.req.Config.Params()
	for _, n := range r.order {
		c := r.cat.Components[n]
		for _, f := range c.Files {
			data := []byte(f.Content)
			if f.Source != "" {
				var err error
				if data, err = fs.ReadFile(c.FS, f.Source); err != nil {
					return fmt.Errorf("%s: reading file source %s: %w", c.Source, f.Source, err)
				}
			}
			if f.Template {
				tmpl, err := template.New(f.Path).Option("missingkey=error").Parse(string(data))
				if err != nil {
					return fmt.Errorf("%s: parsing template for %s: %v", c.Source, f.Path, err)
				}
				var b bytes.Buffer
				if err := tmpl.Execute(&b, params); err != nil {
					return fmt.Errorf("%s: rendering template for %s: %v", c.Source, f.Path, err)
				}
				data = b.Bytes()
			}
			mode := f.Mode
			if mode == "" {
				mode = "0644"
			} else if len(mode) == 3 {
				mode = "0" + mode
			}
			files = append(files, plan.File{Path: f.Path, Mode: mode, Component: n, Data: data})
		}
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	for i := range files {
		if i > 0 && files[i].Path == files[i-1].Path {
			return fmt.Errorf("components %q and %q both place %s on the device", files[i-1].Component, files[i].Component, files[i].Path)
		}
		sum := sha256.Sum256(files[i].Data)
		files[i].SHA256 = hex.EncodeToString(sum[:])
		files[i].Size = len(files[i].Data)
	}
	p.Files = files
	return nil
}
