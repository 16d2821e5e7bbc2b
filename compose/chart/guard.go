package chart

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"text/template"
	"text/template/parse"
	"time"
	"unicode/utf8"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
)

// Limits bound the rendering of one chart: what a template may make the
// build do, in time, memory and output, whatever its text. They are
// counted, not measured, so that the same chart is accepted or refused the
// same way on any machine; Timeout is the one exception, the last resort
// for work nothing counts.
type Limits struct {
	// Timeout bounds the wall time of the template engine.
	Timeout time.Duration
	// Steps bounds function calls, loop iterations and template
	// executions (include, tpl and the template action), weighted by
	// what each costs.
	Steps int64
	// Written bounds the bytes templates write, include and tpl output
	// included, while they write them.
	Written int64
	// Work bounds the bytes of the strings and parsed values functions
	// return, together.
	Work int64
	// Value bounds what one function call may return, checked before the
	// call where the arguments tell the size (repeat, until, indent,
	// replace, toYaml...) and after it for every call.
	Value int64
	// Depth bounds how deep templates nest: include, tpl and the
	// template action.
	Depth int
	// Output bounds the rendered resources, CRDs included: bytes, and
	// YAML nodes (as a component's kustomize input is bounded).
	Output int64
	Nodes  int
}

// DefaultLimits are the limits of a build. Nodes is the budget of a
// component's manifests and of a plugin's output (the kustomize path the
// chart's resources take next); Output is half a plugin's bytes, since the
// build holds a rendered resource in about seven copies on its way to the
// blueprint (kustomize, the plan, the blueprint, the lock): at 8 MiB an
// accepted chart peaks under 150 MB (hack/bench.sh rss). Real charts meet
// the node budget long before the byte one. The others leave room for the
// largest charts that fit in those.
var DefaultLimits = Limits{
	Timeout: 30 * time.Second,
	Steps:   2_000_000,
	Written: 8 << 20,
	Work:    32 << 20,
	Value:   8 << 20,
	Depth:   200,
	Output:  MaxOutput,
	Nodes:   inputfile.MaxManifestNodes,
}

// MaxOutput bounds a chart's rendered resources: half of what a plugin
// may print (plugin.DefaultMaxOutput).
const MaxOutput = 8 << 20

// MaxObject bounds one rendered resource: etcd's request limit (its
// --max-request-bytes default, 1.5 MiB), over which the API server
// refuses to store an object, so that it could never be applied.
const MaxObject = 3 << 19

// ErrLimit is wrapped by the error for a rendering that went past a limit.
var ErrLimit = errors.New("chart rendering is bounded")

// ErrNotReproducible is wrapped by the error for a template that calls a
// function whose result the chart and values do not determine.
var ErrNotReproducible = errors.New("the same inputs would not render the same bytes")

// ErrNeedsCluster is wrapped by the error for a template that calls lookup.
var ErrNeedsCluster = errors.New("needs a cluster")

// refusal is why a function is refused.
type refusal struct {
	why    string
	advice string
	err    error
}

const (
	adviceValue = "set the value it would generate in the chart's values (most charts generate one only when none is given)"
	adviceCert  = "give the certificate and key in the chart's values, or let cert-manager issue them on the device"
	adviceClock = "give the time as a value"
)

// refused are the functions of Helm's function map (Sprig v3.3.0 and
// Helm v3.19.0's own, read from their sources) whose result the chart and
// its values do not determine: random, clock, key generation, and the
// cluster. A composition ID must name one output, so a template calling
// one is refused, naming the function and the template, rather than made
// up a value: a password or key derived from the composition would be
// derived from public inputs.
var refused = sync.OnceValue(func() map[string]refusal {
	return map[string]refusal{
		"randAlphaNum":             {"is random", adviceValue, ErrNotReproducible},
		"randAlpha":                {"is random", adviceValue, ErrNotReproducible},
		"randAscii":                {"is random", adviceValue, ErrNotReproducible},
		"randNumeric":              {"is random", adviceValue, ErrNotReproducible},
		"randBytes":                {"is random", adviceValue, ErrNotReproducible},
		"randInt":                  {"is random", adviceValue, ErrNotReproducible},
		"uuidv4":                   {"is random", adviceValue, ErrNotReproducible},
		"shuffle":                  {"is random", "give the string in the order wanted", ErrNotReproducible},
		"bcrypt":                   {"salts at random", "give the hash in the chart's values", ErrNotReproducible},
		"htpasswd":                 {"salts at random (bcrypt)", "give the htpasswd line in the chart's values", ErrNotReproducible},
		"encryptAES":               {"uses a random IV", "give the encrypted value in the chart's values", ErrNotReproducible},
		"genPrivateKey":            {"generates a key", adviceCert, ErrNotReproducible},
		"genCA":                    {"generates a key and a certificate dated now", adviceCert, ErrNotReproducible},
		"genCAWithKey":             {"generates a certificate with a random serial, dated now", adviceCert, ErrNotReproducible},
		"genSelfSignedCert":        {"generates a key and a certificate dated now", adviceCert, ErrNotReproducible},
		"genSelfSignedCertWithKey": {"generates a certificate with a random serial, dated now", adviceCert, ErrNotReproducible},
		"genSignedCert":            {"generates a key and a certificate dated now", adviceCert, ErrNotReproducible},
		"genSignedCertWithKey":     {"generates a certificate with a random serial, dated now", adviceCert, ErrNotReproducible},
		"now":                      {"reads the clock", adviceClock, ErrNotReproducible},
		"ago":                      {"reads the clock", adviceClock, ErrNotReproducible},
		"lookup":                   {"needs a cluster: a build renders offline, where lookup would find nothing", "give what it looks up in the chart's values", ErrNeedsCluster},
	}
})

// clockWhenNoTime are the date functions that read the clock when their
// time argument (index arg) is not a time or a whole number: Sprig then
// formats time.Now(). A number from the values is a float64, so
// `date "2006" .Values.t` reads the clock too.
var clockWhenNoTime = map[string]int{
	"date": 1, "dateInZone": 1, "date_in_zone": 1, "htmlDate": 0, "htmlDateInZone": 0,
}

// deterministic are Helm functions whose result depends on the machine or
// on Go's map order, replaced by ones that give one answer: keys and
// values in sorted key order (any order is one Helm may give), dates in
// UTC instead of the build machine's zone.
var deterministic = sync.OnceValue(func() template.FuncMap {
	return template.FuncMap{
		"keys":   sortedKeys,
		"values": sortedValues,
		"date": func(format string, date any) string {
			return inUTC(date).Format(format)
		},
		"htmlDate": func(date any) string {
			return inUTC(date).Format("2006-01-02")
		},
		"toDate": func(format, str string) time.Time {
			t, _ := time.ParseInLocation(format, str, time.UTC)
			return t
		},
		"mustToDate": func(format, str string) (time.Time, error) {
			return time.ParseInLocation(format, str, time.UTC)
		},
	}
})

// inUTC is Sprig's date argument as a time in UTC (the clock case is
// refused before).
func inUTC(date any) time.Time {
	var t time.Time
	switch d := date.(type) {
	case time.Time:
		t = d
	case *time.Time:
		t = *d
	case int64:
		t = time.Unix(d, 0)
	case int:
		t = time.Unix(int64(d), 0)
	case int32:
		t = time.Unix(int64(d), 0)
	}
	return t.UTC()
}

func sortedKeys(dicts ...map[string]any) []string {
	k := []string{}
	for _, d := range dicts {
		start := len(k)
		for key := range d {
			k = append(k, key)
		}
		slices.Sort(k[start:])
	}
	return k
}

func sortedValues(dict map[string]any) []any {
	out := []any{}
	for _, k := range sortedKeys(dict) {
		out = append(out, dict[k])
	}
	return out
}

// The functions the guard puts at the start of every range body (a step,
// so that a loop that calls nothing still counts), and at the start and
// the end of every template (how deep templates nest: nothing ends a
// template early but an error, which ends the rendering).
const (
	tickFunc  = "microshiftComposeStep"
	enterFunc = "microshiftComposeEnter"
	leaveFunc = "microshiftComposeLeave"
)

// guard is one rendering's bounds, which the engine (engine.go) calls at
// every function, parse tree, write and tpl: it counts and bounds, and keeps
// the first limit crossed or function refused.
type guard struct {
	ctx      context.Context
	lim      Limits
	deadline time.Time
	steps    int64
	// sinceClock counts the steps since the clock was read.
	sinceClock int64
	written    int64
	work       int64
	depth      int
	seen       map[*parse.Tree]bool
	// file is the chart's template being rendered.
	file string
	// strict says of a file whether a refused call in it stops the
	// rendering; in the others it returns a fixed value, and calls
	// records the first per file, so that a call in a file that renders
	// only test hooks (which are dropped) need not be refused. leaks are
	// the files that changed a map (set, merge...) after such a call: the
	// value may reach another file.
	strict func(file string) bool
	calls  map[string]*FuncError
	leaks  map[string]bool
	// err is the first violation: the reason a rendering stopped, whatever
	// the engine made of it.
	err error
}

func newGuard(ctx context.Context, lim Limits, strict func(file string) bool) *guard {
	if strict == nil {
		strict = func(string) bool { return false }
	}
	return &guard{ctx: ctx, lim: lim, deadline: time.Now().Add(lim.Timeout), seen: map[*parse.Tree]bool{},
		strict: strict, calls: map[string]*FuncError{}, leaks: map[string]bool{}}
}

// File notes which of the chart's templates renders now.
func (g *guard) File(name string) { g.file = name }

// refuse stops the rendering for a refused call in a strict file;
// elsewhere it records the call and returns a fixed value of the
// function's result types.
func (g *guard) refuse(fe *FuncError, args []reflect.Value, t reflect.Type) []reflect.Value {
	if g.strict(g.file) {
		panic(g.fail(fe))
	}
	if g.calls[g.file] == nil {
		g.calls[g.file] = fe
	}
	return placeholder(fe.Func, args, t)
}

// mutators change a map they are given: after a refused call, the fixed
// value may be put where another file reads it.
var mutators = []string{"set", "unset", "merge", "mergeOverwrite", "mustMerge", "mustMergeOverwrite"}

// placeholder is what a refused function returns where its result is
// not used (a test hook's name): zero values, a string of the length asked
// for, an empty lookup.
func placeholder(name string, args []reflect.Value, t reflect.Type) []reflect.Value {
	out := make([]reflect.Value, t.NumOut())
	for i := range out {
		out[i] = reflect.Zero(t.Out(i))
	}
	if len(out) == 0 {
		return out
	}
	switch r := t.Out(0); {
	case r.Kind() == reflect.String:
		s := "x"
		switch name {
		case "randAlphaNum", "randAlpha", "randAscii", "randNumeric":
			if len(args) > 0 && args[0].CanInt() && args[0].Int() > 0 {
				s = strings.Repeat("x", int(min(args[0].Int(), 4096)))
			}
		case "uuidv4":
			s = "00000000-0000-0000-0000-000000000000"
		}
		out[0] = reflect.ValueOf(s).Convert(r)
	case r == reflect.TypeOf(time.Time{}):
		out[0] = reflect.ValueOf(time.Unix(0, 0).UTC())
	case r.Kind() == reflect.Map && r.Key().Kind() == reflect.String:
		out[0] = reflect.MakeMap(r)
	}
	return out
}

// fail records the first violation and returns it.
func (g *guard) fail(err error) error {
	if g.err == nil {
		g.err = err
	}
	return g.err
}

func (g *guard) limit(what string, limit int64) error {
	return g.fail(&LimitError{What: what, Limit: limit})
}

// LimitError is a rendering that went past one of its Limits.
type LimitError struct {
	What  string
	Limit int64
}

func (e *LimitError) Error() string {
	if e.What == "time" {
		return fmt.Sprintf("rendering took longer than %s", time.Duration(e.Limit))
	}
	return fmt.Sprintf("%s (%d)", e.What, e.Limit)
}

func (e *LimitError) Unwrap() error { return ErrLimit }

// FuncError is a template calling a refused function.
type FuncError struct {
	Func   string
	Why    string
	Advice string
	err    error
}

func (e *FuncError) Error() string {
	if errors.Is(e.err, ErrNotReproducible) {
		return fmt.Sprintf("%s %s: the same chart and values would not render the same bytes, and one composition ID would name different outputs; %s", e.Func, e.Why, e.Advice)
	}
	return fmt.Sprintf("%s %s; %s", e.Func, e.Why, e.Advice)
}
func (e *FuncError) Unwrap() error { return e.err }

// step counts n steps and checks the clock and the context.
func (g *guard) step(n int64) error {
	if g.err != nil {
		return g.err
	}
	g.steps += n
	if g.steps > g.lim.Steps {
		return g.limit("more template steps (function calls, loop iterations, template executions) than the limit", g.lim.Steps)
	}
	// Reading the clock costs more than a step: every 256 steps is often
	// enough (a step is a microsecond or two), and every slow step (n >
	// 1) is checked.
	if g.sinceClock += n; g.sinceClock < 256 && n == 1 {
		return nil
	}
	g.sinceClock = 0
	if err := g.ctx.Err(); err != nil {
		return g.fail(err)
	}
	if time.Now().After(g.deadline) {
		return g.fail(&LimitError{What: "time", Limit: int64(g.lim.Timeout)})
	}
	return nil
}

func (g *guard) addWork(n int64) error {
	g.work += n
	if g.work > g.lim.Work {
		return g.limit("functions returned more bytes together than the limit", g.lim.Work)
	}
	return nil
}

// builtins are text/template's own printing functions, as it defines
// them (built on first use: package init does no work): put in the function map (which takes precedence), they are
// counted and bounded like the others.
var builtins = sync.OnceValue(func() template.FuncMap {
	return template.FuncMap{
		"print":    fmt.Sprint,
		"printf":   fmt.Sprintf,
		"println":  fmt.Sprintln,
		"html":     template.HTMLEscaper,
		"js":       template.JSEscaper,
		"urlquery": template.URLQueryEscaper,
	}
})

// Funcs replaces every function of m by one that counts and bounds it;
// refused functions by one that refuses.
func (g *guard) Funcs(m template.FuncMap) {
	if _, engineMap := m["toYaml"]; engineMap {
		for name, fn := range builtins() {
			m[name] = fn
		}
	}
	for name, fn := range deterministic() {
		if _, ok := m[name]; ok {
			m[name] = fn
		}
	}
	for name, fn := range m {
		m[name] = g.wrap(name, fn)
	}
	m[tickFunc] = func() (string, error) { return "", g.step(1) }
	m[enterFunc] = func() (string, error) {
		g.depth++
		if g.depth > g.lim.Depth {
			return "", g.limit("templates nested deeper than the limit (include, tpl and the template action)", int64(g.lim.Depth))
		}
		return "", g.step(1)
	}
	m[leaveFunc] = func() string {
		g.depth--
		return ""
	}
}

// wrap returns fn with the same type, counting each call, checking its
// arguments before and its result after.
func (g *guard) wrap(name string, fn any) any {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func {
		return fn
	}
	r, isRefused := refused()[name]
	mutates := slices.Contains(mutators, name)
	return reflect.MakeFunc(v.Type(), func(args []reflect.Value) []reflect.Value {
		if err := g.step(weight(name)); err != nil {
			panic(err)
		}
		if isRefused {
			return g.refuse(&FuncError{Func: name, Why: r.why, Advice: r.advice, err: r.err}, args, v.Type())
		}
		if mutates && g.calls[g.file] != nil {
			g.leaks[g.file] = true
		}
		flat := args
		if v.Type().IsVariadic() {
			last := args[len(args)-1]
			flat = append(slices.Clone(args[:len(args)-1]), make([]reflect.Value, last.Len())...)
			for i := range last.Len() {
				flat[len(args)-1+i] = last.Index(i)
			}
		}
		if fe := clockRead(name, flat); fe != nil {
			return g.refuse(fe, args, v.Type())
		}
		if err := g.before(name, flat); err != nil {
			panic(err)
		}
		var out []reflect.Value
		if v.Type().IsVariadic() {
			out = v.CallSlice(args)
		} else {
			out = v.Call(args)
		}
		if len(out) > 0 {
			if err := g.after(name, out[0]); err != nil {
				panic(err)
			}
		}
		return out
	}).Interface()
}

// weight is what a call costs in steps beyond one.
func weight(name string) int64 {
	switch name {
	case "derivePassword":
		return 20_000 // scrypt: ~100 ms and 32 MiB per call
	case "semver", "semverCompare", "regexMatch", "mustRegexMatch", "regexFind", "mustRegexFind", "regexQuoteMeta":
		return 10 // compiles a constraint or an expression
	}
	return 1
}

// clockRead refuses a date function called so that it reads the clock.
func clockRead(name string, args []reflect.Value) *FuncError {
	if pos, ok := clockWhenNoTime[name]; ok && pos < len(args) {
		switch args[pos].Interface().(type) {
		case time.Time, *time.Time, int, int32, int64:
		default:
			return &FuncError{Func: name, Why: fmt.Sprintf("reads the clock: its time argument is a %s, not a time or a whole number", typeName(args[pos])), Advice: adviceClock, err: ErrNotReproducible}
		}
	}
	if name == "durationRound" && len(args) > 0 {
		if _, ok := args[0].Interface().(time.Time); ok {
			return &FuncError{Func: name, Why: "reads the clock: given a time, it rounds the time since then", Advice: adviceClock, err: ErrNotReproducible}
		}
	}
	return nil
}

// before checks the arguments of a call whose result they bound: the
// functions that make something much larger than what they are given.
func (g *guard) before(name string, args []reflect.Value) error {
	size, ok := predict(name, args, g.lim.Value)
	if ok && size > g.lim.Value {
		return g.limit(fmt.Sprintf("%s would return more bytes than the limit", name), g.lim.Value)
	}
	switch name {
	case "fromYaml", "fromYamlArray":
		if err := inputfile.CheckYAML([]byte(args[0].String())); err != nil {
			return g.fail(&LimitError{What: name + ": " + err.Error(), Limit: int64(inputfile.MaxYAMLNodes)})
		}
	case "fromJson", "fromJsonArray", "mustFromJson":
		if err := inputfile.CheckJSON([]byte(args[0].String())); err != nil {
			return g.fail(&LimitError{What: name + ": " + err.Error(), Limit: int64(inputfile.MaxJSONValues)})
		}
	case "fromToml":
		if err := inputfile.CheckTOML([]byte(args[0].String())); err != nil {
			return g.fail(&LimitError{What: name + ": " + err.Error(), Limit: int64(inputfile.MaxTOMLValues)})
		}
	}
	return nil
}

func typeName(v reflect.Value) string {
	if !v.IsValid() {
		return "nil"
	}
	i := v.Interface()
	if i == nil {
		return "nil"
	}
	return reflect.TypeOf(i).String()
}

// after checks and counts what a call returned.
func (g *guard) after(name string, out reflect.Value) error {
	for out.Kind() == reflect.Interface && !out.IsNil() {
		out = out.Elem()
	}
	var size int64
	switch out.Kind() {
	case reflect.String:
		size = int64(out.Len())
	case reflect.Slice, reflect.Map, reflect.Array:
		if out.Type().Elem().Kind() == reflect.Uint8 {
			size = int64(out.Len())
		} else {
			elem := int64(out.Type().Elem().Size())
			if out.Kind() == reflect.Map {
				elem += int64(out.Type().Key().Size())
			}
			size = int64(out.Len()) * elem
			// A new list or dict is copied from its arguments: its
			// length is what the call cost.
			if err := g.step(int64(out.Len()) / 16); err != nil {
				return err
			}
		}
	}
	switch name {
	case "fromYaml", "fromYamlArray", "fromJson", "fromJsonArray", "mustFromJson", "fromToml", "deepCopy", "mustDeepCopy", "toDecimal":
		size = deepSize(out, g.lim.Value+1)
	}
	if size > g.lim.Value {
		return g.limit(fmt.Sprintf("%s returned more bytes than the limit", name), g.lim.Value)
	}
	switch name {
	case "include", "tpl":
		return nil // written, and counted, as they were written
	}
	return g.addWork(size)
}

// predict is how many bytes a call will return, for the functions whose
// result can be far larger than their arguments; false for the others.
// It stops counting past limit.
func predict(name string, args []reflect.Value, limit int64) (int64, bool) {
	str := func(i int) string {
		if i < len(args) && args[i].Kind() == reflect.String {
			return args[i].String()
		}
		return ""
	}
	num := func(i int) int64 {
		if i < len(args) && args[i].CanInt() {
			return args[i].Int()
		}
		return 0
	}
	sum := func(from int) int64 {
		var n int64
		for _, a := range args[from:] {
			n += deepSize(a, limit+1-n)
			if n > limit {
				break
			}
		}
		return n
	}
	switch name {
	case "repeat":
		return mul(max(num(0), 0), int64(len(str(1)))), true
	case "indent", "nindent":
		lines := int64(strings.Count(str(1), "\n") + 1)
		return int64(len(str(1))) + mul(max(num(0), 0), lines), true
	case "until":
		return mul(abs(num(0)), 8), true
	case "untilStep":
		return mul(span(num(0), num(1), num(2)), 8), true
	case "seq":
		var n int64
		switch len(args) {
		case 1:
			n = abs(num(0))
		case 2:
			n = abs(num(1) - num(0))
		case 3:
			n = span(num(0), num(2), num(1))
		}
		return mul(n, 21), true
	case "replace":
		old, src, repl := str(0), str(2), str(1)
		n := int64(strings.Count(src, old))
		if old == "" {
			n = int64(utf8.RuneCountInString(src)) + 1
		}
		return int64(len(src)) + mul(n, max(int64(len(repl))-int64(len(old)), 0)), true
	case "regexReplaceAll", "mustRegexReplaceAll", "regexReplaceAllLiteral", "mustRegexReplaceAllLiteral":
		re, err := regexp.Compile(str(0))
		if err != nil {
			return 0, false
		}
		s, repl := str(1), str(2)
		literal := strings.Contains(name, "Literal")
		refs := int64(strings.Count(repl, "$"))
		size := int64(len(s))
		for _, m := range matches(re, s, limit) {
			per := int64(len(repl))
			if !literal {
				per += mul(refs, int64(m[1]-m[0]))
			}
			if size += per; size > limit {
				break
			}
		}
		return size, true
	case "splitList", "split":
		sep, s := str(0), str(1)
		n := int64(strings.Count(s, sep)) + 1
		if sep == "" {
			n = int64(utf8.RuneCountInString(s))
		}
		return mul(n, 64), true
	case "splitn":
		return mul(min(max(num(1), 0), int64(len(str(2)))+1), 64), true
	case "regexSplit", "mustRegexSplit", "regexFindAll", "mustRegexFindAll":
		re, err := regexp.Compile(str(0))
		if err != nil {
			return 0, false
		}
		n := int64(len(matches(re, str(1), limit/16+1))) + 1
		if c := num(2); c >= 0 && c < n {
			n = c
		}
		return mul(n, 16), true
	case "wrap":
		return int64(len(str(1))) * 2, true
	case "wrapWith":
		s := str(2)
		return int64(len(s)) + mul(int64(len(s))/max(num(0), 1)+1, int64(len(str(1)))), true
	case "join":
		sep := str(0)
		n := int64(1)
		if len(args) > 1 {
			if v := indirect(args[1]); v.Kind() == reflect.Slice || v.Kind() == reflect.Array {
				n = int64(v.Len())
			}
		}
		return sum(1) + mul(n, int64(len(sep))), true
	case "printf":
		format := str(0)
		verbs := int64(strings.Count(format, "%"))
		var widest int64
		for _, a := range args[min(1, len(args)):] {
			widest = max(widest, deepSize(a, limit+1))
		}
		// fmt pads to at most 1e6 per verb.
		return int64(len(format)) + mul(verbs, widest+min(maxWidth(format), 1_000_000)), true
	case "print", "println", "cat", "quote", "squote", "toString", "toStrings", "toJson", "toRawJson", "mustToJson", "mustToRawJson", "toToml":
		return sum(0), true
	case "toYaml", "toYamlPretty", "toPrettyJson", "mustToPrettyJson":
		return mul(sum(0), 2), true
	case "html", "js", "urlquery":
		return mul(sum(0), 6), true
	case "b64enc", "b32enc":
		return mul(int64(len(str(0))), 2), true
	}
	return 0, false
}

// matches returns the matches of re in s, at most n of them.
func matches(re *regexp.Regexp, s string, n int64) [][]int {
	if n > int64(len(s))+1 {
		n = int64(len(s)) + 1
	}
	return re.FindAllStringIndex(s, int(min(n, 1<<30)))
}

// maxWidth is the largest width or precision written in a format.
func maxWidth(format string) int64 {
	var widest, n int64
	digits := false
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c >= '0' && c <= '9' {
			if n < 1<<40 {
				n = n*10 + int64(c-'0')
			}
			digits = true
			continue
		}
		if digits {
			widest = max(widest, n)
		}
		n, digits = 0, false
	}
	if digits {
		widest = max(widest, n)
	}
	return widest
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// span is how many numbers untilStep(start, stop, step) gives.
func span(start, stop, step int64) int64 {
	if step == 0 || (stop > start) != (step > 0) {
		return 0
	}
	return abs(stop-start)/abs(step) + 1
}

// mul multiplies sizes without overflowing.
func mul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > (1<<62)/b {
		return 1 << 62
	}
	return a * b
}

func indirect(v reflect.Value) reflect.Value {
	for v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) && !v.IsNil() {
		v = v.Elem()
	}
	return v
}

// deepSize estimates the bytes of a value printed or serialized: its
// strings, 16 bytes for every other element; a value shared n times counts
// n times, as a serializer writes it n times. It stops past limit (and so
// on cycles).
func deepSize(v reflect.Value, limit int64) int64 {
	var size int64
	var walk func(v reflect.Value, depth int)
	walk = func(v reflect.Value, depth int) {
		if size > limit {
			return
		}
		v = indirect(v)
		size += 16 + int64(depth)
		if !v.IsValid() {
			return
		}
		switch v.Kind() {
		case reflect.String:
			size += int64(v.Len())
		case reflect.Slice, reflect.Array:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				size += int64(v.Len())
				return
			}
			for i := 0; i < v.Len() && size <= limit; i++ {
				walk(v.Index(i), depth+1)
			}
		case reflect.Map:
			it := v.MapRange()
			for it.Next() && size <= limit {
				walk(it.Key(), depth+1)
				walk(it.Value(), depth+1)
			}
		case reflect.Struct:
			for i := 0; i < v.NumField() && size <= limit; i++ {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i), depth+1)
				}
			}
		}
	}
	walk(v, 0)
	return size
}

// Parsed puts a step at the start of every template and every range body
// of the trees it has not seen.
func (g *guard) Parsed(t *template.Template) error {
	for _, tmpl := range t.Templates() {
		tr := tmpl.Tree
		if tr == nil || tr.Root == nil || g.seen[tr] {
			continue
		}
		g.seen[tr] = true
		instrument(tr.Root)
		tr.Root.Nodes = append(append([]parse.Node{call(enterFunc, tr.Root.Pos)}, tr.Root.Nodes...), call(leaveFunc, tr.Root.Pos))
	}
	return nil
}

// instrument puts a step at the start of the range bodies under n.
func instrument(n parse.Node) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			instrument(c)
		}
	case *parse.RangeNode:
		if n.List != nil {
			n.List.Nodes = append([]parse.Node{call(tickFunc, n.Pos)}, n.List.Nodes...)
		}
		instrument(n.List)
		instrument(n.ElseList)
	case *parse.IfNode:
		instrument(n.List)
		instrument(n.ElseList)
	case *parse.WithNode:
		instrument(n.List)
		instrument(n.ElseList)
	}
}

// call is the action {{fn}} of one of the guard's functions, which print
// nothing.
func call(fn string, pos parse.Pos) parse.Node {
	id := parse.NewIdentifier(fn).SetPos(pos)
	cmd := &parse.CommandNode{NodeType: parse.NodeCommand, Pos: pos, Args: []parse.Node{id}}
	return &parse.ActionNode{NodeType: parse.NodeAction, Pos: pos, Pipe: &parse.PipeNode{NodeType: parse.NodePipe, Pos: pos, Cmds: []*parse.CommandNode{cmd}}}
}

// Writer counts what is written into b, refusing what goes past Written.
func (g *guard) Writer(b *strings.Builder) io.Writer { return &boundedWriter{g: g, b: b} }

type boundedWriter struct {
	g *guard
	b *strings.Builder
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	g := w.g
	if g.err != nil {
		return 0, g.err
	}
	g.written += int64(len(p))
	if g.written > g.lim.Written {
		return 0, g.limit("templates wrote more bytes than the limit", g.lim.Written)
	}
	if len(p) > 4096 {
		if err := g.step(int64(len(p)) >> 12); err != nil {
			return 0, err
		}
	}
	return w.b.Write(p)
}

// Enter counts what a tpl call costs: copying the template set. (How deep
// templates nest is counted as each starts.)
func (g *guard) Enter(kind string, t *template.Template) error {
	if kind == "tpl" {
		return g.step(int64(len(t.Templates())) + 200)
	}
	return nil
}
