package airgap_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
)

func TestParseDestination(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    airgap.Target
		wantErr string
	}{
		{in: "oci:out/images", want: airgap.OCI("out/images")},
		{in: "oci:/srv/mirror/", want: airgap.OCI("/srv/mirror")},
		{in: "dir:out/images", want: airgap.Target{Transport: airgap.TransportDir, Path: "out/images"}},
		{in: "oci-archive:bundle.tar", want: airgap.Target{Transport: airgap.TransportArchive, Path: "bundle.tar"}},
		{in: "oci-archive:/media/usb/../bundle.tar", want: airgap.Target{Transport: airgap.TransportArchive, Path: "/media/bundle.tar"}},
		{in: "docker://mirror.example.com:5000/microshift", want: airgap.Target{Transport: airgap.TransportDocker, Registry: "mirror.example.com:5000", Prefix: "microshift"}},
		{in: "docker://localhost:5000/a/b/", want: airgap.Target{Transport: airgap.TransportDocker, Registry: "localhost:5000", Prefix: "a/b"}},
		{in: "docker://127.0.0.1:5000", want: airgap.Target{Transport: airgap.TransportDocker, Registry: "127.0.0.1:5000"}},
		// A prefix of one character, as podman takes it.
		{in: "docker://registry.example.com/m", want: airgap.Target{Transport: airgap.TransportDocker, Registry: "registry.example.com", Prefix: "m"}},
		{in: "docker://registry.example.com/m/", want: airgap.Target{Transport: airgap.TransportDocker, Registry: "registry.example.com", Prefix: "m"}},
		{in: "docker://registry.example.com/M", wantErr: `invalid destination "docker://registry.example.com/M": prefix "M": repository "M": a repository of one character is a lowercase letter or a digit`},
		{in: "oci:", wantErr: `invalid destination "oci:": no dir after oci: (want oci:DIR)`},
		{in: "oci-archive:", wantErr: `invalid destination "oci-archive:": no file after oci-archive: (want oci-archive:FILE)`},
		{in: "oci-archive:out/", wantErr: `invalid destination "oci-archive:out/": oci-archive:FILE names a file, not a directory`},
		{in: "oci:out:latest", wantErr: `invalid destination "oci:out:latest": oci:DIR takes a path only, without an image name: each image is named by its reference in the layout's index.json`},
		{in: "docker://", wantErr: `invalid destination "docker://": no registry (want REGISTRY/PREFIX, as in mirror.example.com:5000/microshift)`},
		{in: "docker://mirror/microshift", wantErr: `invalid destination "docker://mirror/microshift": "mirror" is not a registry host (want a host name with a dot or a port, as in mirror.example.com:5000/microshift or localhost:5000)`},
		{in: "docker://reg.io/ms:v1", wantErr: `invalid destination "docker://reg.io/ms:v1": the prefix "ms:v1" has a tag or digest; images keep their own digests (want REGISTRY/PREFIX)`},
		{in: "docker://reg.io/Upper", wantErr: `invalid destination "docker://reg.io/Upper": prefix "Upper": repository can only contain the characters ` + "`abcdefghijklmnopqrstuvwxyz0123456789_-./`: Upper"},
		{in: "docker://host:99999/xx", wantErr: `invalid destination "docker://host:99999/xx": registry "host:99999": port 99999 is not a TCP port (1-65535)`},
		{in: "docker://host:0/xx", wantErr: `invalid destination "docker://host:0/xx": registry "host:0": port 0 is not a TCP port (1-65535)`},
		{in: "docker://10.0.0.1:65536", wantErr: `invalid destination "docker://10.0.0.1:65536": registry "10.0.0.1:65536": port 65536 is not a TCP port (1-65535)`},
		{in: "docker://[fd00::1]:70000/xx", wantErr: `invalid destination "docker://[fd00::1]:70000/xx": registry "[fd00::1]:70000": port 70000 is not a TCP port (1-65535)`},
		{in: "docker://host:65535/xx", want: airgap.Target{Transport: airgap.TransportDocker, Registry: "host:65535", Prefix: "xx"}},
		{in: "docker-archive:out.tar", wantErr: `invalid destination "docker-archive:out.tar": want oci:DIR (an OCI image layout), dir:DIR (a layout plus one dir: per image, for bootc), oci-archive:FILE (a layout in one tar file) or docker://REGISTRY/PREFIX (a registry)`},
		{in: "out/images", wantErr: `invalid destination "out/images": want oci:DIR (an OCI image layout), dir:DIR (a layout plus one dir: per image, for bootc), oci-archive:FILE (a layout in one tar file) or docker://REGISTRY/PREFIX (a registry)`},
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
		{"docker://mirror.example.com/m", "mirror.example.com/m/openshift-release-dev/ocp-v4.0-art-dev"},
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
	for _, s := range []string{"oci:out/images", "dir:images", "oci-archive:b.tar", "oci-archive:/", "docker://reg.io:5000/a/b", "docker://localhost", "oci:", "docker:///x", "oci:a:b", "docker://REG.io/x@sha256:1"} {
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
		if (to.Path == "") == (to.Registry == "") || (to.Transport == airgap.TransportDocker) != (to.Registry != "") {
			t.Fatalf("ParseDestination(%q) = %+v: want exactly one of Path and Registry, Registry for docker://", s, to)
		}
		again, err := airgap.ParseDestination(to.String())
		if err != nil || again != to {
			t.Fatalf("ParseDestination(%q).String() = %q does not parse back: %+v, %v", s, to.String(), again, err)
		}
	})
}

func TestParseSource(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    airgap.Target
		wantErr string
	}{
		{in: "oci:out/images", want: airgap.OCI("out/images")},
		{in: "dir:out/images", want: airgap.OCI("out/images")},
		{in: "oci-archive:b.tar", want: airgap.Target{Transport: airgap.TransportArchive, Path: "b.tar"}},
		{in: "docker://reg.io/x", wantErr: `invalid source "docker://reg.io/x": registries are read from the plan's references (--lock or --profile) without --from; --from takes oci:DIR or oci-archive:FILE`},
		{in: "oci:", wantErr: `invalid source "oci:": no dir after oci: (want oci:DIR)`},
	} {
		got, err := airgap.ParseSource(tc.in)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr || !errors.Is(err, airgap.ErrBadSource) {
				t.Errorf("ParseSource(%q) = %+v, %v\nwant error %s", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSource(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func FuzzParseSource(f *testing.F) {
	for _, s := range []string{"oci:out/images", "dir:images", "oci-archive:b.tar", "docker://reg.io/x", "oci-archive:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		from, err := airgap.ParseSource(s)
		if err != nil {
			if !errors.Is(err, airgap.ErrBadSource) {
				t.Fatalf("ParseSource(%q) error = %v, want ErrBadSource", s, err)
			}
			return
		}
		if from.Path == "" || (from.Transport != airgap.TransportOCI && from.Transport != airgap.TransportArchive) {
			t.Fatalf("ParseSource(%q) = %+v", s, from)
		}
	})
}
