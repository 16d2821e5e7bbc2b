/*
Copyright The Helm Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package engine is Helm's template engine, helm.sh/helm/v3/pkg/engine of
// Helm v3.19.0 (engine.go, funcs.go, files.go), copied because it has no
// hook for what a build needs while a chart renders: replacing functions
// of its function map (the ones that are random, read the clock or need a
// cluster), bounding the output each template writes while it is written,
// bounding how deep include and tpl nest, and seeing the parse tree of
// every template, tpl texts included. TestEngineMatchesHelm compares it,
// line by line, with the module's own files, so that these changes, and
// only these, are what differs:
//
//   - Engine has a Guard (engine.go) called at those points; without one it
//     renders as Helm's does;
//   - the cluster client and the lookup function that uses it are left
//     out (lookup_func.go is not copied): a build renders offline;
//   - an error quotes at most 64 bytes of a tpl text.
//
// It must not be used for anything but compose/chart.
package engine
