package blueprints

import (
	"github.com/osbuild/blueprint/pkg/blueprint"

	"github.com/microshift-compose/microshift-compose/releases"
)

// Validate generates the osbuild manifest for bp without resolving
// packages or containers (that needs the network), which runs osbuild's
// blueprint checks for the image type: allowed customizations, paths that
// custom files may not use (/usr on ostree images), and so on. It returns
// osbuild's warnings. Parts of bp the image type would drop are refused
// (ValidateImage).
func Validate(bp *blueprint.Blueprint, distroName, imageType string, arch releases.Arch) ([]string, error) {
	return ValidateImage(bp, distroName, imageType, arch, nil)
}
