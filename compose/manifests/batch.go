package manifests

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/resid"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"
)

// BatchSize is how many resources one kustomize run renders when the input
// can be rendered in batches. krusty checks each resource it adds against
// every one it already holds, at each of several stages (loading,
// accumulating, the result, and the legacy sort, which re-adds them all),
// so one run is quadratic: 1k/2k/4k resources took 2.2/7.1/23 s. In
// batches the whole is linear; the cross-resource steps that matter here
// (the duplicate checks and the legacy sort) run once over the whole
// input and result, in this package. Per resource, a run of 25 to 50
// costs least (about 0.18 ms here, 0.29 ms at 200, 0.35 ms at 400).
var BatchSize = 50

// batchFile is the file a batch's resources are written to.
const batchFile = "resources.yaml"

// batchableFields are the kustomization fields whose effect is local to
// each resource, so that rendering the resources in batches gives exactly
// what one run gives. Anything else (name prefixes and suffixes, which
// rewrite references between resources; generators; patches, which fail
// in a batch without their target; replacements; components; sortOptions;
// ...) renders in one run.
var batchableFields = []string{"apiVersion", "kind", "metadata", "resources", "namespace", "commonLabels", "labels", "commonAnnotations", "images"}

// batchPlan is how a job renders in batches.
type batchPlan struct {
	// dir is the kustomization directory whose resources are batched, ""
	// for a plugin's resource stream (the overlay's own resources.yaml).
	dir string
	// kust is that kustomization, its resources replaced per batch.
	kust    map[string]any
	kustRaw string // its file name
	// docs are the resources, one YAML document each, in input order,
	// and nodes the same parsed.
	docs  []string
	nodes []*kyaml.RNode
}

// batches decides whether the job renders in batches of size: a plugin's
// resource stream always can, a kustomization (manifests/ or a plugin's)
// when it uses only batchableFields and its resources are files; and it
// is worth it only beyond size resources.
func (j *Job) batches(size int) (*batchPlan, bool) {
	if size <= 0 {
		return nil, false
	}
	bp := &batchPlan{}
	switch {
	case j.stream:
		data, err := j.fs.ReadFile(path.Join(overlayRoot, streamFile))
		if err != nil {
			return nil, false
		}
		if bp.docs, bp.nodes, err = splitDocs(data); err != nil {
			return nil, false
		}
	case j.kustDir != "":
		bp.dir = j.kustDir
		var file string
		for _, n := range kustomizationNames {
			if j.fs.Exists(path.Join(bp.dir, n)) {
				file = n
				break
			}
		}
		if file == "" {
			return nil, false
		}
		data, err := j.fs.ReadFile(path.Join(bp.dir, file))
		if err != nil || yaml.Unmarshal(data, &bp.kust) != nil || bp.kust == nil {
			return nil, false
		}
		bp.kustRaw = file
		for k := range bp.kust {
			if !slices.Contains(batchableFields, k) {
				return nil, false
			}
		}
		res, ok := bp.kust["resources"].([]any)
		if !ok {
			return nil, false
		}
		for _, r := range res {
			name, ok := r.(string)
			if !ok || isURL(name) {
				return nil, false
			}
			p := path.Join(bp.dir, name)
			if !j.fs.Exists(p) || j.fs.IsDir(p) || !strings.HasPrefix(p, componentRoot+"/") {
				return nil, false
			}
			data, err := j.fs.ReadFile(p)
			if err != nil {
				return nil, false
			}
			docs, nodes, err := splitDocs(data)
			if err != nil {
				return nil, false
			}
			bp.docs = append(bp.docs, docs...)
			bp.nodes = append(bp.nodes, nodes...)
		}
	default:
		return nil, false
	}
	return bp, len(bp.docs) > size
}

// splitDocs splits a YAML stream into its documents as kustomize reads
// them (empty documents dropped); a List stays one document.
func splitDocs(data []byte) ([]string, []*kyaml.RNode, error) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, nil, err
	}
	docs := make([]string, 0, len(nodes))
	for _, n := range nodes {
		s, err := n.String()
		if err != nil {
			return nil, nil, err
		}
		docs = append(docs, s)
	}
	return docs, nodes, nil
}

// inputDuplicate finds a resource two documents define, as kustomize's
// loading of one file does before any transformer runs (a batch sees only
// its own documents): the items of a List count one by one.
func inputDuplicate(nodes []*kyaml.RNode) (resid.ResId, bool) {
	seen := make(map[string]bool, len(nodes))
	check := func(n *kyaml.RNode) (resid.ResId, bool) {
		// kyaml's getters index a node's content as a mapping's and panic
		// on anything else; kustomize refuses such a document itself
		// ("missing Resource metadata") when its batch renders.
		if n.YNode().Kind != kyaml.MappingNode {
			return resid.ResId{}, false
		}
		id := resid.NewResIdWithNamespace(resid.GvkFromNode(n), n.GetName(), n.GetNamespace())
		key := id.Gvk.String() + "|" + id.EffectiveNamespace() + "|" + id.Name
		if seen[key] {
			return id, true
		}
		seen[key] = true
		return id, false
	}
	for _, n := range nodes {
		if n.YNode().Kind != kyaml.MappingNode {
			continue
		}
		if items, err := n.Pipe(kyaml.Lookup("items")); err == nil && items != nil && strings.HasSuffix(n.GetKind(), "List") {
			elems, _ := items.Elements()
			for _, item := range elems {
				if id, dup := check(item); dup {
					return id, true
				}
			}
			continue
		}
		if id, dup := check(n); dup {
			return id, true
		}
	}
	return resid.ResId{}, false
}

// renderBatches renders the resources BatchSize at a time, each batch in
// a filesystem of its own holding the same overlay (and kustomization)
// with the batch as its resources, then checks the whole for duplicate
// resources and sorts it in kustomize's legacy order, as one run would.
func (j *Job) renderBatches(bp *batchPlan) ([]*resource.Resource, error) {
	overlay, err := j.fs.ReadFile(path.Join(overlayRoot, KustomizationFile))
	if err != nil {
		return nil, err
	}
	if id, dup := inputDuplicate(bp.nodes); dup {
		return nil, fmt.Errorf("kustomize: may not add resource with an already registered id: %s", id)
	}
	var all []*resource.Resource
	for start := 0; start < len(bp.docs); start += BatchSize {
		batch := strings.Join(bp.docs[start:min(start+BatchSize, len(bp.docs))], "---\n")
		fsys := filesys.MakeFsInMemory()
		if err := fsys.WriteFile(path.Join(overlayRoot, KustomizationFile), overlay); err != nil {
			return nil, err
		}
		if bp.dir == "" {
			if err := fsys.WriteFile(path.Join(overlayRoot, streamFile), []byte(batch)); err != nil {
				return nil, err
			}
		} else {
			k := make(map[string]any, len(bp.kust))
			for key, v := range bp.kust {
				k[key] = v
			}
			k["resources"] = []string{batchFile}
			data, err := yaml.Marshal(k)
			if err != nil {
				return nil, err
			}
			if err := fsys.WriteFile(path.Join(bp.dir, bp.kustRaw), data); err != nil {
				return nil, err
			}
			if err := fsys.WriteFile(path.Join(bp.dir, batchFile), []byte(batch)); err != nil {
				return nil, err
			}
		}
		m, err := run(fsys, krusty.ReorderOptionNone)
		if err != nil {
			if bp.dir != "" {
				err = fmt.Errorf("%w (in the resources of %s)", err, display(path.Join(bp.dir, bp.kustRaw)))
			}
			return nil, err
		}
		all = append(all, m.Resources()...)
	}
	ids := make([]resid.ResId, len(all))
	seen := make(map[string]bool, len(all))
	for i, r := range all {
		ids[i] = r.CurId()
		key := ids[i].Gvk.String() + "|" + ids[i].EffectiveNamespace() + "|" + ids[i].Name
		if seen[key] {
			return nil, fmt.Errorf("kustomize: may not add resource with an already registered id: %s", ids[i])
		}
		seen[key] = true
	}
	sort.Sort(legacyOrder{ids: ids, rs: all})
	return all, nil
}

// The legacy order of `kustomize build` (its SortOrderTransformer's
// defaults, which kustomize says never change): these kinds first and
// last, in this order; then by group/version/kind, namespace and name.
var (
	legacyFirst = []string{"Namespace", "ResourceQuota", "StorageClass", "CustomResourceDefinition",
		"ServiceAccount", "PodSecurityPolicy", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding",
		"ConfigMap", "Secret", "Endpoints", "Service", "LimitRange", "PriorityClass", "PersistentVolume",
		"PersistentVolumeClaim", "Deployment", "StatefulSet", "CronJob", "PodDisruptionBudget"}
	legacyLast = []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}
	kindOrder  = func() map[string]int {
		m := map[string]int{}
		for i, k := range legacyFirst {
			m[k] = -len(legacyFirst) + i
		}
		for i, k := range legacyLast {
			m[k] = 1 + i
		}
		return m
	}()
)

// legacyOrder sorts resources as kustomize's legacy order does.
type legacyOrder struct {
	ids []resid.ResId
	rs  []*resource.Resource
}

func (s legacyOrder) Len() int { return len(s.ids) }
func (s legacyOrder) Swap(i, j int) {
	s.ids[i], s.ids[j] = s.ids[j], s.ids[i]
	s.rs[i], s.rs[j] = s.rs[j], s.rs[i]
}
func (s legacyOrder) Less(i, j int) bool {
	a, b := s.ids[i], s.ids[j]
	if !a.Gvk.Equals(b.Gvk) {
		if oa, ob := kindOrder[a.Kind], kindOrder[b.Kind]; oa != ob {
			return oa < ob
		}
		if a.Kind == "Namespace" && b.Kind == "Namespace" && (a.Group == "" || b.Group == "") {
			return gvkSortString(a.Gvk) > gvkSortString(b.Gvk)
		}
		return gvkSortString(a.Gvk) < gvkSortString(b.Gvk)
	}
	return idSortString(a) < idSortString(b)
}

func gvkSortString(g resid.Gvk) string {
	or := func(s, none string) string {
		if s == "" {
			return none
		}
		return s
	}
	return or(g.Group, "~G") + "_" + or(g.Version, "~V") + "_" + or(g.Kind, "~K")
}

func idSortString(id resid.ResId) string {
	ns, name := id.Namespace, id.Name
	if ns == "" {
		ns = "~X"
	}
	if name == "" {
		name = "~N"
	}
	return id.Gvk.String() + "|" + ns + "|" + name
}
