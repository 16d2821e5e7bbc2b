package compose

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
)

// setFiles puts the device files so far and the rendered manifests' files
// in the plan, sorted by path; refuses two at one path, and records their
// digests and sizes.
func setFiles(_ context.Context, _ *inputs, p soFar) (soFar, error) {
	files := append(p.Files, p.rendered...)
	sort.SliceStable(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	for i := range files {
		if i > 0 && files[i].Path == files[i-1].Path {
			return p, fmt.Errorf("components %q and %q both place %s on the device", files[i-1].Component, files[i].Component, files[i].Path)
		}
		sum := sha256.Sum256(files[i].Data)
		files[i].SHA256 = hex.EncodeToString(sum[:])
		files[i].Size = len(files[i].Data)
	}
	p.Files, p.rendered = files, nil
	return p, nil
}
