package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
)

// HasSecret reports whether the plan places a secret on the device.
func (p *Plan) HasSecret() bool {
	return slices.ContainsFunc(p.Files, func(f File) bool { return f.Secret })
}

// AddFiles adds files a renderer places (MicroShift's config, the
// greenboot check, --cis's unit) to the plan's device files, in path order,
// with their digests and sizes. A path the plan has already is refused,
// naming both.
func (p *Plan) AddFiles(files ...File) error {
	for _, f := range files {
		if g := p.File(f.Path); g != nil {
			return fmt.Errorf("%s and %s both place %s on the device", g.owner(), f.owner(), f.Path)
		}
	}
	p.addFiles(files)
	return nil
}

// AddDeviceFiles adds files the build's options place (registry access,
// trust, CA anchors) to the plan's device files, in path order, and
// refuses two at one path. The files join the plan's composition ID (a
// secret by its path alone: the ID is no fingerprint of a credential).
func (p *Plan) AddDeviceFiles(files []File) error {
	for _, f := range files {
		if g := p.File(f.Path); g != nil {
			owner := g.Component
			if owner == "" {
				owner = g.Source
			}
			return fmt.Errorf("%s places %s on the device, which %s places too", f.Source, f.Path, owner)
		}
	}
	p.addFiles(files)
	return p.SetInput("device_files", idFiles(p.Files))
}

// addFiles records the files' sizes and digests (none for a secret) and
// merges them into the plan's, sorted by path.
func (p *Plan) addFiles(files []File) {
	files = slices.Clone(files)
	for i := range files {
		f := &files[i]
		f.Size = len(f.Data)
		if !f.Secret {
			sum := sha256.Sum256(f.Data)
			f.SHA256 = hex.EncodeToString(sum[:])
		}
	}
	all := append(slices.Clone(p.Files), files...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].Path < all[j].Path })
	p.Files = all
}

// owner names who places a file, for messages.
func (f File) owner() string {
	switch {
	case f.Component != "":
		return fmt.Sprintf("component %q", f.Component)
	case f.Source != "":
		return f.Source
	}
	return "microshift-compose"
}

// idFile is a device file as the composition ID sees it.
type idFile struct {
	Path   string `json:"path"`
	Mode   string `json:"mode"`
	SHA256 string `json:"sha256,omitempty"`
	Secret bool   `json:"secret,omitempty"`
}

func idFiles(files []File) []idFile {
	out := make([]idFile, len(files))
	for i, f := range files {
		out[i] = idFile{Path: f.Path, Mode: f.Mode, SHA256: f.SHA256, Secret: f.Secret}
	}
	return out
}

// File returns the device file at path, or nil.
func (p *Plan) File(path string) *File {
	for i := range p.Files {
		if p.Files[i].Path == path {
			return &p.Files[i]
		}
	}
	return nil
}
