package memory

import (
	"context"
	"sync"

	"github.com/lemonmcp/lemonmcp/transport"
)

// Transport is the client side of a pair.
type Transport struct {
	peer *Peer

	mu      sync.Mutex
	sink    transport.Sink
	closed  bool
	started bool
}

// Peer is the server side of a pair.
type Peer struct {
	t        *Transport
	incoming chan []byte
	// SendHook, when set, runs for every message the client sends, before
	// it is queued; returning an error fails that Send.
	SendHook func(transport.Outbound) error
}

// NewPair returns a connected client transport and its peer. The peer's
// incoming queue holds up to buffer messages; a full queue blocks Send.
func NewPair(buffer int) (*Transport, *Peer) {
	p := &Peer{incoming: make(chan []byte, buffer)}
	t := &Transport{peer: p}
	p.t = t
	return t, p
}

// Name implements transport.Transport.
func (t *Transport) Name() string { return "memory" }

// Start implements transport.Transport.
func (t *Transport) Start(_ context.Context, sink transport.Sink) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started {
		return transport.Errorf(transport.CodeInvalidArgument, "already started")
	}
	t.started, t.sink = true, sink
	return nil
}

// Send implements transport.Transport.
func (t *Transport) Send(ctx context.Context, msg transport.Outbound) error {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return transport.Errorf(transport.CodeClosed, "transport closed")
	}
	if h := t.peer.SendHook; h != nil {
		if err := h(msg); err != nil {
			return err
		}
	}
	data := append([]byte(nil), msg.Data...)
	select {
	case t.peer.incoming <- data:
		return nil
	case <-ctx.Done():
		return transport.Errorf(transport.CodeTimeout, "send timed out")
	}
}

// Close implements transport.Transport.
func (t *Transport) Close(context.Context) error {
	t.closeWith(&transport.ClosedError{Message: "the client closed the connection", ExitCode: -1, Requested: true})
	return nil
}

func (t *Transport) closeWith(cerr *transport.ClosedError) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	sink := t.sink
	t.mu.Unlock()
	if sink != nil {
		sink.Closed(cerr)
	}
}

// Incoming returns the messages the client sent, in order.
func (p *Peer) Incoming() <-chan []byte { return p.incoming }

// Write delivers one message (or any text) to the client.
func (p *Peer) Write(data []byte) {
	p.t.mu.Lock()
	sink, closed := p.t.sink, p.t.closed
	p.t.mu.Unlock()
	if sink != nil && !closed {
		sink.Receive(data)
	}
}

// Log delivers a diagnostic line to the client.
func (p *Peer) Log(line transport.LogLine) {
	p.t.mu.Lock()
	sink := p.t.sink
	p.t.mu.Unlock()
	if sink != nil {
		sink.Log(line)
	}
}

// Hangup ends the connection from the server side, as a crash would.
func (p *Peer) Hangup(message string, exitCode int) {
	p.t.closeWith(&transport.ClosedError{Message: message, ExitCode: exitCode})
}

// FailRequest reports a transport-level failure of one request, as an HTTP
// transport would.
func (p *Peer) FailRequest(id int64, err *transport.Error) {
	p.t.mu.Lock()
	sink := p.t.sink
	p.t.mu.Unlock()
	if sink != nil {
		sink.RequestFailed(id, err)
	}
}
