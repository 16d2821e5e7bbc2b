package chart

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"text/template"

	"github.com/BurntSushi/toml"
	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
	goyaml "sigs.k8s.io/yaml/goyaml.v3"
)

// helmFuncs is the function map of Helm's template engine, built from
// Sprig's as Helm builds it: Sprig's text functions less env and
// expandenv (a chart reads no environment), Helm's encoders and decoders,
// getHostByName answering "" (Helm's default: no DNS), and lookup with
// Helm's signature (the guard refuses it). include, tpl, required and
// fail are bound to each rendering (engine.go); the guard replaces the
// functions whose result the inputs do not determine. TestFuncMapIsHelms
// checks the names against Helm's and the pinned helm CLI's.
func helmFuncs() template.FuncMap {
	m := sprig.TxtFuncMap()
	delete(m, "env")
	delete(m, "expandenv")
	for name, fn := range map[string]any{
		"toToml":        toTOML,
		"fromToml":      fromTOML,
		"toYaml":        toYAML,
		"toYamlPretty":  toYAMLPretty,
		"fromYaml":      fromYAML,
		"fromYamlArray": fromYAMLArray,
		"toJson":        toJSON,
		"fromJson":      fromJSON,
		"fromJsonArray": fromJSONArray,
		"getHostByName": func(string) string { return "" },
		"lookup": func(apiVersion, kind, namespace, name string) (map[string]any, error) {
			return map[string]any{}, nil
		},
	} {
		m[name] = fn
	}
	return m
}

// The encoders and decoders never fail a template: an encoder that
// cannot encode gives "" (toToml the error's text), a decoder puts the
// error where the result would be (m["Error"], or the only item).

func toYAML(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}

func toYAMLPretty(v any) string {
	var b bytes.Buffer
	enc := goyaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func fromYAML(s string) map[string]any {
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func fromYAMLArray(s string) []any {
	a := []any{}
	if err := yaml.Unmarshal([]byte(s), &a); err != nil {
		a = []any{err.Error()}
	}
	return a
}

func toTOML(v any) string {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(v); err != nil {
		return err.Error()
	}
	return b.String()
}

func fromTOML(s string) map[string]any {
	m := map[string]any{}
	if err := toml.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func toJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

func fromJSON(s string) map[string]any {
	m := map[string]any{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func fromJSONArray(s string) []any {
	a := []any{}
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		a = []any{err.Error()}
	}
	return a
}

// Errors of required and fail carry their message between these marks,
// so that the error of the template names it alone (execError).
const (
	messageStart = "HELM_ERR_START"
	messageEnd   = "HELM_ERR_END"
)

func marked(msg string) error { return errors.New(messageStart + msg + messageEnd) }

// required fails the template with msg when val is nil or "".
func required(msg string, val any) (any, error) {
	if s, isString := val.(string); val == nil || isString && s == "" {
		return val, marked(msg)
	}
	return val, nil
}

// fail fails the template with msg.
func fail(msg string) (string, error) { return "", marked(msg) }
