package manifests_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/types"

	"github.com/microshift-compose/microshift-compose/compose/manifests"
)

// TestArgsAndEnvPinned: image references in containers' args, command
// and env values are pinned by the images: entries as image: fields are,
// in every container list, and listed with where they are; what is no
// image, or an image no entry names, is left as it is (and listed when it
// is a fully written reference, for the plan's cross-check).
func TestArgsAndEnvPinned(t *testing.T) {
	const pod = `apiVersion: batch/v1
kind: CronJob
metadata:
  name: op
spec:
  jobTemplate:
    spec:
      template:
        spec:
          initContainers:
          - name: init
            image: quay.io/x/op:v1
            command: ["/bin/op", "quay.io/x/solver:v1"]
          containers:
          - name: op
            image: quay.io/x/op:v1
            args:
            - --solver-image=quay.io/x/solver:v1
            - --helper=quay.io/x/helper
            - --other=quay.io/x/unmapped:v2
            - --url=https://quay.io/x/solver:v1
            - --v=2
            - quay.io/x/solver@sha256:0000000000000000000000000000000000000000000000000000000000000000
            env:
            - name: SOLVER
              value: quay.io/x/solver:v1
            - name: TAGGED
              value: quay.io/x/tagged:v1
            - name: NUMBER
              value: "3"
`
	pins := []types.Image{
		{Name: "quay.io/x/op", NewName: "mirror.example.com/x/op", Digest: "sha256:1111111111111111111111111111111111111111111111111111111111111111"},
		{Name: "quay.io/x/solver", Digest: "sha256:2222222222222222222222222222222222222222222222222222222222222222"},
		{Name: "quay.io/x/helper", Digest: "sha256:3333333333333333333333333333333333333333333333333333333333333333"},
		{Name: "quay.io/x/tagged", NewTag: "v9"},
	}
	job, err := manifests.Prepare(manifests.Input{Component: "op", Resources: []byte(pod), Images: pins})
	if err != nil {
		t.Fatal(err)
	}
	res, err := job.Render()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != 1 {
		t.Fatalf("%d resources", len(res.Resources))
	}
	data := string(res.Resources[0].Data)
	const solver = "quay.io/x/solver@sha256:2222222222222222222222222222222222222222222222222222222222222222"
	for _, want := range []string{
		`- ` + solver,
		"- --solver-image=" + solver,
		"- --helper=quay.io/x/helper@sha256:3333333333333333333333333333333333333333333333333333333333333333",
		"- --other=quay.io/x/unmapped:v2",
		"- --url=https://quay.io/x/solver:v1",
		"- --v=2",
		"value: " + solver,
		"value: quay.io/x/tagged:v9",
		`value: "3"`,
		"image: mirror.example.com/x/op@sha256:1111111111111111111111111111111111111111111111111111111111111111",
	} {
		if !strings.Contains(data, want) {
			t.Errorf("rendered lacks %q:\n%s", want, data)
		}
	}
	var got []string
	for _, im := range res.Resources[0].Images {
		got = append(got, im.Field+"/"+im.Container+"/"+im.In+"="+im.Ref)
	}
	want := []string{
		"containers/op/=mirror.example.com/x/op@sha256:1111111111111111111111111111111111111111111111111111111111111111",
		"containers/op/args[0]=" + solver,
		"containers/op/args[1]=quay.io/x/helper@sha256:3333333333333333333333333333333333333333333333333333333333333333",
		"containers/op/args[2]=quay.io/x/unmapped:v2",
		"containers/op/args[5]=" + solver,
		"containers/op/env[SOLVER]=" + solver,
		"containers/op/env[TAGGED]=quay.io/x/tagged:v9",
		"initContainers/init/=mirror.example.com/x/op@sha256:1111111111111111111111111111111111111111111111111111111111111111",
		"initContainers/init/command[1]=" + solver,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("images:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
