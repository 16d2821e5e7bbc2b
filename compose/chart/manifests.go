package chart

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
)

// This file reads the rendered templates as `helm install` does before it
// applies them: each file split into YAML documents, the documents that
// are hooks (a helm.sh/hook annotation) apart from the others, and both
// in Helm's install order of kinds. TestInstallOrderMatchesHelm checks it
// against `helm template`.

// hookAnnotation names the events a hook runs on.
const hookAnnotation = "helm.sh/hook"

// hookEventNames are the events Helm knows for helm.sh/hook, in Helm's
// order; test-success is Helm 2's name of test.
var hookEventNames = []string{"pre-install", "post-install", "pre-delete", "post-delete", "pre-upgrade", "post-upgrade", "pre-rollback", "post-rollback", "test", "test-success"}

// hookEvent is the event a helm.sh/hook entry names (lower case, without
// spaces), false when Helm knows none by that name.
func hookEvent(name string) (string, bool) {
	if name == "test-success" {
		return "test", true
	}
	return name, slices.Contains(hookEventNames, name)
}

// installOrder is the order Helm installs kinds in; other kinds come
// after, by name.
var installOrder = []string{
	"PriorityClass", "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange",
	"PodSecurityPolicy", "PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList",
	"ConfigMap", "StorageClass", "PersistentVolume", "PersistentVolumeClaim",
	"CustomResourceDefinition", "ClusterRole", "ClusterRoleList", "ClusterRoleBinding",
	"ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList", "Service",
	"DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
	"HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress",
	"APIService",
}

// head is what a document says of itself: enough to sort it and to see
// whether it is a hook.
type head struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind,omitempty"`
	Metadata   *struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata,omitempty"`
}

// manifest is one rendered document that is not a hook.
type manifest struct {
	// file is the template it came from.
	file    string
	kind    string
	content string
}

// hook is one rendered document that is a hook.
type hook struct {
	kind, name string
	// file is the template it came from.
	file   string
	events []string
}

func (h *hook) key() string { return h.kind + "/" + h.name + "/" + h.file }

// testOnly says whether a hook runs only for `helm test`.
func (h *hook) testOnly() bool {
	for _, e := range h.events {
		if e != "test" {
			return false
		}
	}
	return len(h.events) > 0
}

// documentSeparator splits a file into documents: a --- line and the
// blank space around it.
var documentSeparator = lazyregexp.New(`(?:^|\s*\n)---\s*`)

// splitDocuments are the documents of a rendered file, in order, each
// trimmed of surrounding space.
func splitDocuments(s string) []string {
	var docs []string
	for _, d := range documentSeparator.Regexp().Split(strings.TrimSpace(s), -1) {
		if d != "" {
			docs = append(docs, strings.TrimSpace(d))
		}
	}
	return docs
}

// sortRendered splits the rendered files (in order of name; partials and
// blank files left out) into hooks and other documents, each in install
// order. A hook naming an event Helm does not know is left out, as Helm
// leaves it out (checkHookEvents refuses it first).
func sortRendered(rendered map[string]string) ([]*hook, []manifest, error) {
	var hooks []*hook
	var docs []manifest
	for _, file := range sortedNames(rendered) {
		content := rendered[file]
		if strings.HasPrefix(path.Base(file), "_") || strings.TrimSpace(content) == "" {
			continue
		}
		for _, d := range splitDocuments(content) {
			var h head
			if err := yaml.Unmarshal([]byte(d), &h); err != nil {
				return nil, nil, fmt.Errorf("YAML parse error on %s: %w", file, err)
			}
			events, ok := "", false
			if h.Metadata != nil {
				events, ok = h.Metadata.Annotations[hookAnnotation]
			}
			if !ok {
				docs = append(docs, manifest{file: file, kind: h.Kind, content: d})
				continue
			}
			hk := &hook{kind: h.Kind, name: h.Metadata.Name, file: file}
			for _, e := range strings.Split(events, ",") {
				event, known := hookEvent(strings.ToLower(strings.TrimSpace(e)))
				if !known {
					hk = nil
					break
				}
				hk.events = append(hk.events, event)
			}
			if hk != nil {
				hooks = append(hooks, hk)
			}
		}
	}
	slices.SortStableFunc(hooks, func(a, b *hook) int { return compareKinds(a.kind, b.kind) })
	slices.SortStableFunc(docs, func(a, b manifest) int { return compareKinds(a.kind, b.kind) })
	return hooks, docs, nil
}

// compareKinds orders kinds as Helm installs them: the kinds of
// installOrder in its order, then the others by name.
func compareKinds(a, b string) int {
	ia, ib := slices.Index(installOrder, a), slices.Index(installOrder, b)
	switch {
	case ia >= 0 && ib >= 0:
		return ia - ib
	case ia >= 0:
		return -1
	case ib >= 0:
		return 1
	}
	return strings.Compare(a, b)
}

func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
