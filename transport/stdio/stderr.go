package stdio

import (
	"sync"

	"github.com/lemonmcp/lemonmcp/internal/redact"
	"github.com/lemonmcp/lemonmcp/transport"
)

// maxStderrLineBytes truncates stderr lines. Unlike stdout lines they are
// kept (truncated) rather than skipped: the beginning of a long stack trace
// line is still worth reading.
const maxStderrLineBytes = 8 << 10

// stderrLines turns captured stderr into log lines and keeps the last few
// for the closed report.
type stderrLines struct {
	sink    transport.Sink
	secrets redact.Set // configured env values, cut out of every line

	// gate is held around each Log call so that mute can guarantee no Log
	// is in flight or will follow; without that a stderr line could reach
	// the sink after Closed. It is our own lock, never one the sink holds.
	gate  sync.Mutex
	muted bool

	mu   sync.Mutex // guards the ring
	ring []string
	next int  // where the next line goes
	full bool // the ring has wrapped
}

func newStderrLines(sink transport.Sink, tail int) *stderrLines {
	return &stderrLines{sink: sink, ring: make([]string, tail)}
}

func (s *stderrLines) line(b []byte) {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	i := 0
	for i < len(b) && isBlank(b[i]) {
		i++
	}
	if i == len(b) {
		return // blank lines are layout, not diagnostics
	}
	text := logText(scrubbed(b, s.secrets), maxStderrLineBytes)

	s.mu.Lock()
	s.ring[s.next] = text
	s.next++
	if s.next == len(s.ring) {
		s.next, s.full = 0, true
	}
	s.mu.Unlock()

	s.gate.Lock()
	defer s.gate.Unlock()
	if !s.muted {
		s.sink.Log(transport.LogLine{Level: "info", Source: "stderr", Text: text})
	}
}

// longHead keeps the beginning of an over-long line as a line of its own;
// the lineReader's limit is maxStderrLineBytes, so this is the truncation.
func (s *stderrLines) longHead(b []byte) { s.line(b) }

func (s *stderrLines) longEnd(int64) {}

// mute stops delivery to the sink; the pipe keeps being drained. It returns
// once no Log call is in flight.
func (s *stderrLines) mute() {
	s.gate.Lock()
	s.muted = true
	s.gate.Unlock()
}

// tail returns the kept lines, oldest first, or nil if there are none.
func (s *stderrLines) tail() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	if s.full {
		out = append(out, s.ring[s.next:]...)
	}
	out = append(out, s.ring[:s.next]...)
	return out
}
