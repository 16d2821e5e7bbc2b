package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/attest"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/compose/provenance"
)

// signOptions is build's --sign-key: sign a statement of the output.
type signOptions struct {
	// Key is a cosign private key file (cosign generate-key-pair's
	// cosign.key); its password is $COSIGN_PASSWORD, never a flag.
	Key string
}

func (o *signOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.Key, "sign-key", "", "cosign private key (cosign.key) to sign "+compose.StatementFile+" with: an in-toto statement (SLSA provenance v1) of every file written and every image; the key's password is read from $"+attest.PasswordEnv)
}

// load reads and decrypts the key, before anything is resolved: a bad key
// or password fails the build with nothing written. nil without --sign-key.
func (o *signOptions) load() (*attest.Signer, error) {
	if o.Key == "" {
		return nil, nil
	}
	return attest.LoadSigner(o.Key, []byte(os.Getenv(attest.PasswordEnv)))
}

// toolVersion is the version and commit the statement names as its builder.
func toolVersion() provenance.Tool {
	b := currentBuild()
	return provenance.Tool{Version: b.Version, Commit: b.Commit}
}
