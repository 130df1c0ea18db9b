package core

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/internal/tracecontext"
	"github.com/lemonmcp/lemonmcp/transport"
)

// CallOptions tune one call. Zero values mean the client's defaults.
type CallOptions struct {
	Timeout         time.Duration
	TimeoutSet      bool
	ResetOnProgress bool
	ResetSet        bool
	MaxTotal        time.Duration
	MaxTotalSet     bool
	AllPages        bool
	Progress        bool
	WaitReady       bool
	// FailIfRestarting: a call made while a supervised client restarts its
	// server fails at once instead of waiting for the server (up to the
	// ready timeout).
	FailIfRestarting bool
	Meta             []byte // a JSON object merged into params._meta
	// Verify (resources/read only) checks the content before it is
	// returned; see ResourceVerify.
	Verify *ResourceVerify
	// NoCache: the call goes to the server even when a fresh cached result
	// exists (the new result is cached).
	NoCache bool
	// Inline runs the completion on whichever goroutine completes the call
	// (possibly the caller's, inside Call). Only for completions that never
	// block, such as handing the result to a waiting goroutine.
	Inline bool
	// QueuesDone: the completion only queues the outcome for the host to
	// pop (lmcp_*_call_queued), running no host code and never blocking;
	// while the client's gate is idle it runs where the call completes
	// (callbackgate.Gate.PushQuick), still after the client's earlier
	// events.
	QueuesDone bool
	// Waiting: the caller's goroutine does nothing else until the
	// completion has run (an Inline completion that hands the outcome to
	// a thread waiting outside Go), so over HTTP the exchange runs on it,
	// as in CallSync (transport.Outbound.Waiting).
	Waiting bool
	// Thread: the caller is an OS thread outside Go (a C host's), which
	// blocks in the call (CallSync, or Waiting): over HTTP its exchange
	// stays in blocking system calls however many threads wait at once
	// (transport.Outbound.Thread). capi sets it.
	Thread bool
	// Handed: an Inline call whose id the application received (a blocking
	// call made in two steps, lmcp_*_call_begin), so a host's Cancel
	// reaches it as it does any call's; a blocking wrapper's id never
	// leaves the library.
	Handed bool
	// Task asks for a task-augmented tools/call where the server and the
	// tool allow one but do not require it (2025-11-25 tasks,
	// tasks_legacy.go); a tool that requires a task always gets one.
	Task bool
	// FrontSession names the gateway's front session the call serves
	// (package gateway); telemetry records carry it.
	FrontSession string

	// own marks a call the library makes for itself (a lookup the host
	// never asked for): the host never received its id, so Cancel does not
	// reach it.
	own bool

	// Trace is the call's W3C trace context, sent in params._meta of every
	// request of the call; empty means the client's Options.Trace.
	Trace tracecontext.Context
	// TelemetryID is the call id telemetry records name (a host's own call
	// id); 0 means the client's.
	TelemetryID uint64
	// Unrecorded keeps the call out of telemetry: a host's own requests
	// (its aggregated lists) are no records, as the client's own
	// (initialize, ...) are not, so every binding reports the same calls.
	Unrecorded bool
}

// livePending counts accepted calls not yet completed, across clients, for
// leak diagnostics.
var livePending atomic.Int64

// PendingCalls reports how many accepted calls have not completed yet.
func PendingCalls() int64 { return livePending.Load() }

// call is one accepted call: a host call, a page walk, or an internal request
// such as initialize.
type call struct {
	id     uint64
	method string
	params []byte // compact params as sent (for page walks: without cursor)
	reqID  int64  // the outstanding request id, 0 when none
	opts   CallOptions
	done   DoneFunc
	// internal calls (initialize) take the response themselves.
	internal func(result []byte, err *Error)

	timer        *time.Timer
	callTimeout  time.Duration
	started      time.Time
	lastActivity time.Time
	hardDeadline time.Time // zero: none
	finished     bool
	retried      bool // already re-sent once after the session expired
	// waiting: the caller blocks until the completion (CallSync), and the
	// transport may be running the exchange on its goroutine: a timeout
	// must abort that exchange too.
	waiting bool

	pages *pageWalk

	// trace is the trace context the call's requests carry (see
	// tracecontext.go); empty when none.
	trace tracecontext.Context
	// lastReqID is the last request id the call sent, for telemetry.
	lastReqID int64

	// mod is set, when the call is admitted, for a call of the 2026-07-28
	// era; legacy calls carry only this nil pointer.
	mod *modernCall
	// lt is a 2025-11-25 task-augmented tools/call's task
	// (tasks_legacy.go). Guarded by c.mu.
	lt *legacyTask
}

// modernCall is what a 2026-07-28 call needs beyond a legacy one.
type modernCall struct {
	version string       // carried in _meta (and HTTP's MCP-Protocol-Version)
	meta    []byte       // the _meta members the client adds (see modernMeta)
	round   *inputRound  // the MRTR round being answered
	retry   *retryInput  // the inputs the next send carries
	rounds  int          // input_required rounds so far
	cached  *cacheLookup // the cache miss the outstanding request may fill
	task    *taskState   // the task a task-augmented call follows (modern_tasks.go)
}

// modernCallFor is the modern part of a call admitted while st is the
// server state (nil in the legacy era).
func modernCallFor(st *serverState) *modernCall {
	if st.modern == "" {
		return nil
	}
	return &modernCall{version: st.modern, meta: st.meta}
}

// Call sends method with params (a JSON object or nil) and arranges for done
// to run exactly once. It returns the call id, or an error (and done never
// runs).
func (c *Client) Call(method string, params []byte, opts CallOptions, done DoneFunc) (uint64, *Error) {
	return c.call(method, params, opts, done, opts.Waiting && opts.Inline)
}

// call is Call; waiting says the caller blocks until done runs (CallSync),
// so the transport may run the exchange on the caller's goroutine.
func (c *Client) call(method string, params []byte, opts CallOptions, done DoneFunc, waiting bool) (uint64, *Error) {
	if method == "" {
		return 0, Errorf(StatusInvalidArgument, "method is empty")
	}
	if done == nil {
		return 0, Errorf(StatusInvalidArgument, "a completion callback is required")
	}
	if opts.Verify != nil && method != "resources/read" {
		return 0, Errorf(StatusInvalidArgument, "options.verify applies only to resources/read, not %s", method)
	}
	cl := &call{id: c.nextCallID.Add(1), method: method, opts: opts, done: done, waiting: waiting}
	var err *Error
	if !opts.Trace.Empty() || !c.opts.Trace.Empty() {
		c.attachTrace(cl)
	}
	if cl.params, err = prepareParams(params, cl.opts, cl.id, c.wantsProgressToken(opts)); err != nil {
		return 0, err
	}
	if opts.AllPages {
		if cl.pages, err = newPageWalk(method); err != nil {
			return 0, err
		}
	}
	c.armTimeouts(cl)

	c.mu.Lock()
	switch {
	case c.freed:
		c.mu.Unlock()
		return 0, errFreed()
	case c.state == StateReady && c.reinit:
		// The session expired: the call goes out once the new session is up.
		c.calls[cl.id] = cl
		livePending.Add(1)
		c.queued = append(c.queued, cl)
		c.startTimerLocked(cl)
		c.mu.Unlock()
		return cl.id, nil
	case c.state == StateReady:
		if err := c.server.gate(method); err != nil {
			c.mu.Unlock()
			return 0, err
		}
		cl.mod = modernCallFor(c.server)
		if cl.mod != nil && isListenMethod(method) {
			c.calls[cl.id] = cl
			livePending.Add(1)
			c.startTimerLocked(cl)
			c.mu.Unlock()
			c.serveSubscribe(cl)
			return cl.id, nil
		}
		if c.wantsLegacyTask(cl) {
			c.calls[cl.id] = cl
			livePending.Add(1)
			c.startTimerLocked(cl)
			c.mu.Unlock()
			c.legacyTaskSend(cl)
			return cl.id, nil
		}
	case c.sup != nil && c.waitsForRestartLocked():
		if opts.FailIfRestarting {
			c.mu.Unlock()
			return 0, Errorf(StatusInvalidState, "the server is restarting (options.fail_if_restarting)")
		}
		c.queueForRestartLocked(cl)
		c.mu.Unlock()
		return cl.id, nil
	case opts.WaitReady && (c.state == StateNew || c.state == StateConnecting):
		c.calls[cl.id] = cl
		livePending.Add(1)
		c.queued = append(c.queued, cl)
		c.startTimerLocked(cl)
		c.mu.Unlock()
		return cl.id, nil
	default:
		err := c.notReadyLocked()
		c.mu.Unlock()
		return 0, err
	}
	reqID := c.registerLocked(cl)
	c.mu.Unlock()

	if serr := c.sendRequestOut(cl, reqID, cl.params, waiting); serr != nil {
		// The callback never fires when we can withdraw the call; if the
		// connection already completed it, the callback has it.
		if c.withdraw(cl) {
			return 0, serr
		}
	}
	return cl.id, nil
}

// CallSync is Call that waits for the completion. Over HTTP the request
// runs on the caller's goroutine (transport.Outbound.Waiting), which saves
// two goroutine hand-offs for a Go caller.
func (c *Client) CallSync(method string, params []byte, opts CallOptions) ([]byte, *Error) {
	return c.callSync(method, params, opts, true)
}

// CallSyncFromThread is CallSync for a caller on a thread that Go cannot
// reuse while it waits: a C host's (or Python's) thread calling through
// cgo is locked to its goroutine, and every wake-up of it is a hand-off
// between OS threads. The request therefore runs on library goroutines
// and the caller wakes once, for the completion (measured: running the
// HTTP exchange on such a thread adds about 25 µs per call).
func (c *Client) CallSyncFromThread(method string, params []byte, opts CallOptions) ([]byte, *Error) {
	return c.callSync(method, params, opts, false)
}

// A SyncRoute is how a blocking caller outside Go, a C host's thread
// locked to its goroutine while in Go, is best served (capi,
// docs/abi-cost.md).
type SyncRoute uint8

const (
	// SyncWaitOutside: the request is a write on the caller's goroutine
	// (stdio); the caller starts the call and waits outside Go.
	SyncWaitOutside SyncRoute = iota
	// SyncSubmit: the requests are network exchanges run by library
	// goroutines (a host-given HTTP client); a library goroutine makes
	// the call in the caller's stead.
	SyncSubmit
	// SyncOnThread: the caller's thread makes the exchange itself, in
	// blocking system calls (transport.CallerExchanger): CallSync.
	SyncOnThread
	// SyncPostThenWait: the caller's thread makes the request's POST
	// itself, in blocking system calls, and waits outside Go for the reply
	// that comes on the transport's stream (transport.CallerPoster: legacy
	// HTTP+SSE); the call is started with CallOptions.Waiting.
	SyncPostThenWait
)

// SyncRoute says how a blocking caller outside Go is best served.
func (c *Client) SyncRoute() SyncRoute {
	switch {
	case c.onCaller != nil && c.onCaller.ExchangesOnCaller():
		return SyncOnThread
	case c.poster != nil && c.poster.PostsOnCaller():
		return SyncPostThenWait
	case c.networked:
		return SyncSubmit
	}
	return SyncWaitOutside
}

func (c *Client) callSync(method string, params []byte, opts CallOptions, waiting bool) ([]byte, *Error) {
	opts.Inline = true
	return WaitFor(func(done DoneFunc) (uint64, *Error) { return c.call(method, params, opts, done, waiting) })
}

// WaitFor starts a call whose completion runs inline (start passes done
// on as the call's DoneFunc) and waits for it: the result, or the call's
// error decoded. The blocking form of every asynchronous call, the
// client's and the host's.
func WaitFor(start func(done DoneFunc) (uint64, *Error)) ([]byte, *Error) {
	w := syncWaiters.Get().(*syncWaiter)
	if _, err := start(w.done); err != nil {
		syncWaiters.Put(w) // the completion never runs
		return nil, err
	}
	o := <-w.ch
	syncWaiters.Put(w) // its completion has run: nobody else holds it
	if o.status != StatusOK {
		return nil, decodeErrorJSON(o.status, o.data)
	}
	return o.data, nil
}

// A syncWaiter hands a blocking call's outcome to its caller. Waiters are
// pooled, their completion bound once: a channel and a closure per call
// were three of a sequential call's allocations.
type syncWaiter struct {
	ch   chan syncOutcome
	done DoneFunc // complete, bound
}

type syncOutcome struct {
	status Status
	data   []byte
}

var syncWaiters = sync.Pool{New: func() any {
	w := &syncWaiter{ch: make(chan syncOutcome, 1)}
	w.done = w.complete
	return w
}}

func (w *syncWaiter) complete(_ uint64, st Status, data []byte) { w.ch <- syncOutcome{st, data} }

// HoldSends holds the messages the client sends until the matching
// ReleaseSends, when the transport writes them together
// (transport.SendHolder; stdio only): a caller starting a burst of calls
// wakes the server once. On a transport that cannot hold, both do nothing.
// Every hold must be released, soon: other callers' messages wait for it
// too, and a call that blocks while its own thread holds never ends.
func (c *Client) HoldSends() {
	if h, ok := c.tr.(transport.SendHolder); ok {
		h.HoldSends()
	}
}

// ReleaseSends ends a hold (HoldSends).
func (c *Client) ReleaseSends() {
	if h, ok := c.tr.(transport.SendHolder); ok {
		h.ReleaseSends()
	}
}

// Cancel completes an accepted call with StatusCancelled and tells the
// server.
func (c *Client) Cancel(callID uint64) *Error {
	c.mu.Lock()
	cl := c.calls[callID]
	c.mu.Unlock()
	if cl == nil || cl.internal != nil || cl.opts.own {
		// The library's own requests (the handshake, listens, lookups)
		// have ids the host never received: they are not its to cancel.
		return Errorf(StatusNotFound, "no pending call with id %d", callID)
	}
	if !c.finish(cl, Errorf(StatusCancelled, "the call was cancelled"), nil) {
		return Errorf(StatusNotFound, "call %d already completed", callID)
	}
	return nil
}

func (c *Client) wantsProgressToken(opts CallOptions) bool {
	return opts.Progress || c.resetOnProgress(opts)
}

func (c *Client) resetOnProgress(opts CallOptions) bool {
	if opts.ResetSet {
		return opts.ResetOnProgress
	}
	return c.opts.Timeouts.ResetOnProgress
}

// armTimeouts computes a call's timeout and hard deadline.
func (c *Client) armTimeouts(cl *call) {
	cl.callTimeout = c.opts.Timeouts.Call
	if cl.opts.TimeoutSet {
		cl.callTimeout = cl.opts.Timeout
	}
	maxTotal := c.opts.Timeouts.MaxTotal
	if cl.opts.MaxTotalSet {
		maxTotal = cl.opts.MaxTotal
	}
	cl.started = time.Now()
	cl.lastActivity = cl.started
	if m := effectiveMaxTotal(cl.callTimeout, maxTotal, c.resetOnProgress(cl.opts)); m > 0 {
		cl.hardDeadline = cl.started.Add(m)
	}
}

// startTimerLocked arms the call's timer for its nearest deadline.
func (c *Client) startTimerLocked(cl *call) {
	if d, ok := cl.nextDeadline(); ok {
		cl.timer = time.AfterFunc(time.Until(d), func() { c.onTimer(cl) })
	}
}

// nextDeadline is the earlier of the activity deadline and the hard one.
func (cl *call) nextDeadline() (time.Time, bool) {
	var d time.Time
	if cl.callTimeout > 0 {
		d = cl.lastActivity.Add(cl.callTimeout)
	}
	if !cl.hardDeadline.IsZero() && (d.IsZero() || cl.hardDeadline.Before(d)) {
		d = cl.hardDeadline
	}
	return d, !d.IsZero()
}

// onTimer fires at a call's deadline; progress may have moved the deadline,
// in which case the timer is re-armed instead.
func (c *Client) onTimer(cl *call) {
	defer c.recoverPanic("a call timer")
	c.mu.Lock()
	if cl.finished {
		c.mu.Unlock()
		return
	}
	if d, ok := cl.nextDeadline(); ok && time.Until(d) > 0 {
		cl.timer.Reset(time.Until(d))
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	var msg string
	if !cl.hardDeadline.IsZero() && !time.Now().Before(cl.hardDeadline) {
		msg = "no response to " + cl.method + " within the maximum total time of " + formatMS(cl.hardDeadline.Sub(cl.started))
	} else {
		msg = "no response to " + cl.method + " within " + formatMS(cl.callTimeout)
	}
	c.finish(cl, &Error{Status: StatusTimeout, Message: msg}, nil)
}

func formatMS(d time.Duration) string {
	return itoa(d.Milliseconds()) + " ms"
}

// finish completes a call once: with data on success (err nil), or with err.
// When a request was outstanding and the call did not get its response, the
// server is told the request is cancelled. It reports whether this call did
// the completing.
func (c *Client) finish(cl *call, err *Error, data []byte) bool {
	c.mu.Lock()
	reqID, ok := c.retireLocked(cl)
	lt := cl.lt
	c.mu.Unlock()
	if !ok {
		return false
	}
	if lt != nil {
		// A task is cancelled with tasks/cancel, never with
		// notifications/cancelled.
		c.endLegacyTask(cl, lt, reqID, err)
		c.complete(cl, err, data)
		return true
	}

	if reqID != 0 && err != nil && (err.Status == StatusTimeout || err.Status == StatusCancelled) {
		switch {
		case cl.mod != nil && cl.mod.task != nil:
			// A task is cancelled with tasks/cancel (endTask), never with
			// notifications/cancelled; an open tasks/* stream is closed.
			if c.aborter != nil {
				c.aborter.Abort(reqID)
			}
		case cl.mod != nil && c.aborter != nil:
			// 2026-07-28 over HTTP: closing the stream is the cancellation.
			c.aborter.Abort(reqID)
		case cl.internal == nil:
			if cl.waiting && c.aborter != nil {
				// The exchange may hold the waiting caller: it ends now,
				// and the server is told as usual.
				c.aborter.Abort(reqID)
			}
			// Handshake requests are not cancelled: the server may not be
			// ready for notifications yet. Close waits for the notice.
			c.cancelNotices.add()
			go c.sendCancelled(reqID, err.Message)
		}
	}
	if cl.mod != nil && cl.mod.round != nil {
		c.dropInputRequests(cl)
	}
	if cl.mod != nil && cl.mod.task != nil {
		c.endTask(cl, err)
	}
	c.complete(cl, err, data)
	return true
}

// withdraw removes a call whose request could not be sent, without running
// its completion. It reports false when someone else completed it first.
func (c *Client) withdraw(cl *call) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.retireLocked(cl)
	if ok && cl.owesDelivery() {
		c.out.Forgive()
	}
	return ok
}

// complete hands the outcome to the call's owner.
func (c *Client) complete(cl *call, err *Error, data []byte) {
	if cl.internal != nil {
		cl.internal(data, err)
		return
	}
	if !cl.opts.Unrecorded && c.telemetryOn() {
		c.recordCall(cl, err, data)
	}
	st := StatusOK
	if err != nil {
		st, data = err.Status, err.JSON()
	}
	if cl.opts.Inline {
		cl.done(cl.id, st, data)
		return
	}
	done, id := cl.done, cl.id
	if cl.opts.QueuesDone {
		c.out.PushQuick(func() { done(id, st, data) })
		return
	}
	c.out.Push(func() { done(id, st, data) }, deliverDone)
}

// owesDelivery reports whether the call's completion goes through the
// delivery queue (a host's done callback).
func (cl *call) owesDelivery() bool { return cl.internal == nil && !cl.opts.Inline }

// failCalls completes calls already taken out of the tables.
func (c *Client) failCalls(calls []*call, err *Error) {
	for _, cl := range calls {
		c.complete(cl, err, nil)
	}
}

// encoding buffers for outbound messages; the transport copies what it
// needs before Send returns.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// sendCtx carries a deadline to the transport without a timer.
type sendCtx struct {
	context.Context
	deadline time.Time
}

func (s sendCtx) Deadline() (time.Time, bool) { return s.deadline, !s.deadline.IsZero() }

func (c *Client) sendCtxFor(cl *call) context.Context {
	d, _ := cl.nextDeadline()
	return sendCtx{Context: context.Background(), deadline: d}
}

func (c *Client) sendRequest(cl *call, reqID int64, params []byte) *Error {
	return c.sendRequestOut(cl, reqID, params, false)
}

// sendRequestOut is sendRequest; waiting is transport.Outbound.Waiting,
// and Thread comes with it.
func (c *Client) sendRequestOut(cl *call, reqID int64, params []byte, waiting bool) *Error {
	if cl.mod != nil {
		return c.sendModernRequest(cl, reqID, params)
	}
	bp := bufPool.Get().(*[]byte)
	buf := appendRequest((*bp)[:0], reqID, cl.method, params)
	err := c.tr.Send(c.sendCtxFor(cl), transport.Outbound{Data: buf, Kind: transport.KindRequest, Method: cl.method, ID: reqID, Waiting: waiting, Thread: waiting && cl.opts.Thread})
	*bp = buf
	bufPool.Put(bp)
	if err != nil {
		return AsError(err)
	}
	return nil
}

// sendNotification sends a notification, bounded by the close grace.
func (c *Client) sendNotification(method string, params []byte) *Error {
	bp := bufPool.Get().(*[]byte)
	buf := appendNotification((*bp)[:0], method, params)
	ctx := sendCtx{Context: context.Background(), deadline: time.Now().Add(c.sendBound())}
	err := c.tr.Send(ctx, transport.Outbound{Data: buf, Kind: transport.KindNotification, Method: method})
	*bp = buf
	bufPool.Put(bp)
	if err != nil {
		return AsError(err)
	}
	return nil
}

// sendResponse sends a response to a server request.
func (c *Client) sendResponse(data []byte) {
	defer c.recoverPanic("sending a response to the server")
	ctx := sendCtx{Context: context.Background(), deadline: time.Now().Add(c.sendBound())}
	if err := c.tr.Send(ctx, transport.Outbound{Data: data, Kind: transport.KindResponse}); err != nil {
		c.logf("warning", "could not send a response to the server: %s", err.Error())
	}
}

func (c *Client) sendBound() time.Duration {
	if c.opts.Timeouts.Call > 0 {
		return c.opts.Timeouts.Call
	}
	return time.Minute
}

// sendCancelled tells the server a request is abandoned. Its caller counts
// it in c.cancelNotices first (Close waits for the notices on their way).
func (c *Client) sendCancelled(reqID int64, reason string) {
	defer c.cancelNotices.done()
	defer c.recoverPanic("sending a cancellation notice")
	params := make([]byte, 0, 64+len(reason))
	params = append(params, `{"requestId":`...)
	params = appendInt(params, reqID)
	params = append(params, `,"reason":`...)
	params = appendJSONString(params, reason)
	params = append(params, '}')
	if err := c.sendNotification("notifications/cancelled", params); err != nil && err.Status != StatusClosed {
		c.logf("warning", "could not send notifications/cancelled: %s", err.Message)
	}
}

// Notify sends a notification from the host.
func (c *Client) Notify(method string, params []byte) *Error {
	if method == "" {
		return Errorf(StatusInvalidArgument, "method is empty")
	}
	if !strings.HasPrefix(method, "notifications/") {
		return Errorf(StatusInvalidArgument, "method %q is not a notification (notifications/...)", method)
	}
	if c.modernEra() && (method == "notifications/roots/list_changed" || method == "notifications/initialized") {
		return Errorf(StatusUnsupported, "%s does not exist in the 2026-07-28 protocol the server speaks", method)
	}
	if method == "notifications/roots/list_changed" && !(c.opts.Handlers.Roots && c.opts.Handlers.RootsListChange) {
		return Errorf(StatusInvalidState, "notifications/roots/list_changed needs handlers.roots.list_changed, which this client did not declare")
	}
	compact, err := compactParams(params)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.state != StateReady {
		err := c.notReadyLocked()
		c.mu.Unlock()
		return err
	}
	c.mu.Unlock()
	return c.sendNotification(method, compact)
}

// resultShapes names, for the methods whose results MCP defines, the member
// each result must carry and its JSON kind (KindInvalid: only the result
// itself must be an object).
var resultShapes = map[string]struct {
	member   string
	kind     jsonx.Kind
	required bool // absent is an error (lists); otherwise only a wrong kind is
}{
	"ping":                     {"", jsonx.KindInvalid, false},
	"logging/setLevel":         {"", jsonx.KindInvalid, false},
	"resources/subscribe":      {"", jsonx.KindInvalid, false},
	"resources/unsubscribe":    {"", jsonx.KindInvalid, false},
	"tools/list":               {"tools", jsonx.KindArray, true},
	"resources/list":           {"resources", jsonx.KindArray, true},
	"resources/templates/list": {"resourceTemplates", jsonx.KindArray, true},
	"prompts/list":             {"prompts", jsonx.KindArray, true},
	"tasks/list":               {"tasks", jsonx.KindArray, true},
	"tools/call":               {"content", jsonx.KindArray, false},
	"resources/read":           {"contents", jsonx.KindArray, false},
	"prompts/get":              {"messages", jsonx.KindArray, false},
	"completion/complete":      {"completion", jsonx.KindObject, false},
}

var kindNames = map[jsonx.Kind]string{
	jsonx.KindArray: "an array", jsonx.KindObject: "an object", jsonx.KindString: "a string",
	jsonx.KindNumber: "a number", jsonx.KindBool: "a boolean", jsonx.KindNil: "null",
}

// resultShapeProblem names what makes a result of method unusable, or is
// "": a result that is not an object, or lacks the member that carries
// its list (a tools/list without "tools" is never an empty list), or has
// the member that carries its content in the wrong kind. Only
// the top level is read; methods MCP does not define pass as they are.
func resultShapeProblem(method string, result []byte) string {
	shape, known := resultShapes[method]
	if !known {
		return ""
	}
	it := jsonx.BorrowIterator(result)
	defer jsonx.ReturnIterator(it)
	if kind := it.WhatIsNext(); kind != jsonx.KindObject {
		return "has a result that is " + kindName(kind) + ", not an object"
	}
	if shape.member == "" {
		return ""
	}
	for name, ok := jsonx.NextMember(it); ok; name, ok = jsonx.NextMember(it) {
		if name == shape.member {
			if kind := it.WhatIsNext(); kind != shape.kind {
				return fmt.Sprintf("has a %q member that is %s, not %s", name, kindName(kind), kindName(shape.kind))
			}
			return ""
		}
		it.Skip()
	}
	if !shape.required {
		return ""
	}
	return fmt.Sprintf("has a result without its %q member", shape.member)
}

func kindName(k jsonx.Kind) string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return "not valid JSON"
}

// nextRequestLocked gives cl (a call already filed) a new request id and
// files it in the pending table under that id, which it returns: a call's
// first request, a task poll, an MRTR retry, a page. c.mu is held.
func (c *Client) nextRequestLocked(cl *call) int64 {
	cl.reqID = c.nextReqID.Add(1)
	c.pending[cl.reqID] = cl
	return cl.reqID
}

// registerLocked files a new call: in the call table, counted as live,
// pending under a new request id (returned), with its timer started. c.mu
// is held.
func (c *Client) registerLocked(cl *call) int64 {
	c.calls[cl.id] = cl
	livePending.Add(1)
	reqID := c.nextRequestLocked(cl)
	c.startTimerLocked(cl)
	return reqID
}
