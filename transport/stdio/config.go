package stdio

import (
	"strings"
	"time"

	"github.com/lemonmcp/lemonmcp/transport"
)

// Values accepted by Config.EnvInherit.
const (
	EnvInheritMinimal = "minimal"
	EnvInheritAll     = "all"
)

// Values accepted by Config.Stderr.
const (
	StderrCapture = "capture"
	StderrMerge   = "merge"
	StderrDiscard = "discard"
)

// Defaults applied to zero Config fields.
const (
	DefaultMaxMessageBytes = 16 << 20
	DefaultCloseGrace      = 2 * time.Second
	DefaultStderrTailLines = 20
)

// Upper bounds that keep a mistyped configuration from reserving absurd
// amounts of memory: the stdout buffer may grow to MaxMessageBytes, and the
// tail ring holds up to StderrTailLines lines of up to 8 KiB each.
const (
	maxMaxMessageBytes = 1 << 30
	maxStderrTailLines = 1000
)

// Config describes the server process to run.
type Config struct {
	// Command is the executable. Without a '/' it is looked up in the PATH
	// of the child's environment; with one it is a path, relative to Cwd
	// when Cwd is set. It is never interpreted by a shell.
	Command string
	// Args are the arguments after the command name.
	Args []string
	// Env holds extra environment variables; they override inherited ones.
	Env map[string]string
	// EnvInherit is "minimal" (the default: only PATH, HOME, USER, LOGNAME,
	// SHELL, LANG, LC_ALL, LC_CTYPE, TERM, TMPDIR, TZ, the CA bundles
	// SSL_CERT_FILE, SSL_CERT_DIR, NODE_EXTRA_CA_CERTS, REQUESTS_CA_BUNDLE
	// and the proxy variables HTTP_PROXY, HTTPS_PROXY, NO_PROXY, ALL_PROXY
	// (either case) are passed on) or "all" (the whole environment of this
	// process).
	EnvInherit string
	// Cwd is the child's working directory; empty means this process's.
	Cwd string
	// Stderr is "capture" (the default: each line becomes a log line and
	// the last ones are kept for the closed report), "merge" (stderr shares
	// the stdout pipe) or "discard".
	Stderr string
	// MaxMessageBytes bounds one stdout line, excluding its newline.
	// Zero means DefaultMaxMessageBytes.
	MaxMessageBytes int
	// CloseGrace is how long each shutdown step waits before escalating.
	// Zero means DefaultCloseGrace.
	CloseGrace time.Duration
	// StderrTailLines is how many of the last stderr lines are kept for
	// ClosedError.StderrTail. Zero means DefaultStderrTailLines.
	StderrTailLines int
	// Launcher, when set, runs the server through another program (the
	// sandbox helper) at every start; see Launcher.
	Launcher Launcher
}

// normalize checks c and returns a copy with defaults filled in. The copy
// owns its slices and map so later changes by the caller cannot race with
// a running transport.
func (c Config) normalize() (Config, error) {
	if strings.TrimSpace(c.Command) == "" {
		return Config{}, transport.Errorf(transport.CodeInvalidArgument, "command is empty")
	}
	if strings.IndexByte(c.Command, 0) >= 0 {
		return Config{}, transport.Errorf(transport.CodeInvalidArgument, "Command contains a NUL byte")
	}
	for i, a := range c.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return Config{}, transport.Errorf(transport.CodeInvalidArgument, "Args[%d] contains a NUL byte", i)
		}
	}
	if strings.IndexByte(c.Cwd, 0) >= 0 {
		return Config{}, transport.Errorf(transport.CodeInvalidArgument, "Cwd contains a NUL byte")
	}
	env := make(map[string]string, len(c.Env))
	for k, v := range c.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return Config{}, transport.Errorf(transport.CodeInvalidArgument, "Env: invalid variable name %q", k)
		}
		if strings.IndexByte(v, 0) >= 0 {
			// The value is not echoed: it may well be a secret.
			return Config{}, transport.Errorf(transport.CodeInvalidArgument, "Env: the value of %s contains a NUL byte", k)
		}
		env[k] = v
	}
	c.Env = env
	c.Args = append([]string(nil), c.Args...)

	switch c.EnvInherit {
	case "":
		c.EnvInherit = EnvInheritMinimal
	case EnvInheritMinimal, EnvInheritAll:
	default:
		return Config{}, transport.Errorf(transport.CodeInvalidArgument,
			"EnvInherit must be %q or %q, not %q", EnvInheritMinimal, EnvInheritAll, c.EnvInherit)
	}
	switch c.Stderr {
	case "":
		c.Stderr = StderrCapture
	case StderrCapture, StderrMerge, StderrDiscard:
	default:
		return Config{}, transport.Errorf(transport.CodeInvalidArgument,
			"Stderr must be %q, %q or %q, not %q", StderrCapture, StderrMerge, StderrDiscard, c.Stderr)
	}
	switch {
	case c.MaxMessageBytes == 0:
		c.MaxMessageBytes = DefaultMaxMessageBytes
	case c.MaxMessageBytes < 0 || c.MaxMessageBytes > maxMaxMessageBytes:
		return Config{}, transport.Errorf(transport.CodeInvalidArgument,
			"MaxMessageBytes must be between 1 and %d, not %d", maxMaxMessageBytes, c.MaxMessageBytes)
	}
	switch {
	case c.CloseGrace == 0:
		c.CloseGrace = DefaultCloseGrace
	case c.CloseGrace < 0:
		return Config{}, transport.Errorf(transport.CodeInvalidArgument, "CloseGrace must not be negative (got %s)", c.CloseGrace)
	}
	switch {
	case c.StderrTailLines == 0:
		c.StderrTailLines = DefaultStderrTailLines
	case c.StderrTailLines < 0 || c.StderrTailLines > maxStderrTailLines:
		return Config{}, transport.Errorf(transport.CodeInvalidArgument,
			"StderrTailLines must be between 1 and %d, not %d", maxStderrTailLines, c.StderrTailLines)
	}
	return c, nil
}
