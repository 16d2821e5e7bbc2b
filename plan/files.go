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

// AddDeviceFiles adds files the build's options place (registry access,
// trust, CA anchors) to the plan's device files, sorted by path, and
// refuses two at one path. The files join the plan's composition ID (a
// secret by its path alone: the ID is no fingerprint of a credential).
func (p *Plan) AddDeviceFiles(files []File) error {
	for i := range files {
		f := &files[i]
		f.Size = len(f.Data)
		if !f.Secret {
			sum := sha256.Sum256(f.Data)
			f.SHA256 = hex.EncodeToString(sum[:])
		}
		for _, g := range p.Files {
			if g.Path == f.Path {
				owner := g.Component
				if owner == "" {
					owner = g.Source
				}
				return fmt.Errorf("%s places %s on the device, which %s places too", f.Source, f.Path, owner)
			}
		}
	}
	all := append(slices.Clone(p.Files), files...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].Path < all[j].Path })
	p.Files = all
	return p.SetInput("device_files", idFiles(p.Files))
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
