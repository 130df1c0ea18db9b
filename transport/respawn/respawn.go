package respawn

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/lemonmcp/lemonmcp/transport"
)

// Factory builds a fresh, unstarted transport to the same server, of the
// same kind as the first one.
type Factory func() (transport.Transport, error)

// Transport is the transport of a supervised client: it forwards to the
// current generation and builds the next one on Next.
type Transport struct {
	factory Factory
	name    string

	// cur is the current generation, read without the lock on every send.
	cur atomic.Pointer[box]

	mu      sync.Mutex
	gen     uint64
	running bool // cur was started and has not reported Closed
	final   bool // Close was called: no further generation
	sink    transport.Sink
}

// box holds one generation's transport, so that it can be swapped
// atomically.
type box struct{ t transport.Transport }

// New wraps first, the generation the client starts with; factory builds
// the later ones.
func New(first transport.Transport, factory Factory) *Transport {
	l := &Transport{factory: factory, name: first.Name()}
	l.cur.Store(&box{first})
	return l
}

// generationSink passes one generation's messages to the client, and its
// Closed only while it is the current generation.
type generationSink struct {
	l   *Transport
	gen uint64
	transport.Sink
}

func (g generationSink) Closed(err *transport.ClosedError) {
	g.l.mu.Lock()
	current := g.gen == g.l.gen
	if current {
		g.l.running = false
	}
	g.l.mu.Unlock()
	if current {
		g.Sink.Closed(err)
	}
}

// Panicked passes a recovered panic of any generation to the client, which
// is poisoned by it (transport.PanicSink): a panic is a bug in the library,
// whichever generation of the server it happened with.
func (g generationSink) Panicked(where string, value any) {
	if ps, ok := g.Sink.(transport.PanicSink); ok {
		ps.Panicked(where, value)
		return
	}
	g.Sink.Log(transport.LogLine{Level: "error", Source: "transport", Text: "internal error in " + where + " (a bug: please report it)"})
}

// Start starts the current generation, delivering to sink.
func (l *Transport) Start(ctx context.Context, sink transport.Sink) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sink = sink
	return l.startLocked(ctx)
}

func (l *Transport) startLocked(ctx context.Context) error {
	l.gen++
	if err := l.cur.Load().t.Start(ctx, generationSink{l: l, gen: l.gen, Sink: l.sink}); err != nil {
		return err
	}
	l.running = true
	return nil
}

// Next builds and starts a new generation, delivering to the sink given to
// Start. It fails with the factory's or the new generation's error, or with
// a *transport.ClosedError once Close was called.
func (l *Transport) Next() error {
	tr, err := l.factory()
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.final {
		return &transport.ClosedError{Message: "the client was closed", ExitCode: -1, Requested: true}
	}
	l.cur.Store(&box{tr})
	return l.startLocked(context.Background())
}

// CloseCurrent closes the current generation only (to restart it); the
// wrapper stays open for the next one.
func (l *Transport) CloseCurrent(ctx context.Context) {
	l.mu.Lock()
	cur, running := l.cur.Load().t, l.running
	l.mu.Unlock()
	if running {
		_ = cur.Close(ctx)
	}
}

// Send writes to the current generation.
func (l *Transport) Send(ctx context.Context, msg transport.Outbound) error {
	cur := l.cur.Load().t
	return cur.Send(ctx, msg)
}

// Close ends supervision and closes the current generation; between
// generations it reports Closed itself, as the transport contract asks.
func (l *Transport) Close(ctx context.Context) error {
	l.mu.Lock()
	if l.final {
		l.mu.Unlock()
		return nil
	}
	l.final = true
	cur, running, sink := l.cur.Load().t, l.running, l.sink
	if !running {
		l.gen++ // a late Closed of the last generation is not delivered twice
	}
	l.mu.Unlock()
	if running {
		return cur.Close(ctx)
	}
	if sink != nil {
		sink.Closed(&transport.ClosedError{Message: "the client was closed", ExitCode: -1, Requested: true})
	}
	return nil
}

// Name is the first generation's name: every generation is of its kind.
func (l *Transport) Name() string { return l.name }

// CarriesHeaders forwards transport.HeaderCarrier.
func (l *Transport) CarriesHeaders() bool {
	cur := l.cur.Load().t
	hc, ok := cur.(transport.HeaderCarrier)
	return ok && hc.CarriesHeaders()
}

// LegacyOnly forwards transport.LegacyOnly.
func (l *Transport) LegacyOnly() bool {
	cur := l.cur.Load().t
	lo, ok := cur.(transport.LegacyOnly)
	return ok && lo.LegacyOnly()
}

// InboundStream forwards transport.LineStreamer: every generation is of
// the same kind, so the current one answers for all.
func (l *Transport) InboundStream() string {
	if ls, ok := l.cur.Load().t.(transport.LineStreamer); ok {
		return ls.InboundStream()
	}
	return "transport"
}

// Abort forwards transport.Aborter.
func (l *Transport) Abort(id int64) {
	cur := l.cur.Load().t
	if a, ok := cur.(transport.Aborter); ok {
		a.Abort(id)
	}
}

// SetProtocolVersion forwards transport.Negotiator.
func (l *Transport) SetProtocolVersion(version string) {
	cur := l.cur.Load().t
	if n, ok := cur.(transport.Negotiator); ok {
		n.SetProtocolVersion(version)
	}
}

// SandboxReport forwards transport.SandboxReporter: what confines the
// current generation's server.
func (l *Transport) SandboxReport() any {
	if r, ok := l.cur.Load().t.(transport.SandboxReporter); ok {
		return r.SandboxReport()
	}
	return nil
}

// SessionID forwards the current generation's session id (telemetry's
// mcp.session.id), "" when it has none.
func (l *Transport) SessionID() string {
	if s, ok := l.cur.Load().t.(interface{ SessionID() string }); ok {
		return s.SessionID()
	}
	return ""
}
