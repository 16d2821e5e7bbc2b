package transfer_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/sizes"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/internal/transfer"
)

func blobs(spec ...any) []transfer.Blob {
	var out []transfer.Blob
	for i := 0; i < len(spec); i += 2 {
		out = append(out, transfer.Blob{Digest: spec[i].(string), Size: int64(spec[i+1].(int))})
	}
	return out
}

func img(ref string, comps []string, manifest string, layers ...any) transfer.Image {
	return transfer.Image{Ref: ref, Components: comps, Manifests: blobs(manifest, 100), Blobs: blobs(layers...)}
}

func TestCompute(t *testing.T) {
	core, ovn := []string{"core"}, []string{"networking-ovnk"}
	base := []any{"base", 1000}
	oldSide := []transfer.Image{
		img("a@1", core, "m-a1", append(base, "a1", 10)...),
		img("b@1", ovn, "m-b1", append(base, "b1", 20)...),
	}
	for _, tc := range []struct {
		name  string
		new   []transfer.Image
		comps []string
		want  transfer.Report
	}{
		{
			name: "same images move nothing",
			new:  oldSide, comps: []string{"core", "networking-ovnk"},
			want: transfer.Report{Components: []transfer.Component{{Name: "core"}, {Name: "networking-ovnk"}}, Full: transfer.Bytes{Count: 5, Bytes: 1230}},
		},
		{
			name: "a re-digested image moves its new layer and manifest, not the base",
			new: []transfer.Image{
				img("a@2", core, "m-a2", append(base, "a2", 30)...),
				img("b@1", ovn, "m-b1", append(base, "b1", 20)...),
			},
			comps: []string{"core", "networking-ovnk"},
			want: transfer.Report{
				Components: []transfer.Component{{Name: "core", NewImages: 1, Blobs: 1, Bytes: 30}, {Name: "networking-ovnk"}},
				Manifests:  transfer.Bytes{Count: 1, Bytes: 100}, Total: transfer.Bytes{Count: 2, Bytes: 130},
				Full: transfer.Bytes{Count: 5, Bytes: 1250}, NewImages: 1,
			},
		},
		{
			name: "a new blob two components need is shared, counted once",
			new: []transfer.Image{
				img("a@1", core, "m-a1", append(base, "a1", 10)...),
				img("c@1", []string{"core", "storage-lvms"}, "m-c1", "c1", 40, "lvm", 5),
				img("d@1", []string{"storage-lvms"}, "m-d1", "lvm", 5, "d1", 7),
			},
			comps: []string{"core", "storage-lvms"},
			want: transfer.Report{
				Components: []transfer.Component{{Name: "core", NewImages: 1}, {Name: "storage-lvms", NewImages: 2, Blobs: 1, Bytes: 7}},
				// c1 and lvm: both used by core (c) and storage-lvms (c, d).
				SharedBetweenComponents: transfer.Bytes{Count: 2, Bytes: 45},
				Manifests:               transfer.Bytes{Count: 2, Bytes: 200}, Total: transfer.Bytes{Count: 5, Bytes: 252},
				Full: transfer.Bytes{Count: 8, Bytes: 1362}, NewImages: 2,
			},
		},
		{
			name:  "an image no component names, and a component the order lacks, come last by name",
			new:   []transfer.Image{img("x@1", nil, "m-x", "x", 3), img("z@1", []string{"zeta"}, "m-z", "z", 4), img("y@1", []string{"alpha"}, "m-y", "y", 5)},
			comps: []string{"core"},
			want: transfer.Report{
				Components: []transfer.Component{{Name: "core"}, {Name: "", NewImages: 1, Blobs: 1, Bytes: 3}, {Name: "alpha", NewImages: 1, Blobs: 1, Bytes: 5}, {Name: "zeta", NewImages: 1, Blobs: 1, Bytes: 4}},
				Manifests:  transfer.Bytes{Count: 3, Bytes: 300}, Total: transfer.Bytes{Count: 6, Bytes: 312},
				Full: transfer.Bytes{Count: 6, Bytes: 312}, NewImages: 3,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := transfer.Compute(oldSide, tc.new, tc.comps)
			if err != nil {
				t.Fatal(err)
			}
			if !equal(got, &tc.want) {
				t.Errorf("Compute() =\n%+v\nwant\n%+v", *got, tc.want)
			}
			// The rows add up to the total.
			sum := got.SharedBetweenComponents.Bytes + got.Manifests.Bytes
			for _, c := range got.Components {
				sum += c.Bytes
			}
			if sum != got.Total.Bytes {
				t.Errorf("components + shared + manifests = %d, total %d", sum, got.Total.Bytes)
			}
		})
	}
}

// TestComputeRefusesSizes: a size a registry states that no blob can have
// (negative, over sizes.MaxBlob), on either side, and sums that would
// overflow int64 (the total printed was negative, with exit 0), are one
// error naming the image and the blob.
func TestComputeRefusesSizes(t *testing.T) {
	core := []string{"core"}
	huge := int64(1) << 62
	for _, tc := range []struct {
		name     string
		old, new []transfer.Image
		want     string
	}{
		{"a negative layer", nil, []transfer.Image{img("q/a@1", core, "m-a", "l1", -5)},
			"q/a@1: blob l1 states a size of -5 bytes: size out of range (a size cannot be negative)"},
		{"a layer over 1 TiB", nil, []transfer.Image{img("q/a@1", core, "m-a", "l1", 1<<40+1)},
			"q/a@1: blob l1 states a size of 1099511627777 bytes: size out of range (more than the 1 TiB a blob may have)"},
		{"three layers of 2^62 bytes, whose sum overflows", nil, []transfer.Image{
			img("q/a@1", core, "m-a", "l1", int(huge)), img("q/b@1", core, "m-b", "l2", int(huge)), img("q/c@1", core, "m-c", "l3", int(huge))},
			"q/a@1: blob l1 states a size of 4611686018427387904 bytes"},
		{"a negative manifest on the old side", []transfer.Image{{Ref: "q/o@1", Manifests: []transfer.Blob{{Digest: "m-o", Size: -1}}}}, []transfer.Image{img("q/a@1", core, "m-a", "l1", 1)},
			"q/o@1: manifest m-o states a size of -1 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := transfer.Compute(tc.old, tc.new, core)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, sizes.ErrOutOfRange) {
				t.Errorf("Compute() = %+v, %v\nwant %q", r, err, tc.want)
			}
		})
	}
	// A thousand blobs of a TiB each add up, within the 1 PiB bound.
	var many []transfer.Image
	for i := range 1000 {
		many = append(many, img(fmt.Sprintf("q/m@%d", i), core, fmt.Sprintf("m%d", i), fmt.Sprintf("l%d", i), 1<<40))
	}
	r, err := transfer.Compute(nil, many, core)
	if err != nil {
		t.Fatalf("1000 blobs of 1 TiB: %v", err)
	}
	if r.Total.Bytes != 1000<<40+100*1000 {
		t.Errorf("total %d", r.Total.Bytes)
	}
	// 1025 of them pass the bound for any sum.
	many = append(many, img("q/m@x", core, "mx", "lx", 1<<40), img("q/m@y", core, "my", "ly", 1<<40))
	for i := range 30 {
		many = append(many, img(fmt.Sprintf("q/n@%d", i), core, fmt.Sprintf("n%d", i), fmt.Sprintf("k%d", i), 1<<40))
	}
	if _, err := transfer.Compute(nil, many, core); err == nil || !strings.Contains(err.Error(), "q/n@21: blob k21: with it a full bundle: the sizes add up to more than 1 PiB") {
		t.Errorf("1032 blobs of 1 TiB: %v", err)
	}
}

func equal(a, b *transfer.Report) bool {
	if len(a.Components) != len(b.Components) {
		return false
	}
	for i := range a.Components {
		if a.Components[i] != b.Components[i] {
			return false
		}
	}
	return a.SharedBetweenComponents == b.SharedBetweenComponents && a.Manifests == b.Manifests && a.Total == b.Total && a.Full == b.Full && a.NewImages == b.NewImages && a.Arch == b.Arch
}

// The same inputs give the same bytes, whatever the map order inside.
func TestMarkdownDeterministic(t *testing.T) {
	var new []transfer.Image
	for i := range 50 {
		c := []string{"core", "storage-lvms", "networking-ovnk"}[i%3]
		new = append(new, img(strings.Repeat("r", i+1), []string{c}, "m"+strings.Repeat("m", i), "l"+strings.Repeat("l", i), i+1, "shared", 7))
	}
	var first []byte
	for range 20 {
		var b bytes.Buffer
		r, err := transfer.Compute(nil, new, []string{"core"})
		if err != nil {
			t.Fatal(err)
		}
		r.Markdown(&b)
		if first == nil {
			first = b.Bytes()
		} else if !bytes.Equal(first, b.Bytes()) {
			t.Fatalf("Markdown() differs between runs:\n%s\n%s", first, b.Bytes())
		}
	}
}

// Component names from a user's catalog reach the table escaped: every
// row keeps its four cells.
func FuzzMarkdown(f *testing.F) {
	f.Add("core", "a|b")
	f.Add("`x`", "\n| injected | row |")
	f.Fuzz(func(t *testing.T, c1, c2 string) {
		r, err := transfer.Compute(nil, []transfer.Image{img("a", []string{c1}, "m1", "x", 1), img("b", []string{c2}, "m2", "y", 2)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		r.Markdown(&b)
		for _, row := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(row, "| ") && !strings.HasPrefix(row, "| ---") {
				if n := testutil.MarkdownCells(row); n != 5 {
					t.Fatalf("row %q has %d pipes, want 5:\n%s", row, n, b.String())
				}
			}
		}
	})
}
