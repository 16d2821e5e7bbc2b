package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/safetext"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases/rpmrepo"
	"github.com/microshift-compose/microshift-compose/render/registry"
)

// deviceOptions are how the device pulls its images: the pull secret and
// the mirror registry build writes device files for.
type deviceOptions struct {
	PullSecret     string
	Mirror         string
	MirrorCA       string
	MirrorInsecure bool
}

func (o *deviceOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.PullSecret, "pull-secret", "", "auth file (podman login's, or console.redhat.com's pull secret) to place at "+registry.PullSecretPath+" (0600), where CRI-O reads it; only the blueprint holds its content")
	f.StringVar(&o.Mirror, "mirror-registry", "", "REGISTRY[/PREFIX] the device pulls the images from first: writes "+registry.MirrorConfPath+" mapping every source registry of the plan to it, as 'mirror --to docker://REGISTRY/PREFIX' fills it")
	f.StringVar(&o.MirrorCA, "mirror-ca", "", "PEM CA certificate of the mirror registry, placed at /etc/containers/certs.d/REGISTRY/ca.crt")
	f.BoolVar(&o.MirrorInsecure, "mirror-insecure", false, "let the device reach the mirror registry over plain HTTP or without verifying its certificate")
}

// Validate checks flag combinations; the files are read by apply.
func (o *deviceOptions) Validate() error {
	if o.Mirror == "" && (o.MirrorCA != "" || o.MirrorInsecure) {
		return usageError{fmt.Errorf("--mirror-ca and --mirror-insecure configure the mirror registry: add --mirror-registry")}
	}
	return nil
}

// apply adds the device files to the plan and records the warnings in it
// (the lock, build's summary and stderr show them); osImage is the bootc
// image the device updates from (or "").
func (o *deviceOptions) apply(p *plan.Plan, osImage string) error {
	warnings, err := registry.Add(p, registry.Options{PullSecret: o.PullSecret, Mirror: o.Mirror, MirrorCA: o.MirrorCA, MirrorInsecure: o.MirrorInsecure, OSImage: osImage})
	if err != nil {
		return err
	}
	p.Warnings = append(p.Warnings, warnings...)
	return nil
}

// bootcOptions is --bootc and how its Containerfile gets the images.
type bootcOptions struct {
	Enabled bool
	Images  string
	// Base overrides the bootc base image of the plan's distro.
	Base string
	// RepoFiles are .repo files whose repositories the Containerfile
	// enables for its dnf step (microshift-io's RPMs).
	RepoFiles []string
}

func (o *bootcOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&o.Enabled, "bootc", false, "also write a Containerfile that builds the composition as a bootc image")
	f.StringVar(&o.Base, "bootc-base", "", "bootc base image of the Containerfile (default: the one of the distro the release is built for, e.g. registry.redhat.io/rhel9/rhel-bootc:9.8 for 5.0)")
	f.StringVar(&o.Images, "bootc-images", blueprints.BootcImagesMirror, "how the Containerfile gets the images: mirror (copied from the dir: layout 'mirror --to dir:OUTPUT/images' writes) or pull (pulled during the image build with the build secret "+blueprints.BootcSecretID+")")
	f.StringArrayVar(&o.RepoFiles, "repo-file", nil, "a .repo file whose enabled repositories the Containerfile enables for its dnf install (http(s), no credentials; $basearch and $releasever are the plan's): the repository of microshift-io's RPMs, which no bootc base has; repeat")
	_ = cmd.MarkFlagFilename("repo-file", "repo")
}

// repoFiles reads the --repo-file files.
func (o *bootcOptions) repoFiles() ([]compose.RepoFile, error) {
	var out []compose.RepoFile
	for _, f := range o.RepoFiles {
		data, err := inputfile.Read("--repo-file", f, rpmrepo.MaxRepoFileSize)
		if err != nil {
			return nil, err
		}
		out = append(out, compose.RepoFile{Source: f, Data: data})
	}
	return out, nil
}

func (o *bootcOptions) Validate(cmd *cobra.Command) error {
	if o.Images != blueprints.BootcImagesMirror && o.Images != blueprints.BootcImagesPull {
		return usageError{fmt.Errorf("--bootc-images: unknown mode %q (want mirror or pull)", o.Images)}
	}
	if cmd.Flags().Changed("bootc-images") && !o.Enabled {
		return usageError{fmt.Errorf("--bootc-images chooses how the bootc Containerfile gets the images; add --bootc")}
	}
	if o.Base != "" {
		if !o.Enabled {
			return usageError{fmt.Errorf("--bootc-base chooses the bootc Containerfile's base image; add --bootc")}
		}
		if safetext.RegistryCredentials(o.Base) {
			return usageError{fmt.Errorf("--bootc-base holds credentials (user:password@ before the registry), which the Containerfile and compose.lock.json would carry: name the image without them and log in to its registry (podman login) for the image build")}
		}
		if err := checkImageFlag("--bootc-base", o.Base); err != nil {
			return err
		}
	}
	return nil
}
