package host

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/internal/redact"
	"github.com/lemonmcp/lemonmcp/transport"
)

// A failure says why: a server that prints "Error: GITHUB_TOKEN is not
// set" and exits must not be reported as "server closed its stdout" alone.
// The host keeps, per server, the first cause of the current trouble (the
// reason, exit status or signal of the first loss since it was last
// ready) and the lost server's last stderr lines, bounded, escaped and with
// the server's configured secrets scrubbed.

// Bounds of the stderr lines a server report carries.
const (
	maxFailureLines     = 10
	maxFailureLineBytes = 512
)

// failure is what the host knows of a server's trouble. Guarded by the
// server's mu.
type failure struct {
	cause    string // the first reason since the server was last ready
	exitCode *int
	signal   string
	stderr   []string
	// causeIsLoss: cause is the server going away (a closed or restarting
	// event), not a failure it caused (a handshake that could not be sent).
	causeIsLoss bool
	// lossesAtReady is the client's loss count when it was last ready: a
	// later loss is this trouble's (see addFailure).
	lossesAtReady uint64
}

// lossEvent is the part of a client's "restarting" and "closed" events
// that tells why.
type lossEvent struct {
	Reason     string   `json:"reason"`
	Message    string   `json:"message"`
	ExitCode   *int     `json:"exit_code"`
	Signal     string   `json:"signal"`
	StderrTail []string `json:"stderr_tail"`
	Requested  bool     `json:"requested"`
}

// noteLoss records a loss from a client event payload. Requested closes
// (the host closing the server) are not trouble.
func (s *server) noteLoss(payload []byte) {
	var ev lossEvent
	if jsonx.Unmarshal(payload, &ev) != nil {
		return
	}
	if ev.Requested && s.client().State() != core.StateFailed {
		return // closed by the application, not trouble
	}
	reason := ev.Reason
	if reason == "" {
		reason = ev.Message
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail.cause == "" || (!s.fail.causeIsLoss && ev.Reason != "") {
		// A loss (closed, restarting: a reason with the exit status or
		// signal) is a better first cause than the failure it caused.
		s.fail.cause, s.fail.causeIsLoss = reason, ev.Reason != ""
	}
	if ev.ExitCode != nil || ev.Signal != "" {
		s.fail.exitCode, s.fail.signal = ev.ExitCode, ev.Signal
	}
	if len(ev.StderrTail) > 0 {
		s.fail.stderr = s.boundedStderr(ev.StderrTail)
	}
}

// noteReady clears the trouble: the server serves again.
func (s *server) noteReady(c *core.Client) {
	_, n := c.LastLoss()
	s.mu.Lock()
	s.fail = failure{lossesAtReady: n}
	s.mu.Unlock()
}

// noteStartError records a start that failed before any event (Connect's
// own error).
func (s *server) noteStartError(msg string) {
	s.mu.Lock()
	if s.fail.cause == "" {
		s.fail.cause = msg
	}
	s.mu.Unlock()
}

// addFailure puts the trouble into a server report (s.mu held). loss and
// losses are the client's LastLoss, read before s.mu: the closed or
// restarting event that tells the same may not have been delivered yet
// when a failed call makes the application ask why.
func (s *server) addFailure(r map[string]any, loss *transport.ClosedError, losses uint64) {
	f := s.fail
	if loss != nil && losses > f.lossesAtReady {
		if f.cause == "" || !f.causeIsLoss {
			f.cause = loss.Message // an exit status or signal says more than "closed its stdin"
		}
		if f.exitCode == nil && f.signal == "" {
			if loss.ExitCode >= 0 {
				code := loss.ExitCode
				f.exitCode = &code
			}
			f.signal = loss.Signal
		}
		if len(f.stderr) == 0 && len(loss.StderrTail) > 0 {
			f.stderr = s.boundedStderr(loss.StderrTail)
		}
	}
	if f.cause != "" {
		r["cause"] = f.cause
	}
	if f.exitCode != nil {
		r["exit_code"] = *f.exitCode
	}
	if f.signal != "" {
		r["signal"] = f.signal
	}
	if len(f.stderr) > 0 {
		r["stderr_tail"] = f.stderr
	}
}

// boundedStderr keeps the last maxFailureLines lines, each cut to
// maxFailureLineBytes, with control characters escaped and the server's
// configured secrets (env and header values) scrubbed.
func (s *server) boundedStderr(lines []string) []string {
	if len(lines) > maxFailureLines {
		lines = lines[len(lines)-maxFailureLines:]
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = escapeLine(s.secrets.Scrub(l), maxFailureLineBytes)
	}
	return out
}

// escapeLine writes control characters (ANSI colour codes included) as
// \xNN and cuts the line to max bytes at a character boundary, marking
// the cut.
func escapeLine(line string, max int) string {
	var b strings.Builder
	for _, r := range line {
		if b.Len() >= max {
			b.WriteString("…")
			break
		}
		switch {
		case r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			b.WriteString(`\x`)
			if r < 0x10 {
				b.WriteByte('0')
			}
			b.WriteString(strconv.FormatInt(int64(r), 16))
		case r == utf8.RuneError:
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// configuredSecrets are the values of a server's env and headers: a
// server may print them, and no report may carry them.
func configuredSecrets(client []byte) redact.Set {
	var cfg struct {
		Transport struct {
			Env     map[string]string `json:"env"`
			Headers map[string]string `json:"headers"`
		} `json:"transport"`
	}
	if jsonx.Unmarshal(client, &cfg) != nil {
		return nil
	}
	var values []string
	for _, v := range cfg.Transport.Env {
		values = append(values, v)
	}
	for _, v := range cfg.Transport.Headers {
		values = append(values, v)
		if _, tok, ok := strings.Cut(v, " "); ok { // "Bearer <token>"
			values = append(values, tok)
		}
	}
	return redact.NewSet(values...)
}

// summaryHeads begin a report's "summary", per state.
var summaryHeads = map[string]string{
	StateNew:        "is not started",
	StateConnecting: "is connecting",
	StateReady:      "is ready",
	StateRestarting: "is restarting",
	StateFailed:     "failed to start",
	StateClosed:     "is closed",
	StateDisabled:   "is disabled",
}

// summaryStderrLines is how many of the last stderr lines a summary
// quotes (the report has up to maxFailureLines).
const summaryStderrLines = 3

// summary is the one line a binding shows for a server report r: its
// state and, in trouble, why (its reason, first cause, exit status or
// signal, last stderr lines). Written once here, so that every binding
// says the same and none rebuilds it from the report's members.
func summary(name string, r map[string]any) string {
	st, _ := r["state"].(string)
	var b strings.Builder
	b.WriteString("server " + strconv.Quote(name) + " " + summaryHeads[st])
	if st == StateReady || st == StateDisabled || st == StateNew || st == StateConnecting {
		return b.String()
	}
	lastErr, _ := r["last_error"].(string)
	cause, _ := r["cause"].(string)
	reason := lastErr
	if reason == "" {
		reason = cause
	}
	if reason == "" && st != StateFailed {
		return b.String() // closed as asked
	}
	if reason == "" {
		reason = "no reason given"
	}
	b.WriteString(": " + reason)
	if cause != "" && cause != reason {
		b.WriteString("; first cause: " + cause)
	}
	if code, ok := r["exit_code"].(int); ok {
		b.WriteString("; exit status " + strconv.Itoa(code))
	}
	if sig, _ := r["signal"].(string); sig != "" {
		b.WriteString("; killed by " + sig)
	}
	if tail, _ := r["stderr_tail"].([]string); len(tail) > 0 {
		b.WriteString("; stderr: " + strings.Join(quotedStderr(tail), " | "))
	}
	return b.String()
}

// errorWords mark the stderr line that says what went wrong; the lines
// after it are often its causes, a stack or a usage text.
var errorWords = []string{"error", "fatal", "exception", "failed", "denied", "not set", "not found", "panic", "unknownissuer"}

// quotedStderr is what a summary quotes of a stderr tail: its last
// summaryStderrLines lines and, before them, the first line that says what
// went wrong when they do not include it ("error: Failed to fetch ..."
// followed by four "Caused by:" lines keeps the first and the last three).
func quotedStderr(tail []string) []string {
	if len(tail) <= summaryStderrLines {
		return tail
	}
	last := tail[len(tail)-summaryStderrLines:]
	for i, line := range tail[:len(tail)-summaryStderrLines] {
		lower := strings.ToLower(line)
		for _, w := range errorWords {
			if strings.Contains(lower, w) {
				out := append([]string{line}, last...)
				if i < len(tail)-summaryStderrLines-1 {
					out = append([]string{line, "…"}, last...)
				}
				return out
			}
		}
	}
	return last
}
