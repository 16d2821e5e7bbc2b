package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
)

// IDSchema versions how Inputs are hashed: a change to what the ID covers
// bumps it, so that old and new IDs never collide by accident.
const IDSchema = 1

// Inputs are what a plan's composition ID (Plan.ID) is the hash of: the
// normalised request, the content of the catalog, the release files and
// the tool's release knowledge, and the options after resolution that
// change what build writes (device files, image type, bootc...). Paths,
// flag order and time are not in it, so the same composition has the same
// ID on any machine.
type Inputs struct {
	IDSchema int `json:"id_schema"`
	// Request is the normalised selection: profile, sorted --with and
	// --without, arch, distro and the digests of user config files.
	Request any `json:"request"`
	// Catalog, Release and Knowledge are sha256 digests of content.
	Catalog   string `json:"catalog"`
	Release   string `json:"release"`
	Knowledge string `json:"knowledge"`
	// Options are what later steps add (SetInput), by name.
	Options map[string]any `json:"options,omitempty"`
}

// ID is the sha256 (hex) of the inputs' JSON (struct fields in order, map
// keys sorted).
func (in *Inputs) ID() (string, error) {
	data, err := json.Marshal(in)
	if err != nil {
		return "", fmt.Errorf("encoding composition inputs: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// SetInputs sets the plan's inputs and the ID they hash to.
func (p *Plan) SetInputs(in *Inputs) error {
	id, err := in.ID()
	if err != nil {
		return err
	}
	p.Inputs, p.ID = in, id
	return nil
}

// SetInput records an option that changes what build writes under key
// (v must encode to JSON deterministically: structs, sorted maps) and
// updates the ID. The inputs are copied, not changed, so that a copy of
// the plan made before keeps its ID. A plan read from a lock has no inputs:
// its ID stays as the lock says.
func (p *Plan) SetInput(key string, v any) error {
	if p.Inputs == nil {
		return nil
	}
	in := *p.Inputs
	in.Options = maps.Clone(in.Options)
	if in.Options == nil {
		in.Options = map[string]any{}
	}
	in.Options[key] = v
	return p.SetInputs(&in)
}

// ShortID is how text output shows a composition ID: its first 12 hex
// digits, as git shows commits.
func ShortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
