package upstream

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
)

// maxInput bounds pins.toml and handkept.toml.
const maxInput = 1 << 20

// LoadInputs reads the pins and the hand-kept facts of the source tree at
// root.
func LoadInputs(root string) (*Pins, *Hand, error) {
	data, err := inputfile.Read("pins", filepath.Join(root, filepath.FromSlash(PinsFile)), maxInput)
	if err != nil {
		return nil, nil, err
	}
	pins, err := ParsePins(PinsFile, data)
	if err != nil {
		return nil, nil, err
	}
	if data, err = inputfile.Read("hand-kept facts", filepath.Join(root, filepath.FromSlash(HandFile)), maxInput); err != nil {
		return nil, nil, err
	}
	hand, err := ParseHand(HandFile, data)
	if err != nil {
		return nil, nil, err
	}
	return pins, hand, nil
}

// StaleBundles lists the bundles in the source tree whose stream is not
// pinned: the generated data would not hold them.
func StaleBundles(root string, pins *Pins) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(BundleDir)))
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, e := range entries {
		stream, ok := strings.CutSuffix(e.Name(), ".json")
		if ok && pins.Pin(stream) == nil {
			stale = append(stale, BundleDir+"/"+e.Name())
		}
	}
	slices.Sort(stale)
	return stale, nil
}
