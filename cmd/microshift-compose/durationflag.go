package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan/request"
)

// durationValue is a duration flag that keeps its value as the user wrote
// it ("90s", "1h30", "0m"): a message about the flag quotes that, not
// time.Duration's "1m30s", and the composition file --print-file writes
// holds it as given (request.Duration keeps a file's spelling the same
// way). It reads a value with request.ParseDuration, the rule the file's
// keys share.
type durationValue struct {
	d *time.Duration
	// text is the value as given; "" until the flag is set.
	text string
}

// durationVar binds a duration flag to p, with its default.
func durationVar(f *pflag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) *durationValue {
	*p = def
	v := &durationValue{d: p}
	f.Var(v, name, usage)
	return v
}

// Set reads a value as the composition file's key does.
func (v *durationValue) Set(s string) error {
	d, err := request.ParseDuration(s)
	if err != nil {
		return err
	}
	*v.d, v.text = d, s
	return nil
}

// String is the value as given, or the default as time.Duration prints
// it ("0" for none, which --help leaves out as pflag's own durations do).
func (v *durationValue) String() string {
	switch {
	case v.text != "":
		return v.text
	case *v.d == 0:
		return "0"
	}
	return v.d.String()
}

// Type names the value in --help.
func (v *durationValue) Type() string { return "duration" }

// spelled quotes a duration flag's value as given (v nil: as d prints).
func spelled(v *durationValue, d time.Duration) string {
	if v == nil || v.text == "" {
		return fmt.Sprintf("%q", d.String())
	}
	return text.QuoteExcerpt(v.text)
}
