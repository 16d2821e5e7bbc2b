package compose

import (
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/text"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/microshift-compose/microshift-compose/compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// maxLockSize bounds what ReadLock reads: a lock of a full plan with every
// optional component is tens of KB.
const maxLockSize = 16 << 20

// LoadLock reads a compose.lock.json written by build.
func LoadLock(path string) (*plan.Plan, error) {
	data, err := inputfile.Read("lock file", path, maxLockSize)
	if err != nil {
		return nil, err
	}
	return ParseLock(path, data)
}

// ParseLock decodes a compose.lock.json strictly (unknown fields are an
// error, the schema must be this tool's) and checks what mirror and
// footprint rely on: a known arch and well-formed image references.
// Errors name the file and, for syntax errors, the line.
func ParseLock(display string, data []byte) (*plan.Plan, error) {
	if len(data) > maxLockSize {
		return nil, fmt.Errorf("%s: lock file is larger than %d bytes", display, maxLockSize)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p plan.Plan
	if err := dec.Decode(&p); err != nil {
		var serr *json.SyntaxError
		var terr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &serr):
			return nil, fmt.Errorf("%s:%d: invalid JSON: %v", display, line(data, serr.Offset), err)
		case errors.As(err, &terr):
			return nil, fmt.Errorf("%s:%d: %s: want %s, got %s", display, line(data, terr.Offset), terr.Field, terr.Type, terr.Value)
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("%s: empty lock file", display)
		}
		return nil, fmt.Errorf("%s: %v", display, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: more than one JSON document", display)
	}
	if p.Schema != plan.Schema {
		return nil, fmt.Errorf("%s: lock schema %d, this microshift-compose reads schema %d; rebuild the lock with this version", display, p.Schema, plan.Schema)
	}
	if _, err := releases.ParseArch(p.Arch); err != nil {
		return nil, fmt.Errorf("%s: arch: %w", display, err)
	}
	for i, im := range p.Images {
		if strings.TrimSpace(im.Ref) == "" {
			return nil, fmt.Errorf("%s: images[%d]: empty reference", display, i)
		}
		if pinned := releases.IsDigestPinned(im.Ref); pinned != im.Pinned {
			return nil, fmt.Errorf("%s: images[%d]: %s has pinned %t, but the reference says %t", display, i, im.Ref, im.Pinned, pinned)
		}
	}
	return &p, nil
}

func line(data []byte, offset int64) int {
	l, _ := text.Position(data, offset)
	return l
}
