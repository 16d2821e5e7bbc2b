package compose

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"text/template"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
	"github.com/microshift-compose/microshift-compose/compose/plan"
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
)

// deviceFiles collects the files the device gets besides rendered
// manifests: the config drop-in, lvmd.yaml, and every selected component's
// extra files, templates rendered with the config parameters.
func (r *resolver) deviceFiles(p *plan.Plan) ([]plan.File, error) {
	var files []plan.File
	if len(p.Config) > 0 {
		data, err := renderConfig(p)
		if err != nil {
			return nil, err
		}
		files = append(files, plan.File{Path: p.ConfigFile, Mode: "0644", Data: data})
	}
	if _, lvms := r.reasons[LVMSComponent]; lvms {
		if l := r.req.Lvmd; l != nil {
			files = append(files, plan.File{Path: lvmdconfig.DevicePath, Mode: "0644", Component: LVMSComponent, Source: "--lvmd " + filepath.Base(l.Source), Data: l.Data})
		} else {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: no --lvmd given, so %s is not written and MicroShift's runtime defaulting applies on the device (LVMS picks the host's volume group itself)", LVMSComponent, lvmdconfig.DevicePath))
		}
	}
	params := r.req.Config.Params()
	for _, n := range r.order {
		c := r.cat.Components[n]
		for _, f := range c.Files {
			data := []byte(f.Content)
			if f.Source != "" {
				var err error
				if data, err = inputfile.ReadFS(c.FS, f.Source, components.MaxFileSource); err != nil {
					return nil, fmt.Errorf("%s: reading file source %s: %w", c.Source, f.Source, sourceError(err))
				}
			}
			if f.Template {
				tmpl, err := template.New(f.Path).Option("missingkey=error").Parse(string(data))
				if err != nil {
					return nil, fmt.Errorf("%s: parsing template for %s: %v", c.Source, f.Path, err)
				}
				b := &cappedBuffer{limit: components.MaxFileSource}
				if err := tmpl.Execute(b, params); err != nil {
					return nil, fmt.Errorf("%s: rendering template for %s: %v", c.Source, f.Path, err)
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
	return files, nil
}

// setFiles sorts the device files by path, refuses two at one path, and
// records their digests and sizes.
func setFiles(p *plan.Plan, files []plan.File) error {
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

// sourceError says what the input gate refused, without the path the
// caller names already.
func sourceError(err error) error {
	var oe *inputfile.OutsideError
	if errors.As(err, &oe) {
		return errors.New(oe.Outside("component directory") + " (sources must be inside it)")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// cappedBuffer is a bytes.Buffer that refuses to grow beyond limit: a
// template's output is a device file like any other.
type cappedBuffer struct {
	bytes.Buffer
	limit int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.limit {
		return 0, fmt.Errorf("output is larger than %d bytes", b.limit)
	}
	return b.Buffer.Write(p)
}
