package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/internal/startgc"
	"github.com/microshift-compose/microshift-compose/internal/text"
)

// run executes the CLI and returns the exit code; the error, if any, is
// printed once, on one line.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	// One line, and nothing a terminal would act on: a file name or a
	// plugin's message may hold escape sequences.
	msg := err.Error()
	if cause := context.Cause(ctx); ctx.Err() != nil && cause != ctx.Err() {
		// A signal (main's context): say so, not "context canceled".
		msg = fmt.Sprintf("interrupted (%v): %s", cause, strings.ReplaceAll(msg, context.Canceled.Error(), "stopped"))
	}
	fmt.Fprintf(stderr, "error: %s\n", text.Escape(text.OneLine(msg)))
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitError
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	var verbose bool
	root := &cobra.Command{
		Use:   "microshift-compose",
		Short: "Compose MicroShift OS images from a profile and components",
		Long: `microshift-compose resolves a profile (minimal, networking-only, storage-only,
full) and --with/--without components against a component catalog and MicroShift
release files, then writes an osbuild blueprint, the digest-pinned image list,
the MicroShift config drop-in and a lock file describing the plan.

Exit codes: 0 success, 1 error (bad input, resolution or validation failure),
2 usage error (unknown command or flag, wrong arguments).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Args and RunE make an unknown command a usage error (exit 2) in
		// the tool's did-you-mean style; cobra's own check returns a plain
		// error and suggests in several lines.
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			if !keepsStartGC(cmd) {
				startgc.Done()
			}
			level := slog.LevelWarn
			if verbose {
				level = slog.LevelDebug
			}
			slog.SetDefault(slog.New(newLogHandler(stderr, level)))
			routeLogrus(stderr, verbose)
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	// --version prints what the version command prints.
	root.Version = currentBuild().String()
	root.SetVersionTemplate("microshift-compose {{.Version}}\n")
	// Cobra adds --version only when the root itself runs; defined here
	// (cobra reads it by name), it is in "help" too, which runs the help
	// command instead. -v is --verbose.
	root.Flags().Bool("version", false, "version for microshift-compose")
	root.PersistentFlags().BoolVarP(&verbose, "verbose", "v", false, "log progress and debug details to stderr")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// "microshift-compose biuld --profile full" fails on the root's
		// flags; the unknown command is the mistake to report.
		if !c.HasParent() {
			if args := c.Flags().Args(); len(args) > 0 {
				if aerr := noArgs(c, args); aerr != nil {
					return usageError{aerr}
				}
			}
		}
		return usageError{err}
	})
	root.AddCommand(
		newBuildCmd(),
		newResolveCmd(),
		newImagesCmd(),
		newMirrorCmd(),
		newFootprintCmd(),
		newPruneCmd(),
		newMatrixCmd(),
		newProfilesCmd(),
		newComponentsCmd(),
		newValidateCmd(),
		newVerifyCmd(),
		newReleaseCmd(),
		newDiffCmd(),
		newServeCmd(),
		newVersionCmd(),
	)
	// cobra's help command prints the root's help for an unknown topic and
	// exits 0; this one reports it like any unknown command.
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := c.Root().Find(args)
			if err != nil {
				return usageError{err}
			}
			if err := noArgs(target, rest); err != nil {
				return usageError{err}
			}
			target.InitDefaultHelpFlag() // as cobra's help command does
			return target.Help()
		},
	})
	// Add the help and completion commands now rather than at Execute, so
	// that wrapArgs covers them too.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	useBashCommaFixes(root)
	registerCompletions(root)
	wrapArgs(root)
	return root
}

// startGCCommands are the commands that keep the garbage collector's
// raised first goal (internal/startgc, which every process starts with):
// those that read the embedded data, decide and end, for which collecting
// was a fifth of the CPU. Every other command (mirror, serve, release
// fetch, prune...) holds memory within its own bounds and collects from
// its start as before, so that its peak stays what it was.
var startGCCommands = []string{"build", "resolve", "images", "profiles", "components", "version", "help", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd}

// keepsStartGC reports whether cmd is one of startGCCommands (or the root).
func keepsStartGC(cmd *cobra.Command) bool {
	if !cmd.HasParent() {
		return true
	}
	for cmd.Parent().HasParent() {
		cmd = cmd.Parent()
	}
	return slices.Contains(startGCCommands, cmd.Name())
}

// wrapArgs makes argument-count errors usage errors (exit 2), recursively.
func wrapArgs(c *cobra.Command) {
	if c.Args != nil {
		check := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		wrapArgs(sub)
	}
}

// routeLogrus sends what containers/image logs (with logrus) to stderr in
// the tool's style: its warnings as "warning: ..." lines, and with -v its
// debug lines (which auth file credentials came from, which certs.d
// directory is read). It never logs credentials.
func routeLogrus(stderr io.Writer, verbose bool) {
	logrus.SetOutput(stderr)
	logrus.SetFormatter(logrusFormatter{debug: &logrus.TextFormatter{DisableTimestamp: true, DisableColors: true}})
	logrus.SetLevel(logrus.WarnLevel)
	if verbose {
		logrus.SetLevel(logrus.DebugLevel)
	}
}

// logrusFormatter prints warnings and errors as the tool's "warning: ..."
// lines (a library's error is not the command's: the command reports its
// own) and the -v diagnostics as logfmt lines.
type logrusFormatter struct{ debug logrus.Formatter }

func (f logrusFormatter) Format(e *logrus.Entry) ([]byte, error) {
	if e.Level <= logrus.WarnLevel {
		return []byte(warningLine(e.Message)), nil
	}
	return f.debug.Format(e)
}

// newLogHandler logs -v diagnostics as "level=DEBUG msg=... key=value"
// lines without timestamps; a record at warning level or above, which a
// user must see, is a "warning: message key=value" line like every other
// warning of the tool.
func newLogHandler(w io.Writer, level slog.Level) slog.Handler {
	return &logHandler{w: w, Handler: slog.NewTextHandler(w, &slog.HandlerOptions{
		Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})}
}

type logHandler struct {
	slog.Handler
	w     io.Writer
	attrs []slog.Attr
}

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return h.Handler.Handle(ctx, r)
	}
	var b strings.Builder
	b.WriteString(r.Message)
	add := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	_, err := io.WriteString(h.w, warningLine(b.String()))
	return err
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logHandler{Handler: h.Handler.WithAttrs(attrs), w: h.w, attrs: append(slices.Clone(h.attrs), attrs...)}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{Handler: h.Handler.WithGroup(name), w: h.w, attrs: h.attrs}
}
