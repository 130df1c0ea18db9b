package gateway

import (
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/internal/tracecontext"
)

// startCall serves a front request with a host call. No deadline of the
// gateway's own: the front's cancellation (or its vanishing) ends it.
func (s *Server) startCall(sess *Session, req *request, r *reply) {
	if tok, ok := req.params["requestState"]; ok && req.modern {
		s.resume(sess, req, tok, r)
		return
	}
	c := &call{srv: s, sess: sess, key: string(req.m.ID), method: req.m.Method, caps: req.caps, modern: req.modern, level: req.level, r: r, started: time.Now(), idSet: make(chan struct{})}
	if pt, ok := req.meta["progressToken"]; ok && len(pt) > 0 && (pt[0] == '"' || (pt[0] >= '0' && pt[0] <= '9') || pt[0] == '-') {
		c.progress = pt
	}
	opts := core.CallOptions{TimeoutSet: true, MaxTotalSet: true, Progress: c.progress != nil, FrontSession: sess.id}
	opts.Trace = frontTrace(req.meta)
	opts.Meta = callLogLevel(sess, c)
	start, errMsg := s.route(c, req)
	if start == nil {
		r.done(errMsg)
		s.inflight.Done()
		return
	}
	if c.h != s.h {
		opts.WaitReady = true // the session's own server may still be starting
	}
	sess.mu.Lock()
	if sess.closed {
		sess.mu.Unlock()
		r.done(nil)
		s.inflight.Done()
		return
	}
	sess.calls[c.key] = c
	sess.mu.Unlock()
	s.mu.Lock()
	s.calls[c] = struct{}{}
	lower := c.level >= 0 && (s.modernLevel < 0 || c.level < s.modernLevel)
	if lower {
		s.modernLevel = c.level
	}
	s.mu.Unlock()
	if lower {
		// The servers' level first, so that they log this call; not on
		// the front's reading goroutine.
		go func() {
			s.forwardLevel(true)
			s.launch(c, req, r, start, opts)
		}()
		return
	}
	s.launch(c, req, r, start, opts)
}

// launch starts a call's host call.
func (s *Server) launch(c *call, req *request, r *reply, start startFunc, opts core.CallOptions) {
	id, err := start(opts, func(_ uint64, st core.Status, data []byte) { s.finishCall(c, st, data) })
	if err != nil {
		close(c.idSet)
		s.forget(c)
		code, msg, data := frontError(err.Status, err.JSON())
		r.done(errorMsg(req.m.ID, code, msg, data))
		s.inflight.Done()
		return
	}
	if c.setHostID(id) && c.h != nil {
		// The front cancelled while the start was under way (a loaded
		// machine): cancel left the upstream cancellation to here.
		_ = c.h.Cancel(id)
	}
}

// setHostID records the host's id of a started call, and reports whether
// the front has cancelled the call meanwhile (then the caller cancels it
// upstream: markCancelled could not).
func (c *call) setHostID(id uint64) (cancelNow bool) {
	c.mu.Lock()
	c.hostID = id
	cancelNow = c.cancelled
	c.mu.Unlock()
	close(c.idSet)
	return cancelNow
}

// markCancelled marks the call cancelled by its front and returns the
// host's id to cancel it by, or 0 when its start has not returned one yet
// (then setHostID reports it). Whichever of the two comes second under c.mu
// names the id, so the server is told once, in either order.
func (c *call) markCancelled() (id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancelled = true
	return c.hostID
}

// callLogLevel is the _meta that asks the server for the logs the call's
// front wants (its request's level in 2026-07-28, its session's
// logging/setLevel before), or nil: a 2026-07-28 server has no
// logging/setLevel and logs only within a request that carries a level.
// Servers of the initialize era ignore the member.
func callLogLevel(sess *Session, c *call) []byte {
	level := c.level
	if !c.modern {
		sess.mu.Lock()
		level = sess.level
		sess.mu.Unlock()
	}
	if level < 0 {
		return nil
	}
	return logLevelMetas[level]
}

// logLevelMetas is the _meta asking for each of logLevels, made once: a
// call's _meta is on the gateway's per-call path.
var logLevelMetas = func() [][]byte {
	out := make([][]byte, len(logLevels))
	for i, l := range logLevels {
		out[i] = raw(map[string]string{metaLogLevel: l})
	}
	return out
}()

// frontTrace is the front's W3C trace context (from its request's
// _meta), which the server call continues: one trace.
func frontTrace(meta map[string]jsonx.RawMessage) tracecontext.Context {
	return tracecontext.Context{TraceParent: str2(meta["traceparent"]), TraceState: str2(meta["tracestate"]), Baggage: str2(meta["baggage"])}
}

// forget drops a call from the tables.
func (s *Server) forget(c *call) {
	s.mu.Lock()
	delete(s.calls, c)
	if c.token != "" {
		delete(s.parked, c.token)
	}
	s.mu.Unlock()
	if c.sess != nil {
		c.sess.mu.Lock()
		if c.sess.calls[c.key] == c {
			delete(c.sess.calls, c.key)
		}
		c.sess.mu.Unlock()
	}
}

// finishCall takes a host call's completion to the front request waiting
// for it; a parked 2026-07-28 call keeps it for the retry.
func (s *Server) finishCall(c *call, st core.Status, data []byte) {
	c.mu.Lock()
	if c.finished {
		c.mu.Unlock()
		return
	}
	c.finished = true
	r := c.r
	c.r = nil
	if r == nil {
		if st == core.StatusOK {
			c.outcome = data
		} else {
			code, msg, d := frontError(st, data)
			c.outcomeE = &errBody{code, msg, d}
		}
		parked := c.token != ""
		c.mu.Unlock()
		if !parked {
			s.forget(c) // abandoned: nobody will come back for it
		}
		return
	}
	c.mu.Unlock()
	s.forget(c)
	r.done(s.response(c, r.id, st, data))
	s.inflight.Done()
}

// response is the front's answer to a finished call.
func (s *Server) response(c *call, id []byte, st core.Status, data []byte) []byte {
	if st == core.StatusOK {
		if c.modern {
			data = withResultType(data)
		}
		if c.method == "resources/read" && c.server != "" {
			data = s.exposeReadURIs(c.server, data)
		}
		if c.modern && c.method == "resources/read" {
			data = withCacheHints(data)
		}
		return core.AppendResult(nil, id, data)
	}
	if st == core.StatusCancelled {
		return nil // a cancelled request gets no response
	}
	code, msg, d := frontError(st, data)
	return errorMsg(id, code, msg, d)
}

// withResultType adds "resultType":"complete" to a 2026-07-28 result that
// lacks it.
func withResultType(result []byte) []byte {
	if len(result) < 2 || result[0] != '{' || hasKey(result, "resultType") {
		return result
	}
	out := make([]byte, 0, len(result)+28)
	out = append(out, `{"resultType":"complete"`...)
	if len(result) > 2 {
		out = append(out, ',')
	}
	return append(out, result[1:]...)
}

func hasKey(obj []byte, key string) bool {
	var m map[string]jsonx.RawMessage
	if jsonx.Unmarshal(obj, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}

// frontError turns a completion's error JSON into a JSON-RPC error: a
// server's own error passes as it was; the library's statuses map to the
// codes a direct connection would show.
func frontError(st core.Status, data []byte) (int64, string, []byte) {
	var e struct {
		Message string           `json:"message"`
		Code    *int64           `json:"code"`
		Data    jsonx.RawMessage `json:"data"`
	}
	_ = jsonx.Unmarshal(data, &e)
	if e.Message == "" {
		e.Message = st.String()
	}
	if e.Code != nil {
		return *e.Code, e.Message, e.Data
	}
	code := int64(core.CodeInternal)
	switch st {
	case core.StatusInvalidArgument, core.StatusNotFound:
		code = core.CodeInvalidParams
	case core.StatusUnsupported:
		code = core.CodeMethodNotFound
	}
	return code, e.Message, raw(map[string]string{"status": st.String()})
}

// cancel cancels a call upstream (the server gets notifications/cancelled
// with its own request id); the front gets no response for it.
// A cancellation can come before the host's Call has returned the call's
// id (markCancelled, setHostID): it is never waited for.
func (s *Server) cancel(c *call) {
	if id := c.markCancelled(); id != 0 && c.h != nil {
		_ = c.h.Cancel(id)
	}
}

// abandon ends a call whose front is gone: no response, the upstream
// request cancelled, its server requests refused.
func (s *Server) abandon(c *call) {
	c.mu.Lock()
	r := c.r
	c.r = nil
	inputs := c.inputs
	c.inputs = nil
	// 2026-07-28: the inputs given in an input_required result wait for a
	// retry that will not come.
	for _, a := range c.asked {
		inputs = append(inputs, a)
	}
	c.asked = nil
	finished := c.finished
	c.mu.Unlock()
	// The call is cancelled before its server's requests are refused:
	// refused, a server may go on with the call, or end it first, and an
	// ended call is no longer cancelled; whatever it does with the
	// refusal, the cancellation must already be on its way.
	if !finished {
		s.cancel(c)
	}
	for _, a := range inputs {
		s.refuseAsk(a, "the front request that caused it ended")
	}
	s.forget(c)
	if r != nil {
		s.inflight.Done()
	}
}
