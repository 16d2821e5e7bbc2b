package manifests

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"sigs.k8s.io/kustomize/api/types"
)

var testPins = []types.Image{{Name: "quay.io/example/app", NewName: "quay.io/example/app", Digest: "sha256:" + strings.Repeat("a", 64)}}

// randomDoc is one resource of many kinds, namespaced or not, some with
// container images, one a List, one local-config (dropped by kustomize).
func randomDoc(r *rand.Rand, i int, namespaces bool) string {
	ns := []string{"", "default", "edge", "other"}[r.IntN(4)]
	nsLine := ""
	if ns != "" {
		nsLine = "  namespace: " + ns + "\n"
	}
	k := r.IntN(9)
	if k == 0 && !namespaces {
		k = 8
	}
	switch k {
	case 0:
		return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns%d\n", i)
	case 1:
		return fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: system:role%d\nrules: []\n", i)
	case 2:
		return fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app%d\n%s  labels: {app: a%d}\nspec:\n  selector:\n    matchLabels: {app: a%d}\n  template:\n    metadata:\n      labels: {app: a%d}\n    spec:\n      containers:\n      - name: main\n        image: quay.io/example/app:latest\n      initContainers:\n      - name: init\n        image: quay.io/example/app\n", i, nsLine, i, i, i)
	case 3:
		return fmt.Sprintf("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: listed%d\n%s  data: {k: v}\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: secret%d\n", i, strings.ReplaceAll(nsLine, "  namespace", "    namespace"), i)
	case 4:
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local%d\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n", i)
	case 5:
		return fmt.Sprintf("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w%d\n%sspec:\n  # a comment\n  size: %d\n", i, nsLine, r.IntN(100))
	case 6:
		return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata:\n  name: svc%d\n%sspec:\n  ports:\n  - port: 80\n", i, nsLine)
	case 7:
		return fmt.Sprintf("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: hook%d\nwebhooks: []\n", i)
	}
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm%d\n%sdata:\n  key: \"value %d\"\n  other: |\n    multi\n    line\n", i, nsLine, i)
}

// render renders in with batches of size (0: one kustomize run).
func render(t *testing.T, in Input, size int) (*Result, error) {
	t.Helper()
	j, err := Prepare(in)
	if err != nil {
		t.Fatalf("Prepare = %v", err)
	}
	old := BatchSize
	BatchSize = size
	defer func() { BatchSize = old }()
	return j.Render()
}

// TestBatchesRenderAsOneRun renders random streams and kustomizations in
// small batches and in one kustomize run: the results must be identical,
// byte for byte and in order, errors included.
func TestBatchesRenderAsOneRun(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	compared := 0
	for round := range 60 {
		n := 5 + r.IntN(25)
		docs := make([]string, n)
		for i := range docs {
			docs[i] = randomDoc(r, i, round%2 == 0)
		}
		if round%7 == 3 { // a duplicate, in another batch
			docs = append(docs, docs[0])
		}
		var in Input
		if round%2 == 0 {
			in = Input{Component: "c", Resources: []byte(strings.Join(docs, "---\n")), Images: testPins}
		} else {
			// A manifests/ kustomization with every batchable field,
			// its resources over three files.
			third := len(docs) / 3
			files := fstest.MapFS{
				"manifests/kustomization.yaml": {Data: []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" +
					"namespace: edge\nlabels:\n- pairs:\n    tier: web\n  includeSelectors: true\ncommonAnnotations:\n  owner: me\n" +
					"images:\n- name: quay.io/example/app\n  newTag: v2\nresources:\n- a.yaml\n- b.yaml\n- c.yaml\n")},
				"manifests/a.yaml": {Data: []byte(strings.Join(docs[:third], "---\n"))},
				"manifests/b.yaml": {Data: []byte(strings.Join(docs[third:2*third], "---\n"))},
				"manifests/c.yaml": {Data: []byte(strings.Join(docs[2*third:], "\n---\n"))},
			}
			in = Input{Component: "c", FS: files, Dir: "manifests", Images: testPins}
		}
		size := 2 + r.IntN(6)
		whole, werr := render(t, in, 0)
		batched, berr := render(t, in, size)
		// Both fail or neither does. (The messages may differ: an input
		// with two problems can meet them in another order in batches, and
		// a duplicate across batches is reported in the words of
		// kustomize's own duplicate check.)
		if (werr == nil) != (berr == nil) {
			t.Fatalf("round %d: one run: %v; batches of %d: %v", round, werr, size, berr)
		}
		if werr != nil {
			continue
		}
		compared++
		if len(whole.Resources) != len(batched.Resources) {
			t.Fatalf("round %d: %d resources in one run, %d in batches", round, len(whole.Resources), len(batched.Resources))
		}
		for i := range whole.Resources {
			if !reflect.DeepEqual(whole.Resources[i], batched.Resources[i]) {
				t.Fatalf("round %d, resource %d differs:\none run: %+v\nbatches: %+v", round, i, whole.Resources[i], batched.Resources[i])
			}
		}
		if string(whole.Kustomization) != string(batched.Kustomization) {
			t.Fatalf("round %d: kustomization.yaml differs", round)
		}
	}
	if compared < 40 {
		t.Errorf("only %d of 60 rounds rendered; the comparison needs more", compared)
	}
}

// TestBatchesOnlyWhereLocal: kustomizations whose fields reach across
// resources render in one run.
func TestBatchesOnlyWhereLocal(t *testing.T) {
	for _, tc := range []struct {
		kust string
		ok   bool
	}{
		{"resources:\n- a.yaml\n", true},
		{"namespace: x\nresources:\n- a.yaml\n", true},
		{"namePrefix: x-\nresources:\n- a.yaml\n", false},
		{"resources:\n- a.yaml\npatches:\n- path: p.yaml\n", false},
		{"resources:\n- sub\n", false},
		{"resources:\n- a.yaml\nconfigMapGenerator:\n- name: g\n  literals: [a=b]\n", false},
		{"resources:\n- a.yaml\nsortOptions:\n  order: fifo\n", false},
	} {
		docs := make([]string, 5)
		for i := range docs {
			docs[i] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\n", i)
		}
		j, err := Prepare(Input{Component: "c", Dir: "manifests", FS: fstest.MapFS{
			"manifests/kustomization.yaml":     {Data: []byte(tc.kust)},
			"manifests/a.yaml":                 {Data: []byte(strings.Join(docs, "---\n"))},
			"manifests/p.yaml":                 {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c0\ndata: {a: b}\n")},
			"manifests/sub/kustomization.yaml": {Data: []byte("resources: []\n")},
		}})
		if err != nil {
			t.Fatalf("Prepare(%q) = %v", tc.kust, err)
		}
		if _, ok := j.batches(2); ok != tc.ok {
			t.Errorf("batches(%q) = %t, want %t", tc.kust, ok, tc.ok)
		}
	}
}
