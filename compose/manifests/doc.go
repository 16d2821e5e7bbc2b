// Package manifests renders a component's Kubernetes manifests with
// kustomize's krusty API over an in-memory filesystem (no kustomize
// binary, no network), pinning images with a generated images: override,
// and lays the result out as a manifests.d directory: one file per
// resource, named as `kustomize build -o DIR` names them, plus a
// kustomization.yaml listing them.
//
// It also lists every container image a rendered resource names, for the
// airgap cross-check. It does not decide which images are allowed (package
// compose does, from the plan) and does not run plugins.
package manifests
