package main

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/plan/request"
)

// fileOptions is -f FILE: a composition file holding what the flags hold.
//
// The file and the command line decode into one request.Request. Its
// values reach the command through the command's own flags: every flag
// the file gives and the command line does not is set to the file's value,
// so that a key goes through exactly the parsing, checks and composition
// ID of its flag, and a flag given on the command line wins.
type fileOptions struct {
	Path string
	// source is the file read, which the lock records.
	source *request.Source
}

// fileFlagUsage is -f's help, also in docs/composition.md, "A composition file".
const fileFlagUsage = "composition file (TOML; keys in docs/composition.schema.json): sets every flag of this command it has a key for, paths relative to the file; a flag given on the command line wins over its key (a list flag replaces the key's list)"

func (o *fileOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.Path, "file", "f", "", fileFlagUsage)
	// Only fails for an unknown flag.
	_ = cmd.MarkFlagFilename("file", "toml")
	markPaths(cmd, "file")
}

// apply checks the values the command line gives (checkGiven), then reads
// the file and sets the flags of cmd it gives that the command line does
// not, each checked as checkGiven checks the command line's: the file
// and the flags are two doors to one rule. A key the file writes is given
// even with its zero value (cis = "", timeout = "0s"), and refused or
// taken as its flag given that value would be. matrix takes the file's
// lists; the other commands take one value of each.
func (o *fileOptions) apply(cmd *cobra.Command, matrix bool) error {
	if err := checkGiven(cmd); err != nil {
		return err
	}
	if o.Path == "" {
		return nil
	}
	req, src, err := request.Load(o.Path)
	if err != nil {
		return err
	}
	if matrix {
		req = req.Lists()
	} else if req, err = req.Single(cmd.Flags().Changed); err != nil {
		return fmt.Errorf("%s: %w", o.Path, err)
	}
	if (len(req.Operators) > 0 || req.OperatorCatalog != "") && cmd.Flags().Lookup("operator") == nil && !cmd.Flags().Changed("lock") {
		return usageError{fmt.Errorf("%s: its operators are built by 'build' (into a filtered catalog the build's lock names), and %s resolves no operators: pass the build's --lock", o.Path, cmd.Name())}
	}
	err = walkRequest(cmd, &req, func(f *pflag.Flag, v reflect.Value, key string) error {
		if f.Changed || (v.IsZero() && !src.Writes(key)) {
			return nil
		}
		if err := setFlag(f, v); err != nil {
			return fmt.Errorf("%s: %w", o.Path, err)
		}
		f.Changed = true
		return checkValue(fmt.Sprintf("%s: key %q (--%s)", o.Path, key, f.Name), f, v)
	})
	if err != nil {
		return err
	}
	// A command that writes warns of what it leaves out (matrix writes no
	// installer inputs); the others read the selection and ignore the rest.
	if cmd.Name() == "build" || cmd.Name() == "matrix" {
		for _, k := range unusedKeys(cmd, &req) {
			warn(cmd.ErrOrStderr(), fmt.Sprintf("%s: %s is not used by %s, which has no --%s", o.Path, k.key, cmd.Name(), k.flag))
		}
	}
	o.source = &src
	return nil
}

type unusedKey struct{ key, flag string }

// unusedKeys are the keys req gives that cmd has no flag for.
func unusedKeys(cmd *cobra.Command, req *request.Request) []unusedKey {
	var out []unusedKey
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		t := v.Type()
		for i := range t.NumField() {
			sf, fv := t.Field(i), v.Field(i)
			key := prefix + strings.Split(sf.Tag.Get("toml"), ",")[0]
			name := sf.Tag.Get("flag")
			if name == "" {
				if sf.Type.Kind() == reflect.Struct {
					walk(fv, key+".")
				}
				continue
			}
			if fv.IsZero() || (fv.Kind() == reflect.Slice && fv.Len() == 0) {
				continue
			}
			f := cmd.Flags().Lookup(name)
			only := sf.Tag.Get("only")
			if f == nil || !holds(f, fv) || (only != "" && !slices.Contains(strings.Split(only, ","), cmd.Name())) {
				out = append(out, unusedKey{key, name})
			}
		}
	}
	walk(reflect.ValueOf(req).Elem(), "")
	return out
}

// record notes the file in the plan (the lock's composition_file): no part
// of the composition ID, which the file and the same flags share.
func (o *fileOptions) record(p *plan.Plan) {
	if o.source != nil {
		p.CompositionFile = &plan.CompositionFile{Path: o.source.Path, SHA256: o.source.SHA256}
	}
}

// pathAnnotation marks a flag whose value is a path (or paths) but that
// no composition-file key gives: checkGiven checks it as a path key's.
const pathAnnotation = "microshift-compose_path"

// markPaths marks flags of cmd that take paths but have no key, so that
// checkGiven checks them with request.CheckPath as it checks the flags
// whose keys are paths.
func markPaths(cmd *cobra.Command, names ...string) {
	for _, n := range names {
		// Only fails for an unknown flag.
		_ = cmd.Flags().SetAnnotation(n, pathAnnotation, []string{"true"})
	}
}

var pathTypes = []reflect.Type{
	reflect.TypeFor[request.FilePath](), reflect.TypeFor[request.DirPath](),
	reflect.TypeFor[request.OutputPath](), reflect.TypeFor[request.UpgradeFrom](),
	// A layout's or archive's path, or a registry's reference: either
	// way one value, which the path rule holds to.
	reflect.TypeFor[request.ImageSource](),
}

// isPath reports whether field v of a request holds a path or paths.
func isPath(v reflect.Value) bool {
	t := v.Type()
	if t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	return slices.Contains(pathTypes, t)
}

// givenValues are the values f holds: a list's, or its one value.
func givenValues(f *pflag.Flag) []string {
	if l, ok := f.Value.(pflag.SliceValue); ok {
		return l.GetSlice()
	}
	return []string{f.Value.String()}
}

// checkValue is the rule for a value given to a flag that a composition
// file's key mirrors, from the command line or from the file: an empty
// string and a zero (or negative) duration choose nothing and are refused
// (leave the flag or key out for its default), and every path keeps
// request.CheckPath's rule. false and an empty list are choices (an empty
// list flag replaces the file's list). subject names the flag, or the
// file and key, in the message; v is the request field the flag mirrors.
func checkValue(subject string, f *pflag.Flag, v reflect.Value) error {
	value := f.Value.String()
	switch {
	case v.Kind() == reflect.String && value == "":
		return fmt.Errorf("%s is empty, which chooses nothing: give a value, or leave it out", subject)
	case v.Type() == durationType:
		if d, err := request.ParseDuration(value); err == nil && d <= 0 {
			return fmt.Errorf("%s must be positive, got %s: leave it out for the default", subject, text.QuoteExcerpt(value))
		}
	case isPath(v):
		for _, p := range givenValues(f) {
			if err := request.CheckPath(p); err != nil {
				return fmt.Errorf("%s: %w", subject, err)
			}
		}
	}
	return nil
}

// checkGiven checks the flags given on the command line as apply checks
// a composition file's keys: checkValue for every flag a key mirrors, and
// request.CheckPath for every path flag no key mirrors (markPaths).
func checkGiven(cmd *cobra.Command) error {
	keyed := map[string]bool{}
	err := walkRequest(cmd, &request.Request{}, func(f *pflag.Flag, v reflect.Value, _ string) error {
		keyed[f.Name] = true
		if !f.Changed {
			return nil
		}
		if err := checkValue("--"+f.Name, f, v); err != nil {
			return usageError{err}
		}
		return nil
	})
	if err != nil {
		return err
	}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err != nil || keyed[f.Name] || f.Annotations[pathAnnotation] == nil {
			return
		}
		for _, p := range givenValues(f) {
			if perr := request.CheckPath(p); perr != nil {
				err = usageError{fmt.Errorf("--%s: %w", f.Name, perr)}
				return
			}
		}
	})
	return err
}

// requestFromFlags is the request the flags given to cmd describe (with
// -f, the file's keys as apply set them).
func requestFromFlags(cmd *cobra.Command) (request.Request, error) {
	var req request.Request
	err := walkRequest(cmd, &req, func(f *pflag.Flag, v reflect.Value, _ string) error {
		if !f.Changed {
			return nil
		}
		return getFlag(f, v)
	})
	return req, err
}

// notInFile are the flags given to cmd that a composition file does not
// hold (how a command runs, not what it composes).
func notInFile(cmd *cobra.Command) []string {
	mapped := map[string]bool{"file": true, "print-file": true}
	_ = walkRequest(cmd, &request.Request{}, func(f *pflag.Flag, _ reflect.Value, _ string) error {
		mapped[f.Name] = true
		return nil
	})
	var out []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if !mapped[f.Name] {
			out = append(out, "--"+f.Name)
		}
	})
	return out
}

// walkRequest calls fn with every field of req that mirrors a flag of cmd,
// and the field's key (dotted): the field's flag tag names the flag, the
// flag holds the kind of value the field does (matrix's list --profile
// fills profiles, build's single one profile), and an only tag lists the
// commands the field is for.
func walkRequest(cmd *cobra.Command, req *request.Request, fn func(f *pflag.Flag, v reflect.Value, key string) error) error {
	var walk func(v reflect.Value, prefix string) error
	walk = func(v reflect.Value, prefix string) error {
		t := v.Type()
		for i := range t.NumField() {
			sf, fv := t.Field(i), v.Field(i)
			key := prefix + strings.Split(sf.Tag.Get("toml"), ",")[0]
			name := sf.Tag.Get("flag")
			if name == "" {
				if sf.Type.Kind() == reflect.Struct {
					if err := walk(fv, key+"."); err != nil {
						return err
					}
				}
				continue
			}
			if only := sf.Tag.Get("only"); only != "" && !slices.Contains(strings.Split(only, ","), cmd.Name()) {
				continue
			}
			f := cmd.Flags().Lookup(name)
			if f == nil || !holds(f, fv) {
				continue
			}
			if err := fn(f, fv, key); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(reflect.ValueOf(req).Elem(), "")
}

// parsedList is a field whose flag takes strings it parses (a list of
// tables in the file, CLASS=NAME,fstype=FS on the command line).
type parsedList interface {
	FlagValues() []string
	SetFlagValues([]string) error
}

var (
	durationType   = reflect.TypeFor[request.Duration]()
	parsedListType = reflect.TypeFor[parsedList]()
)

// holds reports whether flag f takes the kind of value field v holds.
func holds(f *pflag.Flag, v reflect.Value) bool {
	_, slice := f.Value.(pflag.SliceValue)
	switch {
	case v.Type() == durationType:
		return f.Value.Type() == "duration"
	case reflect.PointerTo(v.Type()).Implements(parsedListType):
		return slice
	case v.Kind() == reflect.Slice:
		return slice && v.Type().Elem().Kind() == reflect.String
	case v.Kind() == reflect.Bool:
		return f.Value.Type() == "bool"
	case v.Kind() == reflect.String:
		return f.Value.Type() == "string"
	}
	return false
}

// setFlag sets f to the field's value, as if given on the command line
// (a duration as the file writes it, which its flag keeps).
func setFlag(f *pflag.Flag, v reflect.Value) error {
	switch {
	case reflect.PointerTo(v.Type()).Implements(parsedListType):
		return f.Value.(pflag.SliceValue).Replace(v.Addr().Interface().(parsedList).FlagValues())
	case v.Kind() == reflect.Slice:
		values := make([]string, v.Len())
		for i := range values {
			values[i] = v.Index(i).String()
		}
		return f.Value.(pflag.SliceValue).Replace(values)
	case v.Kind() == reflect.Bool:
		return f.Value.Set(fmt.Sprint(v.Bool()))
	}
	return f.Value.Set(v.String())
}

// getFlag sets the field to f's value (a duration as given, which its
// flag keeps).
func getFlag(f *pflag.Flag, v reflect.Value) error {
	switch {
	case reflect.PointerTo(v.Type()).Implements(parsedListType):
		return v.Addr().Interface().(parsedList).SetFlagValues(f.Value.(pflag.SliceValue).GetSlice())
	case v.Kind() == reflect.Slice:
		values := f.Value.(pflag.SliceValue).GetSlice()
		s := reflect.MakeSlice(v.Type(), len(values), len(values))
		for i, x := range values {
			s.Index(i).SetString(x)
		}
		v.Set(s)
	case v.Kind() == reflect.Bool:
		v.SetBool(f.Value.String() == "true")
	default:
		v.SetString(f.Value.String())
	}
	return nil
}

// printFile writes the composition file the flags given to cmd describe,
// and warns about the flags given that a file does not hold. It prints
// only what -f takes: the file is read back as -f reads it, in the working
// directory its paths are relative to (each must exist, and be a file or
// a directory as its key wants), and refused with -f's message otherwise.
func printFile(cmd *cobra.Command) error {
	req, err := requestFromFlags(cmd)
	if err != nil {
		return err
	}
	data, err := request.Encode(req)
	if err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("finding the working directory: %w", err)
	}
	if _, err := request.ParseIn("the file --print-file prints", wd, data); err != nil {
		return err
	}
	if _, err := cmd.OutOrStdout().Write(data); err != nil {
		return err
	}
	for _, f := range notInFile(cmd) {
		warn(cmd.ErrOrStderr(), f+" is no key of a composition file: pass it on the command line with -f")
	}
	return nil
}
