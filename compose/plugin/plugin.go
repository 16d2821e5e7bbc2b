package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/microshift-compose/microshift-compose/compose/microshiftconfig"
	"github.com/microshift-compose/microshift-compose/internal/text"
)

// APIVersion is the calling convention this tool implements; a plugin's
// "plugin api-version" must print it.
const APIVersion = "v1"

// SupportedAPIVersions are the api-versions this tool can run.
var SupportedAPIVersions = []string{APIVersion}

// DefaultTimeout bounds each plugin invocation.
const DefaultTimeout = 60 * time.Second

// DefaultMaxOutput bounds what is read from a plugin's stdout; real
// outputs are tens of kilobytes.
const DefaultMaxOutput = 16 << 20

// DefaultPath is the PATH a plugin gets when the caller has none.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Sentinels for how a plugin failed, for errors.Is.
var (
	// ErrPrecondition: the plugin exited 1, a host precondition is not met.
	ErrPrecondition = errors.New("host precondition not met")
	// ErrConfig: the plugin exited 2, its configuration is wrong.
	ErrConfig = errors.New("bad configuration")
	// ErrFailed: any other failure (other exit codes, signals, bad output).
	ErrFailed = errors.New("plugin failed")
	// ErrTimeout: the plugin did not finish in time and was killed.
	ErrTimeout = errors.New("plugin timed out")
)

// Options tune a run. Zero values take the defaults.
type Options struct {
	// Timeout bounds each invocation (api-version, then run).
	Timeout time.Duration
	// MaxOutput bounds stdout, in bytes.
	MaxOutput int64
	// Logger receives the plugin's stderr, one record per line; nil is
	// slog.Default().
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Error is a failed plugin invocation. Its message is one line without
// the component name, which the caller adds.
type Error struct {
	// Command is "api-version" or "run".
	Command string
	// Kind is one of the sentinels.
	Kind error
	// Detail says what happened: "exit 3", "signal SIGSEGV", ...
	Detail string
	// Stderr is the plugin's last non-empty stderr line, if any.
	Stderr string
}

func (e *Error) Error() string {
	var msg string
	switch e.Kind {
	case ErrPrecondition, ErrConfig:
		msg = fmt.Sprintf("plugin %s: %s (%s)", e.Command, e.Kind, e.Detail)
	default:
		msg = fmt.Sprintf("plugin %s %s", e.Command, e.Detail)
	}
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Kind }

// Env is the plugin environment for a config: PATH and the MICROSHIFT_*
// variables of the calling convention, always all of them (empty when the
// config leaves a value to MicroShift on the device), sorted. Lists are
// comma-separated.
func Env(p microshiftconfig.Params, path string) []string {
	if path == "" {
		path = DefaultPath
	}
	return []string{
		"MICROSHIFT_BASEDOMAIN=" + p.BaseDomain,
		"MICROSHIFT_CLUSTER_CLUSTERCIDR=" + strings.Join(p.ClusterNetwork, ","),
		"MICROSHIFT_CLUSTER_SERVICECIDR=" + strings.Join(p.ServiceNetwork, ","),
		"MICROSHIFT_CLUSTER_SERVICENODEPORTRANGE=" + p.ServiceNodePortRange,
		"MICROSHIFT_CLUSTER_URL=" + p.ClusterURL,
		"MICROSHIFT_LOGVLEVEL=" + p.LogLevel,
		"MICROSHIFT_NODEIP=" + p.NodeIP,
		"MICROSHIFT_NODENAME=" + p.NodeName,
		"MICROSHIFT_SUBJECTALTNAMES=" + strings.Join(p.SubjectAltNames, ","),
		"PATH=" + path,
	}
}

// checkAPIVersion checks what "plugin api-version" printed.
func checkAPIVersion(out []byte) error {
	v := strings.TrimSpace(string(out))
	for _, s := range SupportedAPIVersions {
		if v == s {
			return nil
		}
	}
	shown := v
	if len(shown) > 64 || strings.ContainsAny(shown, "\n\r") {
		shown = strings.Fields(shown + " ")[0]
		if len(shown) > 64 {
			shown = shown[:64] + "..."
		}
	}
	return &Error{Command: "api-version", Kind: ErrFailed,
		Detail: fmt.Sprintf("printed %q; this microshift-compose supports %s", shown, strings.Join(SupportedAPIVersions, ", "))}
}

// lastLine keeps the last non-empty line written to it and logs every
// line; it stops logging (but keeps draining) past limit bytes.
type lastLine struct {
	log     *slog.Logger
	command string
	limit   int64
	seen    int64
	partial []byte
	last    string
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.seen += int64(len(p))
	if l.seen > l.limit {
		return len(p), nil
	}
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.line(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	return len(p), nil
}

func (l *lastLine) flush() {
	if len(l.partial) > 0 {
		l.line(string(l.partial))
		l.partial = nil
	}
}

// line logs one stderr line and keeps it as the last, with control
// characters escaped: a plugin's escape sequences never reach the
// terminal, in the log or in the error.
func (l *lastLine) line(s string) {
	s = text.Escape(text.OneLine(s))
	if s == "" {
		return
	}
	l.log.Info("plugin stderr", "command", l.command, "line", s)
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:300], "") + "..."
	}
	l.last = s
}

// PluginFile is the plugin executable's name in its directory.
const PluginFile = "plugin"
