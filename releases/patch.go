package releases

import (
	"bytes"
	"fmt"
	"slices"
	"unicode/utf8"
)

// Patch returns data, a release file as read from disk, with its
// release.base and image references replaced by updated's. Only the values
// that differ are rewritten; every other byte (indentation, key order,
// escapes, line endings) stays as it was, so that a diff of the result shows
// only changed values, whatever the file's formatting. updated must have the
// same image keys in the same order as data: Patch changes values, never
// keys. display names the file in errors.
func Patch(display string, data []byte, updated *File) ([]byte, error) {
	old, spans, err := parseFile(display, updated.Name, data, true)
	if err != nil {
		return nil, err
	}
	if len(old.Images) != len(updated.Images) {
		return nil, fmt.Errorf("%s: patching changes the image keys (%d keys, %d after)", display, len(old.Images), len(updated.Images))
	}
	type edit struct {
		at    span
		value string
	}
	var edits []edit
	if updated.Base != old.Base {
		edits = append(edits, edit{spans.base, updated.Base})
	}
	for i, im := range updated.Images {
		if im.Key != old.Images[i].Key {
			return nil, fmt.Errorf("%s: patching changes image key %q to %q", display, old.Images[i].Key, im.Key)
		}
		if im.Ref != old.Images[i].Ref {
			edits = append(edits, edit{spans.images[i], im.Ref})
		}
	}
	if len(edits) == 0 {
		return data, nil
	}
	for _, e := range edits {
		// JSON cannot carry it: the file would read back as U+FFFD.
		if !utf8.ValidString(e.value) {
			return nil, fmt.Errorf("%s: refusing to write %q, which is not valid UTF-8", display, e.value)
		}
	}
	slices.SortFunc(edits, func(a, b edit) int { return int(a.at.start - b.at.start) })
	var b bytes.Buffer
	b.Grow(len(data) + 64*len(edits))
	pos := int64(0)
	for _, e := range edits {
		b.Write(data[pos:e.at.start])
		b.Write(quote(e.value))
		pos = e.at.end
	}
	b.Write(data[pos:])
	return b.Bytes(), nil
}

// ValidateRef checks that ref is a fully qualified image reference (registry,
// repository, and tag or digest), the form release files must use.
func ValidateRef(ref string) error {
	if problem := refProblem(ref); problem != "" {
		return fmt.Errorf("invalid image reference %q: %s", ref, escapeControl(problem))
	}
	return nil
}
