package releases_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

const (
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func TestFileName(t *testing.T) {
	for _, tc := range []struct {
		component string
		arch      releases.Arch
		want      string
	}{
		{"", releases.X86_64, "release-x86_64.json"},
		{"", releases.AArch64, "release-aarch64.json"},
		{"olm", releases.AArch64, "release-olm-aarch64.json"},
		{"ai-model-serving", releases.X86_64, "release-ai-model-serving-x86_64.json"},
		{"kube-state-metrics", releases.AArch64, "release-kube-state-metrics-aarch64.json"},
	} {
		got := releases.FileName(tc.component, tc.arch)
		if got != tc.want {
			t.Errorf("FileName(%q, %s) = %q, want %q", tc.component, tc.arch, got, tc.want)
		}
		c, a, ok, err := releases.ParseFileName(got)
		if err != nil || !ok || c != tc.component || a != tc.arch {
			t.Errorf("ParseFileName(%q) = %q, %q, %v, %v; want %q, %q, true, nil", got, c, a, ok, err, tc.component, tc.arch)
		}
	}
}

func TestParseFileName(t *testing.T) {
	const badArch = "file name does not end in -x86_64.json or -aarch64.json"
	for _, tc := range []struct {
		name      string
		component string
		arch      releases.Arch
		ok        bool
		err       string
	}{
		{name: "release-x86_64.json", arch: releases.X86_64, ok: true},
		{name: "release-aarch64.json", arch: releases.AArch64, ok: true},
		{name: "release-olm-x86_64.json", component: "olm", arch: releases.X86_64, ok: true},
		{name: "release-ai-model-serving-x86_64.json", component: "ai-model-serving", arch: releases.X86_64, ok: true},
		{name: "release-gateway-api-aarch64.json", component: "gateway-api", arch: releases.AArch64, ok: true},
		// Not release files at all: ignored by LoadDir, no error.
		{name: "README.md"},
		{name: "release-x86_64.json.orig"},
		{name: "foo-release-x86_64.json"},
		{name: "release.json"},
		// Release files with a bad arch.
		{name: "release-amd64.json", ok: true, err: "release-amd64.json: " + badArch},
		{name: "release-olm-arm64.json", ok: true, err: "release-olm-arm64.json: " + badArch},
		{name: "release-olm-ppc64le.json", ok: true, err: "release-olm-ppc64le.json: " + badArch},
		{name: "release--x86_64.json", ok: true, err: "release--x86_64.json: " + badArch},
		{name: "release-.json", ok: true, err: "release-.json: " + badArch},
		{name: "release-x86_64-.json", ok: true, err: "release-x86_64-.json: " + badArch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, a, ok, err := releases.ParseFileName(tc.name)
			if ok != tc.ok {
				t.Errorf("ParseFileName(%q) ok = %v, want %v", tc.name, ok, tc.ok)
			}
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("ParseFileName(%q) error = %v, want %q", tc.name, err, tc.err)
				}
				return
			}
			if err != nil || c != tc.component || a != tc.arch {
				t.Fatalf("ParseFileName(%q) = %q, %q, %v; want %q, %q, nil", tc.name, c, a, err, tc.component, tc.arch)
			}
		})
	}
}

func TestParseFileRealUpstream(t *testing.T) {
	for _, dir := range []string{"main", "release-4.18"} {
		names, data := refFiles(t, dir)
		for _, n := range names {
			t.Run(dir+"/"+n, func(t *testing.T) {
				f, err := releases.ParseFile(dir+"/"+n, n, data[n])
				if err != nil {
					t.Fatalf("ParseFile(%s) = %v", n, err)
				}
				c, a, _, _ := releases.ParseFileName(n)
				if f.Name != n || f.Component != c || f.Arch != a {
					t.Errorf("ParseFile(%s) = name %q component %q arch %q", n, f.Name, f.Component, f.Arch)
				}
				if f.Base == "" || len(f.Images) == 0 {
					t.Errorf("ParseFile(%s): base %q, %d images", n, f.Base, len(f.Images))
				}
				// Every image in file order, exactly as written.
				if got := bytes.Count(data[n], []byte(`": "`)) - 1; got != len(f.Images) {
					t.Errorf("ParseFile(%s) has %d images, the file %d entries", n, len(f.Images), got)
				}
				for _, im := range f.Images {
					ref, ok := f.Lookup(im.Key)
					if !ok || ref != im.Ref {
						t.Errorf("Lookup(%q) = %q, %v; want %q", im.Key, ref, ok, im.Ref)
					}
					if !bytes.Contains(data[n], []byte(`"`+im.Key+`": "`+im.Ref+`"`)) {
						t.Errorf("%s: image %q = %q is not in the file", n, im.Key, im.Ref)
					}
				}
				if _, ok := f.Lookup("no-such-key"); ok {
					t.Errorf("Lookup(no-such-key) found something")
				}
			})
		}
	}
}

// TestParseFileKnownValues pins a few facts of the upstream files.
func TestParseFileKnownValues(t *testing.T) {
	_, main := refFiles(t, "main")
	f, err := releases.ParseFile("x", "release-x86_64.json", main["release-x86_64.json"])
	if err != nil {
		t.Fatal(err)
	}
	if f.Base != "5.0.0-0.nightly-2026-07-23-224236" {
		t.Errorf("base = %q", f.Base)
	}
	wantKeys := []string{"cli", "coredns", "haproxy-router", "kube-rbac-proxy", "ovn-kubernetes-microshift", "pod", "service-ca-operator", "lvms_operator", "csi-snapshot-controller"}
	var keys []string
	for _, im := range f.Images {
		keys = append(keys, im.Key)
	}
	if !reflect.DeepEqual(keys, wantKeys) {
		t.Errorf("keys in file order = %v, want %v", keys, wantKeys)
	}
	if ref, _ := f.Lookup("cli"); ref != "quay.io/openshift-release-dev/ocp-v5.0-art-dev@sha256:45188944bb589e9b3fd88bd175a18b9414a2ba070e2a08a3964e22ceedaf2955" {
		t.Errorf("cli = %q", ref)
	}
	ai, err := releases.ParseFile("x", "release-ai-model-serving-x86_64.json", main["release-ai-model-serving-x86_64.json"])
	if err != nil {
		t.Fatal(err)
	}
	if ai.Component != "ai-model-serving" || ai.Arch != releases.X86_64 {
		t.Errorf("ai-model-serving file: component %q arch %q", ai.Component, ai.Arch)
	}
	tagged := 0
	for _, im := range ai.Images {
		if !releases.IsDigestPinned(im.Ref) {
			tagged++
		}
	}
	// Upstream really ships AI model serving images by tag.
	if tagged == 0 {
		t.Errorf("no tag-only images in release-ai-model-serving-x86_64.json; upstream has some")
	}
}

func TestParseFileErrors(t *testing.T) {
	const name = "release-x86_64.json"
	const display = "rel/release-x86_64.json"
	good := "{\n  \"release\": {\n    \"base\": \"4.18.0\"\n  },\n  \"images\": {\n    \"a\": \"quay.io/x/y@" + digestA + "\"\n  }\n}\n"
	if _, err := releases.ParseFile(display, name, []byte(good)); err != nil {
		t.Fatalf("ParseFile(good) = %v", err)
	}
	for _, tc := range []struct {
		name string
		data string
		want string
	}{
		{"empty", "", display + ": unexpected end of file"},
		{"whitespace", " \n\t", display + ": unexpected end of file"},
		{"truncated", "{\n  \"release\": {\n    \"base\": \"4.18.0\"\n  },\n  \"images\": {", display + ": unexpected end of file"},
		{"trailing comma", "{\n  \"release\": {\"base\": \"4.18.0\"},\n  \"images\": {\"a\": \"quay.io/x/y:1\",}\n}",
			display + ": line 3, column 35: invalid JSON: invalid character '}' looking for beginning of object key string"},
		{"missing colon", "{\n  \"release\" {}\n}", display + ": line 2, column 13: invalid JSON: invalid character '{' after object key"},
		{"bare word", "{\n  release: 1\n}", display + ": line 2, column 3: invalid JSON: invalid character 'r'"},
		{"top-level array", "[\n  {\"release\": {\"base\": \"4.18.0\"}, \"images\": {}}\n]", display + ": line 1, column 1: top level must be a JSON object, got an array"},
		{"top-level string", `"release"`, display + ": line 1, column 1: top level must be a JSON object, got a string"},
		{"top-level null", `null`, display + ": line 1, column 1: top level must be a JSON object, got null"},
		{"unknown top-level key", "{\n  \"release\": {\"base\": \"4.18.0\"},\n  \"images\": {},\n  \"version\": 2\n}",
			display + ": line 4, column 3: unknown key \"version\" (want \"release\" and \"images\")"},
		{"unknown key in release", "{\n  \"release\": {\"version\": \"4.18.0\"},\n  \"images\": {}\n}",
			display + ": line 2, column 15: unknown key \"version\" in \"release\" (want \"base\")"},
		{"duplicate top-level key", "{\n  \"release\": {\"base\": \"4.18.0\"},\n  \"images\": {},\n  \"images\": {}\n}",
			display + ": line 4, column 3: duplicate key \"images\" in top level"},
		{"duplicate image key", "{\n  \"release\": {\"base\": \"4.18.0\"},\n  \"images\": {\n    \"cli\": \"quay.io/x/y@" + digestA + "\",\n    \"cli\": \"quay.io/x/y@" + digestB + "\"\n  }\n}",
			display + ": line 5, column 5: duplicate key \"cli\" in \"images\""},
		{"duplicate image key escaped", "{\"release\": {\"base\": \"4.18.0\"}, \"images\": {\"cli\": \"quay.io/x/y:1\", \"c\\u006ci\": \"quay.io/x/y:2\"}}",
			display + ": line 1, column 68: duplicate key \"cli\" in \"images\""},
		{"duplicate base", "{\"release\": {\"base\": \"4.18.0\", \"base\": \"4.18.1\"}, \"images\": {}}",
			display + ": line 1, column 32: duplicate key \"base\" in \"release\""},
		{"release missing", "{\n  \"images\": {}\n}", display + ": missing \"release\" object with \"base\""},
		{"base missing", "{\n  \"release\": {},\n  \"images\": {}\n}", display + ": missing release.base"},
		{"base empty", "{\n  \"release\": {\"base\": \"\"},\n  \"images\": {}\n}", display + ": line 2, column 23: release.base is empty"},
		{"base blank", "{\n  \"release\": {\"base\": \"  \"},\n  \"images\": {}\n}", display + ": line 2, column 23: release.base is empty"},
		{"base number", "{\n  \"release\": {\"base\": 4.18},\n  \"images\": {}\n}", display + ": line 2, column 23: release.base must be a string, got a number"},
		{"base null", "{\n  \"release\": {\"base\": null},\n  \"images\": {}\n}", display + ": line 2, column 23: release.base must be a string, got null"},
		{"base object", "{\n  \"release\": {\"base\": {\"v\": \"4.18\"}},\n  \"images\": {}\n}", display + ": line 2, column 23: release.base must be a string, got an object"},
		{"base array", "{\n  \"release\": {\"base\": [\"4.18\"]},\n  \"images\": {}\n}", display + ": line 2, column 23: release.base must be a string, got an array"},
		{"release a string", "{\n  \"release\": \"4.18.0\",\n  \"images\": {}\n}", display + ": line 2, column 14: \"release\" must be a JSON object, got a string"},
		{"images missing", "{\n  \"release\": {\"base\": \"4.18.0\"}\n}", display + ": missing \"images\" object"},
		{"images array", "{\n  \"release\": {\"base\": \"4.18.0\"},\n  \"images\": [\"quay.io/x/y:1\"]\n}", display + ": line 3, column 13: \"images\" must be a JSON object, got an array"},
		{"images null", "{\n  \"release\": {\"base\": \"4.18.0\"},\n  \"images\": null\n}", display + ": line 3, column 13: \"images\" must be a JSON object, got null"},
		{"image number", "{\n  \"release\": {\"base\": \"4.18.0\"},\n  \"images\": {\"cli\": 1}\n}", display + ": line 3, column 21: image \"cli\" must be a string, got a number"},
		{"image bool", "{\n  \"release\": {\"base\": \"4.18.0\"},\n  \"images\": {\"cli\": true}\n}", display + ": line 3, column 21: image \"cli\" must be a string, got a boolean"},
		{"image object", "{\n  \"release\": {\"base\": \"4.18.0\"},\n  \"images\": {\"cli\": {\"ref\": \"quay.io/x/y:1\"}}\n}", display + ": line 3, column 21: image \"cli\" must be a string, got an object"},
		{"image array", "{\n  \"release\": {\"base\": \"4.18.0\"},\n  \"images\": {\"cli\": [\"quay.io/x/y:1\"]}\n}", display + ": line 3, column 21: image \"cli\" must be a string, got an array"},
		{"image null", "{\n  \"release\": {\"base\": \"4.18.0\"},\n  \"images\": {\"cli\": null}\n}", display + ": line 3, column 21: image \"cli\" must be a string, got null"},
		{"reference short digest", "{\n  \"release\": {\"base\": \"4.18.0\"},\n  \"images\": {\"cli\": \"quay.io/x/y@sha256:abc\"}\n}",
			display + ": line 3, column 21: image \"cli\": invalid image reference \"quay.io/x/y@sha256:abc\": invalid checksum digest length"},
		{"reference uppercase", "{\n  \"release\": {\"base\": \"4.18.0\"},\n  \"images\": {\"cli\": \"quay.io/X/Y:1\"}\n}",
			display + ": line 3, column 21: image \"cli\": invalid image reference \"quay.io/X/Y:1\": repository can only contain the characters `abcdefghijklmnopqrstuvwxyz0123456789_-./`: X/Y"},
		{"reference without registry", "{\n  \"release\": {\"base\": \"4.18.0\"},\n  \"images\": {\"cli\": \"ubuntu:22.04\"}\n}",
			display + ": line 3, column 21: image \"cli\": invalid image reference \"ubuntu:22.04\": it must name the registry and a tag or digest, e.g. quay.io/org/image@sha256:<64 hex>"},
		{"reference with a newline", "{\n  \"release\": {\"base\": \"4.18.0\"},\n  \"images\": {\"cli\": \"quay.io/x\\ny:1\"}\n}",
			display + ": line 3, column 21: image \"cli\": invalid image reference \"quay.io/x\\ny:1\": repository can only contain the characters `abcdefghijklmnopqrstuvwxyz0123456789_-./`: x\\ny"},
		{"empty key", "{\n  \"release\": {\"base\": \"4.18.0\"},\n  \"images\": {\"\": \"quay.io/x/y:1\"}\n}", display + ": line 3, column 14: empty image key"},
		{"blank key", "{\n  \"release\": {\"base\": \"4.18.0\"},\n  \"images\": {\" \": \"quay.io/x/y:1\"}\n}", display + ": line 3, column 14: empty image key"},
		{"trailing object", good + "{}", display + ": line 9, column 1: unexpected data after the JSON document"},
		{"trailing garbage", good + "x", display + ": line 9, column 1: unexpected data after the JSON document"},
		{"trailing brace", good + "}", display + ": line 9, column 1: unexpected data after the JSON document"},
		{"byte order mark", "\ufeff" + good, display + ": line 1, column 2: invalid JSON: invalid character 'ï' looking for beginning of value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := releases.ParseFile(display, name, []byte(tc.data))
			if err == nil {
				t.Fatalf("ParseFile(%s) = %+v, nil; want error %q", tc.name, f, tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("ParseFile(%s) error:\n got: %s\nwant: %s", tc.name, err, tc.want)
			}
		})
	}
}

func TestParseFileNameErrors(t *testing.T) {
	for _, tc := range []struct {
		fileName, display, want string
	}{
		{"foo.json", "dir/foo.json", "dir/foo.json: not a release file name (want release-<arch>.json or release-<component>-<arch>.json)"},
		{"release-olm-arm64.json", "dir/release-olm-arm64.json", "dir/release-olm-arm64.json: file name does not end in -x86_64.json or -aarch64.json"},
		// In a bundle the display names the bundle too.
		{"release-ppc64le.json", "data/4.18.json: release-ppc64le.json", "data/4.18.json: release-ppc64le.json: file name does not end in -x86_64.json or -aarch64.json"},
	} {
		_, err := releases.ParseFile(tc.display, tc.fileName, []byte(`{"release": {"base": "4.18.0"}, "images": {}}`))
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseFile(%q, %q) error = %v, want %q", tc.display, tc.fileName, err, tc.want)
		}
	}
}

func TestParseFileTooLarge(t *testing.T) {
	data := bytes.Repeat([]byte(" "), releases.MaxFileSize+1)
	_, err := releases.ParseFile("big/release-x86_64.json", "release-x86_64.json", data)
	want := "big/release-x86_64.json: file is larger than 4194304 bytes"
	if err == nil || err.Error() != want {
		t.Errorf("ParseFile(oversized) error = %v, want %q", err, want)
	}
	// Exactly at the limit is still parsed (and fails on content, not size).
	data = data[:releases.MaxFileSize]
	_, err = releases.ParseFile("big/release-x86_64.json", "release-x86_64.json", data)
	if want := "big/release-x86_64.json: unexpected end of file"; err == nil || err.Error() != want {
		t.Errorf("ParseFile(at limit) error = %v, want %q", err, want)
	}
}

func TestParseFileEmptyImages(t *testing.T) {
	f, err := releases.ParseFile("x", "release-olm-x86_64.json", []byte(`{"images": {}, "release": {"base": "4.18.0"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Images) != 0 || f.Base != "4.18.0" || f.Component != "olm" {
		t.Errorf("got %+v", f)
	}
	want := "{\n  \"release\": {\n    \"base\": \"4.18.0\"\n  },\n  \"images\": {}\n}\n"
	if got := string(f.Encode()); got != want {
		t.Errorf("Encode() =\n%s\nwant\n%s", got, want)
	}
}

// TestEncodeRealUpstream: MicroShift's files use two-space indentation, keys
// in release-then-images order and a trailing newline, so Encode reproduces
// them byte for byte and parsing the output gives the same File.
func TestEncodeRealUpstream(t *testing.T) {
	for _, dir := range []string{"main", "release-4.18"} {
		names, data := refFiles(t, dir)
		for _, n := range names {
			f, err := releases.ParseFile(n, n, data[n])
			if err != nil {
				t.Fatal(err)
			}
			enc := f.Encode()
			if !bytes.Equal(enc, data[n]) {
				t.Errorf("%s/%s: Encode() differs from the upstream file:\n%s", dir, n, testutil.FirstDiff(data[n], enc))
			}
			back, err := releases.ParseFile(n, n, enc)
			if err != nil {
				t.Fatalf("%s/%s: ParseFile(Encode()) = %v", dir, n, err)
			}
			if !reflect.DeepEqual(back, f) {
				t.Errorf("%s/%s: ParseFile(Encode(f)) = %+v, want %+v", dir, n, back, f)
			}
		}
	}
}

func TestEncodeEscapes(t *testing.T) {
	f := &releases.File{
		Name: "release-x86_64.json", Arch: releases.X86_64,
		Base:   "4.18.0 \"quoted\" <html> & \\ \t\u2028",
		Images: []releases.Image{{Key: "k\"<&>é", Ref: "quay.io/x/y@" + digestA}, {Key: "b", Ref: "quay.io/x/y:1"}},
	}
	enc := f.Encode()
	if !strings.Contains(string(enc), `"base": "4.18.0 \"quoted\" <html> & \\ \t\u2028"`) {
		t.Errorf("Encode() escapes the base unexpectedly:\n%s", enc)
	}
	back, err := releases.ParseFile("x", f.Name, enc)
	if err != nil {
		t.Fatalf("ParseFile(Encode()) = %v\n%s", err, enc)
	}
	if !reflect.DeepEqual(back, f) {
		t.Errorf("ParseFile(Encode(f)) = %+v, want %+v", back, f)
	}
}
