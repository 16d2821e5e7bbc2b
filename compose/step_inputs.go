package compose

import "context"

// recordInputs records what the plan was resolved from, by digest: the
// request, the catalog, the release as given and the release knowledge;
// the composition ID is of them.
func recordInputs(_ context.Context, in *inputs, p soFar) (soFar, error) {
	return p, setInputs(p.Plan, in.cat.Digest, in.given, in.know.Digest, in.req)
}
