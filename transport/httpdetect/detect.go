package httpdetect

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/legacysse"
	"github.com/lemonmcp/lemonmcp/transport/streamablehttp"
)

// mode is what detection has decided.
type mode int

const (
	undecided   mode = iota // initialize not answered yet
	fallingBack             // the server refused Streamable HTTP; legacy SSE is starting
	streamable
	legacy
)

// Transport detects the server's HTTP transport and then behaves as that
// transport. Create it with New.
type Transport struct {
	streamable *streamablehttp.Transport
	legacyCfg  legacysse.Config

	mu      sync.Mutex
	mode    mode
	sink    transport.Sink
	legacy  *legacysse.Transport
	initMsg []byte // the initialize request, kept to re-send over legacy SSE
	initID  int64
	closed  bool
	// legacyClosed is a Closed legacy SSE reported before the switch.
	legacyClosed *transport.ClosedError

	ctx    context.Context // cancelled by Close: stops a fallback under way
	cancel context.CancelFunc
	wg     sync.WaitGroup // the fallback goroutine

	closedOnce sync.Once
	afterClose atomic.Bool // Closed was delivered: nothing may follow
}

var (
	_ transport.Transport  = (*Transport)(nil)
	_ transport.Negotiator = (*Transport)(nil)
)

// New checks both configurations (normally the same URL and headers) and
// returns a transport ready to Start. The Streamable HTTP configuration's
// InitializeRefused hook is taken over by detection.
func New(s streamablehttp.Config, l legacysse.Config) (*Transport, error) {
	if _, err := legacysse.New(l); err != nil {
		return nil, err
	}
	d := &Transport{legacyCfg: l}
	s.InitializeRefused = d.refused
	st, err := streamablehttp.New(s)
	if err != nil {
		return nil, err
	}
	d.streamable = st
	return d, nil
}

// Name is "sse" once the server turned out to speak legacy HTTP+SSE, and
// "streamable_http" otherwise.
func (d *Transport) Name() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mode == legacy {
		return "sse"
	}
	return "streamable_http"
}

// Start starts the Streamable HTTP side, which sends nothing yet.
func (d *Transport) Start(ctx context.Context, sink transport.Sink) error {
	if sink == nil {
		return transport.Errorf(transport.CodeInvalidArgument, "sink is nil")
	}
	d.mu.Lock()
	d.sink = sink
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.mu.Unlock()
	if err := d.streamable.Start(ctx, fromStreamable{d}); err != nil {
		d.cancel()
		return err
	}
	return nil
}

// Send goes to the transport detection chose; until it has chosen, to
// Streamable HTTP, and the initialize request is kept for a fallback.
func (d *Transport) Send(ctx context.Context, msg transport.Outbound) error {
	d.mu.Lock()
	switch d.mode {
	case legacy:
		lt := d.legacy
		d.mu.Unlock()
		return lt.Send(ctx, msg)
	case fallingBack:
		d.mu.Unlock()
		return transport.Errorf(transport.CodeTransport, "the transport is still being detected")
	case undecided:
		if msg.Kind == transport.KindRequest && msg.Method == "initialize" {
			d.initMsg, d.initID = bytes.Clone(msg.Data), msg.ID
		}
	}
	d.mu.Unlock()
	return d.streamable.Send(ctx, msg)
}

// SetProtocolVersion implements transport.Negotiator for Streamable HTTP;
// legacy SSE has no version header.
func (d *Transport) SetProtocolVersion(version string) {
	if d.Name() == "streamable_http" {
		d.streamable.SetProtocolVersion(version)
	}
}

// Close closes whichever transports were started; the sink hears Closed
// once, from the one in use.
func (d *Transport) Close(ctx context.Context) error {
	d.mu.Lock()
	started := d.cancel != nil
	d.closed = true
	d.mu.Unlock()
	if !started {
		return d.streamable.Close(ctx)
	}
	d.cancel()
	d.wg.Wait() // a fallback under way gives up, and reports before Closed
	err := d.streamable.Close(ctx)
	d.mu.Lock()
	lt := d.legacy
	d.mu.Unlock()
	if lt != nil {
		if lerr := lt.Close(ctx); lerr != nil {
			err = lerr
		}
	}
	return err
}

// decideStreamable records that the server speaks Streamable HTTP.
func (d *Transport) decideStreamable() {
	d.mu.Lock()
	if d.mode == undecided {
		d.mode = streamable
	}
	d.mu.Unlock()
}

func (d *Transport) deliverClosed(err *transport.ClosedError) {
	d.closedOnce.Do(func() {
		d.afterClose.Store(true)
		d.sink.Closed(err)
	})
}

// CarriesHeaders implements transport.HeaderCarrier: 2026-07-28 requests
// go over Streamable HTTP, which puts their headers on the POST (legacy
// SSE is never used in that era).
func (d *Transport) CarriesHeaders() bool { return true }

// Abort implements transport.Aborter for whichever transport serves.
func (d *Transport) Abort(id int64) {
	if l := d.legacyChosen(); l != nil {
		l.Abort(id)
		return
	}
	d.streamable.Abort(id)
}

// legacyChosen is the legacy SSE transport once detection settled on it;
// nil before, and when it chose Streamable HTTP.
func (d *Transport) legacyChosen() *legacysse.Transport {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mode != legacy {
		return nil
	}
	return d.legacy
}

// SessionID is the Streamable HTTP session (Mcp-Session-Id), as the
// streamablehttp transport reports it; "" over legacy SSE, whose session
// is an endpoint detail, not a protocol one. The core's telemetry names it
// (mcp.session.id).
func (d *Transport) SessionID() string {
	if d.Name() != "streamable_http" {
		return ""
	}
	return d.streamable.SessionID()
}

// Networked implements transport.Networked.
func (d *Transport) Networked() bool { return true }

// ExchangesOnCaller implements transport.CallerExchanger: as Streamable
// HTTP does, until the server turns out to speak legacy HTTP+SSE.
func (d *Transport) ExchangesOnCaller() bool {
	return d.Name() == "streamable_http" && d.streamable.ExchangesOnCaller()
}

// PostsOnCaller implements transport.CallerPoster: as legacy HTTP+SSE
// does, once the server turned out to speak it.
func (d *Transport) PostsOnCaller() bool {
	l := d.legacyChosen()
	return l != nil && l.PostsOnCaller()
}
