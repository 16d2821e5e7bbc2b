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
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/plan"
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
	if h := p.Hardening; h != nil && h.CIS != nil {
		files = append(files, cisAuditFiles()...)
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
				tmpl, err := template.New(f.Path).Option("missingkey=error").Funcs(template.FuncMap{"printf": boundedPrintf}).Parse(string(data))
				if err != nil {
					return nil, fmt.Errorf("%s: parsing template for %s: %v", c.Source, f.Path, err)
				}
				if err := checkTemplate(tmpl.Tree.Root); err != nil {
					return nil, fmt.Errorf("%s: template for %s: %v", c.Source, f.Path, err)
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

// maxTemplateNumber bounds number literals in a template and printf widths:
// "{{range 1000000000}}{{end}}" loops without writing (so the output cap
// never stops it) and "%0999999999d" allocates a gigabyte before writing.
const maxTemplateNumber = 10000

// checkTemplate refuses number literals beyond maxTemplateNumber anywhere
// in a template's parse tree.
func checkTemplate(n parse.Node) error {
	var err error
	var walk func(parse.Node)
	walk = func(n parse.Node) {
		if n == nil || err != nil {
			return
		}
		switch x := n.(type) {
		case *parse.NumberNode:
			if (x.IsInt && (x.Int64 > maxTemplateNumber || x.Int64 < -maxTemplateNumber)) ||
				(x.IsUint && x.Uint64 > maxTemplateNumber) || (x.IsFloat && (x.Float64 > maxTemplateNumber || x.Float64 < -maxTemplateNumber)) {
				err = fmt.Errorf("number %s is larger than %d", x.Text, maxTemplateNumber)
			}
		case *parse.ListNode:
			if x != nil {
				for _, c := range x.Nodes {
					walk(c)
				}
			}
		case *parse.ActionNode:
			walk(x.Pipe)
		case *parse.PipeNode:
			if x != nil {
				for _, c := range x.Cmds {
					walk(c)
				}
			}
		case *parse.CommandNode:
			for _, a := range x.Args {
				walk(a)
			}
		case *parse.ChainNode:
			walk(x.Node)
		case *parse.IfNode:
			walk(x.Pipe)
			walk(x.List)
			walk(x.ElseList)
		case *parse.RangeNode:
			walk(x.Pipe)
			walk(x.List)
			walk(x.ElseList)
		case *parse.WithNode:
			walk(x.Pipe)
			walk(x.List)
			walk(x.ElseList)
		case *parse.TemplateNode:
			walk(x.Pipe)
		}
	}
	walk(n)
	return err
}

// boundedPrintf is text/template's printf with widths and precisions
// bounded by maxTemplateNumber (and none taken from arguments).
func boundedPrintf(format string, args ...any) (string, error) {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		for i++; i < len(format); i++ {
			ch := format[i]
			if ch == '*' {
				return "", errors.New("printf: widths from arguments (*) are not allowed")
			}
			if ch >= '0' && ch <= '9' {
				j := i
				for j < len(format) && format[j] >= '0' && format[j] <= '9' {
					j++
				}
				if n, err := strconv.Atoi(format[i:j]); err != nil || n > maxTemplateNumber {
					return "", fmt.Errorf("printf: width or precision %s is larger than %d", format[i:j], maxTemplateNumber)
				}
				i = j - 1
				continue
			}
			if !strings.ContainsRune("+-# .[]", rune(ch)) {
				break
			}
		}
	}
	return fmt.Sprintf(format, args...), nil
}
