// Package assemble puts a composition together from its parts: Plan
// resolves a request (compose.Resolve) and renders into the plan the device
// files it implies (render/config, storage, hardening, healthcheck); Build
// renders every output of a plan (blueprints, the lock, images.txt, the
// SBOMs, the device files, the chart archives, the installer outputs, the
// Containerfile) into an output.Dir for write to put on disk. Build's
// options are decided against the plan's target once, before anything is
// rendered (options.go); the renderers trust what they get. Validate
// builds every profile of a catalog for each release, and Summary is what
// a build reports.
//
// It decides nothing about the selection (compose does) and writes no file
// (write does).
package assemble
