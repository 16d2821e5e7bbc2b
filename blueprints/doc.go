// Package blueprints turns a Plan into an osbuild blueprint (built with the
// osbuild/blueprint types, encoded with BurntSushi/toml) and validates it
// against a distro and image type with osbuild/images, the same code
// image-builder and osbuild-composer run. It does not resolve plans or
// write files.
package blueprints
