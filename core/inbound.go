package core

import (
	"bytes"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lemonmcp/lemonmcp/internal/callbackgate"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/transport"
)

// Receive implements transport.Sink: one inbound JSON text (an object, or a
// batch array).
func (c *Client) Receive(data []byte) {
	defer c.recoverSink("a received message")
	data = c.validUTF8(data)
	switch firstByte(data) {
	case '{':
		c.receiveOne(data)
	case '[':
		items, err := splitBatch(data)
		if err != nil {
			c.rejectLine(data, "is not valid JSON")
			return
		}
		for _, item := range items {
			c.receiveOne(item)
		}
	default:
		c.rejectLine(data, "is not a JSON object or array")
	}
}

func (c *Client) receiveOne(data []byte) {
	var env envelope
	if err := decodeEnvelope(data, &env); err != nil {
		// Text cut or broken after it showed which of our requests it
		// answers fails that call now rather than at its timeout.
		if !env.hasMethod && env.idIsInt && (env.hasResult || env.hasError) {
			c.failResponse(env.id, "is not valid JSON")
			return
		}
		c.rejectLine(data, "is not valid JSON")
		return
	}
	switch {
	case env.hasMethod:
		switch {
		case !env.versionOK:
			c.rejectLine(data, `has no "jsonrpc":"2.0" member`)
			return
		case env.badMethod:
			c.rejectLine(data, "has a method that is not a string")
			return
		case env.badID:
			c.rejectLine(data, "has an id that is not a string, number or null")
			return
		}
		if env.hasID {
			c.onServerRequest(&env)
		} else {
			c.onNotification(&env)
		}
	case env.hasID && (env.hasResult || env.hasError):
		if problem := responseProblem(&env); problem != "" {
			if env.idIsInt {
				c.failResponse(env.id, problem)
			} else {
				c.rejectLine(data, problem)
			}
			return
		}
		c.onResponse(&env)
	default:
		c.rejectLine(data, "has neither a method nor an id with a result or error")
	}
}

// responseProblem names what makes a response unusable, or is "".
func responseProblem(env *envelope) string {
	switch {
	case !env.hasVersion:
		return `has no "jsonrpc" member`
	case !env.versionOK:
		return `has a "jsonrpc" member that is not "2.0"`
	case env.hasResult && env.hasError:
		return `has both "result" and "error"`
	}
	return ""
}

// failResponse fails the call waiting for request id because its response
// is unusable (problem completes "the response to M (id N) ..."). An id
// that is not pending is only logged.
func (c *Client) failResponse(id int64, problem string) {
	c.mu.Lock()
	cl := c.pending[id]
	if cl == nil {
		c.mu.Unlock()
		c.logf("warning", "ignored a malformed response (id %d) that answers no pending request: it %s", id, problem)
		return
	}
	delete(c.pending, id)
	cl.reqID, cl.lastReqID = 0, id
	c.mu.Unlock()
	c.finish(cl, Errorf(StatusProtocol, "the response to %s (id %d) %s", cl.method, id, problem), nil)
}

// validUTF8 returns data with every byte sequence that is not UTF-8
// replaced by U+FFFD, so that only valid UTF-8 ever reaches a host (a JSON
// text must be UTF-8; a host's decoder would otherwise fail on the whole
// payload). A bad byte can only be inside a string (elsewhere the text is
// not JSON anyway), so the message keeps its meaning. Valid data, the
// usual case, is returned as is after one scan.
func (c *Client) validUTF8(data []byte) []byte {
	if utf8.Valid(data) {
		return data
	}
	c.logf("warning", "the server sent text that is not valid UTF-8; the bad bytes were replaced by U+FFFD")
	return bytes.ToValidUTF8(data, []byte("\uFFFD"))
}

// rejectLine reports a text that is not a JSON-RPC message, saying why
// but never quoting it: a server's output may reflect anything it was
// given (an API key in its environment, a header), and no log line may
// carry that. It never counts as protocol success or failure. The log line
// names the server's stream when the transport reads one
// (transport.LineStreamer).
func (c *Client) rejectLine(data []byte, why string) {
	if !c.hasEvents() {
		return
	}
	source := "transport"
	if ls, ok := c.tr.(transport.LineStreamer); ok {
		source = ls.InboundStream()
	}
	c.emitLog("warning", source, fmt.Sprintf("skipped a %d-byte message that is not JSON-RPC 2.0: it %s", len(data), why))
}

// recoverSink keeps a bug in handling one inbound message from taking the
// host process down: transports call the sink from their own goroutines,
// where a panic would otherwise be fatal. The message is dropped, the client
// poisoned and the host told.
func (c *Client) recoverSink(what string) {
	if r := recover(); r != nil {
		c.poison(r, "handling "+what)
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
	c.noteLoss(cerr)
	if c.sup != nil && c.restartOnClose(cerr) {
		return
	}
	reason := cerr.Message
	c.mu.Lock()
	var handshakeErr *Error
	switch c.state {
	case StateConnecting:
		handshakeErr = closedBeforeHandshake(reason)
		c.state, c.stateErr = StateFailed, handshakeErr
		close(c.ready)
	case StateFailed:
	default:
		c.state = StateClosed
		if c.stateErr == nil || !cerr.Requested {
			c.stateErr = Errorf(StatusClosed, "%s", reason)
		}
		var lost *Error
		if !cerr.Requested {
			lost = Errorf(StatusClosed, "%s", reason)
		}
		c.endSessionLocked(lost)
	}
	failed := c.takeAllCallsLocked()
	hosts := c.takeAppRequestsLocked()
	c.endServedTasksLocked()
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
	cl.reqID, cl.lastReqID = 0, id
	if terr.Code == transport.CodeSessionExpired && cl.internal == nil && !cl.retried && c.state == StateReady {
		cl.retried = true
		c.queued = append(c.queued, cl)
		start := !c.reinit
		c.reinit = true
		if start {
			// The server's session is over; the initialize below starts
			// another (telemetry: one "session" record each). The record
			// is made now, while the transport still has the old id.
			c.endSessionLocked(Errorf(StatusClosed, "%s", terr.Message))
		}
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
		c.finish(cl, c.explainTaskError(cl, decodeRPCError(c.validUTF8(terr.RPCError))), nil)
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
	cl.reqID, cl.lastReqID = 0, env.id
	modern := cl.mod != nil && cl.internal == nil
	lt := cl.lt
	if !modern && lt == nil {
		// In the modern era the call's timeout covers every MRTR round,
		// and a task's covers every poll.
		cl.lastActivity = time.Now()
	}
	c.mu.Unlock()

	if env.hasError {
		c.finish(cl, c.explainTaskError(cl, decodeRPCError(env.errRaw)), nil)
		return
	}
	if cl.internal == nil && (!modern || isCompleteResult(env.result)) {
		if problem := resultShapeProblem(cl.method, env.result); problem != "" {
			c.finish(cl, Errorf(StatusProtocol, "the response to %s (id %d) %s", cl.method, env.id, problem), nil)
			return
		}
	}
	if modern {
		c.onModernResult(cl, env.result)
		return
	}
	if lt != nil {
		c.onLegacyTaskResponse(cl, env.result)
		return
	}
	if cl.pages != nil {
		c.onPage(cl, env.result)
		return
	}
	c.finishResult(cl, env.result)
}

// isCompleteResult reports whether a 2026-07-28 result is a final one (not
// input_required), whose shape is then the method's.
func isCompleteResult(result []byte) bool {
	rt := resultTypeOf(result)
	return rt == "" || rt == "complete"
}

// onNotification handles a server notification.
func (c *Client) onNotification(env *envelope) {
	if c.onListenNotification(env.method, env.params) {
		return
	}
	c.cacheInvalidate(env.method, env.params)
	switch env.method {
	case "notifications/tasks":
		c.onTaskNotification(env.params)
	case "notifications/tasks/status":
		c.onLegacyTaskNotification(env.params)
	case "notifications/tools/list_changed":
		c.forgetToolTasks()
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
	// The token we sent is an integer; the server may spell it 7.0 or 7e0.
	id, isInt := jsonx.Integer([]byte(n))
	if !isInt || id <= 0 {
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
	return r != nil && r.Handler != nil
}

// emit queues an event for the handler installed when it is delivered.
func (c *Client) emit(kind string, payload []byte, isLog bool) {
	dk := deliverEvent
	if isLog {
		dk = deliverLog
	}
	callbackgate.Emit(&c.out, &c.events, kind, payload, dk)
}

func (c *Client) emitLog(level, source, message string) {
	if !utf8.ValidString(message) {
		// Text cut from server output may end inside a character.
		message = strings.ToValidUTF8(message, "\uFFFD")
	}
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
	if kind == "failed" && c.telemetryOn() {
		c.recordLifecycle(RecordFailure, err, false)
	}
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
