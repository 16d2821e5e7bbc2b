package rebase_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/transfer"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/rebase"
)

// fakeContents stands in for the embedded releases' image manifests (the
// tests reach no registry): images of a repository share its base layer;
// the own layer and manifest follow from the reference.
func fakeContents(refs []string, arch releases.Arch) (map[string]transfer.Image, error) {
	blob := func(s string, scale int64) transfer.Blob {
		sum := sha256.Sum256([]byte(string(arch) + "\x00" + s))
		return transfer.Blob{Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: scale + int64(binary.BigEndian.Uint32(sum[:4])%uint32(scale))}
	}
	out := map[string]transfer.Image{}
	for _, ref := range refs {
		repo, _, _ := strings.Cut(ref, "@")
		out[ref] = transfer.Image{
			Manifests: []transfer.Blob{blob("manifest "+ref, 1<<10)},
			Blobs:     []transfer.Blob{blob("base "+repo, 40<<20), blob("layer "+ref, 4<<20)},
		}
	}
	return out, nil
}

// TestDiffTransferGolden: the 4.18 → 5.0 rebase with what it moves for
// x86_64, per component.
func TestDiffTransferGolden(t *testing.T) {
	oldRel, newRel := embedded(t, "4.18"), embedded(t, "5.0")
	d := rebase.DiffReleases(oldRel, newRel, "4.18 (embedded)", "5.0 (embedded)")
	var asked []releases.Arch
	read := func(refs []string, a releases.Arch) (map[string]transfer.Image, error) {
		asked = append(asked, a)
		return fakeContents(refs, a)
	}
	if err := d.AddTransfer(oldRel, newRel, []releases.Arch{releases.X86_64}, read); err != nil {
		t.Fatal(err)
	}
	if len(d.Transfer) != 1 || d.Transfer[0].Arch != "x86_64" || len(asked) != 2 {
		t.Fatalf("AddTransfer(x86_64): %d reports, read %v", len(d.Transfer), asked)
	}
	md := d.Markdown()
	i := strings.Index(string(md), "\n#### Update transfer (x86_64)")
	if i < 0 {
		t.Fatalf("Markdown() has no transfer section:\n%s", md)
	}
	golden(t, "release-diff-transfer-4.18-5.0-x86_64.md", md[i:])
	data, err := json.MarshalIndent(d.Transfer, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "release-diff-transfer-4.18-5.0-x86_64.json", append(data, '\n'))
}
