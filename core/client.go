package core

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/callbackgate"
	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/respawn"
)

// State is the client's lifecycle state; the values are the ABI's lmcp_state.
type State int32

// Client states.
const (
	StateNew State = iota
	StateConnecting
	StateReady
	StateClosing
	StateClosed
	StateFailed
)

var stateNames = [...]string{"new", "connecting", "ready", "closing", "closed", "failed"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// EventHandler receives events ("ready", "failed", "closed", "notification",
// "progress", "log"). payload is a JSON object the handler may keep.
type EventHandler func(kind string, payload []byte)

// AppRequestHandler receives a server request the host must answer with
// Client.Respond. payload is {"method","params"}.
type AppRequestHandler func(id uint64, kind string, payload []byte)

// DoneFunc receives a call's completion: the result JSON for StatusOK, an
// error object (Error.JSON) otherwise. data is a fresh slice the receiver may
// keep.
type DoneFunc func(callID uint64, status Status, data []byte)

// Client is one MCP client session over one transport. All methods are safe
// for concurrent use.
type Client struct {
	opts Options
	tr   transport.Transport

	mu        sync.Mutex
	state     State
	stateErr  *Error        // why the client failed or closed
	loss      lossRecord    // the last time the server went away on its own (lastloss.go)
	ready     chan struct{} // closed when the handshake ends, either way
	server    *serverState  // set once ready
	pending   map[int64]*call
	calls     map[uint64]*call
	queued    []*call // accepted before ready with WaitReady, or during a re-initialization
	reinit    bool    // the session expired and a new initialize is under way
	appReqs   map[uint64]*appRequest
	started   bool          // Start succeeded: the transport must be closed
	trClosed  chan struct{} // closed after the transport's Closed
	freed     bool
	closeOnce sync.Once
	// cancelNotices are the notifications/cancelled on their way, which
	// Close waits for (notices.go).
	cancelNotices notices

	nextReqID  atomic.Int64
	nextCallID atomic.Uint64
	nextHostID atomic.Uint64
	// listGaps: see ListChangeGaps (modern_listen.go).
	listGaps atomic.Uint64

	// headers: the transport carries per-message headers (HTTP), so modern
	// requests get them; aborter cancels a modern HTTP request.
	headers bool
	aborter transport.Aborter
	// legacyOnly: the transport has no 2026-07-28 binding (legacy
	// HTTP+SSE), so protocol.mode "auto" starts with initialize. A probe
	// there is not only useless: the Go SDK's SSE handler can answer it
	// before it has narrowed the session's versions to the legacy ones,
	// and then serves the connection in the 2026-07-28 era.
	legacyOnly bool
	// networked: the transport's requests are network exchanges
	// (transport.Networked); onCaller, when the transport can make a
	// waiting request's exchange on the caller's thread, and poster,
	// when it can make a waiting request's POST there (SyncRoute).
	networked bool
	onCaller  transport.CallerExchanger
	poster    transport.CallerPoster
	// toolHeaders are the x-mcp-header bindings of each listed tool, for
	// the Mcp-Param-* headers of tools/call.
	thMu        sync.Mutex
	toolHeaders map[string][]headerBinding
	// cache holds fresh 2026-07-28 results (see modern_cache.go).
	cache resultCache
	// listen is the subscriptions/listen side (see modern_listen.go).
	listen listenState
	// ltasks follows 2025-11-25 tasks (tasks_legacy.go); served holds
	// the tasks the client runs for its server (tasks_receiver.go).
	ltasks legacyTasks
	served map[string]*servedTask
	// probe is ModeAuto's handshake race (modern_discover.go).
	probe probeState

	// sup is set for a supervised client (Options.Restart).
	sup *supervisor

	events atomic.Pointer[eventRegistration]
	hosts  atomic.Pointer[hostRegistration]
	// telemetry is the host's telemetry handler (telemetry.go); nil: off.
	telemetry atomic.Pointer[telemetryRegistration]
	// sessionStart is when the current session became ready (zero when
	// none is; under mu): the duration of a telemetry "session" record.
	sessionStart time.Time
	// sessionID is the transport's session id when that session started:
	// its record names it even once the transport forgot it (an expiry).
	sessionID string
	// out is the client's callback gate (see deliver.go); it also holds the
	// poisoned state a recovered panic leaves (see poison.go).
	out callbackgate.Gate
}

// New creates a client over tr in StateNew. Nothing starts until Connect.
func New(opts Options, tr transport.Transport) *Client {
	c := &Client{
		opts:     opts,
		tr:       tr,
		ready:    make(chan struct{}),
		trClosed: make(chan struct{}),
		pending:  make(map[int64]*call),
		calls:    make(map[uint64]*call),
		appReqs:  make(map[uint64]*appRequest),
	}
	c.out.Init(callbackgate.Hooks{
		Owner:         "client",
		DeliveryWhere: "a callback delivery",
		DestroyWhere:  "a destroy callback",
		Report:        func(text string) { c.emitLog("error", "library", text) },
		Dropped:       c.reportDroppedLogs,
	})
	if hc, ok := tr.(transport.HeaderCarrier); ok && hc.CarriesHeaders() {
		c.headers = true
	}
	if lo, ok := tr.(transport.LegacyOnly); ok && lo.LegacyOnly() {
		c.legacyOnly = true
	}
	if n, ok := tr.(transport.Networked); ok && n.Networked() {
		c.networked = true
	}
	c.onCaller, _ = tr.(transport.CallerExchanger)
	c.poster, _ = tr.(transport.CallerPoster)
	c.aborter, _ = tr.(transport.Aborter)
	if opts.Restart != nil && opts.NewTransport != nil {
		live := respawn.New(tr, opts.NewTransport)
		c.tr, c.sup = live, &supervisor{policy: *opts.Restart, live: live}
		if c.aborter != nil {
			c.aborter = live
		}
	}
	if opts.Auth != nil {
		opts.Auth.Bind(authHost{c})
	}
	return c
}

// SetEventHandler installs h (nil removes it). The previous handler's
// destroy runs once none of its callbacks is running. On a freed client it
// fails with StatusInvalidHandle, and destroy runs at once.
func (c *Client) SetEventHandler(h EventHandler, destroy func()) *Error {
	var reg *eventRegistration
	if h != nil || destroy != nil {
		reg = callbackgate.NewRegistration(&c.out, h, destroy)
	}
	var err *Error
	callbackgate.Install(&c.out, &c.mu, &c.events, reg, func() bool {
		if c.freed {
			err = errFreed()
		}
		return err != nil
	})
	return err
}

// SetAppRequestHandler installs the app-request handler. It must be set
// before Connect; afterwards it fails with StatusInvalidState (and destroy
// runs at once).
func (c *Client) SetAppRequestHandler(h AppRequestHandler, destroy func()) *Error {
	var reg *hostRegistration
	if h != nil || destroy != nil {
		reg = callbackgate.NewRegistration(&c.out, h, destroy)
	}
	var err *Error
	callbackgate.Install(&c.out, &c.mu, &c.hosts, reg, func() bool {
		if c.freed {
			err = errFreed()
		} else if c.state != StateNew {
			err = Errorf(StatusInvalidState, "the app request handler must be set before connect")
		}
		return err != nil
	})
	return err
}

// State returns the current state.
func (c *Client) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Connect starts the transport and the handshake. It returns once the
// transport is started; readiness arrives as an event and through WaitReady.
func (c *Client) Connect() *Error {
	c.mu.Lock()
	if c.freed {
		c.mu.Unlock()
		return errFreed()
	}
	if c.state != StateNew {
		st := c.state
		c.mu.Unlock()
		return Errorf(StatusInvalidState, "connect was already called (the client is %s)", st)
	}
	if reg := c.hosts.Load(); c.opts.needsHostHandler() && (reg == nil || reg.Handler == nil) {
		c.mu.Unlock()
		return Errorf(StatusInvalidArgument, "handlers, a sampling policy that delegates, or auth.token_store \"app\" are configured, but no app request handler is registered")
	}
	c.state = StateConnecting
	c.mu.Unlock()

	if err := c.tr.Start(context.Background(), c); err != nil {
		e := AsError(err)
		c.mu.Lock()
		if c.supervisedLocked() {
			if !permanentStart(err) {
				// The first start failed: the restart policy retries it.
				c.started = true
				c.restartLocked(e, nil)
				return nil
			}
			e = notRetried(err)
		}
		if c.state == StateConnecting { // not closed or freed meanwhile (they closed ready)
			c.state, c.stateErr = StateFailed, e
			close(c.ready)
		}
		close(c.trClosed)
		failed := c.takeQueuedLocked()
		// A call queued for readiness fails as one made after the failure:
		// same status, words and cause, whichever came first.
		refusal := c.notReadyLocked()
		c.mu.Unlock()
		c.failCalls(failed, refusal)
		c.emitError("failed", e)
		return e
	}
	c.mu.Lock()
	c.started = true
	// Close or Free ran while the transport was starting: they found
	// nothing started, so the transport is closed here.
	abandoned, freed := c.state != StateConnecting, c.freed
	c.mu.Unlock()
	if abandoned {
		go func() {
			defer c.recoverPanic("the teardown of a connection started during close")
			ctx, cancel := context.WithTimeout(context.Background(), 3*c.opts.Timeouts.CloseGrace+time.Second)
			defer cancel()
			c.closeTransport(ctx)
		}()
		if freed {
			return errFreed()
		}
		return Errorf(StatusInvalidState, "the client was closed while connecting")
	}
	c.startEra()
	return nil
}

// WaitReady blocks until the client is ready, the handshake failed, or
// timeout passes (negative: no limit).
func (c *Client) WaitReady(timeout time.Duration) *Error {
	c.mu.Lock()
	if c.state == StateNew {
		c.mu.Unlock()
		return Errorf(StatusInvalidState, "connect was not called")
	}
	ready := c.ready // a restart replaces it
	c.mu.Unlock()
	if timeout < 0 {
		<-ready
	} else {
		t := time.NewTimer(timeout)
		select {
		case <-ready:
			t.Stop()
		case <-t.C:
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.freed {
		return errFreed()
	}
	switch c.state {
	case StateReady:
		return nil
	case StateConnecting:
		return Errorf(StatusTimeout, "the client is not ready after %d ms (the handshake goes on)", timeout.Milliseconds())
	case StateFailed:
		return c.stateErr
	default:
		return c.closedErrorLocked()
	}
}

// ServerInfo returns the server info JSON learned by the handshake.
func (c *Client) ServerInfo() ([]byte, *Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != StateReady {
		return nil, c.notReadyLocked()
	}
	return append([]byte(nil), c.server.infoJSON...), nil
}

// Close shuts the client down gracefully within timeout: pending calls fail
// with StatusClosed, and the transport is closed (for stdio: the process
// group is terminated and the child reaped).
func (c *Client) Close(timeout time.Duration) *Error {
	if timeout < 0 {
		timeout = 3*c.opts.Timeouts.CloseGrace + time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	c.mu.Lock()
	if c.freed {
		c.mu.Unlock()
		return errFreed()
	}
	switch c.state {
	case StateNew:
		c.state = StateClosed
		c.stateErr = Errorf(StatusClosed, "the client was closed")
		close(c.ready)
		close(c.trClosed)
		failed := c.takeQueuedLocked()
		c.mu.Unlock()
		c.failCalls(failed, c.stateErr)
		c.emitClosed(&transport.ClosedError{Message: "the client was closed", ExitCode: -1, Requested: true})
		return nil
	case StateConnecting, StateReady:
		if c.state == StateConnecting {
			close(c.ready)
		}
		c.state = StateClosing
		c.stateErr = Errorf(StatusClosed, "the client was closed")
	}
	started := c.started
	failed := c.takeAllCallsLocked()
	c.mu.Unlock()
	c.failCalls(failed, Errorf(StatusClosed, "the client was closed"))
	if started {
		c.cancelNotices.wait(ctx)
		c.closeTransportWithin(ctx)
	}
	select {
	case <-c.trClosed:
	case <-ctx.Done():
	}
	if ctx.Err() != nil {
		return Errorf(StatusTimeout, "close did not finish within %d ms; teardown goes on in the background", timeout.Milliseconds())
	}
	return nil
}

// Free releases the client. It never waits for the server: the transport is
// torn down in the background. It does wait for the host: when it returns,
// every accepted call has completed (pending ones with StatusCancelled),
// every callback of the client has returned and none will start again, and
// the handlers' destroys have run. Any later method fails with
// StatusInvalidHandle. Free must not be called from the client's own
// callbacks; FreeFrom can be.
func (c *Client) Free() { c.FreeFrom(FreeCaller{}) }

// FreeFrom is Free called from inside from.Callbacks of the client's own
// callbacks: it does not wait for those, which finish after it returns (and
// the destroy of a handler among them runs after its callback returns).
func (c *Client) FreeFrom(from FreeCaller) {
	c.mu.Lock()
	if c.freed {
		c.mu.Unlock()
		return
	}
	// A free ends a ready session as a requested close does: its record
	// is owed, so the Drain below delivers it (endSessionLocked drops it
	// once freed is set).
	c.endSessionLocked(nil)
	c.freed = true
	switch c.state {
	case StateConnecting, StateReady:
		if c.state == StateConnecting {
			close(c.ready) // wake WaitReady
		}
		c.state = StateClosing
		c.stateErr = errFreed()
	}
	failed := c.takeAllCallsLocked()
	hosts := c.takeAppRequestsLocked()
	c.endServedTasksLocked()
	started := c.started
	c.mu.Unlock()
	c.out.Close()
	for _, h := range hosts {
		h.timer.Stop()
		if h.onDrop != nil {
			h.onDrop()
		}
	}
	c.failCalls(failed, Errorf(StatusCancelled, "the client was freed"))
	c.out.Drain(from)
	c.events.Swap(nil).Close()
	c.hosts.Swap(nil).Close()
	c.telemetry.Swap(nil).Close()
	if started {
		go func() {
			defer c.recoverPanic("the background teardown")
			ctx, cancel := context.WithTimeout(context.Background(), 3*c.opts.Timeouts.CloseGrace+time.Second)
			defer cancel()
			c.closeTransport(ctx)
		}()
	}
}

// closeTransportWithin is closeTransport for a caller that waits no longer
// than ctx. A transport's Close is bounded by ctx by contract; one that
// broke it would hold the host's thread in Close, so its close goes on in
// the background instead, as Close's timeout error says.
func (c *Client) closeTransportWithin(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer c.recoverPanic("the transport's close")
		c.closeTransport(ctx)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// closeTransport closes the transport once; concurrent callers wait for the
// same close through trClosed.
func (c *Client) closeTransport(ctx context.Context) {
	c.closeOnce.Do(func() {
		if c.opts.Auth != nil {
			c.opts.Auth.Close() // a grant in progress (an "authorize" the host sits on) ends now
		}
		_ = c.tr.Close(ctx)
	})
}

// errFreed is what a method of a freed client returns (the C ABI's answer
// to a handle freed while the call was on its way in).
func errFreed() *Error {
	return Errorf(StatusInvalidHandle, "the client was freed")
}

// notReadyLocked explains why a call cannot be made now.
// CallRefusal is the error a call made now is refused with because the
// client is not ready (nil when it is ready): a host that refuses or fails
// a call on the client's behalf gives the same status, words and cause.
func (c *Client) CallRefusal() *Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == StateReady && !c.freed {
		return nil
	}
	return c.notReadyLocked()
}

func (c *Client) notReadyLocked() *Error {
	if c.freed {
		return errFreed()
	}
	switch c.state {
	case StateNew:
		return Errorf(StatusInvalidState, "the client is not connected (call connect first)")
	case StateConnecting:
		return Errorf(StatusInvalidState, "the client is not ready yet (the handshake is in progress)")
	case StateFailed:
		// The data keeps the failure's machine-readable "cause".
		return &Error{Status: StatusInvalidState, Message: "the client failed to connect: " + c.stateErr.Message, Data: c.stateErr.Data}
	default:
		return c.closedErrorLocked()
	}
}

func (c *Client) closedErrorLocked() *Error {
	reason := "the client is closed"
	if c.stateErr != nil {
		reason += ": " + c.stateErr.Message
	}
	return &Error{Status: StatusInvalidState, Message: reason}
}

// retireLocked marks a call finished and removes it from every table. It
// returns the request id that was outstanding (0 if none), and false when
// the call was already finished: whoever retires a call completes it.
func (c *Client) retireLocked(cl *call) (int64, bool) {
	if cl.finished {
		return 0, false
	}
	cl.finished = true
	livePending.Add(-1)
	if cl.owesDelivery() {
		c.out.Owe() // Free waits until the completion is delivered
	}
	delete(c.calls, cl.id)
	reqID := cl.reqID
	cl.reqID = 0
	if reqID != 0 {
		cl.lastReqID = reqID
		delete(c.pending, reqID)
	}
	if cl.timer != nil {
		cl.timer.Stop()
	}
	return reqID, true
}

// takeAllCallsLocked removes every accepted call; the caller fails them.
func (c *Client) takeAllCallsLocked() []*call {
	out := make([]*call, 0, len(c.calls))
	for _, cl := range c.calls {
		if _, ok := c.retireLocked(cl); ok {
			out = append(out, cl)
		}
	}
	clear(c.pending)
	c.queued = nil
	return out
}

// takeQueuedLocked removes the calls waiting for readiness.
func (c *Client) takeQueuedLocked() []*call {
	out := make([]*call, 0, len(c.queued))
	for _, cl := range c.queued {
		if _, ok := c.retireLocked(cl); ok {
			out = append(out, cl)
		}
	}
	c.queued = nil
	return out
}

func (c *Client) takeAppRequestsLocked() []*appRequest {
	out := make([]*appRequest, 0, len(c.appReqs))
	for id, h := range c.appReqs {
		delete(c.appReqs, id)
		out = append(out, h)
	}
	return out
}
