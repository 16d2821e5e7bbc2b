package main

// What every command shares about how it is called and how it answers:
// the exit codes, usage errors, warnings, JSON output and the values a flag
// completes to. The files of the subcommands and their options sit above
// it; root.go, which wires them together, above them all.

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/internal/suggest"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/releases"
)

// Exit codes, documented in docs/reference.md ("Exit codes").
const (
	exitOK    = 0
	exitError = 1 // bad input, resolution or validation failure
	exitUsage = 2 // unknown command or flag, wrong arguments
)

// usageError marks mistakes in how the command was called.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// noArgs is cobra.NoArgs with messages that say what went wrong: an unknown
// subcommand (with a suggestion) for commands that have subcommands, an
// unexpected argument for the others, which take only flags.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.HasAvailableSubCommands() {
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		if m := suggest.Closest(args[0], names); m != "" {
			return fmt.Errorf("unknown command %q for %q; did you mean %q?", args[0], cmd.CommandPath(), m)
		}
		return fmt.Errorf("unknown command %q for %q (see '%s --help')", args[0], cmd.CommandPath(), cmd.CommandPath())
	}
	return fmt.Errorf("unexpected argument %q: %s takes only flags (see '%s --help')", args[0], cmd.CommandPath(), cmd.CommandPath())
}

// warningLine is a warning as the tool prints it: one line, escaped.
func warningLine(msg string) string {
	return "warning: " + text.Escape(text.OneLine(msg)) + "\n"
}

func hostArch() string {
	if runtime.GOARCH == "arm64" {
		return string(releases.AArch64)
	}
	return string(releases.X86_64)
}

// warn prints a user-facing warning: one "warning: ..." line on stderr,
// whatever -v says, escaped like errors. It is the one way a command warns
// (slog is for -v diagnostics; what libraries log at warning level is
// printed in this style too, see newLogHandler and routeLogrus).
func warn(stderr io.Writer, msg string) {
	io.WriteString(stderr, warningLine(msg))
}

// warnOnce returns a warn that prints each distinct message once: a
// command that warns from several places (writing the output, then the
// summary that records it) prints every warning exactly once.
func warnOnce(stderr io.Writer) func(msg string) {
	seen := map[string]bool{}
	return func(msg string) {
		if !seen[msg] {
			seen[msg] = true
			warn(stderr, msg)
		}
	}
}

// printJSON writes v as indented JSON, the --output json form of every
// listing command.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// formatValues are the values of --format and of -o/--output where it is
// a format (formatOptions registers those itself: build's and matrix's
// --output is a directory).
var formatValues = []string{"text\tfor people", "json\tfor scripts"}

// completeValues completes a flag that takes one of a fixed set of values.
func completeValues(values ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}
