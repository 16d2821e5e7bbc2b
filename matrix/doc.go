// Package matrix runs many compositions in one process: every profile ×
// arch × release cell of a matrix, sharing the loaded catalog and release
// files, in parallel up to a bound, each cell's failure its own. It also
// describes a matrix for a CI engine to run (a GitHub Actions
// strategy.matrix, a Tekton PipelineRun) instead of running it.
//
// It does not resolve or build a cell itself: the caller's Func does, with
// the same steps as a single build, so that a matrix cell and a build of
// the same selection write the same bytes.
package matrix
