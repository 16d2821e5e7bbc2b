package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/attest"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/render/provenance"
)

func newVerifyCmd() *cobra.Command {
	var (
		key    string
		format formatOptions
	)
	cmd := &cobra.Command{
		Use:   "verify DIR --key KEY",
		Short: "Check a signed build output against its statement, offline",
		Long: `verify checks the output directory of 'build --sign-key' against the statement
build signed, ` + output.StatementFile + `, with the signer's public key, offline (no
transparency log, no network):

  the DSSE envelope's signature, with --key (cosign.pub);
  the statement: in-toto Statement v1 whose predicate is SLSA provenance v1 of a
    microshift-compose build, for the composition DIR/` + output.LockFile + ` names;
  every file: each file the statement names is in DIR with its sha256, and DIR
    holds no file the statement does not name (a mirrored images/ layout, which
    mirror fills after build, is not checked);
  the images: the digest-pinned images of the lock are the statement's image
    subjects.

The first file that differs (in path order) is named, and verify exits 1.
verify writes nothing. On success it prints one line; --output json prints the
composition ID, the key and the counts of files and images checked.

cosign reads the same statement: 'cosign verify-blob-attestation --key cosign.pub
--signature DIR/` + output.StatementFile + ` --type slsaprovenance1
--insecure-ignore-tlog DIR/` + output.LockFile + `' (any file of the statement does as
the blob).`,
		Example: `  microshift-compose verify out/ --key cosign.pub
  microshift-compose verify out/ --key cosign.pub --output json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := format.Validate(); err != nil {
				return err
			}
			if key == "" {
				return usageError{errors.New("--key KEY is required: the public key (cosign.pub) of the key build --sign-key signed with")}
			}
			v, err := attest.LoadVerifier(key)
			if err != nil {
				return err
			}
			res, err := provenance.Verify(cmd.Context(), args[0], v)
			if err != nil {
				return err
			}
			if format.json() {
				return printJSON(cmd.OutOrStdout(), res)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "verified %s: composition %s, %d files and %d images as signed with %s\n",
				res.Dir, plan.ShortID(res.CompositionID), res.Files, res.Images, res.Key)
			return nil
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "public key (cosign.pub, PEM) of the key the statement was signed with")
	format.addFlags(cmd)
	return cmd
}
