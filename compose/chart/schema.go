package chart

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	googleschema "github.com/google/jsonschema-go/jsonschema"
	"github.com/xeipuuv/gojsonreference"
	"github.com/xeipuuv/gojsonschema"
	"helm.sh/helm/v3/pkg/chart"

	"github.com/microshift-compose/microshift-compose/internal/text"
)

// A chart's values.schema.json is checked as `helm install` checks it
// (Helm v3.19 validates with santhosh-tekuri/jsonschema, whose package
// initialisation compiles every draft's meta-schema, about 7 ms of every
// start of the binary): by the draft its $schema declares, no $schema
// being 2020-12, and the format keyword asserted up to draft-07 and not
// after. Two validators with cheap initialisation share the drafts:
// google/jsonschema-go validates 2020-12 (format ignored, as Helm's
// validator ignores it there), and xeipuuv/gojsonschema, Helm's own
// validator before v3.18, validates draft-04, -06 and -07 (format
// asserted). A schema of draft 2019-09, which neither knows, is refused
// with the reason. TestSchemaMatchesHelm checks acceptance against the
// pinned `helm template`.
//
// Helm loads what a schema refers to from files and URLs; a build reads
// only the chart, so a reference outside values.schema.json is refused.

// schemaURL is where the schema is, for resolving its references.
const schemaURL = "file:///values.schema.json"

// The drafts a $schema may declare, as Helm's validator reads it: the
// URL without its scheme and without an empty fragment.
const (
	draft4    = "json-schema.org/draft-04/schema"
	draft6    = "json-schema.org/draft-06/schema"
	draft7    = "json-schema.org/draft-07/schema"
	draft2019 = "json-schema.org/draft/2019-09/schema"
	draft2020 = "json-schema.org/draft/2020-12/schema"
	// latest is the latest draft: 2020-12.
	latest = "json-schema.org/schema"
)

// schemaError is a values.schema.json that cannot be used.
type schemaError struct{ msg string }

func (e *schemaError) Error() string { return e.msg }

// offline refuses a reference out of the schema.
func offline(ref string) error {
	return &schemaError{fmt.Sprintf("it refers to %s, which a build does not read (builds are offline and read only the chart): put the schema in values.schema.json", ref)}
}

// validateSchemas validates the values of ch and of each subchart against
// their values.schema.json, as Helm does, offline.
func validateSchemas(ch *chart.Chart, vals map[string]any, where string) error {
	if ch.Schema != nil {
		if err := validateValues(ch.Schema, vals); err != nil {
			var se *schemaError
			if errors.As(err, &se) {
				return fmt.Errorf("chart %s: values.schema.json: %s", where, text.OneLine(se.msg))
			}
			return fmt.Errorf("chart %s: the values do not meet its values.schema.json: %s", where, text.OneLine(err.Error()))
		}
	}
	for _, s := range ch.Dependencies() {
		sub, _ := vals[s.Name()].(map[string]any)
		if sub == nil {
			sub = map[string]any{}
		}
		if err := validateSchemas(s, sub, where+"/charts/"+s.Name()); err != nil {
			return err
		}
	}
	return nil
}

// validateValues validates vals against schema: a *schemaError when the
// schema cannot be used, another error when the values do not meet it.
func validateValues(schema []byte, vals map[string]any) error {
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var decoded any
	if err := dec.Decode(&decoded); err != nil {
		return &schemaError{fmt.Sprintf("not JSON: %s", err)}
	}
	declared := ""
	if m, ok := decoded.(map[string]any); ok {
		if s, ok := m["$schema"].(string); ok {
			declared = s
		}
	}
	switch d := draftOf(declared); d {
	case "", latest, draft2020:
		// google/jsonschema-go checks no schema against the 2020-12
		// meta-schema: draft-07's, which xeipuuv/gojsonschema has,
		// refuses the same malformed keywords ("type": "objekt", a
		// "required" that is no list of names...).
		if err := metaCheck(decoded, draft7); err != nil {
			return err
		}
		return validate2020(schema, declared, vals)
	case draft4, draft6, draft7:
		if err := metaCheck(decoded, d); err != nil {
			return err
		}
		return validateDraft7(decoded, vals)
	case draft2019:
		return &schemaError{"it declares JSON Schema draft 2019-09, which the build does not validate: declare draft-07 or 2020-12 in $schema"}
	}
	// Helm would load the meta-schema from the URL.
	return offline(declared)
}

// draftOf is the draft a $schema URL names ("" for none), or the URL
// when it names no draft.
func draftOf(u string) string {
	if u == "" {
		return ""
	}
	rest, frag, _ := strings.Cut(u, "#")
	if frag != "" {
		return u
	}
	if r, ok := strings.CutPrefix(rest, "http://"); ok {
		rest = r
	} else {
		rest = strings.TrimPrefix(rest, "https://")
	}
	switch rest {
	case draft4, draft6, draft7, draft2019, draft2020, latest:
		return rest
	}
	return u
}

// validate2020 validates with google/jsonschema-go, which knows 2020-12
// by its one URL.
func validate2020(schema []byte, declared string, vals map[string]any) error {
	var s googleschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return &schemaError{err.Error()}
	}
	if declared != "" {
		s.Schema = "https://json-schema.org/draft/2020-12/schema"
	}
	var loadErr error
	rs, err := s.Resolve(&googleschema.ResolveOptions{
		BaseURI: schemaURL,
		Loader: func(u *url.URL) (*googleschema.Schema, error) {
			loadErr = offline(u.String())
			return nil, loadErr
		},
	})
	if loadErr != nil {
		return loadErr
	}
	if err != nil {
		return &schemaError{err.Error()}
	}
	return rs.Validate(vals)
}

// metaCheck validates the decoded schema against the meta-schema of a draft
// (04, 06 or 07), which xeipuuv/gojsonschema holds.
func metaCheck(decoded any, draft string) error {
	meta, err := gojsonschema.NewSchemaLoader().Compile(gojsonschema.NewReferenceLoader("http://" + draft + "#"))
	if err != nil {
		return fmt.Errorf("loading the meta-schema of %s: %w", draft, err)
	}
	res, err := meta.Validate(gojsonschema.NewGoLoader(decoded))
	if err != nil {
		return &schemaError{err.Error()}
	}
	if res.Valid() {
		return nil
	}
	msgs := make([]string, 0, len(res.Errors()))
	for _, e := range res.Errors() {
		msgs = append(msgs, e.String())
	}
	return &schemaError{"it is no JSON schema: " + strings.Join(msgs, "; ")}
}

// validateDraft7 validates with xeipuuv/gojsonschema (draft-04, -06 and
// -07 by the schema's $schema). The schema's own loader refuses what it
// refers to out of it (a loader that checks the meta-schema as it
// compiles would put the library's file and HTTP loader in its place).
func validateDraft7(decoded any, vals map[string]any) error {
	sl := gojsonschema.NewSchemaLoader()
	s, err := sl.Compile(offlineLoader{source: schemaURL, root: decoded})
	if err != nil {
		var se *schemaError
		if errors.As(err, &se) {
			return se
		}
		return &schemaError{err.Error()}
	}
	res, err := s.Validate(gojsonschema.NewGoLoader(vals))
	if err != nil {
		return &schemaError{err.Error()}
	}
	if res.Valid() {
		return nil
	}
	msgs := make([]string, 0, len(res.Errors()))
	for _, e := range res.Errors() {
		msgs = append(msgs, e.String())
	}
	return errors.New(strings.Join(msgs, "; "))
}

// offlineLoader is a document for xeipuuv/gojsonschema: the schema
// (root, its decoded JSON) when source is schemaURL, and every other
// document a refusal.
type offlineLoader struct {
	source string
	root   any
}

func (l offlineLoader) JsonSource() any { return l.source }

func (l offlineLoader) LoadJSON() (any, error) {
	if u, _, _ := strings.Cut(l.source, "#"); u != schemaURL || l.root == nil {
		return nil, offline(l.source)
	}
	return l.root, nil
}

func (l offlineLoader) JsonReference() (gojsonreference.JsonReference, error) {
	return gojsonreference.NewJsonReference(l.source)
}

func (l offlineLoader) LoaderFactory() gojsonschema.JSONLoaderFactory {
	return offlineFactory{root: l.root}
}

// offlineFactory makes the loaders of the documents the schema refers to.
type offlineFactory struct{ root any }

func (f offlineFactory) New(source string) gojsonschema.JSONLoader {
	return offlineLoader{source: source, root: f.root}
}
