package main

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

func newReleaseCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "release",
		Short: "Inspect, update, verify, diff, import and fetch MicroShift release files",
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(
		newReleaseListCmd(),
		newReleaseUpdateCmd(),
		newReleaseVerifyCmd(),
		newReleaseDiffCmd(),
		newReleaseImportCmd(),
		newReleaseFetchCmd(),
	)
	return cmd
}

type releaseJSON struct {
	Stream  string `json:"stream"`
	Version string `json:"version"`
	Source  string `json:"source"`
	Origin  string `json:"origin,omitempty"`
	// Development marks an embedded stream of upstream's development
	// branch (main): built with --release only, never by default.
	Development bool `json:"development,omitempty"`
	// RPMs are the release-info RPMs a fetched release came from.
	RPMs []releases.RPM `json:"rpms,omitempty"`
	// Build is the build of MicroShift the release is: "redhat" or
	// "microshift-io"; OKD the OKD release a microshift-io build's images
	// come from, when its RPMs were recorded.
	Build string `json:"build"`
	OKD   string `json:"okd,omitempty"`
	// Resolved are the tags release fetch resolved to digests.
	Resolved map[string]string `json:"resolved,omitempty"`
	Bases    map[string]string `json:"bases"`
	Files    []string          `json:"files"`
	// From the release knowledge: the Kubernetes it is built on, the
	// distro blueprints are validated for, and where a plan's config goes.
	Kubernetes string `json:"kubernetes"`
	Distro     string `json:"distro"`
	// Distros are every distro the release is built for, the default
	// first, with their bootc base images.
	Distros    []distroJSON `json:"distros"`
	ConfigFile string       `json:"config_file"`
	// Kind says what the x86_64 (else aarch64) base names: shipped,
	// nightly, candidate, pre-release; only a shipped one pins the RPMs to
	// the exact version of the images.
	Kind string `json:"kind"`
}

type distroJSON struct {
	Name    string `json:"name"`
	Default bool   `json:"default"`
	// OSBuild is osbuild's name for it when it is not Name.
	OSBuild   string `json:"osbuild,omitempty"`
	ImageType string `json:"image_type,omitempty"`
	BootcBase string `json:"bootc_base,omitempty"`
}

func newReleaseListCmd() *cobra.Command {
	var (
		rel    releaseOptions
		format formatOptions
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the embedded and fetched releases (or the one in --release-dir)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := format.Validate(); err != nil {
				return err
			}
			var rels []*releases.Release
			var err error
			if rel.Dir == "" && rel.Constraint == "" {
				if rels, err = releases.Embedded(); err == nil {
					var fetched []*releases.Release
					fetched, err = releases.Fetched()
					rels = append(rels, fetched...)
					// A fetched 4.18.7 above the embedded 4.18 nightly.
					sort.SliceStable(rels, func(i, j int) bool { return rels[i].Version.GreaterThan(rels[j].Version) })
				}
			} else {
				var r *releases.Release
				r, err = rel.load()
				rels = []*releases.Release{r}
			}
			if err != nil {
				return err
			}
			know, err := knowledge.Default()
			if err != nil {
				return err
			}
			list := []releaseJSON{}
			for _, r := range rels {
				j := releaseJSON{Stream: r.Stream(), Version: r.Version.String(), Source: r.Source, Origin: r.Origin, Development: r.Development, RPMs: r.RPMs,
					Build: r.Build, Resolved: r.Resolved, Bases: map[string]string{}, Files: []string{}}
				if r.MicroShiftIO != nil {
					j.OKD = r.MicroShiftIO.OKD
				}
				facts, err := know.ForBuild(r.Version, r.Build)
				if err != nil {
					return fmt.Errorf("release %s: %w", r, err)
				}
				j.Kubernetes, j.Distro, j.ConfigFile = facts.Kubernetes, facts.Distro, facts.ConfigFile
				for _, d := range facts.Distros {
					j.Distros = append(j.Distros, distroJSON{Name: d.Name, Default: d.Default, OSBuild: d.OSBuild, ImageType: d.ImageType, BootcBase: d.BootcBase})
				}
				for _, a := range r.Arches() {
					j.Bases[string(a)] = r.Base(a)
					if j.Kind == "" {
						j.Kind = releases.BaseKind(r.Base(a))
					}
				}
				for _, f := range r.Files() {
					j.Files = append(j.Files, f.Name)
				}
				list = append(list, j)
			}
			if format.json() {
				return printJSON(cmd.OutOrStdout(), list)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "STREAM\tVERSION\tBUILD\tKIND\tKUBERNETES\tDISTROS\tCONFIG\tARCHES\tFILES\tSOURCE")
			for _, j := range list {
				var arches []string
				for _, a := range releases.Arches {
					if _, ok := j.Bases[string(a)]; ok {
						arches = append(arches, string(a))
					}
				}
				src := j.Source
				if j.Development {
					src += " (development, --release " + j.Stream + ")"
				}
				if j.Origin != "" {
					src += ": " + j.Origin
				}
				config := "config.yaml"
				if strings.HasPrefix(j.ConfigFile, "/etc/microshift/config.d/") {
					config = "config.d"
				}
				var distros []string
				for _, d := range j.Distros {
					n := d.Name
					if d.ImageType == "" {
						n += " (bootc)"
					}
					distros = append(distros, n)
				}
				build := j.Build
				if j.OKD != "" {
					build += " (OKD " + j.OKD + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", j.Stream, j.Version, build, j.Kind, cmp.Or(j.Kubernetes, "-"), strings.Join(distros, ","), config, strings.Join(arches, ","), len(j.Files), src)
			}
			return tw.Flush()
		},
	}
	rel.addFlags(cmd)
	format.addFlags(cmd)
	return cmd
}
