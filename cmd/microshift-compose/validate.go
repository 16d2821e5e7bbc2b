package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/releases"
)

func newValidateCmd() *cobra.Command {
	var (
		cat    catalogOptions
		rel    releaseOptions
		bp     blueprintOptions
		format formatOptions
	)
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check the catalog, the release files and every blueprint the profiles would produce",
		Long: `validate loads the catalog (embedded, plus --catalog) and checks it against the
release files (every embedded release, or --release / --release-dir): every
component's image keys exist for the arches and releases it claims, and every
image key is claimed by a component. Then it builds the blueprint of every
profile for every arch of every release and validates it with osbuild/images.
Tag-only image references and what osbuild warns about are warnings: one
"warning:" line each on stderr, naming the check (and in the report of
--output json). Exit code 1 if anything fails.`,
		Example: `  microshift-compose validate
  microshift-compose validate --catalog ./my-catalog --release-dir /usr/share/microshift/release`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := format.Validate(); err != nil {
				return err
			}
			catalog, err := cat.load()
			if err == nil && cat.Dir == "" {
				// The embedded catalog is loaded unchecked (its tests
				// check it); validate checks it all the same.
				if probs := catalog.Problems(); len(probs) > 0 {
					err = &components.ProblemsError{Problems: probs}
				}
			}
			if err != nil {
				var pe *components.ProblemsError
				if errors.As(err, &pe) && !format.json() {
					for _, p := range pe.Problems {
						fmt.Fprintf(cmd.OutOrStdout(), "FAIL catalog: %v\n", p)
					}
				}
				return err
			}
			var rels []*releases.Release
			if rel.Dir == "" && rel.Constraint == "" {
				if rels, err = releases.Embedded(); err != nil {
					return err
				}
			} else {
				r, err := rel.load()
				if err != nil {
					return err
				}
				rels = []*releases.Release{r}
			}
			rep, err := assemble.Validate(cmd.Context(), catalog, rels, assemble.ValidateOptions{Distro: bp.Distro, ImageType: bp.ImageType})
			if err != nil {
				return err
			}
			if format.json() {
				if err := printJSON(cmd.OutOrStdout(), rep); err != nil {
					return err
				}
			} else {
				printReport(cmd, rep)
			}
			warnChecks(cmd, rep)
			if !rep.OK() {
				failed := 0
				for _, c := range rep.Checks {
					if !c.OK {
						failed++
					}
				}
				return fmt.Errorf("validation failed: %d of %d checks have problems", failed, len(rep.Checks))
			}
			return nil
		},
	}
	cat.addFlags(cmd)
	rel.addFlags(cmd)
	bp.addFlags(cmd)
	format.addFlags(cmd)
	return cmd
}

func printReport(cmd *cobra.Command, rep *assemble.Report) {
	w := cmd.OutOrStdout()
	warnings, skipped := 0, 0
	for _, c := range rep.Checks {
		status := "ok  "
		switch {
		case !c.OK:
			status = "FAIL"
		case c.Skipped != "":
			status = "skip"
			skipped++
		}
		fmt.Fprintf(w, "%s %s\n", status, c.Subject)
		if c.Skipped != "" {
			fmt.Fprintf(w, "       refused, as the release cannot build it: %s\n", c.Skipped)
		}
		for _, p := range c.Problems {
			fmt.Fprintf(w, "       problem: %s\n", p)
		}
		warnings += len(c.Warnings)
	}
	fmt.Fprintf(w, "%d checks (%d refused by their release), %d warnings\n", len(rep.Checks), skipped, warnings)
}

// warnChecks prints the report's warnings on stderr, as every command
// warns: one "warning:" line each, naming its check.
func warnChecks(cmd *cobra.Command, rep *assemble.Report) {
	warn := warnOnce(cmd.ErrOrStderr())
	for _, c := range rep.Checks {
		for _, w := range c.Warnings {
			warn(c.Subject + ": " + w)
		}
	}
}
