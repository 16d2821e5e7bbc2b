package rebase

import (
	"context"
	"slices"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/sigverify"
)

// ReasonSignature: the trust policy refuses the image (unsigned, signed by
// another key or for another repository, a signature that does not verify).
const ReasonSignature Reason = "signature"

// VerifySignatures checks the images of the checks that passed against the
// trust policy (each distinct reference once) and fails those it refuses
// with ReasonSignature, naming the rule; those it accepts say so in their
// message. An error is returned only when the checks could not run.
func VerifySignatures(ctx context.Context, checks []Check, t *sigverify.Trust, o registryclient.Options) error {
	var refs []string
	for _, c := range checks {
		if c.OK {
			refs = append(refs, c.Ref)
		}
	}
	slices.Sort(refs)
	refs = slices.Compact(refs)
	results, err := sigverify.Verify(ctx, t, refs, o)
	if err != nil {
		return err
	}
	byRef := map[string]sigverify.Result{}
	for _, r := range results {
		byRef[r.Ref] = r
	}
	for i := range checks {
		c := &checks[i]
		r, ok := byRef[c.Ref]
		if !c.OK || !ok {
			continue
		}
		if r.Err != nil {
			c.OK, c.Reason, c.Message = false, ReasonSignature, r.Err.Error()
			continue
		}
		c.Message += "; signature accepted by " + r.Rule
	}
	return nil
}
