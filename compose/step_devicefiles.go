package compose

import (
	"context"
	"fmt"
	"path/filepath"
	"text/template"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/plan"
)

// addDeviceFiles adds the files the device gets from the request and the
// catalog besides rendered manifests: lvmd.yaml, and every selected
// component's extra files, templates rendered with the config parameters.
// They stay in the order they are added until the files step. The files
// the plan implies (MicroShift's config, --cis's unit, greenboot's check)
// are rendered from the resolved plan (render/...).
func addDeviceFiles(_ context.Context, in *inputs, p soFar) (soFar, error) {
	var files []plan.File
	if selection(p.Plan).has(LVMSComponent) {
		if l := in.req.Lvmd; l != nil {
			files = append(files, plan.File{Path: lvmdconfig.DevicePath, Mode: "0644", Component: LVMSComponent, Source: "--lvmd " + filepath.Base(l.Source), Data: l.Data})
		} else {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: no --lvmd given, so %s is not written and MicroShift's runtime defaulting applies on the device (LVMS picks the host's volume group itself)", LVMSComponent, lvmdconfig.DevicePath))
		}
	}
	params := in.req.Config.Params()
	for _, pc := range p.Components {
		n := pc.Name
		c := in.cat.Components[n]
		for _, f := range c.Files {
			data := []byte(f.Content)
			if f.Source != "" {
				var err error
				if data, err = inputfile.ReadFS(c.FS, f.Source, components.MaxFileSource); err != nil {
					return p, fmt.Errorf("%s: reading file source %s: %w", c.Source, f.Source, sourceError(err))
				}
			}
			if f.Template {
				tmpl, err := template.New(f.Path).Option("missingkey=error").Funcs(template.FuncMap{"printf": boundedPrintf}).Parse(string(data))
				if err != nil {
					return p, fmt.Errorf("%s: parsing template for %s: %v", c.Source, f.Path, err)
				}
				if err := checkTemplate(tmpl.Tree.Root); err != nil {
					return p, fmt.Errorf("%s: template for %s: %v", c.Source, f.Path, err)
				}
				b := &cappedBuffer{limit: components.MaxFileSource}
				if err := tmpl.Execute(b, params); err != nil {
					return p, fmt.Errorf("%s: rendering template for %s: %v", c.Source, f.Path, err)
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
	p.Files = append(p.Files, files...)
	return p, nil
}
