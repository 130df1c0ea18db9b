package core

import (
	"fmt"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/transport"
)

// Receive implements transport.Sink: one inbound JSON text (an object, or a
// batch array).
func (c *Client) Receive(data []byte) {
	defer c.recoverSink("a received message")
	switch firstByte(data) {
	case '{':
		c.receiveOne(data)
	case '[':
		items, err := splitBatch(data)
		if err != nil {
			c.rejectLine(data)
			return
		}
		for _, item := range items {
			c.receiveOne(item)
		}
	default:
		c.rejectLine(data)
	}
}

func (c *Client) receiveOne(data []byte) {
	var env envelope
	if err := decodeEnvelope(data, &env); err != nil {
		c.rejectLine(data)
		return
	}
	switch {
	case env.method != "" && env.hasID:
		c.onServerRequest(&env)
	case env.method != "":
		c.onNotification(&env)
	case env.hasID && (env.hasResult || env.hasError):
		c.onResponse(&env)
	default:
		c.rejectLine(data)
	}
}

// rejectLine reports a text that is not a JSON-RPC message. It never counts
// as protocol success or failure.
func (c *Client) rejectLine(data []byte) {
	if !c.hasEvents() {
		return
	}
	source := "transport"
	if c.tr.Name() == "stdio" {
		source = "stdout"
	}
	text := data
	if len(text) > 1024 {
		text = text[:1024]
	}
	c.emitLog("warning", source, "skipped a message that is not JSON-RPC 2.0: "+string(text))
}

// recoverSink keeps a bug in handling one inbound message from taking the
// host process down: transports call the sink from their own goroutines,
// where a panic would otherwise be fatal. The message is dropped and the host
// is told.
func (c *Client) recoverSink(what string) {
	if r := recover(); r != nil {
		c.logf("error", "internal error while handling %s (dropped): %v", what, r)
	}
}

// Log implements transport.Sink.
func (c *Client) Log(line transport.LogLine) {
	if c.hasEvents() {
		c.emitLog(line.Level, line.Source, line.Text)
	}
}

// Closed implements transport.Sink: the connection is gone. Every waiting
// call fails at once with the reason.
func (c *Client) Closed(cerr *transport.ClosedError) {
	reason := cerr.Message
	c.mu.Lock()
	var handshakeErr *Error
	switch c.state {
	case StateConnecting:
		handshakeErr = Errorf(StatusClosed, "the connection closed before the handshake completed: %s", reason)
		c.state, c.stateErr = StateFailed, handshakeErr
		close(c.ready)
	case StateFailed:
	default:
		c.state = StateClosed
		if c.stateErr == nil || !cerr.Requested {
			c.stateErr = Errorf(StatusClosed, "%s", reason)
		}
	}
	failed := c.takeAllCallsLocked()
	hosts := c.takeHostRequestsLocked()
	select {
	case <-c.trClosed:
	default:
		close(c.trClosed)
	}
	c.mu.Unlock()

	for _, h := range hosts {
		h.timer.Stop()
	}
	msg := "the connection closed: " + reason
	if cerr.Requested {
		msg = "the client was closed"
	}
	c.failCalls(failed, Errorf(StatusClosed, "%s", msg))
	if handshakeErr != nil {
		c.emitError("failed", handshakeErr)
	}
	c.emitClosed(cerr)
}

// RequestFailed implements transport.Sink: one request failed at the
// transport level. An expired session is re-initialized once, transparently,
// and the request re-sent with a new id; any other failure (or a second
// expiry) fails the call.
func (c *Client) RequestFailed(id int64, terr *transport.Error) {
	defer c.recoverSink("a request failure")
	c.mu.Lock()
	cl := c.pending[id]
	if cl == nil {
		c.mu.Unlock()
		return
	}
	delete(c.pending, id)
	cl.reqID = 0
	if terr.Code == transport.CodeSessionExpired && cl.internal == nil && !cl.retried && c.state == StateReady {
		cl.retried = true
		c.queued = append(c.queued, cl)
		start := !c.reinit
		c.reinit = true
		version := c.server.version
		c.mu.Unlock()
		if start {
			c.logf("info", "the server no longer knows the session; re-initializing")
			c.startHandshake(version, nil)
		}
		return
	}
	modern := cl.mod != nil
	c.mu.Unlock()
	if modern && terr.RPCError != nil {
		// A 2026-07-28 server explained its HTTP error status with a
		// JSON-RPC error: that is the request's answer.
		c.finish(cl, c.explainTaskError(cl, decodeRPCError(terr.RPCError)), nil)
		return
	}
	err := AsError(terr)
	if terr.Code == transport.CodeSessionExpired {
		err = Errorf(StatusClosed, "the server no longer knows the session (%s)", terr.Message)
	}
	c.finish(cl, err, nil)
}

// onResponse routes a response by its id to the pending request, which
// knows its method: results are never classified by their shape.
func (c *Client) onResponse(env *envelope) {
	if !env.idIsInt {
		c.logf("warning", "ignored a response whose id %s was never used by this client", string(env.idRaw))
		return
	}
	c.mu.Lock()
	cl := c.pending[env.id]
	if cl == nil {
		c.mu.Unlock()
		c.logf("debug", "ignored a late or unknown response (id %d)", env.id)
		return
	}
	delete(c.pending, env.id)
	cl.reqID = 0
	modern := cl.mod != nil && cl.internal == nil
	if !modern {
		// In the modern era the call's timeout covers every MRTR round.
		cl.lastActivity = time.Now()
	}
	c.mu.Unlock()

	if env.hasError {
		c.finish(cl, c.explainTaskError(cl, decodeRPCError(env.errRaw)), nil)
		return
	}
	if modern {
		c.onModernResult(cl, env.result)
		return
	}
	if cl.pages != nil {
		c.onPage(cl, env.result)
		return
	}
	c.finishResult(cl, env.result)
}

// onNotification handles a server notification.
func (c *Client) onNotification(env *envelope) {
	if c.onListenNotification(env.method, env.params) {
		return
	}
	c.cacheInvalidate(env.method, env.params)
	if env.method == "notifications/tasks" {
		c.onTaskNotification(env.params)
	}
	switch env.method {
	case "notifications/progress":
		c.onProgress(env.params)
		return
	case "notifications/cancelled":
		c.onServerCancelled(env.params)
	}
	if !c.hasEvents() {
		return
	}
	buf := make([]byte, 0, 32+len(env.method)+len(env.params))
	buf = append(buf, `{"method":`...)
	buf = jsonx.AppendString(buf, env.method)
	if len(env.params) > 0 {
		buf = append(buf, `,"params":`...)
		buf = append(buf, env.params...)
	}
	buf = append(buf, '}')
	c.emit("notification", buf, false)
}

type progressParams struct {
	ProgressToken any      `json:"progressToken"`
	Progress      float64  `json:"progress"`
	Total         *float64 `json:"total,omitempty"`
	Message       *string  `json:"message,omitempty"`
}

// onProgress routes a progress notification to its call: it restarts the
// call's timer when asked, and becomes a "progress" event when asked.
// Unknown or late tokens are ignored.
func (c *Client) onProgress(raw []byte) {
	var p progressParams
	if err := jsonx.Unmarshal(raw, &p); err != nil {
		c.logf("warning", "ignored a malformed progress notification")
		return
	}
	n, ok := p.ProgressToken.(jsonx.Number)
	if !ok {
		return
	}
	id, err := n.Int64()
	if err != nil || id <= 0 {
		return
	}
	c.mu.Lock()
	cl := c.calls[uint64(id)]
	if cl == nil || cl.finished {
		c.mu.Unlock()
		return
	}
	if c.resetOnProgress(cl.opts) {
		cl.lastActivity = time.Now()
	}
	wants := cl.opts.Progress
	c.mu.Unlock()
	if !wants || !c.hasEvents() {
		return
	}
	payload := jsonx.MustMarshal(struct {
		CallID   uint64   `json:"call_id"`
		Progress float64  `json:"progress"`
		Total    *float64 `json:"total,omitempty"`
		Message  *string  `json:"message,omitempty"`
	}{uint64(id), p.Progress, p.Total, p.Message})
	c.emit("progress", payload, false)
}

// hasEvents reports whether an event handler is installed, so that callers
// can skip building payloads nobody receives.
func (c *Client) hasEvents() bool {
	r := c.events.Load()
	return r != nil && r.event != nil
}

// emit queues an event for the handler installed when it is delivered.
func (c *Client) emit(kind string, payload []byte, isLog bool) {
	c.out.push(func() {
		reg := c.events.Load()
		if reg == nil || reg.event == nil || !reg.enter() {
			return
		}
		defer reg.exit()
		reg.event(kind, payload)
	}, isLog)
}

func (c *Client) emitLog(level, source, message string) {
	payload := jsonx.MustMarshal(struct {
		Level   string `json:"level"`
		Source  string `json:"source"`
		Message string `json:"message"`
	}{level, source, message})
	c.emit("log", payload, true)
}

// logf emits a library log line.
func (c *Client) logf(level, format string, args ...any) {
	if c.hasEvents() {
		c.emitLog(level, "library", fmt.Sprintf(format, args...))
	}
}

func (c *Client) reportDroppedLogs(n int) {
	c.logf("warning", "dropped %d log events because the host fell behind", n)
}

func (c *Client) emitError(kind string, err *Error) {
	c.emit(kind, err.JSON(), false)
}

func (c *Client) emitClosed(cerr *transport.ClosedError) {
	ev := struct {
		Status     Status   `json:"status"`
		Reason     string   `json:"reason"`
		Requested  bool     `json:"requested"`
		ExitCode   *int     `json:"exit_code,omitempty"`
		Signal     string   `json:"signal,omitempty"`
		StderrTail []string `json:"stderr_tail,omitempty"`
	}{Status: StatusClosed, Reason: cerr.Message, Requested: cerr.Requested, Signal: cerr.Signal, StderrTail: cerr.StderrTail}
	if cerr.ExitCode >= 0 {
		code := cerr.ExitCode
		ev.ExitCode = &code
	}
	c.emit("closed", jsonx.MustMarshal(ev), false)
}
