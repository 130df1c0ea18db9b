package host

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// A lazy server with "idle_ms" is stopped once nothing has used it for
// that long: its client is freed (the process reaped) and a new, unstarted
// client takes its place, which the next call or list starts as the first
// one was. A client is never stopped while a call or a list fetch uses it.

// generation is one client of a server and its start state.
type generation struct {
	client     *core.Client // nil when the server is disabled
	settleOnce sync.Once
	settled    chan struct{} // closed once the first attempt ended either way
	startOnce  sync.Once
	started    atomic.Bool // Connect was called (a lazy server waits for its first use)
}

// settle marks the generation's first attempt over (ready or failed).
func (g *generation) settle() { g.settleOnce.Do(func() { close(g.settled) }) }

// newGeneration makes the server's client (none for a disabled server),
// with its events and requests bound to this generation.
func (s *server) newGeneration() (*generation, *core.Error) {
	g := &generation{settled: make(chan struct{})}
	if !s.cfg.Enabled {
		close(g.settled)
		return g, nil
	}
	p, err := config.ParseSupervised(s.cfg.Client, s.h.version)
	if err != nil {
		return nil, withTypos(&core.Error{Status: err.Status, Message: s.cfg.Spell(err.Message)}, s.cfg.typos)
	}
	c := core.New(p.Options, p.Transport)
	if err := s.bind(c, g); err != nil {
		return nil, err
	}
	g.client = c
	return g, nil
}

// bind installs the server's handlers on c, the new client of generation
// g. When one cannot be installed, c is freed: a half-bound client never
// outlives the error (host.New then frees the servers built before).
func (s *server) bind(c *core.Client, g *generation) *core.Error {
	err := c.SetEventHandler(func(kind string, payload []byte) { s.onEvent(g, kind, payload) }, nil)
	if err == nil {
		err = c.SetAppRequestHandler(func(id uint64, kind string, payload []byte) { s.onRequest(c, id, kind, payload) }, nil)
	}
	if err == nil {
		s.h.telemetryMu.Lock()
		if s.h.telemetryOn() {
			err = c.SetTelemetryHandler(s.onTelemetry, nil) // a new generation measures as the last did
		}
		s.h.telemetryMu.Unlock()
	}
	if err != nil {
		c.Free()
	}
	return err
}

// idleState counts a server's uses in flight and holds its idle timer.
type idleState struct {
	mu    sync.Mutex
	uses  int
	timer *time.Timer
}

// stopIdleTimer disarms the idle timer (the host is being freed).
func (s *server) stopIdleTimer() {
	s.idle.mu.Lock()
	if s.idle.timer != nil {
		s.idle.timer.Stop()
		s.idle.timer = nil
	}
	s.idle.mu.Unlock()
}

// useBegin counts a use (a call, a list fetch): the client is not stopped
// until useEnd.
func (s *server) useBegin() {
	if s.cfg.Idle <= 0 {
		return
	}
	s.idle.mu.Lock()
	s.idle.uses++
	if s.idle.timer != nil {
		s.idle.timer.Stop()
		s.idle.timer = nil
	}
	s.idle.mu.Unlock()
}

// useEnd ends a use; the last one arms the idle timer.
func (s *server) useEnd() {
	if s.cfg.Idle <= 0 {
		return
	}
	s.idle.mu.Lock()
	defer s.idle.mu.Unlock()
	s.idle.uses--
	if s.idle.uses == 0 {
		s.idle.timer = time.AfterFunc(s.cfg.Idle, s.stopIfIdle)
	}
}

// stopIfIdle replaces a started client nothing uses with a new, unstarted
// one, and frees the old (its process is torn down in the background).
func (s *server) stopIfIdle() {
	h := s.h
	defer h.recoverPanic("the idle stop of server " + s.name)
	s.idle.mu.Lock()
	if s.idle.uses > 0 || s.idle.timer == nil {
		s.idle.mu.Unlock()
		return
	}
	s.idle.timer = nil
	old := s.gen()
	if !old.started.Load() {
		s.idle.mu.Unlock()
		return
	}
	h.mu.Lock()
	if h.freed || h.closed {
		h.mu.Unlock()
		s.idle.mu.Unlock()
		return
	}
	g, err := s.newGeneration()
	if err != nil { // the configuration parsed once: only a bug gets here
		h.mu.Unlock()
		s.idle.mu.Unlock()
		return
	}
	s.cur.Store(g)
	h.mu.Unlock()
	s.idle.mu.Unlock()

	s.mu.Lock()
	s.everReady, s.lastErr, s.era, s.version, s.transport = false, "", "", "", ""
	s.fail = failure{}
	s.mu.Unlock()
	for k, l := range s.lists {
		l.invalidate()
		s.announce(listKind(k), 0) // its items left the aggregated list
	}
	h.dropRequestsOf(s)
	old.client.Free()
}
