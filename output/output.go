// Package output is the contract of a build's output directory: the names
// of its files and directories (part of the product contract), where a
// device file goes in it, and the output in memory (Dir) that build
// renders, provenance signs and write puts on disk.
//
// It holds names and plain data only: it renders, resolves and writes
// nothing.
package output

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strings"

	"github.com/microshift-compose/microshift-compose/plan"
)

// Output file names: part of the product contract.
const (
	BlueprintFile = "blueprint.toml"
	ImagesFile    = "images.txt"
	LockFile      = "compose.lock.json"
	ConfigDir     = "config.d"
	// ManifestsDir holds the rendered manifests.d/NNN-<name>/ directories.
	ManifestsDir = "manifests.d"
	// Containerfile is the bootc image build (build --bootc).
	Containerfile = "Containerfile"
	// FilesDir holds every other device file at its device path, so a
	// Containerfile or a review can pick them up.
	FilesDir = "files"
	// SBOMFile is the plan's SPDX 2.3 software bill of materials.
	SBOMFile = "sbom.spdx.json"
	// CycloneDXFile is the plan's CycloneDX 1.6 SBOM (--sbom-format
	// cyclonedx), named as CycloneDX recommends (*.cdx.json).
	CycloneDXFile = "sbom.cdx.json"
	// StatementFile is the DSSE-signed in-toto statement of the output
	// (build --sign-key): one envelope on one line, the in-toto bundle
	// format, which cosign verify-blob-attestation reads as --signature.
	StatementFile = "compose.intoto.jsonl"
	// ChartsDir holds the plan's chart archives.
	ChartsDir = "charts"
	// ImagesDir is the subdirectory that `mirror --to oci:<output>/images`
	// fills and the bootc Containerfile copies; build keeps it across
	// rebuilds.
	ImagesDir = "images"
	// OperatorsDir holds what build writes for the plan's operator set:
	// OperatorCatalogLayout, the OCI layout of its filtered catalog image,
	// which mirror reads.
	OperatorsDir          = "operators"
	OperatorCatalogLayout = OperatorsDir + "/catalog"
	// Installer outputs (build --kickstart, --bib, an --image-type that
	// installs an ostree commit).
	KickstartFile          = "microshift.ks"
	BIBConfigFile          = "config.toml"
	InstallerBlueprintFile = "installer.toml"
)

// BootcImagesPath is where the bootc Containerfile stores the plan's images
// in the image (one skopeo dir: directory each), which its loader copies
// from: the device's trust policy accepts the dir: transport there. Under
// /usr, so that they are part of the image's read-only content.
const BootcImagesPath = "/usr/lib/microshift-compose/images"

// ManifestsDevicePath is where MicroShift reads prerendered kustomizations
// on the device (one of its default manifests.kustomizePaths).
const ManifestsDevicePath = "/etc/microshift/manifests.d/"

// deviceDirs map directories on the device to directories of the output:
// the contract names config.d/ at the top of the output.
var deviceDirs = []struct{ device, output string }{
	{"/etc/microshift/config.d/", ConfigDir + "/"},
	{ManifestsDevicePath, ManifestsDir + "/"},
}

// Path is where a device file is written in the output directory: config
// drop-ins under config.d/, rendered manifests under manifests.d/,
// everything else under files/ at its device path. A Containerfile copies
// them back with the same mapping.
func Path(devicePath string) string {
	for _, d := range deviceDirs {
		if rest, ok := strings.CutPrefix(devicePath, d.device); ok {
			return d.output + rest
		}
	}
	return FilesDir + devicePath
}

// File is one file of the output directory.
type File struct {
	// Path is relative to the output directory, slash-separated.
	Path string
	Data []byte
	// Open streams a file too large to hold (a layer of the filtered
	// operator catalog, copied from the catalog image) instead of Data,
	// which is then nil; SHA256 (hex) and Size are its content's, which
	// the writer checks as it copies.
	Open   func() (io.ReadCloser, error)
	SHA256 string
	Size   int64
	// Private files (a blueprint holding the pull secret) are written
	// 0600, the others 0644.
	Private bool
}

// Digest is the file's sha256 (hex) and size.
func (f File) Digest() (string, int64) {
	if f.Open != nil {
		return f.SHA256, f.Size
	}
	sum := sha256.Sum256(f.Data)
	return hex.EncodeToString(sum[:]), int64(len(f.Data))
}

// Dir is everything a build writes, in memory, in a stable order.
type Dir struct {
	Plan  *plan.Plan
	Files []File
	// Warnings are osbuild's, for the log.
	Warnings []string
}

// File returns the output file at path, or nil.
func (d *Dir) File(path string) *File {
	for i := range d.Files {
		if d.Files[i].Path == path {
			return &d.Files[i]
		}
	}
	return nil
}
