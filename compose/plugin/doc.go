// Package plugin runs component plugins with the calling convention of
// MicroShift's pluggable-components proposal (docs/plugins.md): an
// executable named plugin in the component directory, asked for its
// api-version and then run, with the plugin directory as working directory
// and an environment of PATH and the MICROSHIFT_* variables only; it prints
// kustomize-format YAML on stdout and logs on stderr; exit 1 means a host
// precondition is not met and exit 2 bad configuration.
//
// It runs the process (in its own session, under a reaper that kills every
// process it started when it exits, times out or is killed; see contain),
// bounds what it reads, escapes its stderr, and parses the output. It does not render
// manifests (package manifests does) or know about catalogs.
package plugin
