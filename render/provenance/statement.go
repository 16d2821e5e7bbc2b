package provenance

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	slsa "github.com/in-toto/attestation/go/predicates/provenance/v1"
	ita "github.com/in-toto/attestation/go/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/microshift-compose/microshift-compose/attest"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
)

// The statement's fixed names.
const (
	// PredicateType is SLSA provenance v1 (cosign's --type slsaprovenance1).
	PredicateType = "https://slsa.dev/provenance/v1"
	// BuildType names what the predicate's buildDefinition describes: a
	// microshift-compose build, its externalParameters as below.
	BuildType = "https://github.com/microshift-compose/microshift-compose/provenance/build/v1"
	// BuilderID is runDetails.builder.id.
	BuilderID = "https://github.com/microshift-compose/microshift-compose"
)

// The names of resolvedDependencies that are not release-info RPMs.
const (
	DependencyCatalog   = "catalog"
	DependencyRelease   = "release-files"
	DependencyKnowledge = "release-knowledge"
)

// Tool is the version of microshift-compose that built the output.
type Tool struct {
	Version string
	// Commit is the git commit built, "" when unknown.
	Commit string
}

// Statement is the in-toto statement of a build's output: its subjects
// every output file (sorted by path) and then every image pinned by digest
// (sorted by reference), its predicate SLSA provenance v1. An image named
// by tag only (--allow-unpinned) has no digest to be a subject by; the
// lock, a subject, names it. The same output and tool give the same
// statement.
func Statement(out *output.Dir, tool Tool) (*ita.Statement, error) {
	p := out.Plan
	st := &ita.Statement{Type: ita.StatementTypeUri, PredicateType: PredicateType}
	files := slices.Clone(out.Files)
	slices.SortFunc(files, func(a, b output.File) int { return strings.Compare(a.Path, b.Path) })
	for i, f := range files {
		if f.Path == output.StatementFile {
			return nil, fmt.Errorf("making the statement: the output already holds %s", output.StatementFile)
		}
		if i > 0 && files[i-1].Path == f.Path {
			return nil, fmt.Errorf("making the statement: the output holds %s twice", f.Path)
		}
		sum, _ := f.Digest()
		st.Subject = append(st.Subject, &ita.ResourceDescriptor{Name: f.Path, Digest: map[string]string{"sha256": sum}})
	}
	images, err := imageSubjects(p)
	if err != nil {
		return nil, err
	}
	st.Subject = append(st.Subject, images...)
	pred, err := predicate(p, tool)
	if err != nil {
		return nil, err
	}
	if st.Predicate, err = attest.Struct(pred); err != nil {
		return nil, fmt.Errorf("making the statement: %w", err)
	}
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("making the statement: %w", err)
	}
	return st, nil
}

// imageSubjects are the plan's digest-pinned images, by reference.
func imageSubjects(p *plan.Plan) ([]*ita.ResourceDescriptor, error) {
	var out []*ita.ResourceDescriptor
	for _, ref := range p.ImageRefs() {
		_, dig, ok := strings.Cut(ref, "@")
		if !ok {
			continue // tag-only (--allow-unpinned): in the lock, not a subject
		}
		algo, hexSum, ok := strings.Cut(dig, ":")
		if !ok || algo != "sha256" || len(hexSum) != sha256.Size*2 {
			return nil, fmt.Errorf("making the statement: image %s: not a sha256 digest", ref)
		}
		out = append(out, &ita.ResourceDescriptor{Name: ref, Digest: map[string]string{"sha256": hexSum}})
	}
	return out, nil
}

// externalParameters is what the build was asked for: the composition ID
// and what it hashes (plan.Inputs), as the ID's own JSON has them.
type externalParameters struct {
	CompositionID string         `json:"composition_id"`
	IDSchema      int            `json:"id_schema,omitempty"`
	Request       any            `json:"request,omitempty"`
	Options       map[string]any `json:"options,omitempty"`
}

// predicate is the SLSA provenance v1 of a plan's build.
func predicate(p *plan.Plan, tool Tool) (*slsa.Provenance, error) {
	if p.ID == "" {
		return nil, errors.New("making the statement: the plan has no composition ID")
	}
	ext := externalParameters{CompositionID: p.ID}
	var deps []*ita.ResourceDescriptor
	if in := p.Inputs; in != nil {
		ext.IDSchema, ext.Request, ext.Options = in.IDSchema, in.Request, in.Options
		for _, d := range []struct{ name, sum string }{
			{DependencyCatalog, in.Catalog},
			{DependencyRelease, in.Release},
			{DependencyKnowledge, in.Knowledge},
		} {
			if d.sum != "" {
				deps = append(deps, &ita.ResourceDescriptor{Name: d.name, Digest: map[string]string{"sha256": d.sum}})
			}
		}
	}
	// The release-info RPMs the release files came from (release fetch,
	// release import), by NEVRA and the .rpm's sha256.
	for _, r := range p.Release.RPMs {
		deps = append(deps, &ita.ResourceDescriptor{Name: r.NEVRA, Digest: map[string]string{"sha256": r.SHA256}})
	}
	extStruct, err := toStruct(ext)
	if err != nil {
		return nil, err
	}
	version := map[string]string{"microshift-compose": tool.Version}
	if tool.Commit != "" {
		version["commit"] = tool.Commit
	}
	pred := &slsa.Provenance{
		BuildDefinition: &slsa.BuildDefinition{
			BuildType:            BuildType,
			ExternalParameters:   extStruct,
			ResolvedDependencies: deps,
		},
		RunDetails: &slsa.RunDetails{
			Builder: &slsa.Builder{Id: BuilderID, Version: version},
			// invocationId names what was built, not when: build records
			// no clock (no startedOn, no finishedOn).
			Metadata: &slsa.BuildMetadata{InvocationId: p.ID},
		},
	}
	if err := pred.Validate(); err != nil {
		return nil, fmt.Errorf("making the statement: %w", err)
	}
	return pred, nil
}

// toStruct is v's JSON (encoding/json: the field names the composition ID
// hashes) as a protobuf Struct.
func toStruct(v any) (*structpb.Struct, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("making the statement: encoding the request: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("making the statement: encoding the request: %w", err)
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		return nil, fmt.Errorf("making the statement: encoding the request: %w", err)
	}
	return s, nil
}

// Sign makes the output's statement, signs it with s and adds it to out
// as output.StatementFile, so that write.Write writes it with the rest,
// atomically.
func Sign(ctx context.Context, out *output.Dir, s *attest.Signer, tool Tool) error {
	st, err := Statement(out, tool)
	if err != nil {
		return err
	}
	env, err := s.Sign(ctx, st)
	if err != nil {
		return fmt.Errorf("signing %s: %w", output.StatementFile, err)
	}
	out.Files = append(out.Files, output.File{Path: output.StatementFile, Data: env})
	return nil
}
