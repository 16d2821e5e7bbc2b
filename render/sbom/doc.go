// Package sbom renders a Plan as an SPDX 2.3 JSON document (sbom.spdx.json):
// the composition as the described package, each selected component, each
// RPM requested with its version constraint, each container image with its
// digest as a checksum and a pkg:oci purl, each Helm chart with its sha256,
// and the relationships between them (composition CONTAINS component,
// component DEPENDS_ON RPM, image and chart).
//
// The document model and its JSON writer are spdx/tools-golang's. The bytes
// are a function of the plan, the lock and Options alone: no clock, no
// random namespace. It does not resolve, validate blueprints or write files.
package sbom
