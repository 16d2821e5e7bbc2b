package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// badInput is one wrong command line. In args and want, {bad} stands for
// testdata/bad, {rebase} for testdata/rebase (good payloads and CSVs), {ref}
// for ../shared/reference/microshift-release and {out} for an output
// directory that holds a previous successful build: a case that names {out}
// must leave it byte-identical.
type badInput struct {
	name string
	args []string
	// want is the whole stderr line after "error: ".
	want string
	code int
	// stdout is what the command must print on stdout ("" = nothing).
	stdout string
}

var badInputs = []badInput{
	// Catalog TOML (--catalog overlays testdata/bad/catalogs/<name> on the embedded catalog).
	{
		name: "catalog/syntax error with line",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--catalog", "{bad}/catalogs/syntax-error", "--output", "{out}"},
		want: `{bad}/catalogs/syntax-error/components/edge-agent/component.toml: line 5: key "packages": expected a comma (',') or array terminator (']'), but got 'r'`,
		code: exitError,
	},
	{
		name: "catalog/unknown key",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--catalog", "{bad}/catalogs/unknown-key", "--output", "{out}"},
		want: `{bad}/catalogs/unknown-key/components/edge-agent/component.toml: line 5: unknown key "pacakges"; did you mean "packages"?`,
		code: exitError,
	},
	{
		name: "catalog/wrong type",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--catalog", "{bad}/catalogs/wrong-type", "--output", "{out}"},
		want: `{bad}/catalogs/wrong-type/components/edge-agent/component.toml: line 3: key "order": must be an integer, got a string`,
		code: exitError,
	},
	{
		name: "catalog/missing name",
		args: []string{"build", "--profile", "minimal", "--arch", "aarch64", "--catalog", "{bad}/catalogs/missing-name", "--output", "{out}"},
		want: `{bad}/catalogs/missing-name/components/edge-agent/component.toml: missing required key "name"`,
		code: exitError,
	},
	{
		name: "catalog/missing order",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--catalog", "{bad}/catalogs/missing-order", "--output", "{out}"},
		want: `{bad}/catalogs/missing-order/components/edge-agent/component.toml: missing required key "order" (the NNN- prefix of its manifests.d directory)`,
		code: exitError,
	},
	{
		name: "catalog/name does not match directory",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--catalog", "{bad}/catalogs/name-mismatch", "--output", "{out}"},
		want: `{bad}/catalogs/name-mismatch/components/edge-agent/component.toml: name "fleet-agent" does not match its directory "edge-agent"`,
		code: exitError,
	},
	{
		name: "catalog/unknown requires with suggestion",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--catalog", "{bad}/catalogs/unknown-requires", "--output", "{out}"},
		want: `{bad}/catalogs/unknown-requires/components/edge-agent/component.toml: requires: unknown component or capability "cor"; did you mean "core"?`,
		code: exitError,
	},
	{
		name: "catalog/unknown capability in provides",
		args: []string{"resolve", "--profile", "full", "--arch", "x86_64", "--catalog", "{bad}/catalogs/unknown-capability"},
		want: `{bad}/catalogs/unknown-capability/components/edge-agent/component.toml: provides: unknown capability "gpu" (declare it in catalog.toml [capabilities.gpu])`,
		code: exitError,
	},
	{
		name: "catalog/profile names an unknown component",
		args: []string{"profiles", "--catalog", "{bad}/catalogs/profile-unknown-component"},
		want: `{bad}/catalogs/profile-unknown-component/catalog.toml: profile "edge": unknown component "multis"; did you mean "multus"?`,
		code: exitError,
	},
	{
		name: "catalog/requires cycle",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--catalog", "{bad}/catalogs/requires-cycle", "--output", "{out}"},
		want: `{bad}/catalogs/requires-cycle/components/edge-agent/component.toml: dependency cycle: edge-agent -> edge-updater -> edge-agent`,
		code: exitError,
	},
	{
		name: "catalog/bad firewall port",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--catalog", "{bad}/catalogs/bad-firewall-port", "--output", "{out}"},
		want: `{bad}/catalogs/bad-firewall-port/components/edge-agent/component.toml: firewall.ports: "8443/tcp" must be port:proto, from-to:proto or node-ports:proto (proto tcp or udp)`,
		code: exitError,
	},
	{
		name: "catalog/file path not absolute",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--catalog", "{bad}/catalogs/file-path-relative", "--output", "{out}"},
		want: `{bad}/catalogs/file-path-relative/components/edge-agent/component.toml: files[0]: path "etc/edge-agent/agent.conf" must be absolute and clean`,
		code: exitError,
	},
	{
		name: "catalog/file source missing",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--catalog", "{bad}/catalogs/file-source-missing", "--output", "{out}"},
		want: `{bad}/catalogs/file-source-missing/components/edge-agent/component.toml: files[0]: source "files/agent.conf" does not exist in the component directory`,
		code: exitError,
	},
	{
		// validate lists the problems on stdout, then fails like every command.
		name:   "catalog/validate lists the problem",
		args:   []string{"validate", "--catalog", "{bad}/catalogs/requires-cycle"},
		want:   `{bad}/catalogs/requires-cycle/components/edge-agent/component.toml: dependency cycle: edge-agent -> edge-updater -> edge-agent`,
		code:   exitError,
		stdout: "FAIL catalog: {bad}/catalogs/requires-cycle/components/edge-agent/component.toml: dependency cycle: edge-agent -> edge-updater -> edge-agent\n",
	},
	{
		name: "catalog/not a catalog directory",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--catalog", "{bad}/configs", "--output", "{out}"},
		want: `{bad}/configs: not a catalog: no catalog.toml and no components/<name>/component.toml`,
		code: exitError,
	},

	// Release JSON (--release-dir testdata/bad/releases/<name>).
	{
		name: "release/invalid JSON with line and column",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--release-dir", "{bad}/releases/invalid-json", "--output", "{out}"},
		want: `{bad}/releases/invalid-json/release-x86_64.json: line 7, column 5: invalid JSON: invalid character '"' after object key:value pair`,
		code: exitError,
	},
	{
		name: "release/duplicate image key",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--release-dir", "{bad}/releases/duplicate-image-key", "--output", "{out}"},
		want: `{bad}/releases/duplicate-image-key/release-x86_64.json: line 8, column 5: duplicate key "cli" in "images"`,
		code: exitError,
	},
	{
		name: "release/unknown top-level key",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--release-dir", "{bad}/releases/unknown-top-level-key", "--output", "{out}"},
		want: `{bad}/releases/unknown-top-level-key/release-x86_64.json: line 5, column 3: unknown key "version" (want "release" and "images")`,
		code: exitError,
	},
	{
		name: "release/image reference not a string",
		args: []string{"images", "--profile", "minimal", "--arch", "x86_64", "--release-dir", "{bad}/releases/image-ref-not-string"},
		want: `{bad}/releases/image-ref-not-string/release-x86_64.json: line 7, column 16: image "coredns" must be a string, got an array`,
		code: exitError,
	},
	{
		name: "release/invalid image reference",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--release-dir", "{bad}/releases/invalid-image-reference", "--output", "{out}"},
		want: `{bad}/releases/invalid-image-reference/release-x86_64.json: line 7, column 16: image "coredns": invalid image reference "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:8fe0c5d7": invalid checksum digest length`,
		code: exitError,
	},
	{
		name: "release/empty release.base",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--release-dir", "{bad}/releases/empty-base", "--output", "{out}"},
		want: `{bad}/releases/empty-base/release-x86_64.json: line 3, column 13: release.base is empty`,
		code: exitError,
	},
	{
		name: "release/base not a semantic version",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--release-dir", "{bad}/releases/non-semver-base", "--output", "{out}"},
		want: `{bad}/releases/non-semver-base: release-x86_64.json: release.base "nightly-2026-08-12" is not a semantic version: invalid semantic version`,
		code: exitError,
	},
	{
		name: "release/no core file",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--release-dir", "{bad}/releases/no-core-file", "--output", "{out}"},
		want: `{bad}/releases/no-core-file: no core release file (release-x86_64.json or release-aarch64.json)`,
		code: exitError,
	},
	{
		name: "release/file name with unknown arch",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--release-dir", "{bad}/releases/unknown-arch-file-name", "--output", "{out}"},
		want: `{bad}/releases/unknown-arch-file-name: release-olm-ppc64le.json: file name does not end in -x86_64.json or -aarch64.json`,
		code: exitError,
	},
	{
		name: "release/core files disagree on the version",
		args: []string{"release", "list", "--release-dir", "{bad}/releases/core-files-disagree"},
		want: `{bad}/releases/core-files-disagree: core files disagree on the release: release-aarch64.json says 4.19.2, release-x86_64.json says 4.18.0`,
		code: exitError,
	},
	{
		name: "release/trailing data",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--release-dir", "{bad}/releases/trailing-data", "--output", "{out}"},
		want: `{bad}/releases/trailing-data/release-x86_64.json: line 9, column 1: unexpected data after the JSON document`,
		code: exitError,
	},
	{
		name: "release/directory lacks the arch",
		args: []string{"build", "--profile", "minimal", "--arch", "aarch64", "--release-dir", "{bad}/releases/x86_64-only", "--output", "{out}"},
		want: `release 4.18 ({bad}/releases/x86_64-only) has no release-aarch64.json: it does not ship aarch64`,
		code: exitError,
	},
	{
		name: "release/directory does not match --release",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--release-dir", "{ref}/release-4.18", "--release", ">=5.0", "--output", "{out}"},
		want: `{ref}/release-4.18 is release 4.18.0, which does not match ">=5.0"`,
		code: exitError,
	},

	// Config YAML (--config testdata/bad/configs/<name>.yaml).
	{
		name: "config/invalid YAML",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--config", "{bad}/configs/invalid-yaml.yaml", "--output", "{out}"},
		want: `{bad}/configs/invalid-yaml.yaml: invalid YAML: yaml: line 4: mapping values are not allowed in this context`,
		code: exitError,
	},
	{
		name: "config/not a mapping",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--config", "{bad}/configs/not-a-mapping.yaml", "--output", "{out}"},
		want: `{bad}/configs/not-a-mapping.yaml: the document must be a mapping of config sections, got a list`,
		code: exitError,
	},
	{
		name: "config/unknown section with suggestion",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--config", "{bad}/configs/unknown-section.yaml", "--output", "{out}"},
		want: `{bad}/configs/unknown-section.yaml: unknown section "netwrok"; did you mean "network"?`,
		code: exitError,
	},
	{
		name: "config/clusterNetwork not a CIDR",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--config", "{bad}/configs/cluster-network-not-cidr.yaml", "--output", "{out}"},
		want: `{bad}/configs/cluster-network-not-cidr.yaml: network.clusterNetwork[0]: "10.42.0.0/33" is not a CIDR`,
		code: exitError,
	},
	{
		name: "config/clusterNetwork with host bits set",
		args: []string{"resolve", "--profile", "full", "--arch", "x86_64", "--config", "{bad}/configs/cluster-network-host-bits.yaml"},
		want: `{bad}/configs/cluster-network-host-bits.yaml: network.clusterNetwork[0]: "10.42.1.0/16" has host bits set (did you mean "10.42.0.0/16"?)`,
		code: exitError,
	},
	{
		name: "config/serviceNodePortRange malformed",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--config", "{bad}/configs/node-port-range-malformed.yaml", "--output", "{out}"},
		want: `{bad}/configs/node-port-range-malformed.yaml: network.serviceNodePortRange: "30000:32767" is not a port range such as 30000-32767`,
		code: exitError,
	},
	{
		name: "config/logLevel invalid",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--config", "{bad}/configs/log-level-invalid.yaml", "--output", "{out}"},
		want: `{bad}/configs/log-level-invalid.yaml: debugging.logLevel: "verbose" is not one of Normal, Debug, Trace, TraceAll`,
		code: exitError,
	},
	{
		name: "config/nodeIP invalid",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--config", "{bad}/configs/node-ip-invalid.yaml", "--output", "{out}"},
		want: `{bad}/configs/node-ip-invalid.yaml: node.nodeIP: "192.168.1.300" is not an IP address`,
		code: exitError,
	},
	{
		name: "config/cniPlugin conflicts with the plan",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--config", "{bad}/configs/cni-plugin-conflict.yaml", "--output", "{out}"},
		want: `{bad}/configs/cni-plugin-conflict.yaml: network.cniPlugin: "none" turns off networking-ovnk, which the plan selects (networking-ovnk: profile full); drop the setting or leave it out with --without networking-ovnk`,
		code: exitError,
	},
	{
		name: "config/duplicate keys",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--config", "{bad}/configs/duplicate-keys.yaml", "--output", "{out}"},
		want: `{bad}/configs/duplicate-keys.yaml: invalid YAML: yaml: unmarshal errors: line 5: key "network" already set in map`,
		code: exitError,
	},
	{
		name: "config/file missing",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--config", "{bad}/configs/missing.yaml", "--output", "{out}"},
		want: `config {bad}/configs/missing.yaml does not exist`,
		code: exitError,
	},
	// lvmd.yaml (--lvmd testdata/bad/lvmd/<name>.yaml).
	{
		// The proposal's own example spells the key in camelCase; lvmd would
		// ignore it and topolvm-node would crash-loop on the device.
		name: "lvmd/camelCase key from the proposal",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--lvmd", "{bad}/lvmd/camel-case-key.yaml", "--output", "{out}"},
		want: `{bad}/lvmd/camel-case-key.yaml: unknown key "deviceClasses"; did you mean "device-classes"?`,
		code: exitError,
	},
	{
		name: "lvmd/thin without a thin-pool",
		args: []string{"build", "--profile", "storage-only", "--arch", "aarch64", "--lvmd", "{bad}/lvmd/thin-without-pool.yaml", "--output", "{out}"},
		want: `{bad}/lvmd/thin-without-pool.yaml: device-classes[1].thin-pool: required when type is thin`,
		code: exitError,
	},
	{
		name: "lvmd/no default device class",
		args: []string{"resolve", "--profile", "full", "--arch", "x86_64", "--lvmd", "{bad}/lvmd/no-default.yaml"},
		want: `{bad}/lvmd/no-default.yaml: device-classes: exactly one device class must have default: true, found none`,
		code: exitError,
	},
	{
		// MicroShift 5.0 refuses an empty lvmd.yaml (its error is in the
		// release knowledge); the default release is 5.0.
		name: "lvmd/empty, only a comment",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--lvmd", "{bad}/lvmd/empty.yaml", "--output", "{out}"},
		want: `--lvmd {bad}/lvmd/empty.yaml: the file is empty (no document): on MicroShift 5.0: MicroShift does not start: lvmd config file "/var/lib/microshift/lvms/lvmd.yaml" is empty (its copy of /etc/microshift/lvmd.yaml); list at least one device class, or drop --lvmd and MicroShift picks the host's volume group itself`,
		code: exitError,
	},
	{
		name: "lvmd/without storage-lvms in the plan",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--lvmd", "{bad}/lvmd/valid.yaml", "--output", "{out}"},
		want: `--lvmd {bad}/lvmd/valid.yaml: storage-lvms is not in the plan, so nothing would read it; select it (--with storage-lvms, or profile storage-only or full) or drop --lvmd`,
		code: exitError,
	},
	{
		name: "lvmd/file missing",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--lvmd", "{bad}/lvmd/missing.yaml", "--output", "{out}"},
		want: `lvmd config {bad}/lvmd/missing.yaml does not exist`,
		code: exitError,
	},
	{
		name: "plugin timeout not positive",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--plugin-timeout", "0s", "--output", "{out}"},
		want: `--plugin-timeout must be positive, got "0s": leave it out for the default`,
		code: exitUsage,
	},

	// Flags and arguments.
	{
		name: "flags/unknown flag",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--bogus", "--output", "{out}"},
		want: `unknown flag: --bogus`,
		code: exitUsage,
	},
	{
		name: "flags/unknown shorthand",
		args: []string{"build", "-p", "full", "-z", "-o", "{out}"},
		want: `unknown shorthand flag: 'z' in -z`,
		code: exitUsage,
	},
	{
		name: "flags/flag without its value",
		args: []string{"build", "--profile", "full", "--output", "{out}", "--arch"},
		want: `flag needs an argument: --arch`,
		code: exitUsage,
	},
	{
		name: "flags/missing --profile",
		args: []string{"build", "--arch", "x86_64", "--output", "{out}"},
		want: `--profile is required (minimal, networking-only, storage-only, full, or see 'microshift-compose profiles')`,
		code: exitUsage,
	},
	{
		name: "flags/missing --profile for images",
		args: []string{"images", "--arch", "aarch64"},
		want: `--profile is required (minimal, networking-only, storage-only, full, or see 'microshift-compose profiles')`,
		code: exitUsage,
	},
	{
		name: "flags/missing --output",
		args: []string{"build", "--profile", "full", "--arch", "x86_64"},
		want: `--output DIR is required`,
		code: exitUsage,
	},
	{
		name: "flags/bad --arch with suggestion",
		args: []string{"build", "--profile", "full", "--arch", "x86-64", "--output", "{out}"},
		want: `--arch: unknown arch "x86-64"; did you mean "x86_64"?`,
		code: exitUsage,
	},
	{
		name: "flags/bad --arch without suggestion",
		args: []string{"images", "--profile", "full", "--arch", "ppc64le"},
		want: `--arch: unknown arch "ppc64le" (want one of x86_64, aarch64, amd64, arm64)`,
		code: exitUsage,
	},
	{
		name: "flags/--output format for profiles",
		args: []string{"profiles", "--output", "yaml"},
		want: `--output: unknown format "yaml" (want text or json)`,
		code: exitUsage,
	},
	{
		name: "flags/--output directory given to resolve",
		args: []string{"resolve", "--profile", "full", "--output", "out/"},
		want: `--output: unknown format "out/" (want text or json)`,
		code: exitUsage,
	},
	{
		name: "flags/--output format for components",
		args: []string{"components", "-o", "JSON"},
		want: `--output: unknown format "JSON" (want text or json)`,
		code: exitUsage,
	},
	{
		name: "flags/positional argument to build",
		args: []string{"build", "full", "--arch", "x86_64", "--output", "{out}"},
		want: `unexpected argument "full": microshift-compose build takes only flags (see 'microshift-compose build --help')`,
		code: exitUsage,
	},
	{
		name: "flags/positional argument to profiles",
		args: []string{"profiles", "minimal"},
		want: `unexpected argument "minimal": microshift-compose profiles takes only flags (see 'microshift-compose profiles --help')`,
		code: exitUsage,
	},
	{
		name: "flags/unknown command",
		args: []string{"compose", "--profile", "full"},
		want: `unknown command "compose" for "microshift-compose" (see 'microshift-compose --help')`,
		code: exitUsage,
	},
	{
		name: "flags/mistyped command",
		args: []string{"buld", "--profile", "full", "--output", "{out}"},
		want: `unknown command "buld" for "microshift-compose"; did you mean "build"?`,
		code: exitUsage,
	},
	{
		name: "flags/help for an unknown command",
		args: []string{"help", "biuld"},
		want: `unknown command "biuld" for "microshift-compose"; did you mean "build"?`,
		code: exitUsage,
	},
	{
		name: "flags/unknown flag without a command",
		args: []string{"--profiles"},
		want: `unknown flag: --profiles`,
		code: exitUsage,
	},
	{
		name: "flags/mistyped subcommand",
		args: []string{"release", "lst"},
		want: `unknown command "lst" for "microshift-compose release"; did you mean "list"?`,
		code: exitUsage,
	},
	{
		name: "flags/--release not a constraint",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--release", ">>4.18", "--output", "{out}"},
		want: `--release: invalid semver constraint ">>4.18": improper constraint: >>4.18`,
		code: exitUsage,
	},
	{
		name: "flags/--release matching nothing",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--release", "4.13", "--output", "{out}"},
		want: `selecting embedded release: no release matches "4.13" (have 4.14, 4.15, 4.16, 4.17, 4.18, 4.19, 4.20, 4.21, 4.22, 5.0, 5.1); for a release this binary does not embed (a shipped z-stream such as 4.18.7), fetch its release-info RPMs with 'microshift-compose release fetch VERSION --repo URL' (or 'release import FILE.rpm'), or give its release files with --release-dir DIR (what its microshift-release-info RPM installs in /usr/share/microshift/release)`,
		code: exitError,
	},
	{
		name: "flags/--release of a shipped version",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--release", "4.18.7", "--output", "{out}"},
		want: `selecting release 4.18.7: no release matches "4.18.7" (have 4.14, 4.15, 4.16, 4.17, 4.18, 4.19, 4.20, 4.21, 4.22, 5.0, 5.1); for a release this binary does not embed (a shipped z-stream such as 4.18.7), fetch its release-info RPMs with 'microshift-compose release fetch 4.18.7 --repo URL' (or 'release import FILE.rpm'), or give its release files with --release-dir DIR (what its microshift-release-info RPM installs in /usr/share/microshift/release)`,
		code: exitError,
	},
	{
		name: "flags/--release matching nothing for components",
		args: []string{"components", "--release", ">=6"},
		want: `selecting embedded release: no release matches ">=6" (have 4.14, 4.15, 4.16, 4.17, 4.18, 4.19, 4.20, 4.21, 4.22, 5.0, 5.1); for a release this binary does not embed (a shipped z-stream such as 4.18.7), fetch its release-info RPMs with 'microshift-compose release fetch VERSION --repo URL' (or 'release import FILE.rpm'), or give its release files with --release-dir DIR (what its microshift-release-info RPM installs in /usr/share/microshift/release)`,
		code: exitError,
	},
	{
		name: "flags/nonexistent --release-dir",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--release-dir", "{bad}/releases/nonexistent", "--output", "{out}"},
		want: `release dir {bad}/releases/nonexistent does not exist`,
		code: exitError,
	},
	{
		name: "flags/--release-dir is a file",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--release-dir", "{bad}/configs/node-ip-invalid.yaml", "--output", "{out}"},
		want: `release dir {bad}/configs/node-ip-invalid.yaml is not a directory`,
		code: exitError,
	},
	{
		name: "flags/nonexistent --catalog",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--catalog", "{bad}/catalogs/nonexistent", "--output", "{out}"},
		want: `catalog {bad}/catalogs/nonexistent does not exist`,
		code: exitError,
	},
	{
		name: "flags/--distro typo with suggestion",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--distro", "rhel9.8", "--output", "{out}"},
		want: `release 5.0 (embedded) is not built for distro "rhel9.8": MicroShift 5.0 is built and tested for rhel-9.8, rhel-10.2; did you mean "rhel-9.8"?`,
		code: exitError,
	},
	{
		name: "flags/--distro the release is not built for",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--release", "4.18", "--distro", "rhel-10.2", "--output", "{out}"},
		want: `release 4.18 (embedded) is not built for distro "rhel-10.2": MicroShift 4.18 is built and tested for rhel-9.4`,
		code: exitError,
	},
	{
		name: "flags/an rpm-ostree image type on RHEL 10",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--distro", "rhel-10.2", "--image-type", "edge-commit", "--bootc", "--output", "{out}"},
		want: `rhel-10.2 is image mode (bootc) only for MicroShift: it has no rpm-ostree image types such as edge-commit; use --bootc for the Containerfile, or --image-type for a package-based image (rhel-10.2 has ami, azure-cvm, azure-rhui, azure-sap-rhui, azure-sapapps-rhui, ec2, ec2-cvm, ec2-ha, ec2-sap, gce, image-installer, network-installer, oci, ova, pxe-tar-xz, qcow2, tar, vagrant-libvirt, vagrant-virtualbox, vhd, vmdk, wsl)`,
		code: exitError,
	},
	{
		name: "flags/--bootc-base without --bootc",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--bootc-base", "quay.io/centos-bootc/centos-bootc:stream9", "--output", "{out}"},
		want: `--bootc-base chooses the bootc Containerfile's base image; add --bootc`,
		code: exitUsage,
	},
	{
		name: "flags/--bootc-base not a reference",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--bootc", "--bootc-base", "Quay.io/UPPER", "--output", "{out}"},
		want: `--bootc-base: "Quay.io/UPPER": not a reference containers/image takes: invalid reference format: repository name must be lowercase`,
		code: exitUsage,
	},
	{
		name: "flags/--exact-version on a nightly",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--exact-version", "--output", "{out}"},
		want: `release 5.0 (embedded) is 5.0.0-0.nightly-2026-08-18-203845, a nightly build, not a published version: no MicroShift RPM has its exact version, so the RPMs cannot be pinned to the version of its images (--exact-version); build from a shipped version's release files (--release-dir)`,
		code: exitError,
	},
	{
		name: "flags/--upgrade-from too old",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--release", "4.19", "--upgrade-from", "4.16", "--output", "{out}"},
		want: `upgrading from 4.16: MicroShift 4.19 does not start on data written by 4.16: 4.19 is 3 minor versions newer, and it takes over data at most 2 older; upgrade through 4.18 first`,
		code: exitError,
	},
	{
		name: "flags/--upgrade-from a newer release",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--release", "4.22", "--upgrade-from", "5.0.1", "--output", "{out}"},
		want: `upgrading from 5.0: MicroShift 4.22 does not start on data written by 5.0: it never migrates data to an older release`,
		code: exitError,
	},
	{
		name: "flags/--upgrade-from neither a release nor a lock",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--upgrade-from", "{bad}/nonexistent", "--output", "{out}"},
		want: `--upgrade-from {bad}/nonexistent: neither a release (4.16, 4.16.3) nor a lock file or build output`,
		code: exitUsage,
	},
	{
		name: "flags/--image-type typo with suggestion",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--image-type", "edge-comit", "--output", "{out}"},
		want: `unknown image type "edge-comit" for rhel-9.8/x86_64; did you mean "edge-commit"?`,
		code: exitError,
	},
	{
		name: "flags/--image-type unknown",
		args: []string{"build", "--profile", "full", "--arch", "aarch64", "--image-type", "iso", "--output", "{out}"},
		want: `unknown image type "iso" for rhel-9.8/aarch64 (have ` + rhel96AArch64ImageTypes + `)`,
		code: exitError,
	},

	// Profiles and component selection.
	{
		name: "profiles/unknown profile with suggestion",
		args: []string{"build", "--profile", "ful", "--arch", "x86_64", "--output", "{out}"},
		want: `unknown profile "ful"; did you mean "full"?`,
		code: exitError,
	},
	{
		name: "profiles/unknown profile without suggestion",
		args: []string{"images", "--profile", "edge", "--arch", "x86_64"},
		want: `unknown profile "edge" (have full, minimal, networking-only, storage-only)`,
		code: exitError,
	},
	{
		name: "profiles/--with unknown component",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--with", "multis", "--output", "{out}"},
		want: `--with: unknown component "multis"; did you mean "multus"?`,
		code: exitError,
	},
	{
		name: "profiles/--with a capability",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--with", "cni", "--output", "{out}"},
		want: `--with cni: "cni" is a capability; name a component that provides it (networking-ovnk)`,
		code: exitError,
	},
	{
		name: "profiles/--with and --without the same component",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--with", "multus", "--without", "multus", "--output", "{out}"},
		want: `component "multus" is given to both --with and --without`,
		code: exitError,
	},
	{
		name: "profiles/--without core on full",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--without", "core", "--output", "{out}"},
		want: `--without core: networking-ovnk requires it (networking-ovnk: profile full)`,
		code: exitError,
	},
	{
		name: "profiles/--without the default provider a component needs",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--with", "multus", "--without", "networking-ovnk", "--output", "{out}"},
		want: `--without networking-ovnk: multus requires it (multus: --with)`,
		code: exitError,
	},
	{
		name: "profiles/two CSI drivers",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--with", "storage-hostpath", "--allow-unpinned", "--output", "{out}"},
		want: `storage-hostpath conflicts with storage-lvms (storage-hostpath: --with; storage-lvms: profile full); leave one out with --without`,
		code: exitError,
	},
	{
		name: "profiles/a device that never becomes healthy",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--release", "4.18", "--output", "{out}"},
		want: `release 4.18: the device never becomes healthy: no CNI: MicroShift deploys no pod network (network.cniPlugin: none), so DNS, the router and service-ca never become ready, and the 4.18 greenboot check always waits for OVN-Kubernetes pods: greenboot marks every boot red, even with a CNI of your own; add a cni provider (--with networking-ovnk), or pass --allow-red-boot to build a device that rolls back on every boot`,
		code: exitError,
	},
	{
		name: "profiles/a device that never becomes healthy, by --without",
		args: []string{"resolve", "--profile", "full", "--arch", "aarch64", "--release", "4.18", "--without", "networking-ovnk"},
		want: `release 4.18: the device never becomes healthy: no CNI: MicroShift deploys no pod network (network.cniPlugin: none), so DNS, the router and service-ca never become ready, and the 4.18 greenboot check always waits for OVN-Kubernetes pods: greenboot marks every boot red, even with a CNI of your own; add a cni provider (--with networking-ovnk), or pass --allow-red-boot to build a device that rolls back on every boot`,
		code: exitError,
	},
	{
		name: "profiles/a device that never becomes healthy, in a matrix described for CI",
		args: []string{"matrix", "--profile", "storage-only", "--arch", "x86_64", "--release", "4.18", "--emit", "github"},
		want: `cell 4.18-storage-only-x86_64: release 4.18: the device never becomes healthy: no CNI: MicroShift deploys no pod network (network.cniPlugin: none), so DNS, the router and service-ca never become ready, and the 4.18 greenboot check always waits for OVN-Kubernetes pods: greenboot marks every boot red, even with a CNI of your own; add a cni provider (--with networking-ovnk), or pass --allow-red-boot to build a device that rolls back on every boot`,
		code: exitError,
	},
	{
		name: "profiles/a profile the release cannot honour",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--release", "4.17", "--output", "{out}"},
		want: `profile minimal leaves out networking-ovnk, which release 4.17 cannot honour: MicroShift before 4.18 always deploys OVN-Kubernetes (network.cniPlugin, which turns it off, exists from 4.18); select it (--with networking-ovnk) or use a newer --release`,
		code: exitError,
	},
	{
		name: "profiles/--without what the release always deploys",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--release", "4.16", "--without", "snapshot-controller", "--output", "{out}"},
		want: `--without snapshot-controller, which release 4.16 cannot honour: MicroShift before 4.17 always deploys the CSI snapshot controller (storage.optionalCsiComponents, which turns it off, exists from 4.17); select it (--with snapshot-controller) or use a newer --release`,
		code: exitError,
	},
	{
		name: "profiles/metrics on 4.22",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--release", "4.22", "--with", "node-exporter", "--output", "{out}"},
		want: `component "node-exporter" is not available for release 4.22: it needs release >=5.0 (node-exporter: --with)`,
		code: exitError,
	},
	{
		name: "config/a key the release does not have",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--release", "4.17", "--config", "{bad}/configs/cni-plugin-conflict.yaml", "--output", "{out}"},
		want: `{bad}/configs/cni-plugin-conflict.yaml: network.cniPlugin: MicroShift 4.17 has no such setting (it exists from MicroShift 4.18)`,
		code: exitError,
	},
	{
		name: "config/a value the release refuses",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--release", "4.21", "--config", "{bad}/configs/multus-removed.yaml", "--output", "{out}"},
		want: `{bad}/configs/multus-removed.yaml: network.multus.status: "Removed" is not one of "", "Enabled", "Disabled" (MicroShift 4.21)`,
		code: exitError,
	},
	{
		name: "profiles/ai-model-serving on aarch64",
		args: []string{"build", "--profile", "minimal", "--arch", "aarch64", "--with", "ai-model-serving", "--allow-unpinned", "--output", "{out}"},
		want: `component "ai-model-serving" does not support aarch64, only x86_64 (ai-model-serving: --with)`,
		code: exitError,
	},
	{
		name: "profiles/cert-manager on 4.18",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--release", "4.18", "--with", "cert-manager", "--output", "{out}"},
		want: `component "cert-manager" is not available for release 4.18: it needs release >=4.20 (cert-manager: --with)`,
		code: exitError,
	},
	{
		name: "profiles/unpinned ai-model-serving",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--with", "ai-model-serving", "--output", "{out}"},
		want: `component "ai-model-serving" image "ray-tls-generator-image" (release-ai-model-serving-x86_64.json): image is not pinned by digest: registry.redhat.io/ubi9/ubi-minimal:latest (and 15 more tag-only images); pin them in the release file, or pass --allow-unpinned to embed them by tag`,
		code: exitError,
	},

	// Rebase tooling: release update/verify/diff/import and diff. Inputs
	// that fail before anything is written, so the read-only reference
	// directory serves as the release directory.
	{
		name: "release update/no source",
		args: []string{"release", "update", "{ref}/release-4.18"},
		want: "nothing to update: give --payload, --csv or --resolve-tags",
		code: exitUsage,
	},
	{
		name: "release update/no directory",
		args: []string{"release", "update", "--resolve-tags"},
		want: "accepts 1 arg(s), received 0",
		code: exitUsage,
	},
	{
		name: "release update/payload without arch",
		args: []string{"release", "update", "{ref}/release-4.18", "--payload", "{rebase}/payloads/image-references-x86_64.json"},
		want: `--payload "{rebase}/payloads/image-references-x86_64.json": want ARCH=FILE, e.g. --payload x86_64=release-x86_64.json`,
		code: exitUsage,
	},
	{
		name: "release update/payload for an unknown arch",
		args: []string{"release", "update", "{ref}/release-4.18", "--payload", "ppc64le={rebase}/payloads/image-references-x86_64.json"},
		want: `--payload ppc64le={rebase}/payloads/image-references-x86_64.json: unknown arch "ppc64le" (want one of x86_64, aarch64, amd64, arm64)`,
		code: exitUsage,
	},
	{
		name: "release update/two payloads for one arch",
		args: []string{"release", "update", "{ref}/release-4.18", "--payload", "x86_64={rebase}/payloads/image-references-x86_64.json", "--payload", "amd64={rebase}/payloads/image-references-x86_64.yaml"},
		want: "--payload: two payloads for x86_64",
		code: exitUsage,
	},
	{
		name: "release update/payload and CSV",
		args: []string{"release", "update", "{ref}/release-4.18", "--payload", "x86_64={rebase}/payloads/image-references-x86_64.json", "--csv", "{rebase}/csvs/lvms-operator.v4.18.4.clusterserviceversion.yaml"},
		want: "--payload and --csv cannot be combined; run one update per source",
		code: exitUsage,
	},
	{
		name: "release update/map without a source",
		args: []string{"release", "update", "{ref}/release-4.18", "--resolve-tags", "--map", "lvms_operator=lvms-operator"},
		want: "--map maps keys to a --payload or --csv; give one",
		code: exitUsage,
	},
	{
		name: "release update/map without a name",
		args: []string{"release", "update", "{ref}/release-4.18", "--csv", "{rebase}/csvs/lvms-operator.v4.18.4.clusterserviceversion.yaml", "--map", "lvms_operator"},
		want: `--map "lvms_operator": want KEY=NAME, e.g. --map lvms_operator=lvms-operator`,
		code: exitUsage,
	},
	{
		name: "release update/index digest without resolving",
		args: []string{"release", "update", "{ref}/release-4.18", "--csv", "{rebase}/csvs/lvms-operator.v4.18.4.clusterserviceversion.yaml", "--index-digest"},
		want: "--index-digest chooses what --resolve-tags writes; add --resolve-tags",
		code: exitUsage,
	},
	{
		name: "release update/truncated payload",
		args: []string{"release", "update", "{ref}/release-4.18", "--payload", "x86_64={bad}/payloads/truncated.json"},
		want: "{bad}/payloads/truncated.json: invalid JSON: unexpected end of file",
		code: exitError,
	},
	{
		name: "release update/payload of another kind",
		args: []string{"release", "update", "{ref}/release-4.18", "--payload", "x86_64={bad}/payloads/wrong-kind.yaml"},
		want: `{bad}/payloads/wrong-kind.yaml: kind "cincinnati-metadata-v0" is not a release payload (want the payload's image-references ImageStream or ` + "`oc adm release info -o json`" + ` output)`,
		code: exitError,
	},
	{
		name: "release update/payload with a duplicate tag",
		args: []string{"release", "update", "{ref}/release-4.18", "--payload", "aarch64={bad}/payloads/duplicate-tag.json"},
		want: `{bad}/payloads/duplicate-tag.json: spec.tags[1] "cli": duplicate tag name (also spec.tags[0])`,
		code: exitError,
	},
	{
		name: "release update/missing payload file",
		args: []string{"release", "update", "{ref}/release-4.18", "--payload", "x86_64={bad}/payloads/nonexistent.json"},
		want: "payload {bad}/payloads/nonexistent.json does not exist",
		code: exitError,
	},
	{
		name: "release update/payload of the other arch",
		args: []string{"release", "update", "{ref}/release-4.18", "--payload", "x86_64={rebase}/payloads/release-info-aarch64.json"},
		want: "payload {rebase}/payloads/release-info-aarch64.json: release 4.18.0-0.nightly-arm64-2026-09-02-094512 is for arm64, not x86_64 (amd64); pass it as --payload aarch64={rebase}/payloads/release-info-aarch64.json",
		code: exitError,
	},
	{
		name: "release update/CSV without relatedImages",
		args: []string{"release", "update", "{ref}/release-4.18", "--csv", "{bad}/csvs/no-related-images.clusterserviceversion.yaml", "--map", "lvms_operator=lvms-operator"},
		want: "{bad}/csvs/no-related-images.clusterserviceversion.yaml: CSV lvms-operator.v4.18.4 has no spec.relatedImages: the bundle does not list its images (build it with relatedImages, as disconnected installs need)",
		code: exitError,
	},
	{
		name: "release update/not a CSV",
		args: []string{"release", "update", "{ref}/release-4.18", "--csv", "{bad}/csvs/deployment.yaml", "--map", "lvms_operator=lvms-operator"},
		want: `{bad}/csvs/deployment.yaml: kind is "Deployment", want ClusterServiceVersion (the bundle's manifests/*.clusterserviceversion.yaml)`,
		code: exitError,
	},
	{
		name: "release update/key mapped to nothing",
		args: []string{"release", "update", "{ref}/release-4.18", "--csv", "{rebase}/csvs/lvms-operator.v4.18.4.clusterserviceversion.yaml", "--map", "lvms_operator=lvms-operatr"},
		want: `mapping lvms_operator=lvms-operatr: CSV {rebase}/csvs/lvms-operator.v4.18.4.clusterserviceversion.yaml (lvms-operator.v4.18.4) has no relatedImages entry "lvms-operatr"; did you mean "lvms-operator"?`,
		code: exitError,
	},
	{
		name: "release update/unknown component",
		args: []string{"release", "update", "{ref}/release-4.18", "--resolve-tags", "--component", "olmm"},
		want: `release {ref}/release-4.18 has no component "olmm"; did you mean "olm"?`,
		code: exitError,
	},
	{
		name: "release verify/unknown arch",
		args: []string{"release", "verify", "{ref}/release-4.18", "--arch", "ppc64le"},
		want: `--arch: unknown arch "ppc64le" (want one of x86_64, aarch64, amd64, arm64)`,
		code: exitUsage,
	},
	{
		name: "release verify/component not of that arch",
		args: []string{"release", "verify", "{ref}/main", "--component", "ai-model-serving", "--arch", "aarch64"},
		want: "release {ref}/main has no ai-model-serving files for aarch64",
		code: exitError,
	},
	{
		name: "release verify/directory and embedded release",
		args: []string{"release", "verify", "{ref}/main", "--release", "5.0"},
		want: "--release selects an embedded release; give DIR or --release, not both",
		code: exitUsage,
	},
	{
		name: "release verify/no release files",
		args: []string{"release", "verify", "{bad}/catalogs/syntax-error"},
		want: "release dir {bad}/catalogs/syntax-error has no release files (release-<arch>.json or release-<component>-<arch>.json)",
		code: exitError,
	},
	{
		name: "release verify/bad release file",
		args: []string{"release", "verify", "{bad}/releases/invalid-json"},
		want: `{bad}/releases/invalid-json/release-x86_64.json: line 7, column 5: invalid JSON: invalid character '"' after object key:value pair`,
		code: exitError,
	},
	{
		name: "release verify/no embedded release",
		args: []string{"release", "verify", "--release", "6.1"},
		want: `selecting embedded release: no release matches "6.1" (have 4.14, 4.15, 4.16, 4.17, 4.18, 4.19, 4.20, 4.21, 4.22, 5.0, 5.1); for a release this binary does not embed (a shipped z-stream such as 4.18.7), fetch its release-info RPMs with 'microshift-compose release fetch VERSION --repo URL' (or 'release import FILE.rpm'), or give its release files as DIR (what its microshift-release-info RPM installs in /usr/share/microshift/release)`,
		code: exitError,
	},
	{
		name: "release diff/one argument",
		args: []string{"release", "diff", "4.18"},
		want: "accepts 2 arg(s), received 1",
		code: exitUsage,
	},
	{
		name: "release diff/no such release",
		args: []string{"release", "diff", "4.18", "6.1"},
		want: "6.1: no such directory, and no embedded release matches it (have 4.14, 4.15, 4.16, 4.17, 4.18, 4.19, 4.20, 4.21, 4.22, 5.0, 5.1)",
		code: exitError,
	},
	{
		name: "release diff/neither directory nor version",
		args: []string{"release", "diff", "{bad}/releases/nonexistent", "5.0"},
		want: "{bad}/releases/nonexistent: no such directory, and not an embedded release version (have 4.14, 4.15, 4.16, 4.17, 4.18, 4.19, 4.20, 4.21, 4.22, 5.0, 5.1)",
		code: exitError,
	},
	{
		name: "release diff/a build output",
		args: []string{"release", "diff", "{out}", "5.0"},
		want: "{out} is a build output (it holds compose.lock.json); compare builds with 'microshift-compose diff'",
		code: exitError,
	},
	{
		name: "release diff/a lock file",
		args: []string{"release", "diff", "4.18", "{out}/compose.lock.json"},
		want: "{out}/compose.lock.json is a file; release diff compares release directories or embedded release versions (compare compose.lock.json files with 'microshift-compose diff')",
		code: exitError,
	},
	{
		name: "diff/newer lock schema",
		args: []string{"diff", "{out}", "{bad}/locks/schema-2.json"},
		want: "{bad}/locks/schema-2.json: lock schema 2, this microshift-compose reads schema 1; rebuild the lock with this version",
		code: exitError,
	},
	{
		name: "diff/footprint in a spelling the lock never had",
		args: []string{"diff", "{out}", "{bad}/locks/footprint-bytes.json"},
		want: `{bad}/locks/footprint-bytes.json: json: unknown field "compressed_bytes"`,
		code: exitError,
	},
	{
		name: "diff/not a lock",
		args: []string{"diff", "{out}/images.txt", "{out}"},
		want: `{out}/images.txt:1: invalid JSON: invalid character 'q' looking for beginning of value`,
		code: exitError,
	},
	{
		name: "diff/missing lock",
		args: []string{"diff", "{out}", "{out}/nope.json"},
		want: `lock file {out}/nope.json does not exist`,
		code: exitError,
	},
	{
		name: "diff/a release directory",
		args: []string{"diff", "{ref}/release-4.18", "{out}"},
		want: "{ref}/release-4.18 has no compose.lock.json: diff compares build outputs or their lock files (compare release directories with 'microshift-compose release diff')",
		code: exitError,
	},
	{
		name: "serve/not a layout",
		args: []string{"serve", "oci:{out}"},
		want: "oci:{out}: not an OCI image layout (no oci-layout in it)",
		code: exitError,
	},
	{
		name: "serve/a registry",
		args: []string{"serve", "docker://mirror.example.com:5000/microshift"},
		want: `"docker://mirror.example.com:5000/microshift": serve takes oci:DIR or oci-archive:FILE, an OCI layout or archive (what mirror --to writes)`,
		code: exitUsage,
	},
	{
		name: "serve/a certificate that does not parse",
		args: []string{"serve", "oci:{out}", "--tls-cert", "{out}/images.txt", "--tls-key", "{out}/images.txt"},
		want: "loading the TLS certificate {out}/images.txt and key {out}/images.txt: tls: failed to find any PEM data in certificate input",
		code: exitError,
	},
	{
		name: "serve/a certificate without its key",
		args: []string{"serve", "oci:{out}", "--tls-cert", "{out}/images.txt"},
		want: "--tls-cert and --tls-key go together: give both for HTTPS, or neither",
		code: exitUsage,
	},
	{
		name: "serve/htpasswd not bcrypt",
		args: []string{"serve", "oci:{out}", "--htpasswd", "{bad}/serve/htpasswd-md5"},
		want: `{bad}/serve/htpasswd-md5:2: user "edge": the hash is not bcrypt, the only kind the registry accepts (make it with htpasswd -B)`,
		code: exitError,
	},
	{
		name: "release import/no origin",
		args: []string{"release", "import", "{ref}/release-4.18"},
		want: `--origin is required: say where the files come from, e.g. --origin "openshift/microshift at <commit>"`,
		code: exitUsage,
	},
	{
		name: "release import/no data directory",
		args: []string{"release", "import", "{ref}/release-4.18", "--origin", "openshift/microshift at 8eb6c2962b3a", "--data-dir", "{bad}/nonexistent"},
		want: "release data directory {bad}/nonexistent does not exist (run in the microshift-compose source tree, or pass --data-dir)",
		code: exitError,
	},

	// The output directory itself.
	{
		name: "output/is a file",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--output", "{out}/images.txt"},
		want: `output {out}/images.txt exists and is not a directory`,
		code: exitError,
	},
	{
		name: "output/holds unrelated files",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--output", "{out}/config.d"},
		want: `output {out}/config.d: not a microshift-compose output directory: 10-microshift-compose.yaml is not something build writes, so replacing the directory would delete it; move it away, choose another --output, or pass --force`,
		code: exitError,
	},

	// mirror and footprint: flags are checked before any registry is reached.
	{
		name: "mirror/no --to",
		args: []string{"mirror", "--profile", "full"},
		want: `--to is required: oci:DIR, dir:DIR, oci-archive:FILE or docker://REGISTRY/PREFIX`,
		code: exitUsage,
	},
	{
		name: "mirror/bad --to",
		args: []string{"mirror", "--profile", "full", "--to", "docker-archive:{out}/images.tar"},
		want: `--to: invalid destination "docker-archive:{out}/images.tar": want oci:DIR (an OCI image layout), dir:DIR (a layout plus one dir: per image, for bootc), oci-archive:FILE (a layout in one tar file) or docker://REGISTRY/PREFIX (a registry)`,
		code: exitUsage,
	},
	{
		name: "mirror/registry without host",
		args: []string{"mirror", "--profile", "full", "--to", "docker://mirror/microshift"},
		want: `--to: invalid destination "docker://mirror/microshift": "mirror" is not a registry host (want a host name with a dot or a port, as in mirror.example.com:5000/microshift or localhost:5000)`,
		code: exitUsage,
	},
	{
		name: "mirror/no selection",
		args: []string{"mirror", "--to", "oci:{out}/images"},
		want: `--profile or --lock is required`,
		code: exitUsage,
	},
	{
		name: "mirror/--lock with selection flags",
		args: []string{"mirror", "--lock", "{out}/compose.lock.json", "--profile", "full", "--arch", "x86_64", "--to", "oci:{out}/images"},
		want: `--lock takes the selection from {out}/compose.lock.json; drop --profile, --arch`,
		code: exitUsage,
	},
	{
		name: "mirror/--jobs 0",
		args: []string{"mirror", "--profile", "full", "--jobs", "0", "--to", "oci:{out}/images"},
		want: `--jobs must be at least 1, got 0`,
		code: exitUsage,
	},
	{
		name: "mirror/missing lock",
		args: []string{"mirror", "--lock", "{out}/nope.json", "--to", "oci:{out}/images"},
		want: `lock file {out}/nope.json does not exist`,
		code: exitError,
	},
	{
		name: "mirror/lock is not a lock",
		args: []string{"mirror", "--lock", "{out}/images.txt", "--to", "oci:{out}/images"},
		want: `{out}/images.txt:1: invalid JSON: invalid character 'q' looking for beginning of value`,
		code: exitError,
	},
	{
		name: "mirror/into a directory that is not a layout",
		args: []string{"mirror", "--lock", "{out}/compose.lock.json", "--quiet", "--to", "oci:{out}/config.d"},
		want: `mirroring to oci:{out}/config.d: oci:{out}/config.d: not an OCI image layout (it has files but no oci-layout); choose an empty or new directory`,
		code: exitError,
	},
	{
		name: "mirror/--timeout 0",
		args: []string{"mirror", "--profile", "full", "--timeout", "0m", "--to", "oci:{out}/images"},
		want: `--timeout must be positive, got "0m"`,
		code: exitUsage,
	},
	{
		name: "mirror/missing --authfile",
		args: []string{"mirror", "--profile", "minimal", "--arch", "x86_64", "--authfile", "{out}/auth.json", "--to", "oci:{out}/images"},
		want: `--authfile {out}/auth.json: no such file or directory`,
		code: exitError,
	},
	{
		name: "mirror/broken registries.conf",
		args: []string{"mirror", "--profile", "minimal", "--arch", "x86_64", "--registries-conf", "{bad}/registry/registries-broken.conf", "--to", "oci:{out}/images"},
		want: `reading registries configuration: loading registries configuration "{bad}/registry/registries-broken.conf": toml: line 3 (last key "registry.mirror"): incompatible types: TOML value has type string; destination has type slice`,
		code: exitError,
	},
	{
		name: "mirror/missing registries.conf",
		args: []string{"mirror", "--profile", "minimal", "--arch", "x86_64", "--registries-conf", "{out}/registries.conf", "--to", "oci:{out}/images"},
		want: `--registries-conf {out}/registries.conf does not exist`,
		code: exitError,
	},
	{
		name: "mirror/missing --cert-dir",
		args: []string{"mirror", "--profile", "minimal", "--arch", "x86_64", "--cert-dir", "{out}/certs.d", "--to", "oci:{out}/images"},
		want: `--cert-dir {out}/certs.d: no such file or directory`,
		code: exitError,
	},
	{
		name: "mirror/--from a registry",
		args: []string{"mirror", "--from", "docker://quay.io/org", "--to", "oci:{out}/images"},
		want: `--from: invalid source "docker://quay.io/org": registries are read from the plan's references (--lock or --profile) without --from; --from takes oci:DIR or oci-archive:FILE`,
		code: exitUsage,
	},
	{
		name: "mirror/--from with selection flags but no plan",
		args: []string{"mirror", "--from", "oci:{out}/images", "--arch", "x86_64", "--to", "docker://mirror.example.com/ms"},
		want: `--arch selects a plan: add --profile (or --lock), or drop it to copy every image of oci:{out}/images`,
		code: exitUsage,
	},
	{
		name: "mirror/--from a missing layout",
		args: []string{"mirror", "--from", "oci:{out}/images", "--to", "docker://mirror.example.com/ms"},
		want: `opening oci:{out}/images: no such file or directory`,
		code: exitError,
	},
	{
		name: "mirror/--from a directory that is not a layout",
		args: []string{"mirror", "--from", "oci:{out}", "--to", "docker://mirror.example.com/ms"},
		want: `oci:{out}: not an OCI image layout (no oci-layout in it)`,
		code: exitError,
	},
	{
		name: "mirror/--from a file that is not an archive",
		args: []string{"mirror", "--from", "oci-archive:{bad}/registry/not-an-archive.tar", "--to", "docker://mirror.example.com/ms"},
		want: `reading oci-archive:{bad}/registry/not-an-archive.tar: not a tar archive: unexpected EOF`,
		code: exitError,
	},
	{
		name: "mirror/archive over another file",
		args: []string{"mirror", "--lock", "{out}/compose.lock.json", "--quiet", "--to", "oci-archive:{out}/images.txt"},
		want: `mirroring to oci-archive:{out}/images.txt: oci-archive:{out}/images.txt: not an OCI image archive (not a tar archive: archive/tar: invalid tar header); choose a new file name`,
		code: exitError,
	},
	{
		name: "mirror/archive that is a directory",
		args: []string{"mirror", "--profile", "full", "--to", "oci-archive:{out}/"},
		want: `--to: invalid destination "oci-archive:{out}/": oci-archive:FILE names a file, not a directory`,
		code: exitUsage,
	},
	{
		name: "footprint/missing --authfile",
		args: []string{"footprint", "--profile", "minimal", "--arch", "x86_64", "--authfile", "{out}/auth.json"},
		want: `--authfile {out}/auth.json: no such file or directory`,
		code: exitError,
	},
	{
		name: "release verify/missing --authfile",
		args: []string{"release", "verify", "{ref}/main", "--authfile", "{out}/auth.json"},
		want: `--authfile {out}/auth.json: no such file or directory`,
		code: exitError,
	},
	{
		name: "build/pull secret not JSON",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--pull-secret", "{bad}/registry/pull-secret-not-json.json"},
		want: `--pull-secret {bad}/registry/pull-secret-not-json.json: invalid pull secret: not valid JSON at line 2, column 1`,
		code: exitError,
	},
	{
		name: "build/pull secret with a credential helper",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--pull-secret", "{bad}/registry/pull-secret-helper.json"},
		want: `--pull-secret {bad}/registry/pull-secret-helper.json: invalid pull secret: it names credential helpers (credHelpers, credsStore), which CRI-O on the device cannot run; export the credentials into "auths" (podman login --authfile FILE)`,
		code: exitError,
	},
	{
		name: "build/pull secret without credentials",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--pull-secret", "{bad}/registry/pull-secret-empty.json"},
		want: `--pull-secret {bad}/registry/pull-secret-empty.json: invalid pull secret: it has no credentials (want "auths" with an entry per registry, as podman login writes)`,
		code: exitError,
	},
	{
		name: "build/missing pull secret",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--pull-secret", "{out}/pull-secret.json"},
		want: `--pull-secret: pull secret {out}/pull-secret.json does not exist`,
		code: exitError,
	},
	{
		name: "build/mirror registry without host",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--mirror-registry", "mirror/ms"},
		want: `--mirror-registry "mirror/ms": "mirror" is not a registry host (want a host name with a dot or a port, as in mirror.example.com:5000/microshift or localhost:5000)`,
		code: exitError,
	},
	{
		name: "build/mirror CA with a private key",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--mirror-registry", "mirror.example.com/ms", "--mirror-ca", "{bad}/registry/ca-with-key.pem"},
		want: `--mirror-ca {bad}/registry/ca-with-key.pem: it holds a private key, which must not go to the device; give the CA certificate only`,
		code: exitError,
	},
	{
		name: "build/mirror CA without a mirror",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--mirror-ca", "{bad}/registry/ca-with-key.pem"},
		want: `--mirror-ca and --mirror-insecure configure the mirror registry: add --mirror-registry`,
		code: exitUsage,
	},
	{
		name: "build/--bootc-images without --bootc",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--bootc-images", "pull"},
		want: `--bootc-images chooses how the bootc Containerfile gets the images; add --bootc`,
		code: exitUsage,
	},
	{
		name: "build/unknown --bootc-images",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--bootc", "--bootc-images", "fetch"},
		want: `--bootc-images: unknown mode "fetch" (want mirror or pull)`,
		code: exitUsage,
	},
	{
		name: "build/-o json is no format",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "-o", "json"},
		want: `--output json: build's -o/--output is the output directory, not a format; for the summary as JSON use --format json (to write into a directory named json, pass --output ./json)`,
		code: exitUsage,
	},
	{
		name: "build/unknown --format",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--format", "yaml"},
		want: `--format: unknown format "yaml" (want text or json)`,
		code: exitUsage,
	},
	{
		name: "build/unknown output placeholder",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "out/{hash}"},
		want: `--output out/{hash}: unknown placeholder in "{hash}" (have {id}, {profile}, {arch}, {release})`,
		code: exitUsage,
	},
	{
		name: "build/.. after an output placeholder",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "out/{id}/../.."},
		want: `--output out/{id}/../..: ".." after a placeholder steps out of the directory it names`,
		code: exitUsage,
	},
	{
		name: "build/--strict-release refuses a newer release",
		args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--release-dir", "{bad}/releases/newer-5.2", "--strict-release", "--output", "{out}"},
		want: `release 5.2 ({bad}/releases/newer-5.2): release is newer than the releases microshift-compose knows (the newest is 5.1; --strict-release refuses it, without it 5.1's rules are applied with a warning; 'make knowledge' refreshes the knowledge)`,
		code: exitError,
	},
	{
		name: "matrix/unknown profile in the list",
		args: []string{"matrix", "--profile", "minimal,ful", "--arch", "x86_64", "--release", "5.0", "--output", "{out}"},
		want: `--profile: unknown profile "ful"; did you mean "full"?`,
		code: exitUsage,
	},
	{
		name: "matrix/empty profile list",
		args: []string{"matrix", "--profile", "", "--arch", "x86_64", "--release", "5.0", "--output", "{out}"},
		want: `--profile: no profile given (a comma-separated list, e.g. minimal,full)`,
		code: exitUsage,
	},
	{
		name: "matrix/empty value in a list",
		args: []string{"matrix", "--profile", "full,", "--arch", "x86_64", "--release", "5.0", "--output", "{out}"},
		want: `--profile: empty value in the list`,
		code: exitUsage,
	},
	{
		name: "matrix/duplicate cells",
		args: []string{"matrix", "--profile", "full", "--arch", "x86_64,amd64", "--release", "5.0", "--output", "{out}"},
		want: `duplicate cell 5.0-full-x86_64: --profile or --arch names it twice`,
		code: exitUsage,
	},
	{
		name: "matrix/two releases select one",
		args: []string{"matrix", "--profile", "full", "--arch", "x86_64", "--release", "5.1,>=4.22", "--output", "{out}"},
		want: `duplicate cell 5.1-full-x86_64: --release 5.1 and --release >=4.22 select release 5.1`,
		code: exitUsage,
	},
	{
		name: "matrix/--jobs 0",
		args: []string{"matrix", "--profile", "full", "--arch", "x86_64", "--release", "5.0", "--output", "{out}", "--jobs", "0"},
		want: `--jobs must be 1 or more, got 0`,
		code: exitUsage,
	},
	{
		name: "matrix/--jobs negative",
		args: []string{"matrix", "--profile", "full", "--arch", "x86_64", "--release", "5.0", "--output", "{out}", "--jobs", "-2"},
		want: `--jobs must be 1 or more, got -2`,
		code: exitUsage,
	},
	{
		name: "matrix/--output with a placeholder",
		args: []string{"matrix", "--profile", "full", "--arch", "x86_64", "--release", "5.0", "--output", "../{id}"},
		want: `--output ../{id}: matrix names each cell's directory itself (DIR/<release>-<profile>-<arch>/); it takes no placeholders`,
		code: exitUsage,
	},
	{
		name: "matrix/no output",
		args: []string{"matrix", "--profile", "full", "--arch", "x86_64", "--release", "5.0"},
		want: `--output DIR is required (or --emit github-workflow|github|tekton to describe the cells instead)`,
		code: exitUsage,
	},
	{
		name: "matrix/unknown emit",
		args: []string{"matrix", "--profile", "full", "--arch", "x86_64", "--release", "5.0", "--emit", "jenkins"},
		want: `--emit: unknown format "jenkins" (want github-workflow, github or tekton)`,
		code: exitUsage,
	},
	{
		name: "matrix/tekton without runner image",
		args: []string{"matrix", "--profile", "full", "--arch", "x86_64", "--release", "5.0", "--emit", "tekton"},
		want: `--emit tekton needs --runner-image IMAGE: the container image holding microshift-compose the tasks run (the release's, or one 'make image' builds)`,
		code: exitUsage,
	},
	{
		name: "matrix/emit with a local file",
		args: []string{"matrix", "--profile", "full", "--arch", "x86_64", "--release", "5.0", "--emit", "github", "--config", "{bad}/configs/invalid-yaml.yaml"},
		want: `--emit github: --config names a file on this machine, which the engine's jobs do not have; describe the matrix without it`,
		code: exitUsage,
	},
	{
		name: "build/--expect-id not an ID",
		args: []string{"build", "--profile", "full", "--arch", "x86_64", "--release", "5.0", "--output", "{out}", "--expect-id", "8b7fa43a48ef"},
		want: `--expect-id "8b7fa43a48ef" is not a composition ID (64 lowercase hex digits, the lock's "id")`,
		code: exitUsage,
	},
	{
		name: "matrix/release matching nothing",
		args: []string{"matrix", "--profile", "full", "--arch", "x86_64", "--release", "4.13", "--output", "{out}"},
		want: `--release 4.13: selecting embedded release: no release matches "4.13" (have 4.14, 4.15, 4.16, 4.17, 4.18, 4.19, 4.20, 4.21, 4.22, 5.0, 5.1); for a release this binary does not embed (a shipped z-stream such as 4.18.7), fetch its release-info RPMs with 'microshift-compose release fetch VERSION --repo URL' (or 'release import FILE.rpm'), or give its release files with --release-dir DIR (what its microshift-release-info RPM installs in /usr/share/microshift/release)`,
		code: exitError,
	},
	{
		name: "footprint/no profile",
		args: []string{"footprint", "--arch", "x86_64"},
		want: `--profile or --lock is required (repeat --profile to compare profiles)`,
		code: exitUsage,
	},
	{
		name: "footprint/unknown profile",
		args: []string{"footprint", "--profile", "minimal", "--profile", "ful"},
		want: `unknown profile "ful"; did you mean "full"?`,
		code: exitError,
	},
	{
		name: "footprint/bad output",
		args: []string{"footprint", "--profile", "full", "--output", "yaml"},
		want: `--output: unknown format "yaml" (want text or json)`,
		code: exitUsage,
	},
}

// rhel96AArch64ImageTypes is what osbuild/images offers for rhel-9.6 on
// aarch64, as the unknown-image-type message lists it.
const rhel96AArch64ImageTypes = "ami, azure-rhui, ec2, edge-ami, edge-commit, edge-container, edge-installer, edge-raw-image, edge-simplified-installer, edge-vsphere, image-installer, minimal-raw, network-installer, openstack, pxe-tar-xz, qcow2, tar, vagrant-libvirt, vhd, wsl"

// TestBadInput runs every bad command line in-process and checks that it
// fails with the documented exit code and exactly one line on stderr, prints
// nothing else, and leaves a previous build untouched.
func TestBadInput(t *testing.T) {
	if len(badInputs) < 30 {
		t.Fatalf("only %d bad-input cases; the issue asks for at least 30", len(badInputs))
	}
	bad := filepath.Join(root(t), "testdata", "bad")
	ref := testutil.Shared(t, "reference", "microshift-release")
	seen := map[string]bool{}
	for _, tc := range badInputs {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "out")
			expand := strings.NewReplacer("{bad}", bad, "{rebase}", filepath.Join(root(t), "testdata", "rebase"), "{ref}", ref, "{out}", out).Replace
			usesOut := false
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				usesOut = usesOut || strings.Contains(a, "{out}")
				args[i] = expand(a)
			}
			var before map[string]string
			if usesOut {
				mustRun(t, "build", "--profile", "networking-only", "--arch", "x86_64", "--output", out)
				before = snapshot(t, out)
				if _, ok := before["compose.lock.json"]; !ok {
					t.Fatalf("previous build wrote no compose.lock.json: %v", before)
				}
			}

			stdout, stderr, code := runCLI(t, args...)

			if want := "error: " + expand(tc.want) + "\n"; stderr != want {
				t.Errorf("run(%q) stderr:\n  got  %q\n  want %q", args, stderr, want)
			}
			if code != tc.code {
				t.Errorf("run(%q) = exit %d, want %d", args, code, tc.code)
			}
			if want := expand(tc.stdout); stdout != want {
				t.Errorf("run(%q) stdout = %q, want %q", args, stdout, want)
			}
			checkOneLineError(t, stderr)
			if usesOut {
				if d := diffSnapshots(before, snapshot(t, out)); d != "" {
					t.Errorf("run(%q) changed the previous output: %s", args, d)
				}
				if l := leftovers(t, parent, out); len(l) > 0 {
					t.Errorf("run(%q) left temporary directories: %v", args, l)
				}
			}
		})
	}
}

// checkOneLineError asserts stderr is a single "error: " line with no cobra
// usage text and no sign of a Go panic.
func checkOneLineError(t *testing.T, stderr string) {
	t.Helper()
	if !strings.HasPrefix(stderr, "error: ") || !strings.HasSuffix(stderr, "\n") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr is not one \"error: \" line: %q", stderr)
	}
	for _, bad := range []string{"Usage:", "panic", "goroutine", "Did you mean this?"} {
		if strings.Contains(stderr, bad) {
			t.Errorf("stderr contains %q: %q", bad, stderr)
		}
	}
}

// TestBadInputFixturesExist guards against a renamed fixture turning a case
// into a "no such file" case by accident.
func TestBadInputFixturesExist(t *testing.T) {
	bad := filepath.Join(root(t), "testdata", "bad")
	used := map[string]bool{}
	for _, tc := range badInputs {
		for _, a := range tc.args {
			// Flag values such as --payload x86_64={bad}/... name fixtures too.
			_, rest, ok := strings.Cut(a, "{bad}/")
			if ok && !strings.Contains(rest, "nonexistent") && !strings.Contains(rest, "missing.yaml") {
				used[rest] = true
				if _, err := os.Stat(filepath.Join(bad, rest)); err != nil {
					t.Errorf("case %q: fixture %s: %v", tc.name, rest, err)
				}
			}
		}
	}
	for _, kind := range []string{"catalogs", "releases", "configs", "payloads", "csvs", "locks", "registry", "serve"} {
		entries, err := os.ReadDir(filepath.Join(bad, kind))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !used[kind+"/"+e.Name()] {
				t.Errorf("fixture testdata/bad/%s/%s is not used by any case", kind, e.Name())
			}
		}
	}
}
