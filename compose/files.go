package compose

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"text/template/parse"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
)

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
