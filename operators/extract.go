package operators

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/internal/text"
)

// Configs are the filtered catalog's files: for each selected package,
// <package>/catalog.json with its olm.package, the selected channel with
// the selected bundle's entry alone (its replaces, skips and skipRange
// kept, so that OLM upgrades a device from an earlier bundle), the bundle
// as the catalog has it, and the package's deprecations of what is kept.
type Configs struct {
	Files []ConfigFile
	// Bundles are what the selected bundles' CSVs say, by package.
	Bundles map[string]*CSVFacts
	// Notes say what the filtered catalog changed or warns of (a default
	// channel moved, a deprecated bundle).
	Notes []string
}

// ConfigFile is one file of the filtered catalog's configs directory.
type ConfigFile struct {
	// Path is below the configs directory, slash-separated.
	Path string
	Data []byte
}

// CSVFacts are what a bundle's ClusterServiceVersion says that the device
// needs, as far as the catalog carries it: in an olm.bundle.object (the
// whole CSV), or in olm.csv.metadata (all but its install strategy).
type CSVFacts struct {
	// Found reports whether the catalog carries the CSV or its metadata.
	Found bool
	// InstallModes maps OLM's install modes (OwnNamespace,
	// SingleNamespace, MultiNamespace, AllNamespaces) to whether the CSV
	// supports them; nil when unknown.
	InstallModes map[string]bool
	// SuggestedNamespace is the CSV's
	// operatorframework.io/suggested-namespace annotation.
	SuggestedNamespace string
	// Deployments are the CSV's deployments (spec.install.spec), which OLM
	// creates in the operator's namespace; nil when the catalog carries
	// no install strategy (olm.csv.metadata only).
	Deployments []string
}

// Install modes.
const (
	InstallOwnNamespace    = "OwnNamespace"
	InstallSingleNamespace = "SingleNamespace"
	InstallMultiNamespace  = "MultiNamespace"
	InstallAllNamespaces   = "AllNamespaces"
)

// SuggestedNamespaceAnnotation is the CSV annotation naming the namespace
// its authors suggest installing it in.
const SuggestedNamespaceAnnotation = "operatorframework.io/suggested-namespace"

// kept collects the objects of one selected package.
type kept struct {
	pkg      json.RawMessage
	channel  json.RawMessage
	bundle   json.RawMessage
	deprec   json.RawMessage
	others   []Object
	csvFacts *CSVFacts
}

// Extract reads files again and keeps, for the packages of s, what the
// filtered catalog holds (see Configs), and what the selected bundles'
// CSVs say.
// m, when set, is the model of the same files: only the files holding
// objects of the selected packages are read again.
func Extract(ctx context.Context, files Files, lim Limits, s *Set, m *Model) (*Configs, error) {
	byPkg := map[string]*kept{}
	selected := map[string]bool{}
	for _, sel := range s.Selected {
		byPkg[sel.Package] = &kept{}
		selected[sel.Package] = true
	}
	cfg := &Configs{Bundles: map[string]*CSVFacts{}}
	w := walk{raw: true}
	if m != nil {
		w.want = func(path string) bool { return m.hasAny(path, selected) }
	}
	err := walkObjects(ctx, files, lim, w, func(o Object) error {
		k := byPkg[o.Package]
		if o.Schema == SchemaPackage {
			k = byPkg[o.Name]
		}
		if k == nil {
			return nil
		}
		switch o.Schema {
		case SchemaPackage:
			sel := s.Get(o.Name)
			raw, note, err := packageObject(o, sel.Channel)
			if err != nil {
				return err
			}
			if note != "" {
				cfg.Notes = append(cfg.Notes, note)
			}
			k.pkg = raw
		case SchemaChannel:
			sel := s.Get(o.Package)
			if o.Name != sel.Channel {
				return nil
			}
			raw, err := channelObject(o, sel.Bundle.Name)
			if err != nil {
				return err
			}
			k.channel = raw
		case SchemaBundle:
			sel := s.Get(o.Package)
			if o.Name != sel.Bundle.Name {
				return nil
			}
			facts, err := csvFacts(o)
			if err != nil {
				return err
			}
			k.bundle, k.csvFacts = indent(o.Raw), facts
		case SchemaDeprecations:
			sel := s.Get(o.Package)
			raw, notes, err := deprecationsObject(o, sel)
			if err != nil {
				return err
			}
			k.deprec = raw
			cfg.Notes = append(cfg.Notes, notes...)
		default:
			k.others = append(k.others, o)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, sel := range s.Selected {
		k := byPkg[sel.Package]
		if k.pkg == nil || k.channel == nil || k.bundle == nil {
			return nil, fmt.Errorf("the catalog changed while it was read: package %s, channel %s or bundle %s is gone", text.QuoteExcerpt(sel.Package), text.QuoteExcerpt(sel.Channel), text.QuoteExcerpt(sel.Bundle.Name))
		}
		var b bytes.Buffer
		for _, raw := range []json.RawMessage{k.pkg, k.channel, k.bundle, k.deprec} {
			if raw != nil {
				b.Write(raw)
				b.WriteByte('\n')
			}
		}
		sort.SliceStable(k.others, func(i, j int) bool {
			if k.others[i].Schema != k.others[j].Schema {
				return k.others[i].Schema < k.others[j].Schema
			}
			return k.others[i].Name < k.others[j].Name
		})
		for _, o := range k.others {
			b.Write(indent(o.Raw))
			b.WriteByte('\n')
		}
		cfg.Files = append(cfg.Files, ConfigFile{Path: sel.Package + "/catalog.json", Data: b.Bytes()})
		cfg.Bundles[sel.Package] = k.csvFacts
	}
	return cfg, nil
}

// indent is an object as opm render writes one: indented JSON.
func indent(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "    "); err != nil {
		return raw // decoded once already: cannot fail
	}
	return b.Bytes()
}

// rewrite sets fields of an object, keeping the others as they are.
func rewrite(o Object, set map[string]any) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(o.Raw, &fields); err != nil {
		return nil, fmt.Errorf("%s: %s", o.Where, text.OneLine(err.Error()))
	}
	for k, v := range set {
		data, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		// The key as the object spells it (keys are matched without
		// regard to case, as opm and encoding/json match them).
		key := k
		for have := range fields {
			if strings.EqualFold(have, k) {
				key = have
			}
		}
		fields[key] = data
	}
	data, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	return indent(data), nil
}

// packageObject is the package's olm.package, its default channel moved to
// the selected one when the catalog's default is left out.
func packageObject(o Object, channel string) (json.RawMessage, string, error) {
	var pj packageJSON
	if err := json.Unmarshal(o.Raw, &pj); err != nil {
		return nil, "", fmt.Errorf("%s: %s", o.Where, text.OneLine(err.Error()))
	}
	if pj.DefaultChannel == channel {
		return indent(o.Raw), "", nil
	}
	raw, err := rewrite(o, map[string]any{"defaultChannel": channel})
	if err != nil {
		return nil, "", err
	}
	note := fmt.Sprintf("operators: the filtered catalog's default channel of %s is %s, the one chosen (the catalog's is %s, which it leaves out)", pj.Name, channel, cmpOr(pj.DefaultChannel, "none"))
	return raw, note, nil
}

func cmpOr(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

// channelObject is the channel with the entry of bundle alone.
func channelObject(o Object, bundle string) (json.RawMessage, error) {
	var cj channelJSON
	if err := json.Unmarshal(o.Raw, &cj); err != nil {
		return nil, fmt.Errorf("%s: %s", o.Where, text.OneLine(err.Error()))
	}
	i := slices.IndexFunc(cj.Entries, func(e Entry) bool { return e.Name == bundle })
	if i < 0 {
		return nil, fmt.Errorf("%s: the catalog changed while it was read: channel %s no longer lists %s", o.Where, text.QuoteExcerpt(cj.Name), text.QuoteExcerpt(bundle))
	}
	return rewrite(o, map[string]any{"entries": []Entry{cj.Entries[i]}})
}

type deprecationsJSON struct {
	Entries []deprecationEntry `json:"entries"`
}

type deprecationEntry struct {
	Reference struct {
		Schema string `json:"schema"`
		Name   string `json:"name"`
	} `json:"reference"`
	Message string `json:"message"`
}

// deprecationsObject keeps the deprecations of what the filtered catalog
// holds (opm refuses one of a channel or bundle it lacks), and notes them:
// the device gets something its authors retire.
func deprecationsObject(o Object, sel *Selected) (json.RawMessage, []string, error) {
	var dj deprecationsJSON
	if err := json.Unmarshal(o.Raw, &dj); err != nil {
		return nil, nil, fmt.Errorf("%s: olm.deprecations: %s", o.Where, text.OneLine(err.Error()))
	}
	var keep []json.RawMessage
	var all []json.RawMessage
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(o.Raw, &fields); err != nil {
		return nil, nil, fmt.Errorf("%s: olm.deprecations: %s", o.Where, text.OneLine(err.Error()))
	}
	if err := json.Unmarshal(fields["entries"], &all); err != nil && fields["entries"] != nil {
		return nil, nil, fmt.Errorf("%s: olm.deprecations entries: %s", o.Where, text.OneLine(err.Error()))
	}
	var notes []string
	for i, e := range dj.Entries {
		var what string
		switch ref := e.Reference; ref.Schema {
		case SchemaPackage:
			what = "package " + sel.Package
		case SchemaChannel:
			if ref.Name == sel.Channel {
				what = "channel " + sel.Channel + " of " + sel.Package
			}
		case SchemaBundle:
			if ref.Name == sel.Bundle.Name {
				what = "bundle " + sel.Bundle.Name
			}
		}
		if what == "" {
			continue
		}
		keep = append(keep, all[i])
		notes = append(notes, fmt.Sprintf("operators: %s is deprecated: %s", what, text.OneLine(text.Excerpt(e.Message))))
	}
	if len(keep) == 0 {
		return nil, nil, nil
	}
	raw, err := rewrite(o, map[string]any{"entries": keep})
	return raw, notes, err
}

// csvJSON is what of a ClusterServiceVersion the device needs.
type csvJSON struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		InstallModes []installMode `json:"installModes"`
		Strategy     struct {
			Spec struct {
				Deployments []struct {
					Name string `json:"name"`
				} `json:"deployments"`
			} `json:"spec"`
		} `json:"install"`
	} `json:"spec"`
}

type installMode struct {
	Type      string `json:"type"`
	Supported bool   `json:"supported"`
}

type csvMetadataJSON struct {
	Annotations  map[string]string `json:"annotations"`
	InstallModes []installMode     `json:"installModes"`
}

// csvFacts reads what the device needs of a bundle's CSV from its
// olm.bundle.object properties, or its olm.csv.metadata.
func csvFacts(o Object) (*CSVFacts, error) {
	var bj bundleJSON
	if err := json.Unmarshal(o.Raw, &bj); err != nil {
		return nil, fmt.Errorf("%s: %s", o.Where, text.OneLine(err.Error()))
	}
	f := &CSVFacts{}
	setModes := func(modes []installMode) {
		if len(modes) == 0 {
			return
		}
		f.InstallModes = map[string]bool{}
		for _, m := range modes {
			f.InstallModes[m.Type] = m.Supported
		}
	}
	for _, prop := range bj.Properties {
		switch prop.Type {
		case PropertyBundleObject:
			var obj struct {
				Data string `json:"data"`
			}
			if err := json.Unmarshal(prop.Value, &obj); err != nil {
				return nil, fmt.Errorf("%s: bundle %s: olm.bundle.object: %s", o.Where, text.QuoteExcerpt(bj.Name), text.OneLine(err.Error()))
			}
			data, err := base64.StdEncoding.DecodeString(obj.Data)
			if err != nil {
				return nil, fmt.Errorf("%s: bundle %s: olm.bundle.object is not base64: %v", o.Where, text.QuoteExcerpt(bj.Name), err)
			}
			js, err := sigsyaml.YAMLToJSON(data)
			if err != nil {
				return nil, fmt.Errorf("%s: bundle %s: olm.bundle.object is neither JSON nor YAML: %s", o.Where, text.QuoteExcerpt(bj.Name), text.OneLine(err.Error()))
			}
			var csv csvJSON
			if err := json.Unmarshal(js, &csv); err != nil || csv.Kind != "ClusterServiceVersion" {
				continue // a CRD, a Service...
			}
			f.Found = true
			setModes(csv.Spec.InstallModes)
			f.SuggestedNamespace = csv.Metadata.Annotations[SuggestedNamespaceAnnotation]
			f.Deployments = []string{}
			for _, d := range csv.Spec.Strategy.Spec.Deployments {
				f.Deployments = append(f.Deployments, d.Name)
			}
		case PropertyCSVMetadata:
			var md csvMetadataJSON
			if err := json.Unmarshal(prop.Value, &md); err != nil {
				return nil, fmt.Errorf("%s: bundle %s: olm.csv.metadata: %s", o.Where, text.QuoteExcerpt(bj.Name), text.OneLine(err.Error()))
			}
			if f.Found && f.Deployments != nil {
				continue // the whole CSV says more
			}
			f.Found = true
			setModes(md.InstallModes)
			f.SuggestedNamespace = md.Annotations[SuggestedNamespaceAnnotation]
		}
	}
	return f, nil
}
