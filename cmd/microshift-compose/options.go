package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
	"github.com/microshift-compose/microshift-compose/compose/microshiftconfig"
	"github.com/microshift-compose/microshift-compose/compose/plugin"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
	"github.com/microshift-compose/microshift-compose/releases/rebase"
	"github.com/microshift-compose/microshift-compose/render/healthcheck"
)

// catalogOptions select the component catalog.
type catalogOptions struct {
	// Dir is a user catalog overlaid on the embedded one.
	Dir string
}

func (o *catalogOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.Dir, "catalog", "", "directory with catalog.toml and components/<name>/component.toml overlaid on the embedded catalog")
}

func (o *catalogOptions) load() (*components.Catalog, error) { return components.Load(o.Dir) }

// releaseOptions select the release files.
type releaseOptions struct {
	// Constraint is a semver constraint on the embedded releases ("4.18", ">=5.0").
	Constraint string
	// Dir is a directory of release-*.json files instead of the embedded ones.
	Dir string
}

func (o *releaseOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.Constraint, "release", "", `MicroShift release as a semver constraint ("4.18", ">=5.0"); default: the newest embedded`)
	cmd.Flags().StringVar(&o.Dir, "release-dir", "", "directory of MicroShift release files (e.g. /usr/share/microshift/release) instead of the embedded releases")
}

// Validate checks that --release parses as a semver constraint: a malformed
// one is a usage error, a well-formed one that matches nothing is not.
func (o *releaseOptions) Validate() error {
	if strings.TrimSpace(o.Constraint) == "" {
		return nil
	}
	if _, err := semver.NewConstraint(o.Constraint); err != nil {
		return usageError{fmt.Errorf("--release: invalid semver constraint %q: %v", o.Constraint, err)}
	}
	return nil
}

func (o *releaseOptions) load() (*releases.Release, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	r, err := releases.Load(o.Dir, o.Constraint)
	return r, withShippedHint(err, o.Constraint, "with --release-dir DIR")
}

// withShippedHint adds to "no embedded release matches" the ways to use a
// release the binary does not embed (a shipped z-stream such as 4.18.7):
// its release-info RPMs fetched or imported into the per-user store, or
// its release files as a directory (given as giveDir says).
func withShippedHint(err error, constraint, giveDir string) error {
	if !errors.Is(err, releases.ErrNoMatch) {
		return err
	}
	// The command names the version when the constraint is one.
	version := "VERSION"
	if v, err := semver.StrictNewVersion(strings.TrimSpace(constraint)); err == nil && v.Prerelease() == "" && v.Metadata() == "" {
		version = v.String()
	}
	return fmt.Errorf("%w; for a release this binary does not embed (a shipped z-stream such as 4.18.7), fetch its release-info RPMs with 'microshift-compose release fetch %s --repo URL' (or 'release import FILE.rpm'), or give its release files %s (what its microshift-release-info RPM installs in /usr/share/microshift/release)", err, version, giveDir)
}

// selectionOptions are the profile, component and arch choice.
type selectionOptions struct {
	Profile       string
	With, Without []string
	Arch          string
	Config        string
	Lvmd          string
	// StorageClasses are --storage-class CLASS[=NAME][,fstype=FS] values.
	StorageClasses []string
	AllowUnpinned  bool
	AllowRedBoot   bool
}

func (o *selectionOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.Profile, "profile", "p", "", "profile to start from: minimal, networking-only, storage-only, full, or one from --catalog")
	o.addAdjustFlags(cmd)
}

// addAdjustFlags binds every selection flag but --profile, for commands
// that take several profiles.
func (o *selectionOptions) addAdjustFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.Arch, "arch", "a", "", "target architecture: x86_64 or aarch64, amd64 and arm64 accepted (default: this machine's)")
	o.addComponentFlags(cmd)
}

// addComponentFlags binds the selection flags but --profile and --arch,
// for commands that take several of each (matrix).
func (o *selectionOptions) addComponentFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringSliceVar(&o.With, "with", nil, "add components (repeat or comma-separate)")
	f.StringSliceVar(&o.Without, "without", nil, "leave components out (repeat or comma-separate)")
	f.StringVar(&o.Config, "config", "", "MicroShift config.yaml to merge into the plan (its networks feed the firewall, templates and plugins; values equal to MicroShift's defaults are left out)")
	f.StringVar(&o.Lvmd, "lvmd", "", "LVMS lvmd.yaml (device classes) to check and place at /etc/microshift/lvmd.yaml, with a StorageClass for every non-default device class; needs storage-lvms in the plan")
	f.StringArrayVar(&o.StorageClasses, lvmdconfig.StorageClassFlag[2:], nil, "CLASS[=NAME][,fstype=xfs|ext4]: the name and filesystem of the StorageClass of --lvmd's device class CLASS (default topolvm-provisioner-<class>, xfs; repeat per class)")
	f.BoolVar(&o.AllowUnpinned, "allow-unpinned", false, allowUnpinnedUsage[cmd.Name()])
	f.BoolVar(&o.AllowRedBoot, "allow-red-boot", false, "accept a selection whose device the release knowledge says can never become healthy (greenboot marks every boot red and rolls back: no CNI on 4.18), with a warning, instead of failing")
}

// allowUnpinnedUsage is --allow-unpinned's help for each command that
// resolves a plan: what that command does with a tag-only reference.
var allowUnpinnedUsage = map[string]string{
	"build":     "embed tag-only image references with a warning instead of failing",
	"resolve":   "accept tag-only image references in the plan with a warning instead of failing",
	"images":    "list tag-only image references with a warning instead of failing",
	"footprint": "measure tag-only image references (the manifest each tag names now) with a warning instead of failing",
	"matrix":    "embed tag-only image references in every cell with a warning instead of failing",
	"mirror":    "copy tag-only image references of the plan (the manifest each tag names now; to a registry, pushed by digest and by tag) instead of failing",
}

func (o *selectionOptions) Validate() error {
	if o.Profile == "" {
		return usageError{errors.New("--profile is required (minimal, networking-only, storage-only, full, or see 'microshift-compose profiles')")}
	}
	if len(o.StorageClasses) > 0 && o.Lvmd == "" {
		return usageError{fmt.Errorf("%s names a device class of --lvmd: add --lvmd", lvmdconfig.StorageClassFlag)}
	}
	if _, err := o.classChoices(); err != nil {
		return usageError{err}
	}
	if o.Arch == "" {
		return nil
	}
	if _, err := releases.ParseArch(o.Arch); err != nil {
		return usageError{fmt.Errorf("--arch: %w", err)}
	}
	return nil
}

func (o *selectionOptions) request() (compose.Request, error) {
	name := o.Arch
	if name == "" {
		name = hostArch()
	}
	arch, err := releases.ParseArch(name)
	if err != nil {
		return compose.Request{}, err
	}
	req := compose.Request{Profile: o.Profile, With: o.With, Without: o.Without, Arch: arch, AllowUnpinned: o.AllowUnpinned, AllowRedBoot: o.AllowRedBoot}
	if o.Config != "" {
		if req.Config, err = microshiftconfig.Load(o.Config); err != nil {
			return compose.Request{}, err
		}
	}
	if o.Lvmd != "" {
		if req.Lvmd, err = lvmdconfig.Load(o.Lvmd); err != nil {
			return compose.Request{}, err
		}
	}
	if req.StorageClasses, err = o.classChoices(); err != nil {
		return compose.Request{}, err
	}
	return req, nil
}

// classChoices parses --storage-class.
func (o *selectionOptions) classChoices() ([]lvmdconfig.ClassChoice, error) {
	var out []lvmdconfig.ClassChoice
	for _, s := range o.StorageClasses {
		c, err := lvmdconfig.ParseClassChoice(s)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// renderOptions tune how the plan's device files are rendered: the plugin
// timeout, and (build and resolve: addHealthFlags) the greenboot check of
// the rendered workloads.
type renderOptions struct {
	PluginTimeout time.Duration
	HealthCheck   compose.HealthCheckOptions
	// The duration flags as given, for messages.
	pluginTimeout, healthCheckTimeout *durationValue
}

func (o *renderOptions) addFlags(cmd *cobra.Command) {
	o.pluginTimeout = durationVar(cmd.Flags(), &o.PluginTimeout, "plugin-timeout", plugin.DefaultTimeout, "how long each component plugin invocation may run before it is killed")
}

// addHealthFlags binds the greenboot check flags, for the commands that
// show the device files.
func (o *renderOptions) addHealthFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&o.HealthCheck.Disabled, "no-health-checks", false, "do not write the greenboot check "+healthcheck.Path+" that waits for the workloads of the rendered manifests")
	o.healthCheckTimeout = durationVar(f, &o.HealthCheck.Timeout, "health-check-timeout", 0, "how long the greenboot check waits for the workloads, in whole seconds up to 9999s (default: greenboot's MICROSHIFT_WAIT_TIMEOUT_SEC, 600s, times the boot attempt)")
}

func (o *renderOptions) Validate() error {
	if o.PluginTimeout <= 0 {
		return usageError{fmt.Errorf("--plugin-timeout must be positive, got %s", spelled(o.pluginTimeout, o.PluginTimeout))}
	}
	if o.HealthCheck.Disabled && o.HealthCheck.Timeout != 0 {
		return usageError{errors.New("--health-check-timeout sets the wait of the greenboot check that --no-health-checks leaves out: give one of them")}
	}
	if err := compose.CheckHealthCheckTimeout(o.HealthCheck.Timeout); err != nil {
		return usageError{fmt.Errorf("--health-check-timeout %s: %w", spelled(o.healthCheckTimeout, o.HealthCheck.Timeout), err)}
	}
	return nil
}

// blueprintOptions choose the distro the plan is built for and what
// osbuild validates the blueprint against.
type blueprintOptions struct {
	Distro    string
	ImageType string
}

func (o *blueprintOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.Distro, "distro", "", "distro to build for, one the release is built for ('release list' shows them; default: the release's, e.g. rhel-9.4 for 4.18, rhel-9.8 for 5.0; rhel-10.2 for 5.0 is image mode only)")
	cmd.Flags().StringVar(&o.ImageType, "image-type", "", "osbuild image type the blueprint is validated for (default: the distro's, edge-commit on RHEL 9; RHEL 10 has none: use --bootc)")
}

// versionOptions check the release's version: that its RPMs can be pinned
// to the version of its images, and that it takes over a device's data.
type versionOptions struct {
	ExactVersion bool
	// StrictRelease refuses a release newer than the tool knows.
	StrictRelease bool
	// UpgradeFrom is a release ("4.16", "4.16.3") or a compose.lock.json
	// (or a build output holding one) of the build the device runs.
	UpgradeFrom string
}

func (o *versionOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&o.ExactVersion, "exact-version", false, "refuse release files whose base is no published version (a nightly or candidate) instead of pinning MicroShift's RPMs to the stream with a warning")
	f.BoolVar(&o.StrictRelease, "strict-release", false, "refuse a release newer than every release this microshift-compose knows (a nightly of the next minor) instead of building it with the newest known release's rules and a warning")
	f.StringVar(&o.UpgradeFrom, "upgrade-from", "", "refuse a release that would not start on the data of this one: a release (4.16, 4.16.3) or the compose.lock.json (or output directory) of the build the device runs")
}

// apply puts the version checks into req.
func (o *versionOptions) apply(req *compose.Request) error {
	req.ExactVersion, req.StrictRelease = o.ExactVersion, o.StrictRelease
	if o.UpgradeFrom == "" {
		return nil
	}
	if v, err := semver.NewVersion(o.UpgradeFrom); err == nil && !strings.ContainsAny(o.UpgradeFrom, "/\\") {
		req.UpgradeFrom = semver.New(v.Major(), v.Minor(), v.Patch(), "", "")
		return nil
	}
	path := o.UpgradeFrom
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, output.LockFile)
	} else if err != nil {
		return usageError{fmt.Errorf("--upgrade-from %s: neither a release (4.16, 4.16.3) nor a lock file or build output", o.UpgradeFrom)}
	}
	p, err := lockfile.Load(path)
	if err != nil {
		return fmt.Errorf("--upgrade-from: %w", err)
	}
	v, err := semver.NewVersion(p.Release.Version)
	if err != nil {
		return fmt.Errorf("--upgrade-from %s: release version %q is not a semantic version", path, p.Release.Version)
	}
	req.UpgradeFrom = v
	return nil
}

// formatOptions is --output for listing commands.
type formatOptions struct {
	Format string
	// flag is the flag's name in messages ("--output" unless bound by
	// addFormatFlag).
	flag string
}

func (o *formatOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.Format, "output", "o", "text", "output format: text or json")
	// Only fails for an unknown or already registered flag.
	_ = cmd.RegisterFlagCompletionFunc("output", completeValues(formatValues...))
}

// addFormatFlag binds the format to --format, for commands whose --output
// is a directory (build).
func (o *formatOptions) addFormatFlag(cmd *cobra.Command, usage string) {
	o.flag = "--format"
	cmd.Flags().StringVar(&o.Format, "format", "text", usage)
}

func (o *formatOptions) Validate() error {
	if o.Format != "text" && o.Format != "json" {
		flag := o.flag
		if flag == "" {
			flag = "--output"
		}
		return usageError{fmt.Errorf("%s: unknown format %q (want text or json)", flag, o.Format)}
	}
	return nil
}

func (o *formatOptions) json() bool { return o.Format == "json" }

// resolvePlan loads the catalog, release and user config and resolves the
// selection: what build, resolve and images share.
// adjust functions set the request fields of options a command adds;
// loaded, when not nil, is called with the release and the request as soon
// as both are known, while the catalog is still loading and before the
// plan is resolved (build starts osbuild's distro lookup there).
func resolvePlan(cmd *cobra.Command, cat *catalogOptions, rel *releaseOptions, sel *selectionOptions, rnd *renderOptions, loaded func(*releases.Release, compose.Request), adjust ...func(*compose.Request) error) (*plan.Plan, error) {
	// Resolving reads the release knowledge: parsed beside the rest.
	go knowledge.Default() // its result is kept for resolving's own call
	if err := rnd.Validate(); err != nil {
		return nil, err
	}
	req, err := sel.request()
	if err != nil {
		return nil, err
	}
	req.PluginTimeout = rnd.PluginTimeout
	for _, a := range adjust {
		if err := a(&req); err != nil {
			return nil, err
		}
	}
	req.HealthCheck = rnd.HealthCheck
	catalog, release, err := loadInputs(cat, rel, func(r *releases.Release) {
		if loaded != nil {
			loaded(r, req)
		}
	})
	if err != nil {
		return nil, err
	}
	p, err := assemble.Plan(cmd.Context(), catalog, release, req)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// loadInputs loads the catalog and the release at once (each is parsed
// once per process, and on two cores they overlap), calling loaded with
// the release as soon as it is there. A catalog error is reported before
// a release error, as when they were loaded one after the other.
func loadInputs(cat *catalogOptions, rel *releaseOptions, loaded func(*releases.Release)) (*components.Catalog, *releases.Release, error) {
	var (
		catalog *components.Catalog
		catErr  error
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		catalog, catErr = cat.load()
	}()
	release, relErr := rel.load()
	if relErr == nil {
		loaded(release)
	}
	<-done
	if catErr != nil {
		return nil, nil, catErr
	}
	if relErr != nil {
		return nil, nil, relErr
	}
	return catalog, release, nil
}

// warnDevice prints the plans' device-level warnings (no CNI, tag-only
// images), one "warning:" line each on stderr, whatever -v says. Commands
// call it once they succeed, so a failing command prints its error alone.
func warnDevice(cmd *cobra.Command, plans ...*plan.Plan) {
	w := warnOnce(cmd.ErrOrStderr())
	for _, p := range plans {
		for _, msg := range p.Warnings {
			w(msg)
		}
	}
}

// fileSelectOptions narrow the release files a release command works on.
type fileSelectOptions struct {
	// Arches are x86_64/aarch64 (amd64/arm64 accepted).
	Arches []string
	// Components are release-file components; "core" is release-<arch>.json.
	Components []string
}

func (o *fileSelectOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringSliceVar(&o.Arches, "arch", nil, "only the files of this arch: x86_64 or aarch64 (repeat or comma-separate)")
	f.StringSliceVar(&o.Components, "component", nil, `only the files of this component ("core" for release-<arch>.json, "olm" for release-olm-<arch>.json; repeat or comma-separate)`)
}

func (o *fileSelectOptions) Validate() error {
	for _, a := range o.Arches {
		if _, err := releases.ParseArch(a); err != nil {
			return usageError{fmt.Errorf("--arch: %w", err)}
		}
	}
	for _, c := range o.Components {
		if strings.TrimSpace(c) == "" {
			return usageError{errors.New("--component: empty component name")}
		}
	}
	return nil
}

func (o *fileSelectOptions) selection() rebase.Selection {
	var s rebase.Selection
	for _, a := range o.Arches {
		arch, _ := releases.ParseArch(a) // checked by Validate
		if !slices.Contains(s.Arches, arch) {
			s.Arches = append(s.Arches, arch)
		}
	}
	for _, c := range o.Components {
		if !slices.Contains(s.Components, c) {
			s.Components = append(s.Components, c)
		}
	}
	return s
}
