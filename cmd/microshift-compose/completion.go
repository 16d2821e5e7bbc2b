package main

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/distros"
	"github.com/microshift-compose/microshift-compose/matrix"
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
	"bootc-images": completeValues(
		blueprints.BootcImagesMirror+"\tcopy the images from the dir: layout 'mirror --to dir:OUTPUT/images' writes",
		blueprints.BootcImagesPull+"\tpull the images while the image is built, with the pull secret"),
	"emit": completeValues(
		matrix.EmitGitHub+"\ta GitHub Actions strategy.matrix, one JSON line",
		matrix.EmitTekton+"\ta Tekton PipelineRun, one task per cell; needs --runner-image"),
	"format": completeValues(formatValues...),
	"cis": completeValues(
		compose.CISLevel1+"\tCIS Level 1 - Server",
		compose.CISLevel2+"\tCIS Level 2 - Server"),
	"to":   completeTarget(destinationTransports),
	"from": completeTarget(sourceTransports),
}

// A transport of mirror's --to or --from, and what follows it.
type transport struct{ prefix, desc string }

var (
	destinationTransports = []transport{
		{"oci:", "an OCI image layout directory"},
		{"dir:", "an OCI layout plus a dir: directory per image, for bootc"},
		{"oci-archive:", "an OCI layout in one tar file"},
		{"docker://", "a registry: docker://REGISTRY/PREFIX"},
	}
	sourceTransports = destinationTransports[:3]
)

// completeTarget completes --to and --from: a transport, then for a path
// transport the path after it (directories; files too for oci-archive:).
func completeTarget(transports []transport) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		for _, t := range transports {
			rest, ok := strings.CutPrefix(toComplete, t.prefix)
			if !ok || t.prefix == "docker://" {
				continue
			}
			return completePath(t.prefix, rest, t.prefix == "oci-archive:")
		}
		var out []string
		for _, t := range transports {
			out = append(out, t.prefix+"\t"+t.desc)
		}
		return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// completePath lists the directories (and with files, the files) whose
// path starts with partial, each after prefix; a directory ends in "/" so
// that the next TAB goes into it.
func completePath(prefix, partial string, files bool) ([]string, cobra.ShellCompDirective) {
	dir, base := filepath.Split(partial)
	entries, err := os.ReadDir(cmp.Or(dir, "."))
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), base) || (strings.HasPrefix(e.Name(), ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(cmp.Or(dir, "."), e.Name())); err == nil {
				isDir = st.IsDir()
			}
		}
		switch {
		case isDir:
			out = append(out, prefix+dir+e.Name()+"/")
		case files:
			out = append(out, prefix+dir+e.Name())
		}
	}
	if len(out) == 0 && !files && partial != "" {
		// A new directory: the layout is created.
		return []string{prefix + partial}, cobra.ShellCompDirectiveNoFileComp
	}
	return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
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

// flagValues are the values of a flag that may be a list (matrix's
// --release, --arch): each item, or the one value; none when unset.
func flagValues(cmd *cobra.Command, name string) []string {
	f := cmd.Flags().Lookup(name)
	if f == nil {
		return nil
	}
	if l, ok := f.Value.(pflag.SliceValue); ok {
		return l.GetSlice()
	}
	if v := f.Value.String(); v != "" {
		return []string{v}
	}
	return nil
}

// isList reports whether the command's flag takes a list.
func isList(cmd *cobra.Command, name string) bool {
	f := cmd.Flags().Lookup(name)
	if f == nil {
		return false
	}
	_, ok := f.Value.(pflag.SliceValue)
	return ok
}

// selectedReleases are the releases the command line selects: the
// --release-dir directories, or the embedded releases --release names
// ("all" in a matrix), or the newest embedded.
func selectedReleases(cmd *cobra.Command) ([]*releases.Release, error) {
	var out []*releases.Release
	for _, dir := range flagValues(cmd, "release-dir") {
		r, err := releases.LoadDir(dir)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if len(out) > 0 {
		return out, nil
	}
	constraints := flagValues(cmd, "release")
	if len(constraints) == 0 {
		constraints = []string{""}
	}
	for _, c := range constraints {
		if c == "all" {
			return releases.Embedded()
		}
		r, err := releases.SelectEmbedded(c)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
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

// completeComponents offers the components of the catalog that ship for
// the selected release (any of a matrix's) and --arch, if given.
func completeComponents(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	cat, err := loadCatalog(cmd)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	rels, err := selectedReleases(cmd)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var arches []releases.Arch
	for _, a := range flagValues(cmd, "arch") {
		if arch, err := releases.ParseArch(a); err == nil {
			arches = append(arches, arch)
		}
	}
	var out []string
	for _, n := range cat.ComponentNames() {
		c := cat.Components[n]
		if !slices.ContainsFunc(rels, c.SupportsRelease) || (len(arches) > 0 && !slices.ContainsFunc(arches, c.SupportsArch)) {
			continue
		}
		out = append(out, n+"\t"+c.Description)
	}
	return listItem(toComplete, out)
}

func completeArches(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return listItem(toComplete, []string{string(releases.X86_64), string(releases.AArch64)})
}

// completeReleases offers the embedded releases; a matrix's --release is
// a list, which may also be "all".
func completeReleases(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
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
	if isList(cmd, "release") {
		out, _ = listItem(toComplete, append(out, "all\tevery embedded release"))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// releaseFacts are the release knowledge of the release the command line
// selects (--release, --release-dir; default the newest embedded; a
// matrix's first).
func releaseFacts(cmd *cobra.Command) (*knowledge.Release, error) {
	go knowledge.Default() // parsed beside the release; its result is kept for the call below
	rels, err := selectedReleases(cmd)
	if err != nil {
		return nil, err
	}
	know, err := knowledge.Default()
	if err != nil {
		return nil, err
	}
	return know.ForBuild(rels[0].Version, rels[0].Build)
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
	facts, err := releaseFacts(cmd)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	distro := cmp.Or(flagValue(cmd, "distro"), facts.Distro)
	for _, d := range facts.Distros {
		if d.Name == distro {
			distro = d.OSBuildName() // osbuild's name (centos-9 for centos-stream-9)
		}
	}
	arch, err := releases.ParseArch(cmp.Or(flagValue(cmd, "arch"), hostArch()))
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	return distros.ImageTypes(distro, arch), cobra.ShellCompDirectiveNoFileComp
}

// bashCommaFixes patch cobra's bash completion script (v2) for completions
// that are comma lists (--with multus,cert-manager): the script escapes
// each completion with printf %q before comparing it with the word being
// completed, and bash 5.2's %q escapes a comma (multus\,cert-manager),
// so that nothing matches what the user typed (multus,ce). A comma needs
// no escape in a word (brace expansion needs braces, which %q escapes), so
// each escaped completion has its "\," put back to ",". Each anchor is a
// line of cobra's script, found exactly once, or the completion command
// fails (TestBashCompletion runs it).
var bashCommaFixes = []struct{ anchor, fix string }{
	{`IFS=$'\n' read -ra completions -d '' < <(printf "%q\n" "${completions[@]%%$tab*}")`, `completions=("${completions[@]//\\,/,}")`},
	{`IFS=$'\n' read -ra COMPREPLY -d '' < <(printf "%q\n" "${COMPREPLY[@]}")`, `COMPREPLY=("${COMPREPLY[@]//\\,/,}")`},
	{`IFS=$'\n' read -ra completions -d '' < <(printf "%q\n" "${completions[@]}")`, `completions=("${completions[@]//\\,/,}")`},
	{`COMPREPLY[0]=$(printf "%q" "${COMPREPLY[0]}")`, `COMPREPLY[0]=${COMPREPLY[0]//\\,/,}`},
	{`printf -v comp "%q" "${compline%%$tab*}" &>/dev/null || comp=$(printf "%q" "${compline%%$tab*}")`, `comp=${comp//\\,/,}`},
	{`COMPREPLY[0]=$(printf "%q" "${COMPREPLY[0]%%$tab*}")`, `COMPREPLY[0]=${COMPREPLY[0]//\\,/,}`},
}

// bashCompletion is cobra's bash completion script with bashCommaFixes
// applied: each anchor line is followed by its fix, at its indentation.
func bashCompletion(root *cobra.Command, descriptions bool) ([]byte, error) {
	var b bytes.Buffer
	if err := root.GenBashCompletionV2(&b, descriptions); err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(b.String(), "\n")
	var out strings.Builder
	found := make([]int, len(bashCommaFixes))
	for _, l := range lines {
		out.WriteString(l)
		trimmed := strings.TrimSpace(l)
		for i, f := range bashCommaFixes {
			if trimmed == f.anchor {
				found[i]++
				out.WriteString(l[:len(l)-len(strings.TrimLeft(l, " \t"))] + f.fix + "\n")
			}
		}
	}
	for i, n := range found {
		if n != 1 {
			return nil, fmt.Errorf("generating the bash completion: cobra's script has the line %q %d times, want once", bashCommaFixes[i].anchor, n)
		}
	}
	return []byte(out.String()), nil
}

// useBashCommaFixes makes root's `completion bash` write bashCompletion.
func useBashCommaFixes(root *cobra.Command) {
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		for _, sh := range c.Commands() {
			if sh.Name() != "bash" {
				continue
			}
			sh.Run = nil
			sh.RunE = func(cmd *cobra.Command, _ []string) error {
				noDesc, _ := cmd.Flags().GetBool("no-descriptions")
				script, err := bashCompletion(root, !noDesc)
				if err != nil {
					return err
				}
				_, err = io.Copy(cmd.OutOrStdout(), bytes.NewReader(script))
				return err
			}
		}
	}
}
