package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/internal/k8sname"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/matrix"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/write"
)

// matrixOptions are the lists a matrix spans and how it runs.
type matrixOptions struct {
	Profiles, Arches, Releases, ReleaseDirs []string
	Jobs                                    int
	Output                                  string
	Force                                   bool
	Emit                                    string
	RunnerImage                             string
	OutputClaim                             string
	ToolVersion                             string
}

func (o *matrixOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringSliceVarP(&o.Profiles, "profile", "p", nil, "profiles, one cell each (repeat or comma-separate)")
	f.StringSliceVarP(&o.Arches, "arch", "a", nil, "arches, one cell each: x86_64, aarch64 (amd64, arm64 accepted; repeat or comma-separate)")
	f.StringSliceVar(&o.Releases, "release", nil, `embedded releases, one cell each: semver constraints ("4.18", "~5.0") or "all" for every embedded release (repeat or comma-separate); default, as build: the newest embedded, unless --release-dir is given`)
	f.StringArrayVar(&o.ReleaseDirs, "release-dir", nil, "directory of MicroShift release files, one cell each, beside --release (repeat for more: one directory each, so that a path may hold a comma)")
	f.IntVarP(&o.Jobs, "jobs", "j", min(4, runtime.NumCPU()), "cells composed at once")
	f.StringVar(&o.Output, "output", "", "directory the cells are written under, one directory each: DIR/<release>-<profile>-<arch>/")
	f.BoolVar(&o.Force, "force", false, "replace a cell's directory even when it holds files a build does not write")
	f.StringVar(&o.Emit, "emit", "", "write nothing and describe the cells for a CI engine instead: github-workflow (a GitHub Actions workflow to commit), github (its strategy.matrix alone, one JSON line) or tekton (a Tekton PipelineRun, one task per cell)")
	f.StringVar(&o.RunnerImage, "runner-image", "", "with --emit tekton: the container image holding microshift-compose that the tasks run (the release's image, or one 'make image' builds)")
	f.StringVar(&o.OutputClaim, "output-claim", "", "with --emit tekton: the PersistentVolumeClaim the tasks write the cells to, CLAIM/<PipelineRun name>/<cell>/ (kept after the run)")
	f.StringVar(&o.ToolVersion, "tool-version", "", "with --emit github-workflow: the microshift-compose version the workflow installs with go install (default: this one's)")
}

// checkValues checks the values of the flags a composition file's keys
// mirror too (the lists, --output), and --jobs: what --print-file checks.
func (o *matrixOptions) checkValues() error {
	if o.Jobs < 1 {
		return usageError{fmt.Errorf("--jobs must be 1 or more, got %d", o.Jobs)}
	}
	if strings.ContainsAny(o.Output, "{}") {
		return usageError{fmt.Errorf("--output %s: matrix names each cell's directory itself (DIR/<release>-<profile>-<arch>/); it takes no placeholders", o.Output)}
	}
	for _, a := range o.Arches {
		if _, err := releases.ParseArch(a); err != nil {
			return usageError{fmt.Errorf("--arch: %w", err)}
		}
	}
	for _, list := range []struct {
		flag   string
		values []string
	}{{"--profile", o.Profiles}, {"--arch", o.Arches}, {"--release", o.Releases}, {"--release-dir", o.ReleaseDirs}} {
		for _, v := range list.values {
			if strings.TrimSpace(v) == "" {
				return usageError{fmt.Errorf("%s: empty value in the list", list.flag)}
			}
		}
	}
	return nil
}

// Validate checks the flags that need no catalog or release.
func (o *matrixOptions) Validate() error {
	if err := o.checkValues(); err != nil {
		return err
	}
	switch o.Emit {
	case "":
		if o.Output == "" {
			return usageError{errors.New("--output DIR is required (or --emit github-workflow|github|tekton to describe the cells instead)")}
		}
	case matrix.EmitGitHub, matrix.EmitGitHubWorkflow, matrix.EmitTekton:
		if o.Output != "" {
			return usageError{fmt.Errorf("--emit %s describes the cells and writes nothing: drop --output", o.Emit)}
		}
		if o.Emit == matrix.EmitTekton {
			if o.RunnerImage == "" {
				return usageError{errors.New("--emit tekton needs --runner-image IMAGE: the container image holding microshift-compose the tasks run (the release's, or one 'make image' builds)")}
			}
			if err := checkRunnerImage(o.RunnerImage); err != nil {
				return err
			}
			if o.OutputClaim == "" {
				return usageError{errors.New("--emit tekton needs --output-claim CLAIM: the PersistentVolumeClaim the cells are written to (a claim of the PipelineRun's own would be deleted with it)")}
			}
			if err := k8sname.Name("v1", "PersistentVolumeClaim", o.OutputClaim); err != nil {
				return usageError{fmt.Errorf("--output-claim: %w", err)}
			}
		}
	default:
		return usageError{fmt.Errorf("--emit: unknown format %q (want github-workflow, github or tekton)", o.Emit)}
	}
	for _, f := range []struct {
		flag, value, emit string
	}{{"--runner-image", o.RunnerImage, matrix.EmitTekton}, {"--output-claim", o.OutputClaim, matrix.EmitTekton}, {"--tool-version", o.ToolVersion, matrix.EmitGitHubWorkflow}} {
		if f.value != "" && o.Emit != f.emit {
			return usageError{fmt.Errorf("%s is for --emit %s only", f.flag, f.emit)}
		}
	}
	return nil
}

// spec loads the releases (each once) and builds the matrix spec.
func (o *matrixOptions) spec() (matrix.Spec, error) {
	var spec matrix.Spec
	spec.Profiles = o.Profiles
	for _, a := range o.Arches {
		arch, _ := releases.ParseArch(a) // checked by Validate
		spec.Arches = append(spec.Arches, arch)
	}
	for _, c := range o.Releases {
		if c == "all" {
			all, err := releases.Embedded()
			if err != nil {
				return spec, err
			}
			for _, r := range slices.Backward(all) { // oldest first
				spec.Releases = append(spec.Releases, matrix.Release{Release: r, From: "--release all"})
			}
			continue
		}
		if err := (&releaseOptions{Constraint: c}).Validate(); err != nil {
			return spec, err
		}
		r, err := releases.Load("", c)
		if err != nil {
			return spec, fmt.Errorf("--release %s: %w", c, withShippedHint(err, c, "with --release-dir DIR"))
		}
		spec.Releases = append(spec.Releases, matrix.Release{Release: r, From: "--release " + c})
	}
	for _, dir := range o.ReleaseDirs {
		r, err := releases.Load(dir, "")
		if err != nil {
			return spec, err
		}
		spec.Releases = append(spec.Releases, matrix.Release{Release: r, From: "--release-dir " + dir, Dir: dir})
	}
	if len(o.Releases) == 0 && len(o.ReleaseDirs) == 0 {
		// As build: the newest embedded release.
		r, err := releases.Load("", "")
		if err != nil {
			return spec, err
		}
		spec.Releases = append(spec.Releases, matrix.Release{Release: r, From: "the newest embedded release"})
	}
	return spec, nil
}

func newMatrixCmd() *cobra.Command {
	var (
		mx    matrixOptions
		cat   catalogOptions
		sel   selectionOptions
		rnd   renderOptions
		ver   versionOptions
		hard  hardeningOptions
		trust trustOptions
		file  fileOptions
		ops   operatorOptions
		// --print-file: print the composition file of the flags.
		printOnly bool
	)
	steps := buildSteps{trust: &trust}
	cmd := &cobra.Command{
		Use:   "matrix --profile LIST --arch LIST [--release LIST] --output DIR",
		Short: "Build every profile x arch x release cell in one process, or describe the cells for a CI engine",
		Long: `matrix composes every cell of --profile x --arch x --release (and --release-dir;
without either, the newest embedded release, as build) in one process: the catalog and each release are loaded once, the cells run in
parallel (at most --jobs at once), and each cell is exactly what 'build' writes for it,
into DIR/<release>-<profile>-<arch>/ (atomically, as build does). The other flags
(--with, --config, --pull-secret, --bootc...) apply to every cell.

stdout is one JSON document: {"cells": [...], "ok": N, "failed": M}, each cell with
its name, profile, arch, release, composition ID, status ("ok" or "failed"), the
release whose rules were applied ("rules": the newest known one for a release newer
than this microshift-compose, with a warning), its output directory, counts,
warnings and error. A failing cell does not stop the others; matrix exits 1 when any
failed. Warnings are also printed on stderr, once each with the cells they concern.

--emit describes the cells for a CI engine instead of building them (each is resolved,
so a cell that would fail is an error, and its composition ID is known). Every cell's
job runs 'microshift-compose build' with the cell's arguments and --expect-id its
planned ID, so that it fails rather than compose anything else:

  github-workflow  a GitHub Actions workflow to commit: a job installing this
                   microshift-compose (go install at its version, or --tool-version),
                   and a build matrix whose jobs check the repository out, build
                   their cell and upload its output directory as an artifact
  github           that strategy.matrix alone, one JSON line ({"include": [{"cell",
                   "profile", "arch", "release", "release_dir", "id", "build_args"}...]},
                   for $GITHUB_OUTPUT and fromJSON)
  tekton           a Tekton PipelineRun (tekton.dev/v1), one task per cell running
                   build in --runner-image and writing to the PersistentVolumeClaim
                   --output-claim, at CLAIM/<PipelineRun name>/<cell>/; embedded
                   releases only

For GitHub, a --release-dir becomes its path in the git repository of the working
directory, which the jobs check out; one outside that repository is refused. The
engine runs the fleet; matrix describes the work.

With -f FILE (a composition file, docs/composition.md), the file's
profiles, arches, releases and release_dirs lists span the matrix (a single
profile, arch... is a list of one) and its other keys apply to every cell;
flags given on the command line win over the file's keys.`,
		Example: `  microshift-compose matrix --profile minimal,full --arch x86_64,aarch64 --release 4.18,4.19,5.0 --output out/
  microshift-compose matrix --profile full --arch x86_64 --release all --release-dir ./release-5.1-nightly --output out/ --jobs 2
  microshift-compose matrix --profile minimal,full --arch x86_64,aarch64 --release 5.0 --release-dir releases/5.1-nightly --emit github-workflow > .github/workflows/compositions.yaml
  echo "matrix=$(microshift-compose matrix --profile minimal,full --arch x86_64,aarch64 --release 4.19,5.0 --emit github)" >> "$GITHUB_OUTPUT"
  microshift-compose matrix --profile full --arch x86_64,aarch64 --release 5.0 --emit tekton --runner-image ghcr.io/microshift-compose/microshift-compose:1.0.0 --output-claim compositions | kubectl create -f -`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := file.apply(cmd, true); err != nil {
				return err
			}
			// The flags' values are checked whether the cells are built
			// or --print-file prints the file: what matrix would refuse
			// before resolving is not printed.
			if err := mx.checkValues(); err != nil {
				return err
			}
			// The selection flags but the lists (profiles and arches are
			// the cells').
			checkSel := sel
			checkSel.Profile, checkSel.Arch = "-", string(releases.X86_64)
			for _, v := range []interface{ Validate() error }{&checkSel, &rnd, &hard, &ops} {
				if err := v.Validate(); err != nil {
					return err
				}
			}
			if err := steps.Validate(cmd); err != nil {
				return err
			}
			if printOnly {
				return printFile(cmd)
			}
			if err := mx.Validate(); err != nil {
				return err
			}
			defer ops.close()
			if mx.Emit != "" {
				for _, f := range []string{"catalog", "config", "lvmd", "pull-secret", "mirror-ca", "policy", "verify-key", "upgrade-from", "operator-catalog"} {
					if cmd.Flags().Changed(f) && (f != "upgrade-from" || strings.ContainsAny(ver.UpgradeFrom, "/\\")) && (f != "operator-catalog" || ops.ref.Local()) {
						return usageError{fmt.Errorf("--emit %s: --%s names a file on this machine, which the engine's jobs do not have; describe the matrix without it", mx.Emit, f)}
					}
				}
			}
			var args []string
			if mx.Emit != "" {
				var err error
				if args, err = emitArgs(cmd, &sel); err != nil {
					return err
				}
			}
			catalog, err := cat.load()
			if err != nil {
				return err
			}
			spec, err := mx.spec()
			if err != nil {
				return err
			}
			cells, err := matrix.Cells(catalog, spec)
			if err != nil {
				return usageError{err}
			}
			// The request every cell starts from: user files read once.
			sel.Profile, sel.Arch = "-", string(releases.X86_64)
			if err := sel.Validate(); err != nil {
				return err
			}
			base, err := sel.request()
			if err != nil {
				return err
			}
			base.PluginTimeout, base.HealthCheck = rnd.PluginTimeout, rnd.HealthCheck
			if err := ver.apply(&base); err != nil {
				return err
			}
			if err := hard.apply(&base); err != nil {
				return err
			}
			if err := steps.request(&base); err != nil {
				return err
			}
			cell := func(ctx context.Context, c matrix.Cell) (assemble.Summary, error) {
				req := base
				req.Profile, req.Arch = c.Profile, c.Arch
				if err := ops.request(cmd.Context())(&req); err != nil {
					return assemble.Summary{}, err
				}
				p, err := assemble.Plan(ctx, catalog, c.Release.Release, req)
				if err != nil {
					return assemble.Summary{}, err
				}
				file.record(p)
				out, err := steps.build(ctx, p)
				if err != nil {
					return assemble.Summary{}, err
				}
				if mx.Emit != "" {
					return assemble.Summarize(out, ""), nil
				}
				dir := filepath.Join(mx.Output, c.Name)
				// What writing says joins the cell's warnings.
				var written []string
				if err := write.Write(ctx, dir, out, write.Options{Force: mx.Force, Warn: func(msg string) { written = append(written, msg) }}); err != nil {
					return assemble.Summary{}, err
				}
				s := assemble.Summarize(out, dir)
				s.AddWarnings(written...)
				return s, nil
			}
			sum, err := matrix.Run(cmd.Context(), cells, mx.Jobs, cell)
			if err != nil {
				return err
			}
			if mx.Emit != "" {
				data, err := mx.emit(sum.Cells, args)
				if err != nil {
					return err
				}
				if _, err := cmd.OutOrStdout().Write(data); err != nil {
					return err
				}
				warnCells(cmd, sum)
				return nil
			}
			if err := printJSON(cmd.OutOrStdout(), sum); err != nil {
				return err
			}
			warnCells(cmd, sum)
			if sum.Failed > 0 {
				return fmt.Errorf("%d of %d cells failed (their errors are in the summary and above)", sum.Failed, len(sum.Cells))
			}
			return nil
		},
	}
	mx.addFlags(cmd)
	cat.addFlags(cmd)
	sel.addComponentFlags(cmd)
	rnd.addFlags(cmd)
	rnd.addHealthFlags(cmd)
	ver.addFlags(cmd)
	hard.addFlags(cmd)
	steps.addFlags(cmd)
	trust.addBuildFlags(cmd)
	file.addFlags(cmd)
	ops.addFlags(cmd)
	cmd.Flags().BoolVar(&printOnly, "print-file", false, "print the composition file (TOML) the other flags (and -f) describe on stdout, its lists spanning the matrix, paths as given (relative to the working directory: save it there), instead of building")
	return cmd
}

// emit describes the cells for the engine: the release directories as
// paths in the repository the GitHub jobs check out, the workflow
// installing this microshift-compose (or --tool-version).
func (o *matrixOptions) emit(cells []matrix.Result, args []string) ([]byte, error) {
	if o.Emit == matrix.EmitTekton {
		return matrix.Tekton(cells, matrix.TektonOptions{Image: o.RunnerImage, Args: args, Claim: o.OutputClaim})
	}
	cells = slices.Clone(cells)
	var repo string
	for i, c := range cells {
		if c.ReleaseDir == "" {
			continue
		}
		if repo == "" {
			var err error
			if repo, err = matrix.RepoRoot("."); err != nil {
				return nil, usageError{fmt.Errorf("--emit %s with --release-dir: the jobs check out the repository of the working directory and read release directories from it: %w", o.Emit, err)}
			}
		}
		rel, err := matrix.RepoRelative(repo, c.ReleaseDir)
		if err != nil {
			return nil, usageError{fmt.Errorf("--release-dir %w", err)}
		}
		cells[i].ReleaseDir = rel
	}
	if o.Emit == matrix.EmitGitHub {
		return matrix.GitHub(cells, args)
	}
	version := o.ToolVersion
	if version == "" {
		b := currentBuild()
		if b.Modified {
			return nil, usageError{fmt.Errorf("--emit %s: this microshift-compose was built from a modified work tree, which no workflow can install: pass --tool-version", o.Emit)}
		}
		version = b.Version
	}
	if _, err := matrix.InstallVersion(version); err != nil {
		if o.ToolVersion != "" {
			return nil, usageError{fmt.Errorf("--tool-version: %w", err)}
		}
		return nil, usageError{fmt.Errorf("--emit %s: %w; pass --tool-version VERSION", o.Emit, err)}
	}
	return matrix.GitHubWorkflow(cells, matrix.WorkflowOptions{Args: args, Version: version})
}

// warnCells prints each distinct warning of the cells once on stderr,
// naming the cells it concerns, and each failed cell's error.
func warnCells(cmd *cobra.Command, sum matrix.Summary) {
	cells := map[string][]string{}
	var order []string
	for _, r := range sum.Cells {
		for _, w := range r.Warnings {
			if _, ok := cells[w]; !ok {
				order = append(order, w)
			}
			cells[w] = append(cells[w], r.Cell)
		}
	}
	for _, w := range order {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s (%s)\n", text.Escape(text.OneLine(w)), strings.Join(cells[w], ", "))
	}
	for _, r := range sum.Cells {
		if r.Status == matrix.StatusFailed {
			fmt.Fprintf(cmd.ErrOrStderr(), "cell %s failed: %s\n", r.Cell, text.Escape(text.OneLine(r.Error)))
		}
	}
}

// safeArg is a flag value an emitted matrix may carry: component names,
// modes, image references; nothing a shell would read differently.
var safeArg = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._:/@+=-]*$`)

// emitArgs are the build flags every cell shares, for the emitted jobs to
// pass: what changes a cell's composition ID besides its profile, arch and
// release.
func emitArgs(cmd *cobra.Command, sel *selectionOptions) ([]string, error) {
	var args []string
	add := func(flag string, values ...string) error {
		for _, v := range values {
			if !safeArg.MatchString(v) {
				return usageError{fmt.Errorf("--emit: --%s %q cannot be passed on to the engine's jobs as it is", flag, v)}
			}
			args = append(args, "--"+flag+"="+v)
		}
		return nil
	}
	with, without := slices.Clone(sel.With), slices.Clone(sel.Without)
	sort.Strings(with)
	sort.Strings(without)
	if err := add("with", with...); err != nil {
		return nil, err
	}
	if err := add("without", without...); err != nil {
		return nil, err
	}
	for _, f := range []string{"allow-red-boot", "allow-unpinned", "bootc", "exact-version", "fips", "mirror-insecure", "no-health-checks", "strict-release"} {
		if v, err := cmd.Flags().GetBool(f); err == nil && v {
			args = append(args, "--"+f)
		}
	}
	for _, f := range []string{"bootc-base", "bootc-images", "cis", "distro", "health-check-timeout", "image-type", "mirror-registry", "operator-catalog", "plugin-timeout", "upgrade-from"} {
		if cmd.Flags().Changed(f) {
			if err := add(f, cmd.Flags().Lookup(f).Value.String()); err != nil {
				return nil, err
			}
		}
	}
	if ops, err := cmd.Flags().GetStringArray("operator"); err == nil {
		if err := add("operator", ops...); err != nil {
			return nil, err
		}
	}
	// Kernel arguments keep their order: the kernel reads them in order.
	if kargs, err := cmd.Flags().GetStringArray("karg"); err == nil {
		if err := add("karg", kargs...); err != nil {
			return nil, err
		}
	}
	return args, nil
}
