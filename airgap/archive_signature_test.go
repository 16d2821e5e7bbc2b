package airgap_test

import (
	"crypto/elliptic"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/attest"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

// testKey is a cosign key pair: the signer and its verifier.
func testKey(t *testing.T, name string) (*attest.Signer, *attest.Verifier) {
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
	return s, v
}

// TestSignedArchive: an archive written with a key has FILE.sig, a split
// one FILE.parts.json.sig, each verified by VerifyArchive with the key and
// refused with another, unsigned, altered; a rewrite without a key leaves
// no stale signature.
func TestSignedArchive(t *testing.T) {
	reg := testutil.StartRegistry(t)
	f := newFixture(t, reg.Host)
	work := t.TempDir()
	s, v := testKey(t, "right")
	_, other := testKey(t, "other")
	signed := func(t *testing.T, name string, partSize int64) string {
		t.Helper()
		path := filepath.Join(work, name)
		o := opts(releases.X86_64, nil)
		o.PartSize = partSize
		o.Sign = func() (*attest.Signer, error) { return s, nil }
		if _, err := airgap.Mirror(ctx, f.refs, archiveTarget(t, path), o); err != nil {
			t.Fatal(err)
		}
		return path
	}
	one := signed(t, "one.tar", 0)
	split := signed(t, "split.tar", testPartSize)
	if _, err := os.Stat(one + ".sig"); err != nil {
		t.Errorf("no one.tar.sig: %v", err)
	}
	if _, err := os.Stat(split + airgap.PartsSuffix + ".sig"); err != nil {
		t.Errorf("no split.tar.parts.json.sig: %v", err)
	}
	for _, name := range []string{one, split, split + airgap.PartsSuffix, airgap.PartName(split, 1)} {
		got, err := airgap.VerifyArchive(ctx, archiveTarget(t, name), []*attest.Verifier{other, v})
		if err != nil || got.Key != "right.pub" {
			t.Errorf("VerifyArchive(%s) = %+v, %v", filepath.Base(name), got, err)
		}
	}

	// Unsigned, another key, altered (the archive, the list).
	unsigned := filepath.Join(work, "unsigned.tar")
	writeFile(t, unsigned, mustRead(t, one))
	alteredOne := filepath.Join(work, "altered.tar")
	data := mustRead(t, one)
	data[len(data)-1] ^= 1
	writeFile(t, alteredOne, data)
	writeFile(t, alteredOne+".sig", mustRead(t, one+".sig"))
	list := mustRead(t, split+airgap.PartsSuffix)
	for _, tc := range []struct {
		name   string
		target airgap.Target
		keys   []*attest.Verifier
		setup  func()
		is     error
		want   string
	}{
		{"unsigned", archiveTarget(t, unsigned), []*attest.Verifier{v}, nil, attest.ErrUnsigned,
			"oci-archive:" + unsigned + ": not signed: no unsigned.tar.sig beside it"},
		{"another key", archiveTarget(t, one), []*attest.Verifier{other}, nil, attest.ErrSignature,
			"oci-archive:" + one + ": one.tar.sig: the signature does not verify with the public key other.pub: it was signed with another key, or the archive changed after signing"},
		{"altered archive", archiveTarget(t, alteredOne), []*attest.Verifier{v}, nil, attest.ErrSignature,
			"oci-archive:" + alteredOne + ": altered.tar.sig: the signature does not verify with the public key right.pub"},
		{"altered list", archiveTarget(t, split), []*attest.Verifier{v, other}, func() {
			writeFile(t, split+airgap.PartsSuffix, []byte(strings.Replace(string(list), `"part_size"`, ` "part_size"`, 1)))
		}, attest.ErrSignature,
			"oci-archive:" + split + ": split.tar.parts.json.sig: the signature does not verify with any of the 2 public keys: it was signed with another key, or its list of parts changed after signing"},
		{"unsigned split", archiveTarget(t, split), []*attest.Verifier{v}, func() {
			if err := os.Remove(split + airgap.PartsSuffix + ".sig"); err != nil {
				t.Fatal(err)
			}
		}, attest.ErrUnsigned, "oci-archive:" + split + ": not signed: no split.tar.parts.json.sig beside it"},
		{"layout directory", airgap.OCI(work), []*attest.Verifier{v}, nil, nil,
			"oci:" + work + " is a layout directory: only an oci-archive:FILE carries a bundle signature"},
	} {
		if tc.setup != nil {
			tc.setup()
		}
		_, err := airgap.VerifyArchive(ctx, tc.target, tc.keys)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: VerifyArchive = %v, want %q (%v)", tc.name, err, tc.want, tc.is)
		}
	}

	// Written again without a key: no stale signature of other bytes.
	if _, err := airgap.Mirror(ctx, f.refs, archiveTarget(t, one), opts(releases.X86_64, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(one + ".sig"); !os.IsNotExist(err) {
		t.Errorf("an unsigned rewrite kept one.tar.sig (%v)", err)
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
