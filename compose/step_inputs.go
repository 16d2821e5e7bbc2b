package compose

import "context"

// recordInputs records what the plan was resolved from, by digest: the
// request, the catalog, the release as given and the release knowledge;
// the composition ID is of them.
func recordInputs(_ context.Context, in *inputs, p soFar) (soFar, error) {
	if err := setInputs(p.Plan, in.cat.DigestFor(in.rel.Build), in.given, in.know.Digest, in.req); err != nil {
		return p, err
	}
	// A build of MicroShift other than Red Hat's adds its knowledge; a
	// plan of Red Hat's has the ID it had before builds were data.
	if b := in.facts.Build; b != nil && !b.Default {
		return p, p.SetInput("build", b.Digest)
	}
	return p, nil
}
