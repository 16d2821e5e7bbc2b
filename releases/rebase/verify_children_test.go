package rebase_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/rebase"
)

// TestVerifyChecksWhatMirrorNeeds: verify fails every index that mirror
// cannot copy, for the same reason: a child manifest served with other
// bytes than its digest, a child of another size than the index says, a
// platform entry that is itself an index. A sound index passes both.
func TestVerifyChecksWhatMirrorNeeds(t *testing.T) {
	reg := testutil.NewFaultyRegistry(t)
	p := &testutil.Pusher{Host: reg.Host}
	layers := map[string][]testutil.Layer{"amd64": {testutil.NewLayer(301, 2048)}, "arm64": {testutil.NewLayer(302, 2048)}}
	sound, children, err := p.PushIndex("edge/sound", []string{"amd64", "arm64"}, layers)
	if err != nil {
		t.Fatal(err)
	}
	armChild := children["arm64"][strings.Index(children["arm64"], "@")+1:]
	// An index whose linux/amd64 entry is an index of the amd64 image.
	_, amd := testutil.Image("amd64", layers["amd64"])
	inner := testutil.Index([]testutil.Raw{amd}, []v1.Platform{{OS: "linux", Architecture: "amd64"}})
	if _, err := p.Manifest("edge/sound", inner, ""); err != nil {
		t.Fatal(err)
	}
	nested, err := p.Manifest("edge/sound", testutil.Index([]testutil.Raw{inner}, []v1.Platform{{OS: "linux", Architecture: "amd64"}}), "")
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name  string
		ref   string
		fault func(w http.ResponseWriter, r *http.Request, n int) bool
		// want is in verify's message; "" for ok.
		want string
		// layoutFails and registryFails are what mirror does for
		// x86_64 into a layout (that platform only) and a registry.
		layoutFails, registryFails bool
	}{
		{name: "sound index", ref: sound},
		{name: "child served with other bytes", ref: sound, fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
			if strings.HasSuffix(r.URL.Path, "/manifests/"+armChild) {
				w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
				w.Write([]byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{}}`))
				return true
			}
			return false
		}, want: "child manifest " + armChild + " (linux/arm64): ", registryFails: true},
		{name: "platform entry that is an index", ref: nested, want: "linux/amd64 entry " + inner.Digest().String() + " is not an image manifest", layoutFails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg.SetFault(tc.fault)
			checks, err := rebase.Verify(context.Background(), []*releases.File{{Name: "release-x86_64.json", Arch: releases.X86_64,
				Images: []releases.Image{{Key: "img", Ref: tc.ref}}}}, registryclient.Options{Retries: 1})
			if err != nil {
				t.Fatal(err)
			}
			c := checks[0]
			if tc.want == "" {
				if !c.OK {
					t.Fatalf("verify = %s %q, want ok", c.Reason, c.Message)
				}
			} else if c.OK || c.Reason != rebase.ReasonInvalid || !strings.Contains(c.Message, tc.want) {
				t.Fatalf("verify = ok %v %s %q, want invalid with %q", c.OK, c.Reason, c.Message, tc.want)
			}
			// mirror for the same arch fails where verify does: to a
			// layout (one platform) or to a registry (every platform, so
			// a nested index is taken whole); verify never says ok where
			// either fails.
			for _, m := range []struct {
				to    airgap.Target
				fails bool
			}{{airgap.OCI(t.TempDir()), tc.layoutFails}, {airgap.Target{Transport: airgap.TransportDocker, Registry: reg.Host, Prefix: "copy"}, tc.registryFails}} {
				_, err := airgap.Mirror(context.Background(), []string{tc.ref}, m.to, airgap.Options{Arch: releases.X86_64, Registry: registryclient.Options{Retries: 1}})
				if (err != nil) != m.fails {
					t.Errorf("mirror to %s = %v, want failure %t", m.to, err, m.fails)
				}
			}
		})
	}
}
