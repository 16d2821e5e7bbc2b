package provenance_test

import (
	"bytes"
	"context"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	slsa "github.com/in-toto/attestation/go/predicates/provenance/v1"
	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/attest"
	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/render/provenance"
	"github.com/microshift-compose/microshift-compose/render/sbom"
	"github.com/microshift-compose/microshift-compose/write"
)

var tool = provenance.Tool{Version: "v1.2.3", Commit: "0123456789abcdef0123456789abcdef01234567"}

// buildOutput resolves and builds a selection of the embedded catalog and
// release, with both SBOMs.
func buildOutput(t testing.TB, stream, profile string, with ...string) *output.Dir {
	t.Helper()
	cat, err := components.Default()
	if err != nil {
		t.Fatal(err)
	}
	rels, err := releases.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := releases.Select(rels, stream)
	if err != nil {
		t.Fatal(err)
	}
	p, err := assemble.Plan(context.Background(), cat, rel, compose.Request{Profile: profile, Arch: releases.X86_64, With: with, AllowRedBoot: true})
	if err != nil {
		t.Fatal(err)
	}
	out, err := assemble.Build(context.Background(), p, assemble.Options{Bootc: p.Target.BootcBase != "", SBOM: sbom.Options{Formats: sbom.Formats}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type keys struct {
	signer   *attest.Signer
	verifier *attest.Verifier
}

func newKeys(t testing.TB, name string) keys {
	t.Helper()
	priv, pub, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte("pw")))
	if err != nil {
		t.Fatal(err)
	}
	s, err := attest.ParseSigner(name+".key", priv, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := attest.ParseVerifier(name+".pub", pub)
	if err != nil {
		t.Fatal(err)
	}
	return keys{s, v}
}

// signedOutput writes a signed build into a new directory.
func signedOutput(t testing.TB, out *output.Dir, k keys) string {
	t.Helper()
	cp := *out
	cp.Files = slices.Clone(out.Files)
	if err := provenance.Sign(context.Background(), &cp, k.signer, tool); err != nil {
		t.Fatalf("Sign() = %v", err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := write.Write(context.Background(), dir, &cp); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestStatement: the subjects are every output file by path and every
// pinned image by reference, with their sha256; the predicate is SLSA
// provenance v1 with the composition ID, the normalised request and the
// content digests the ID hashes, and the tool.
func TestStatement(t *testing.T) {
	out := buildOutput(t, "4.19", "full", "multus")
	st, err := provenance.Statement(out, tool)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, f := range out.Files {
		sum := sha256.Sum256(f.Data)
		want[f.Path] = hex.EncodeToString(sum[:])
	}
	for _, ref := range out.Plan.ImageRefs() {
		if _, d, ok := strings.Cut(ref, "@sha256:"); ok {
			want[ref] = d
		}
	}
	var names []string
	for _, s := range st.GetSubject() {
		names = append(names, s.GetName())
		if want[s.GetName()] != s.GetDigest()["sha256"] {
			t.Errorf("subject %s: sha256 %s, want %s", s.GetName(), s.GetDigest()["sha256"], want[s.GetName()])
		}
	}
	if len(names) != len(want) {
		t.Errorf("%d subjects, want %d (every file and pinned image)", len(names), len(want))
	}
	for _, f := range []string{output.LockFile, output.SBOMFile, output.CycloneDXFile, output.Containerfile, output.ImagesFile} {
		if !slices.Contains(names, f) {
			t.Errorf("no subject %s", f)
		}
	}
	if st.GetPredicateType() != "https://slsa.dev/provenance/v1" {
		t.Errorf("predicateType = %s", st.GetPredicateType())
	}
	var pred slsa.Provenance
	if err := attest.FromStruct(st.GetPredicate(), &pred); err != nil {
		t.Fatal(err)
	}
	ext := pred.GetBuildDefinition().GetExternalParameters().AsMap()
	if ext["composition_id"] != out.Plan.ID {
		t.Errorf("composition_id = %v, want %s", ext["composition_id"], out.Plan.ID)
	}
	req, _ := ext["request"].(map[string]any)
	if req["profile"] != "full" || req["arch"] != "x86_64" || !slices.Equal(toStrings(req["with"]), []string{"multus"}) {
		t.Errorf("request = %v, want the normalised request (full, x86_64, with multus)", req)
	}
	deps := map[string]string{}
	for _, d := range pred.GetBuildDefinition().GetResolvedDependencies() {
		deps[d.GetName()] = d.GetDigest()["sha256"]
	}
	in := out.Plan.Inputs
	if deps[provenance.DependencyCatalog] != in.Catalog || deps[provenance.DependencyRelease] != in.Release || deps[provenance.DependencyKnowledge] != in.Knowledge {
		t.Errorf("resolvedDependencies = %v, want the catalog, release and knowledge digests of the composition ID", deps)
	}
	b := pred.GetRunDetails().GetBuilder()
	if b.GetId() != provenance.BuilderID || b.GetVersion()["microshift-compose"] != "v1.2.3" || b.GetVersion()["commit"] != tool.Commit {
		t.Errorf("builder = %v", b)
	}
	if pred.GetRunDetails().GetMetadata().GetStartedOn() != nil {
		t.Error("the statement records a start time: build records no clock")
	}
}

func toStrings(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// TestStatementDeterministic: the same output gives the same statement
// bytes (the payload that is signed), another composition another.
func TestStatementDeterministic(t *testing.T) {
	payload := func(out *output.Dir) []byte {
		st, err := provenance.Statement(out, tool)
		if err != nil {
			t.Fatal(err)
		}
		data, err := attest.EncodeStatement(st)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	a, b := payload(buildOutput(t, "4.19", "full")), payload(buildOutput(t, "4.19", "full"))
	if !bytes.Equal(a, b) {
		t.Fatal("two builds of one selection give different statements")
	}
	if bytes.Equal(a, payload(buildOutput(t, "4.19", "minimal"))) {
		t.Error("full and minimal give the same statement")
	}
	// Signed twice with one key, the payloads are the same bytes (the
	// ECDSA signatures are not).
	k := newKeys(t, "cosign")
	d1, d2 := signedOutput(t, buildOutput(t, "4.19", "full"), k), signedOutput(t, buildOutput(t, "4.19", "full"), k)
	v1, err := k.verifier.Verify(context.Background(), "1", readFile(t, filepath.Join(d1, output.StatementFile)))
	if err != nil {
		t.Fatal(err)
	}
	v2, err := k.verifier.Verify(context.Background(), "2", readFile(t, filepath.Join(d2, output.StatementFile)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(v1.Payload, v2.Payload) || !bytes.Equal(v1.Payload, a) {
		t.Error("the signed payloads of two builds differ")
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestVerify: a signed output verifies; each way it can differ from its
// statement is refused in one line naming the first file that differs.
func TestVerify(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t, "cosign")
	out := buildOutput(t, "4.19", "full")
	signed := signedOutput(t, out, k)
	res, err := provenance.Verify(ctx, signed, k.verifier)
	if err != nil {
		t.Fatalf("Verify() = %v", err)
	}
	pinned := 0
	for _, ref := range out.Plan.ImageRefs() {
		if strings.Contains(ref, "@sha256:") {
			pinned++
		}
	}
	if res.CompositionID != out.Plan.ID || res.Files != len(out.Files) || res.Images != pinned || res.Key != "cosign.pub" {
		t.Errorf("Verify() = %+v, want composition %s, %d files, %d images", res, out.Plan.ID, len(out.Files), pinned)
	}
	// A mirrored images/ layout (mirror fills it after build) is not the
	// statement's.
	if err := os.MkdirAll(filepath.Join(signed, output.ImagesDir, "blobs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(signed, output.ImagesDir, "index.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := provenance.Verify(ctx, signed, k.verifier); err != nil {
		t.Errorf("Verify() with an images/ layout = %v", err)
	}

	other := buildOutput(t, "4.19", "minimal")
	otherDir := signedOutput(t, other, k)
	otherKey := newKeys(t, "other")

	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		key    *attest.Verifier
		want   error
		// file is the file named, relative to the directory.
		file string
		msg  string
	}{
		{
			name: "one byte changed",
			change: func(t *testing.T, dir string) {
				p := filepath.Join(dir, output.ImagesFile)
				data := readFile(t, p)
				data[0] ^= 1
				testutil.WriteFile(t, p, data)
			},
			want: provenance.ErrDiffers, file: output.ImagesFile, msg: "changed after signing",
		},
		{
			name:   "file removed",
			change: func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, output.CycloneDXFile)) },
			want:   provenance.ErrDiffers, file: output.CycloneDXFile, msg: "missing",
		},
		{
			name: "file added",
			change: func(t *testing.T, dir string) {
				testutil.WriteFile(t, filepath.Join(dir, "manifests.d", "000-evil", "kustomization.yaml"), []byte("resources: []\n"))
			},
			want: provenance.ErrDiffers, file: "manifests.d/000-evil/kustomization.yaml", msg: "not in the statement",
		},
		{
			name: "file replaced by a symlink",
			change: func(t *testing.T, dir string) {
				p := filepath.Join(dir, output.BlueprintFile)
				os.Remove(p)
				if err := os.Symlink("/etc/hostname", p); err != nil {
					t.Fatal(err)
				}
			},
			want: provenance.ErrDiffers, file: output.BlueprintFile, msg: "not a regular file",
		},
		{
			name: "the statement of another composition",
			change: func(t *testing.T, dir string) {
				testutil.WriteFile(t, filepath.Join(dir, output.StatementFile), readFile(t, filepath.Join(otherDir, output.StatementFile)))
			},
			want: provenance.ErrOtherComposition, file: output.StatementFile, msg: other.Plan.ID,
		},
		{
			name: "the lock and statement of another composition",
			change: func(t *testing.T, dir string) {
				for _, f := range []string{output.StatementFile, output.LockFile} {
					testutil.WriteFile(t, filepath.Join(dir, f), readFile(t, filepath.Join(otherDir, f)))
				}
			},
			want: provenance.ErrDiffers, msg: "",
		},
		{
			name:   "signed by another key",
			change: func(t *testing.T, dir string) {},
			key:    otherKey.verifier,
			want:   attest.ErrSignature, file: output.StatementFile, msg: "other.pub",
		},
		{
			name:   "unsigned",
			change: func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, output.StatementFile)) },
			want:   provenance.ErrUnsigned, msg: "build --sign-key",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := signedOutput(t, out, k)
			tc.change(t, dir)
			v := k.verifier
			if tc.key != nil {
				v = tc.key
			}
			before := snapshot(t, dir)
			_, err := provenance.Verify(ctx, dir, v)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify() = %v, want %v", err, tc.want)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, tc.msg) {
				t.Errorf("Verify() = %q: want one line with %q", msg, tc.msg)
			}
			if tc.file != "" && !strings.Contains(msg, filepath.Join(dir, tc.file)) {
				t.Errorf("Verify() = %q: want it to name %s", msg, filepath.Join(dir, tc.file))
			}
			var fe *provenance.FileError
			if errors.Is(tc.want, provenance.ErrDiffers) && tc.file != "" && (!errors.As(err, &fe) || fe.Path != tc.file) {
				t.Errorf("Verify() = %#v, want a FileError for %s", err, tc.file)
			}
			if after := snapshot(t, dir); !maps.Equal(before, after) {
				t.Error("Verify() changed the directory")
			}
		})
	}
}

// snapshot is every path under dir with its content's sha256.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, _ := os.ReadFile(p)
		sum := sha256.Sum256(data)
		m[p] = hex.EncodeToString(sum[:])
		return nil
	})
	return m
}

// TestStatementTagOnly: an image named by tag only is no subject (it has
// no digest); the lock, a subject, names it.
func TestStatementTagOnly(t *testing.T) {
	out := buildOutput(t, "4.19", "minimal")
	cp := *out
	p := *out.Plan
	p.Images = append(slices.Clone(p.Images), plan.Image{Ref: "registry.example.com/tag/only:1.0"})
	cp.Plan = &p
	st, err := provenance.Statement(&cp, tool)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.GetSubject() {
		if strings.Contains(s.GetName(), "tag/only") {
			t.Errorf("the tag-only image is a subject: %v", s)
		}
	}
}

// BenchmarkSign is what --sign-key adds to a build of the full profile once
// the key is decrypted: the statement (every file hashed) and its
// signature.
func BenchmarkSign(b *testing.B) {
	out := buildOutput(b, "4.19", "full")
	k := newKeys(b, "cosign")
	for b.Loop() {
		cp := *out
		cp.Files = slices.Clone(out.Files)
		if err := provenance.Sign(context.Background(), &cp, k.signer, tool); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify is verify's work on a signed full-profile output: the
// signature, the statement, every file hashed.
func BenchmarkVerify(b *testing.B) {
	k := newKeys(b, "cosign")
	dir := signedOutput(b, buildOutput(b, "4.19", "full"), k)
	for b.Loop() {
		if _, err := provenance.Verify(context.Background(), dir, k.verifier); err != nil {
			b.Fatal(err)
		}
	}
}
