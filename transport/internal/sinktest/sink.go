package sinktest

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/transport"
)

// Wait bounds every wait of a test for something that should happen.
const Wait = 10 * time.Second

// Failure is one RequestFailed call.
type Failure struct {
	ID  int64
	Err *transport.Error
}

// Sink implements transport.Sink.
type Sink struct {
	recv   chan []byte
	failed chan Failure
	closed chan *transport.ClosedError

	mu   sync.Mutex
	logs []transport.LogLine

	closedCount atomic.Int32
	afterClosed atomic.Int32 // calls after Closed: must stay 0
}

// New returns an empty sink.
func New() *Sink {
	return &Sink{
		recv:   make(chan []byte, 1024),
		failed: make(chan Failure, 1024),
		closed: make(chan *transport.ClosedError, 8),
	}
}

func (s *Sink) noteCall() {
	if s.closedCount.Load() > 0 {
		s.afterClosed.Add(1)
	}
}

// Receive implements transport.Sink.
func (s *Sink) Receive(data []byte) {
	s.noteCall()
	s.recv <- append([]byte(nil), data...)
}

// Log implements transport.Sink.
func (s *Sink) Log(line transport.LogLine) {
	s.noteCall()
	s.mu.Lock()
	s.logs = append(s.logs, line)
	s.mu.Unlock()
}

// RequestFailed implements transport.Sink.
func (s *Sink) RequestFailed(id int64, err *transport.Error) {
	s.noteCall()
	s.failed <- Failure{ID: id, Err: err}
}

// Closed implements transport.Sink.
func (s *Sink) Closed(err *transport.ClosedError) {
	s.closedCount.Add(1)
	s.closed <- err
}

// Next waits for the next message.
func (s *Sink) Next(t testing.TB) string {
	t.Helper()
	select {
	case b := <-s.recv:
		return string(b)
	case <-time.After(Wait):
		t.Fatal("no message arrived")
		return ""
	}
}

// Failure waits for the next RequestFailed.
func (s *Sink) Failure(t testing.TB) Failure {
	t.Helper()
	select {
	case f := <-s.failed:
		return f
	case <-time.After(Wait):
		t.Fatal("no request failure was reported")
		return Failure{}
	}
}

// NoFailure checks that no request failed within d.
func (s *Sink) NoFailure(t testing.TB, d time.Duration) {
	t.Helper()
	select {
	case f := <-s.failed:
		t.Fatalf("unexpected request failure: id %d: %v", f.ID, f.Err)
	case <-time.After(d):
	}
}

// NoMessage checks that nothing arrived within d.
func (s *Sink) NoMessage(t testing.TB, d time.Duration) {
	t.Helper()
	select {
	case b := <-s.recv:
		t.Fatalf("unexpected message: %s", b)
	case <-time.After(d):
	}
}

// WaitClosed waits for Closed.
func (s *Sink) WaitClosed(t testing.TB) *transport.ClosedError {
	t.Helper()
	select {
	case err := <-s.closed:
		return err
	case <-time.After(Wait):
		t.Fatal("Closed was not delivered")
		return nil
	}
}

// ClosedCount is how many times Closed was called.
func (s *Sink) ClosedCount() int { return int(s.closedCount.Load()) }

// AfterClosed is how many callbacks came after Closed (must be 0).
func (s *Sink) AfterClosed() int { return int(s.afterClosed.Load()) }

// Logs returns the log lines so far.
func (s *Sink) Logs() []transport.LogLine {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]transport.LogLine(nil), s.logs...)
}

// WaitLog waits until a log line contains text.
func (s *Sink) WaitLog(t testing.TB, text string) transport.LogLine {
	t.Helper()
	deadline := time.Now().Add(Wait)
	for time.Now().Before(deadline) {
		for _, l := range s.Logs() {
			if strings.Contains(l.Text, text) {
				return l
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("expected log line did not arrive: want %q, logs: %v", text, s.Logs())
	return transport.LogLine{}
}

// Warnings returns the log lines at warning level or above.
func (s *Sink) Warnings() []transport.LogLine {
	var out []transport.LogLine
	for _, l := range s.Logs() {
		if l.Level == "warning" || l.Level == "error" {
			out = append(out, l)
		}
	}
	return out
}
