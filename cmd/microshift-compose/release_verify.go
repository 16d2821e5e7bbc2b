package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/internal/sigverify"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/rebase"
)

// verifyJSON is release verify --output json.
type verifyJSON struct {
	// Source names the files: "release 4.18 (embedded)", "release 4.19
	// (DIR)" or "component release files in DIR".
	Source  string         `json:"source"`
	Summary verifySummary  `json:"summary"`
	Images  []rebase.Check `json:"images"`
}

type verifySummary struct {
	Files  int `json:"files"`
	Images int `json:"images"`
	OK     int `json:"ok"`
	Failed int `json:"failed"`
	// Reasons counts failures per reason.
	Reasons map[rebase.Reason]int `json:"reasons"`
}

func newReleaseVerifyCmd() *cobra.Command {
	var (
		constraint string
		files      fileSelectOptions
		reg        registryOptions
		format     formatOptions
		trust      trustOptions
	)
	cmd := &cobra.Command{
		Use:   "verify [DIR]",
		Short: "Check every image of a release against its registry",
		Long: `verify checks every image reference of the release files in DIR (a release
directory, or a catalog component's release/ directory; or, without DIR, an
embedded release chosen with --release) against its registry: it must be
pinned by digest, its manifest must exist (it is fetched by digest, so its
bytes are checked against the digest too), and it must hold an image for the
file's arch (an index must list linux/<arch>; a single image's config must
name that arch when it names one).

Registries are queried concurrently (--jobs), each distinct image once, with
credentials from --authfile or the auth files podman reads, certs.d
certificates and TLS verified, each request timed out (--timeout) and
retried (--retries); the registries the release names are checked, not their
registries.conf mirrors. The result is
a table with one line per image entry (or --output json); the command exits 1
when any image fails, naming the reason: unpinned, not-found (404),
unauthorized (401), forbidden (403), arch-missing, invalid or error.

With --policy FILE (a containers-policy.json) or --verify-key FILE (sigstore
public keys), each image that passed is also checked against the trust policy
with containers/image, as podman and CRI-O check it: its sigstore signatures
(the sha256-<digest>.sig attachments cosign pushes) are verified offline (no
transparency log, no Fulcio), and an image the policy refuses (unsigned,
signed by another key, or signed for another repository) fails with reason
signature, naming the rule. Without either, signatures are not checked.`,
		Example: `  microshift-compose release verify /usr/share/microshift/release
  microshift-compose release verify --release 4.18 --arch aarch64 --output json
  microshift-compose release verify assets/release --component olm --jobs 16
  microshift-compose release verify --release 4.19 --verify-key redhat-release-key3.pub`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, v := range []interface{ Validate() error }{&files, &reg, &format, &trust} {
				if err := v.Validate(); err != nil {
					return err
				}
			}
			var (
				all    []*releases.File
				label  string
				source string
			)
			if len(args) == 1 {
				if constraint != "" {
					return usageError{errors.New("--release selects an embedded release; give DIR or --release, not both")}
				}
				var err error
				if all, label, err = rebase.LoadFiles(args[0]); err != nil {
					return err
				}
				source = args[0]
			} else {
				rel := releaseOptions{Constraint: constraint}
				if err := rel.Validate(); err != nil {
					return err
				}
				r, err := releases.Load("", constraint)
				if err != nil {
					return withShippedHint(err, constraint, "as DIR")
				}
				all, label, source = r.Files(), "release "+r.String(), r.String()
			}
			selected, err := files.selection().Filter(all, source)
			if err != nil {
				return err
			}
			// The policy and keys are read before any registry is asked.
			var refs []string
			for _, f := range selected {
				for _, im := range f.Images {
					if releases.IsDigestPinned(im.Ref) {
						refs = append(refs, im.Ref)
					}
				}
			}
			t, err := sigverify.Load(trust.options(), refs)
			if err != nil {
				return err
			}
			rc, err := reg.client()
			if err != nil {
				return err
			}
			checks, err := rebase.Verify(cmd.Context(), selected, rc)
			if err != nil {
				return err
			}
			if t != nil {
				if err := rebase.VerifySignatures(cmd.Context(), checks, t, rc); err != nil {
					return err
				}
			}
			sum := summarize(selected, checks)
			if format.json() {
				if err := printJSON(cmd.OutOrStdout(), verifyJSON{Source: label, Summary: sum, Images: checks}); err != nil {
					return err
				}
			} else if err := printChecks(cmd.OutOrStdout(), label, sum, checks); err != nil {
				return err
			}
			if sum.Failed > 0 {
				return fmt.Errorf("%d of %d images failed verification (%s)", sum.Failed, sum.Images, reasonList(sum.Reasons))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&constraint, "release", "", `embedded release to verify when no DIR is given, as a semver constraint ("4.18"); default: the newest`)
	files.addFlags(cmd)
	reg.addFlags(cmd)
	format.addFlags(cmd)
	trust.addFlags(cmd, "each image must satisfy (reason signature when it does not)")
	return cmd
}

func summarize(files []*releases.File, checks []rebase.Check) verifySummary {
	s := verifySummary{Files: len(files), Images: len(checks), Reasons: map[rebase.Reason]int{}}
	for _, c := range checks {
		if c.OK {
			s.OK++
		} else {
			s.Failed++
			s.Reasons[c.Reason]++
		}
	}
	return s
}

func reasonList(m map[rebase.Reason]int) string {
	var parts []string
	for r, n := range m {
		parts = append(parts, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func printChecks(w io.Writer, label string, sum verifySummary, checks []rebase.Check) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RESULT\tFILE\tKEY\tREFERENCE\tDETAIL")
	for _, c := range checks {
		result := "ok"
		detail := c.Message
		if !c.OK {
			result = "FAIL"
			detail = string(c.Reason) + ": " + c.Message
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", result, c.File, c.Key, releases.ShortRef(c.Ref), detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%s: %d %s in %d %s: %d ok, %d failed\n", label,
		sum.Images, text.Plural(sum.Images, "image", "images"), sum.Files, text.Plural(sum.Files, "file", "files"), sum.OK, sum.Failed)
	return err
}
