package main

import (
	"os"
	"sync"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/attest"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/render/provenance"
)

// signOptions is build's --sign-key: sign a statement of the output.
type signOptions struct {
	// Key is a cosign private key file (cosign generate-key-pair's
	// cosign.key); its password is $COSIGN_PASSWORD, never a flag.
	Key string
}

func (o *signOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.Key, "sign-key", "", "cosign private key (cosign.key) to sign "+output.StatementFile+" with: an in-toto statement (SLSA provenance v1) of every file written and every image; the key's password is read from $"+attest.PasswordEnv)
	markPaths(cmd, "sign-key")
}

// addMirrorFlags binds --sign-key for mirror, which signs an oci-archive
// bundle.
func (o *signOptions) addMirrorFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.Key, "sign-key", "", "cosign private key (cosign.key) to sign the oci-archive:FILE destination with, as cosign sign-blob does: FILE.sig, or FILE.parts.json.sig for a split archive (--max-size); the key's password is read from $"+attest.PasswordEnv)
	markPaths(cmd, "sign-key")
}

// start reads and checks the key file at once, so that a file that is no
// cosign private key fails the build before anything is resolved, and
// decrypts it (scrypt, cosign's parameters) beside the resolution and
// rendering. The returned function waits for the signer; nil without
// --sign-key. Either way nothing is written before it returns.
func (o *signOptions) start() (func() (*attest.Signer, error), error) {
	if o.Key == "" {
		return func() (*attest.Signer, error) { return nil, nil }, nil
	}
	k, err := attest.ReadSigningKey(o.Key)
	if err != nil {
		return nil, err
	}
	// An unset variable is not an empty password: the message says which.
	var password []byte
	if v, ok := os.LookupEnv(attest.PasswordEnv); ok {
		password = []byte(v)
	}
	type result struct {
		s   *attest.Signer
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := k.Decrypt(password)
		done <- result{s, err}
	}()
	return sync.OnceValues(func() (*attest.Signer, error) {
		r := <-done
		return r.s, r.err
	}), nil
}

// toolVersion is the version and commit the statement names as its builder.
func toolVersion() provenance.Tool {
	b := currentBuild()
	return provenance.Tool{Version: b.Version, Commit: b.Commit}
}
