package streamablehttp

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/httpclient"
	"github.com/lemonmcp/lemonmcp/transport/internal/runners"
)

// Header names, as the 2025-11-25 specification spells them (HTTP header
// names are case-insensitive).
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderLastEventID     = "Last-Event-ID"
)

// Transport talks to one Streamable HTTP endpoint. Create it with New.
type Transport struct {
	cfg       *settings
	client    *http.Client
	ownClient bool // created here, so its idle connections are closed here

	mu      sync.Mutex
	state   int
	sink    transport.Sink
	session string // the Mcp-Session-Id, "" when none
	// expired is set when the server forgot the session, until the next
	// initialize response: nothing but initialize can succeed meanwhile.
	expired  bool
	version  string // the negotiated protocol version, "" before initialize
	inflight map[int64]*pending
	listener *listener // the GET stream, nil when none runs
	// wire caches the header values of the current session and version.
	wire atomic.Pointer[wireValues]

	// ctx is cancelled by Close: every request, stream and wait derives
	// from it. wg counts every goroutine and every Send in flight, so that
	// Closed follows the last Sink call.
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	closing atomic.Bool
	done    chan struct{} // closed once Closed has been delivered

	// runners make the requests nobody waits on (Send without Waiting).
	runners runners.Pool[queuedRequest]

	// waitToReconnect waits a stream's reconnect delay (sleep); a test
	// reads the delay chosen here instead of timing the reconnection.
	waitToReconnect func(ctx context.Context, d time.Duration) bool
	// grace is responseGrace; a test lengthens it so that a stream held
	// open is held until the test releases it, not cut by the timer.
	grace time.Duration
}

// queuedRequest is a request a runner makes (exchange's arguments).
type queuedRequest struct {
	p       *pending
	body    []byte
	method  string
	headers []transport.Header
}

// runQueued makes a request nobody waits on, on a runner.
func (t *Transport) runQueued(r queuedRequest) {
	t.exchange(r.p, r.body, r.method, r.headers, false, false)
}

const (
	stateNew = iota
	stateStarted
	stateClosed
)

var (
	_ transport.Transport  = (*Transport)(nil)
	_ transport.Negotiator = (*Transport)(nil)
)

// New checks cfg and returns a transport ready to Start. Errors are
// *transport.Error with CodeInvalidArgument; their messages start with the
// field at fault ("url: ...", "headers.X-Key: ...").
func New(cfg Config) (*Transport, error) {
	s, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	t := &Transport{cfg: s, client: s.HTTPClient, inflight: make(map[int64]*pending), done: make(chan struct{}), waitToReconnect: sleep, grace: responseGrace}
	if t.client == nil {
		t.client, t.ownClient = httpclient.NewClient(s.WrapTransport), true
	} else {
		t.client = httpclient.WrapClient(t.client, s.WrapTransport)
	}
	return t, nil
}

// Name returns "streamable_http".
func (t *Transport) Name() string { return "streamable_http" }

// Start records the sink. Nothing goes over the network until the first
// Send: the initialize request is what opens the session.
func (t *Transport) Start(ctx context.Context, sink transport.Sink) error {
	if sink == nil {
		return transport.Errorf(transport.CodeInvalidArgument, "sink is nil")
	}
	if err := ctx.Err(); err != nil {
		return transport.Errorf(transport.CodeTimeout, "start cancelled")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch t.state {
	case stateStarted:
		return transport.Errorf(transport.CodeInvalidArgument, "transport already started")
	case stateClosed:
		return transport.Errorf(transport.CodeClosed, "transport is closed")
	}
	t.sink = sink
	t.ctx, t.cancel = context.WithCancel(context.Background())
	t.runners.Start(t.runQueued, t.ctx.Done(), &t.wg)
	t.state = stateStarted
	return nil
}

// SetProtocolVersion implements transport.Negotiator: from now on every
// request carries MCP-Protocol-Version.
func (t *Transport) SetProtocolVersion(version string) {
	t.mu.Lock()
	t.version = version
	t.mu.Unlock()
}

// SessionID returns the current Mcp-Session-Id, for tests and diagnostics.
// It must never be logged: it authenticates the session.
func (t *Transport) SessionID() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.session
}

// enter admits one unit of work (a Send or a goroutine) unless the
// transport is closing; the caller must call t.wg.Done when it ends.
func (t *Transport) enter() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.enterLocked()
}

func (t *Transport) enterLocked() bool {
	if t.state != stateStarted || t.closing.Load() {
		return false
	}
	t.wg.Add(1)
	return true
}

// wireState is the session id and protocol version a request of method
// carries. initialize carries neither: it starts a new session.
func (t *Transport) wireState(method string) (session, version string) {
	if method == "initialize" {
		return "", ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.session, t.version
}

// sessionGone is the error for a message that would go out on a session
// the server has forgotten, or nil. Sent without the id, it would reach
// the server as a message outside any session and fail for an obscure
// reason (400, or "invalid during initialization"); reported as an expired
// session, it makes the core initialize again.
func (t *Transport) sessionGone(method string) *transport.Error {
	if method == "initialize" {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.expired {
		return nil
	}
	return transport.Errorf(transport.CodeSessionExpired, "the server no longer knows the session (it must be initialized again)")
}

// adoptSession takes the session id of an initialize response. A new
// session makes the GET stream of the old one pointless, so it stops; the
// core's notifications/initialized opens the next one.
func (t *Transport) adoptSession(id string) {
	if id != "" && !validSessionID(id) {
		t.log("warning", "ignored an Mcp-Session-Id header that is not visible ASCII")
		id = ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if id != t.session {
		t.stopListenerLocked()
	}
	t.session, t.expired = id, false
}

// expireSession forgets the session a request was sent with, unless a new
// one has replaced it meanwhile. Until the next initialize, every other
// message fails as expired without going out (see sessionGone).
func (t *Transport) expireSession(sent string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if sent != "" && t.session == sent {
		t.session, t.expired = "", true
		t.stopListenerLocked()
	}
}

// validSessionID: the specification allows visible ASCII only.
func validSessionID(id string) bool {
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7E {
			return false
		}
	}
	return true
}

func (t *Transport) log(level, text string) {
	t.sink.Log(transport.LogLine{Level: level, Source: "transport", Text: text})
}
