package airgap_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/microshift-compose/microshift-compose/compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
)

func TestParseDestination(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    airgap.Target
		wantErr string
	}{
		{in: "oci:out/images", want: airgap.Target{Dir: "out/images"}},
		{in: "oci:/srv/mirror/", want: airgap.Target{Dir: "/srv/mirror"}},
		{in: "docker://mirror.example.com:5000/microshift", want: airgap.Target{Registry: "mirror.example.com:5000", Prefix: "microshift"}},
		{in: "docker://localhost:5000/a/b/", want: airgap.Target{Registry: "localhost:5000", Prefix: "a/b"}},
		{in: "docker://127.0.0.1:5000", want: airgap.Target{Registry: "127.0.0.1:5000"}},
		{in: "oci:", wantErr: `invalid destination "oci:": no directory after oci: (want oci:DIR)`},
		{in: "oci:out:latest", wantErr: `invalid destination "oci:out:latest": oci:DIR takes a directory only, without an image name: each image is named by its reference in the layout's index.json`},
		{in: "docker://", wantErr: `invalid destination "docker://": no registry after docker:// (want docker://REGISTRY/PREFIX)`},
		{in: "docker://mirror/microshift", wantErr: `invalid destination "docker://mirror/microshift": "mirror" is not a registry host (want a host name with a dot or a port, as in docker://mirror.example.com:5000/microshift or docker://localhost:5000)`},
		{in: "docker://reg.io/ms:v1", wantErr: `invalid destination "docker://reg.io/ms:v1": the prefix "ms:v1" has a tag or digest; images keep their own digests (want docker://REGISTRY/PREFIX)`},
		{in: "docker://reg.io/Upper", wantErr: `invalid destination "docker://reg.io/Upper": prefix "Upper": repository can only contain the characters ` + "`abcdefghijklmnopqrstuvwxyz0123456789_-./`: Upper"},
		{in: "dir:out", wantErr: `invalid destination "dir:out": want oci:DIR (an OCI image layout) or docker://REGISTRY/PREFIX (a registry)`},
		{in: "out/images", wantErr: `invalid destination "out/images": want oci:DIR (an OCI image layout) or docker://REGISTRY/PREFIX (a registry)`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := airgap.ParseDestination(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || !errors.Is(err, airgap.ErrBadDestination) {
					t.Fatalf("ParseDestination(%q) = %+v, %v\nwant error %s", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseDestination(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestTargetRepository(t *testing.T) {
	src, _ := name.NewRepository("quay.io/openshift-release-dev/ocp-v4.0-art-dev")
	for _, tc := range []struct{ to, want string }{
		{"docker://mirror.example.com:5000/microshift", "mirror.example.com:5000/microshift/openshift-release-dev/ocp-v4.0-art-dev"},
		{"docker://mirror.example.com", "mirror.example.com/openshift-release-dev/ocp-v4.0-art-dev"},
	} {
		to, err := airgap.ParseDestination(tc.to)
		if err != nil {
			t.Fatal(err)
		}
		got, err := to.Repository(registryclient.Options{}, src)
		if err != nil || got.String() != tc.want {
			t.Errorf("%s: Repository(%s) = %v, %v; want %s", tc.to, src, got, err, tc.want)
		}
	}
}

func FuzzParseDestination(f *testing.F) {
	for _, s := range []string{"oci:out/images", "docker://reg.io:5000/a/b", "docker://localhost", "oci:", "docker:///x", "oci:a:b", "docker://REG.io/x@sha256:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		to, err := airgap.ParseDestination(s)
		if err != nil {
			if !errors.Is(err, airgap.ErrBadDestination) || strings.ContainsAny(err.Error(), "\n\r") && !strings.ContainsAny(s, "\n\r") {
				t.Fatalf("ParseDestination(%q) error = %v", s, err)
			}
			return
		}
		if (to.Dir == "") == (to.Registry == "") {
			t.Fatalf("ParseDestination(%q) = %+v: want exactly one of Dir and Registry", s, to)
		}
		again, err := airgap.ParseDestination(to.String())
		if err != nil || again != to {
			t.Fatalf("ParseDestination(%q).String() = %q does not parse back: %+v, %v", s, to.String(), again, err)
		}
	})
}
