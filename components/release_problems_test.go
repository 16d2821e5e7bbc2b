package components_test

import (
	"reflect"
	"testing"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/releases"
)

const digest = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

// file builds a release file through the real parser.
func file(t *testing.T, name, base string, keys ...string) *releases.File {
	t.Helper()
	doc := `{"release": {"base": "` + base + `"}, "images": {`
	for i, k := range keys {
		if i > 0 {
			doc += ", "
		}
		doc += `"` + k + `": "quay.io/test/` + k + `@` + digest + `"`
	}
	doc += "}}"
	f, err := releases.ParseFile(name, name, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestReleaseProblems(t *testing.T) {
	cat, err := components.Default()
	if err != nil {
		t.Fatal(err)
	}
	coreKeys := []string{"cli", "coredns", "haproxy-router", "kube-rbac-proxy", "pod", "service-ca-operator",
		"ovn-kubernetes-microshift", "lvms_operator", "csi-snapshot-controller"}
	complete418 := func() []*releases.File {
		return []*releases.File{
			file(t, "release-x86_64.json", "4.18.0", coreKeys...),
			file(t, "release-olm-x86_64.json", "4.18.0", "operator-lifecycle-manager", "operator-registry", "kube-rbac-proxy"),
			file(t, "release-multus-x86_64.json", "4.18.0", "multus-cni-microshift", "containernetworking-plugins-microshift"),
			file(t, "release-gateway-api-x86_64.json", "3.0.0",
				"istio-rhel9-operator-ea78213a4c5e1ef3f419df6910740f040c71ad13514aaac0e22c95e7ff4cb96b-annotation",
				"kube-rbac-proxy", "manager",
				"istio-pilot-rhel9-376f64eab0ebeb06035983a60d1e7647c5d41354f31a49cb34f4deb7b6708e3e-annotation",
				"istio-proxyv2-rhel9-cbd6bc47341ab8618609f89d063552e17232541c727429855c01deab73e4d06c-annotation",
				"istio-must-gather-rhel9-e3978aecaafe2678355e21a7303f8620f53d8b774f6592f10527c15bae957224-annotation",
				"istio-cni-rhel9-f16cd8a29ddcbb3de77cbfcf7e1da78e42cc0c1c502132d477a01c52689cdf23-annotation"),
		}
	}
	for _, tc := range []struct {
		name  string
		files func() []*releases.File
		want  []string
	}{
		{
			name:  "complete x86_64-only 4.18",
			files: complete418,
		},
		{
			name: "missing key",
			files: func() []*releases.File {
				fs := complete418()
				fs[0] = file(t, "release-x86_64.json", "4.18.0", coreKeys[1:]...) // no "cli"
				return fs
			},
			want: []string{`release 4.18 (test): release-x86_64.json has no image key "cli" that component "core" needs`},
		},
		{
			name: "missing file",
			files: func() []*releases.File {
				return complete418()[:3] // no gateway-api file
			},
			want: []string{`release 4.18 (test): component "gateway-api" supports x86_64 (release >=4.18) but release-gateway-api-x86_64.json is missing`},
		},
		{
			name: "unclaimed key",
			files: func() []*releases.File {
				fs := complete418()
				fs[1] = file(t, "release-olm-x86_64.json", "4.18.0", "operator-lifecycle-manager", "operator-registry", "kube-rbac-proxy", "catalog-source")
				return fs
			},
			want: []string{`release 4.18 (test): release-olm-x86_64.json: image key "catalog-source" is not claimed by any component`},
		},
		{
			name: "file no component draws from",
			files: func() []*releases.File {
				return append(complete418(), file(t, "release-gpu-operator-x86_64.json", "1.0.0", "operator"))
			},
			want: []string{`release 4.18 (test): release-gpu-operator-x86_64.json: no component draws images from this file`},
		},
		{
			name: "several problems, sorted",
			files: func() []*releases.File {
				return []*releases.File{
					file(t, "release-x86_64.json", "4.18.0", append([]string{"etcd"}, coreKeys[:8]...)...),
					file(t, "release-aarch64.json", "4.18.0", coreKeys...),
				}
			},
			want: []string{
				`release 4.18 (test): component "gateway-api" supports aarch64 (release >=4.18) but release-gateway-api-aarch64.json is missing`,
				`release 4.18 (test): component "gateway-api" supports x86_64 (release >=4.18) but release-gateway-api-x86_64.json is missing`,
				`release 4.18 (test): component "multus" supports aarch64 (release >=4.16) but release-multus-aarch64.json is missing`,
				`release 4.18 (test): component "multus" supports x86_64 (release >=4.16) but release-multus-x86_64.json is missing`,
				`release 4.18 (test): component "olm" supports aarch64 (release >=4.15) but release-olm-aarch64.json is missing`,
				`release 4.18 (test): component "olm" supports x86_64 (release >=4.15) but release-olm-x86_64.json is missing`,
				`release 4.18 (test): release-x86_64.json has no image key "csi-snapshot-controller" that component "snapshot-controller" needs`,
				`release 4.18 (test): release-x86_64.json: image key "etcd" is not claimed by any component`,
			},
		},
		{
			// Components whose constraint excludes the release are not
			// checked against it (ai-model-serving needs >=4.19).
			name: "constraint excludes component",
			files: func() []*releases.File {
				return append(complete418(), file(t, "release-ai-model-serving-x86_64.json", "2.0.0", "kserve-controller"))
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := releases.New("test", tc.files())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range cat.ReleaseProblems(r) {
				got = append(got, p.Error())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ReleaseProblems:\n got: %q\nwant: %q", got, tc.want)
			}
		})
	}
}
