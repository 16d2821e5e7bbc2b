package main

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// flagCompletions complete flag values by flag name, the same for every
// command that has the flag: the option structs bind the same names
// everywhere. Each reads the other flags already on the command line
// (--catalog, --release, --release-dir, --distro, --arch), so that the
// values offered are the ones the command would accept.
var flagCompletions = map[string]cobra.CompletionFunc{
	"profile":    completeProfiles,
	"with":       completeComponents,
	"without":    completeComponents,
	"arch":       completeArches,
	"release":    completeReleases,
	"distro":     completeDistros,
	"image-type": completeImageTypes,
}

// registerCompletions registers flagCompletions on every command (c and
// its subcommands) that has one of the flags.
func registerCompletions(c *cobra.Command) {
	for _, name := range slices.Sorted(maps.Keys(flagCompletions)) {
		if c.Flags().Lookup(name) != nil {
			// Only fails for an unknown or already registered flag.
			_ = c.RegisterFlagCompletionFunc(name, flagCompletions[name])
		}
	}
	for _, sub := range c.Commands() {
		registerCompletions(sub)
	}
}

// flagValue is the value given to another flag of the command, "" when
// the command has no such flag.
func flagValue(cmd *cobra.Command, name string) string {
	if f := cmd.Flags().Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// listItem completes the last item of a comma-separated list flag
// (--with a,b): the candidates are offered after the items already given,
// leaving out those.
func listItem(toComplete string, candidates []string) ([]string, cobra.ShellCompDirective) {
	var given []string
	prefix := ""
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		prefix = toComplete[:i+1]
		given = strings.Split(toComplete[:i], ",")
	}
	var out []string
	for _, c := range candidates {
		name, _, _ := strings.Cut(c, "\t")
		if !slices.Contains(given, name) {
			out = append(out, prefix+c)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

func loadCatalog(cmd *cobra.Command) (*components.Catalog, error) {
	return components.Load(flagValue(cmd, "catalog"))
}

func completeProfiles(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	cat, err := loadCatalog(cmd)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []string
	for _, n := range cat.ProfileNames() {
		out = append(out, n+"\t"+cat.Profiles[n].Description)
	}
	return listItem(toComplete, out)
}

func completeComponents(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	cat, err := loadCatalog(cmd)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []string
	for _, n := range cat.ComponentNames() {
		out = append(out, n+"\t"+cat.Components[n].Description)
	}
	return listItem(toComplete, out)
}

func completeArches(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return listItem(toComplete, []string{string(releases.X86_64), string(releases.AArch64)})
}

func completeReleases(_ *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	rels, err := releases.Embedded()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []string
	// Fetched releases first, by their exact version (the one --release
	// finds them by), newest first.
	if fetched, err := releases.Fetched(); err == nil {
		for _, r := range fetched {
			out = append(out, r.Version.String()+"\tMicroShift "+r.Version.String()+" (fetched: "+r.Origin+")")
		}
	}
	for _, r := range rels {
		out = append(out, r.Stream()+"\tMicroShift "+r.Version.String()+" (embedded)")
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// releaseFacts are the release knowledge of the release the command line
// selects (--release, --release-dir; default the newest embedded).
func releaseFacts(cmd *cobra.Command) (*knowledge.Release, error) {
	rel, err := releases.Load(flagValue(cmd, "release-dir"), flagValue(cmd, "release"))
	if err != nil {
		return nil, err
	}
	know, err := knowledge.Default()
	if err != nil {
		return nil, err
	}
	return know.For(rel.Version)
}

func completeDistros(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	facts, err := releaseFacts(cmd)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []string
	for _, d := range facts.Distros {
		desc := "MicroShift " + facts.Stream() + " on " + d.Name
		if d.Default {
			desc += " (default)"
		}
		if d.ImageType == "" {
			desc += ", image mode (bootc) only"
		}
		out = append(out, d.Name+"\t"+desc)
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// completeImageTypes offers osbuild's image types for the --distro (default
// the release's) and --arch (default this machine's).
func completeImageTypes(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	distro := flagValue(cmd, "distro")
	if distro == "" {
		facts, err := releaseFacts(cmd)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		distro = facts.Distro
	}
	arch, err := releases.ParseArch(cmp.Or(flagValue(cmd, "arch"), hostArch()))
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	return blueprints.ImageTypes(distro, arch), cobra.ShellCompDirectiveNoFileComp
}
