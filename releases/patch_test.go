package releases_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/releases"
)

const (
	digestOld = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	digestNew = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

// TestPatchKeepsFormatting rewrites the values of files that are not in
// Encode's layout: only the changed values may differ afterwards.
func TestPatchKeepsFormatting(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{
			name: "MicroShift layout",
			data: "{\n  \"release\": {\n    \"base\": \"4.18.0\"\n  },\n  \"images\": {\n    \"cli\": \"quay.io/x/cli@" + digestOld + "\",\n    \"pod\": \"quay.io/x/pod@" + digestOld + "\"\n  }\n}\n",
			want: "{\n  \"release\": {\n    \"base\": \"4.18.1\"\n  },\n  \"images\": {\n    \"cli\": \"quay.io/x/cli@" + digestNew + "\",\n    \"pod\": \"quay.io/x/pod@" + digestOld + "\"\n  }\n}\n",
		},
		{
			name: "tabs, images first, no trailing newline",
			data: "{\n\t\"images\": {\n\t\t\"cli\":\"quay.io/x/cli@" + digestOld + "\",\n\t\t\"pod\" : \"quay.io/x/pod@" + digestOld + "\"\n\t},\n\t\"release\": {\"base\": \"4.18.0\"}\n}",
			want: "{\n\t\"images\": {\n\t\t\"cli\":\"quay.io/x/cli@" + digestNew + "\",\n\t\t\"pod\" : \"quay.io/x/pod@" + digestOld + "\"\n\t},\n\t\"release\": {\"base\": \"4.18.1\"}\n}",
		},
		{
			name: "one line",
			data: `{"release":{"base":"4.18.0"},"images":{"cli":"quay.io/x/cli@` + digestOld + `","pod":"quay.io/x/pod@` + digestOld + `"}}`,
			want: `{"release":{"base":"4.18.1"},"images":{"cli":"quay.io/x/cli@` + digestNew + `","pod":"quay.io/x/pod@` + digestOld + `"}}`,
		},
		{
			name: "CRLF and four spaces",
			data: "{\r\n    \"release\": {\r\n        \"base\": \"4.18.0\"\r\n    },\r\n    \"images\": {\r\n        \"cli\": \"quay.io/x/cli@" + digestOld + "\",\r\n        \"pod\": \"quay.io/x/pod@" + digestOld + "\"\r\n    }\r\n}\r\n",
			want: "{\r\n    \"release\": {\r\n        \"base\": \"4.18.1\"\r\n    },\r\n    \"images\": {\r\n        \"cli\": \"quay.io/x/cli@" + digestNew + "\",\r\n        \"pod\": \"quay.io/x/pod@" + digestOld + "\"\r\n    }\r\n}\r\n",
		},
		{
			// An escaped value that does not change keeps its escapes.
			name: "escapes in unchanged values",
			data: `{"release": {"base": "4.18.0"}, "images": {"cli": "quay.io/x/cli@` + digestOld + `", "pod": "quay.io\/x\/pod@` + digestOld + `"}}`,
			want: `{"release": {"base": "4.18.1"}, "images": {"cli": "quay.io/x/cli@` + digestNew + `", "pod": "quay.io\/x\/pod@` + digestOld + `"}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := releases.ParseFile("f.json", "release-x86_64.json", []byte(tc.data))
			if err != nil {
				t.Fatalf("ParseFile() = %v", err)
			}
			f.Base = "4.18.1"
			f.Images[0].Ref = "quay.io/x/cli@" + digestNew
			got, err := releases.Patch("f.json", []byte(tc.data), f)
			if err != nil {
				t.Fatalf("Patch() = %v", err)
			}
			if string(got) != tc.want {
				t.Errorf("Patch() =\n%q\nwant\n%q", got, tc.want)
			}
			// The result parses to the updated file.
			back, err := releases.ParseFile("f.json", "release-x86_64.json", got)
			if err != nil || back.Base != f.Base || !slices.Equal(back.Images, f.Images) {
				t.Errorf("ParseFile(Patch()) = %+v, %v; want %+v", back, err, f)
			}
		})
	}
}

// TestPatchUpstreamFiles runs Patch over every real upstream file: no
// change leaves the bytes identical, and a changed value gives exactly what
// Encode would write (the files are in Encode's layout).
func TestPatchUpstreamFiles(t *testing.T) {
	for _, dir := range []string{"main", "release-4.18"} {
		names, data := refFiles(t, dir)
		for _, n := range names {
			t.Run(dir+"/"+n, func(t *testing.T) {
				f, err := releases.ParseFile(n, n, data[n])
				if err != nil {
					t.Fatal(err)
				}
				same, err := releases.Patch(n, data[n], f)
				if err != nil || !bytes.Equal(same, data[n]) {
					t.Fatalf("Patch(unchanged) = %v; bytes equal: %v", err, bytes.Equal(same, data[n]))
				}
				f.Base += "-next"
				last := &f.Images[len(f.Images)-1]
				last.Ref = strings.SplitN(last.Ref, "@", 2)[0] + "@" + digestNew
				got, err := releases.Patch(n, data[n], f)
				if err != nil {
					t.Fatal(err)
				}
				if want := f.Encode(); !bytes.Equal(got, want) {
					t.Errorf("Patch(changed) differs from Encode():\n%s\nwant\n%s", got, want)
				}
			})
		}
	}
}

func TestPatchErrors(t *testing.T) {
	data := []byte(`{"release": {"base": "4.18.0"}, "images": {"cli": "quay.io/x/cli@` + digestOld + `"}}`)
	for _, tc := range []struct {
		name   string
		update func(*releases.File)
		want   string
	}{
		{"key added", func(f *releases.File) {
			f.Images = append(f.Images, releases.Image{Key: "pod", Ref: "quay.io/x/pod:1"})
		},
			"f.json: patching changes the image keys (1 keys, 2 after)"},
		{"key renamed", func(f *releases.File) { f.Images[0].Key = "oc" },
			`f.json: patching changes image key "cli" to "oc"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := releases.ParseFile("f.json", "release-x86_64.json", data)
			if err != nil {
				t.Fatal(err)
			}
			tc.update(f)
			if _, err := releases.Patch("f.json", data, f); err == nil || err.Error() != tc.want {
				t.Errorf("Patch() = %v, want %q", err, tc.want)
			}
		})
	}
	bad := &releases.File{Name: "release-x86_64.json"}
	if _, err := releases.Patch("f.json", []byte(`{"release": {}}`), bad); err == nil || err.Error() != `f.json: missing release.base` {
		t.Errorf("Patch(invalid file) = %v", err)
	}
}

func TestValidateRef(t *testing.T) {
	for _, tc := range []struct{ ref, want string }{
		{"quay.io/x/cli@" + digestOld, ""},
		{"quay.io/x/cli:4.18", ""},
		{"cli:latest", `invalid image reference "cli:latest": it must name the registry and a tag or digest, e.g. quay.io/org/image@sha256:<64 hex>`},
		{"quay.io/x/cli@sha256:abc", `invalid image reference "quay.io/x/cli@sha256:abc": invalid checksum digest length`},
		{"quay.io/x/Cli:1", `invalid image reference "quay.io/x/Cli:1": repository can only contain the characters ` + "`abcdefghijklmnopqrstuvwxyz0123456789_-./`: x/Cli"},
	} {
		err := releases.ValidateRef(tc.ref)
		if got := errString(err); got != tc.want {
			t.Errorf("ValidateRef(%q) = %q, want %q", tc.ref, got, tc.want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
