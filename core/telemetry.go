package core

import (
	"bytes"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/callbackgate"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// Kinds of telemetry records.
const (
	RecordCall        = "call"         // a host call completed (any status)
	RecordRestart     = "restart"      // a supervised client restarts its server
	RecordFailure     = "failure"      // the handshake failed or the connection was lost for good
	RecordListChanged = "list_changed" // (hosts) an aggregated list changed
	RecordSession     = "session"      // a session ended: closed, lost (restart or failure)
)

// TelemetryRecord is one finished operation, measured once by the core and
// handed to the host's telemetry handler; every host turns it into its own
// ecosystem's spans, metrics or events. Field names follow the MCP
// semantic conventions where they have one (docs/telemetry.md).
type TelemetryRecord struct {
	Kind            string `json:"kind"`
	Server          string `json:"server,omitempty"` // the host's server name; "" for a lone client
	Method          string `json:"method,omitempty"` // mcp.method.name
	Target          string `json:"target,omitempty"` // the tool or prompt name, or the resource URI
	ProtocolVersion string `json:"protocol_version,omitempty"`
	SessionID       string `json:"session_id,omitempty"`
	CallID          uint64 `json:"call_id,omitempty"`
	RequestID       int64  `json:"request_id,omitempty"` // jsonrpc.request.id of the last request sent
	Status          Status `json:"status"`
	// ErrorType is error.type: the JSON-RPC error code for a server's
	// error, "tool_error" for a tools/call result with isError, else the
	// status's name ("timeout", "closed", ...); "" on success.
	ErrorType     string `json:"error_type,omitempty"`
	Message       string `json:"message,omitempty"` // restart and failure: the public reason
	StartUnixNano int64  `json:"start_unix_nano"`
	DurationNS    int64  `json:"duration_ns"`
	BytesOut      int    `json:"bytes_out"` // params as sent
	BytesIn       int    `json:"bytes_in"`  // the result or error object handed back
	Retries       int    `json:"retries"`   // MRTR rounds and re-sends after a session expiry
	Restarts      int    `json:"restarts"`  // the client's server restarts so far
	TraceParent   string `json:"traceparent,omitempty"`
	List          string `json:"list,omitempty"` // list_changed: "tools", "prompts" or "resources"
	// FrontSession is the gateway's front session a call served
	// (package gateway), "" for the application's own calls.
	FrontSession string `json:"front_session,omitempty"`
}

// TelemetryHandler receives finished records on the client's delivery
// goroutine, one at a time, in order. The record is the handler's.
type TelemetryHandler func(rec *TelemetryRecord)

type telemetryRegistration = callbackgate.Registration[TelemetryHandler]

// SetTelemetryHandler installs h (nil removes it); the previous handler's
// destroy runs once none of its callbacks is running. Without a handler
// the core measures nothing: the call path pays one atomic load.
func (c *Client) SetTelemetryHandler(h TelemetryHandler, destroy func()) *Error {
	var reg *telemetryRegistration
	if h != nil || destroy != nil {
		reg = callbackgate.NewRegistration(&c.out, h, destroy)
	}
	var err *Error
	callbackgate.Install(&c.out, &c.mu, &c.telemetry, reg, func() bool {
		if c.freed {
			err = errFreed()
		}
		return err != nil
	})
	return err
}

// telemetryOn reports whether a handler wants records.
func (c *Client) telemetryOn() bool {
	reg := c.telemetry.Load()
	return reg != nil && reg.Handler != nil
}

// recordCall measures a completed host call. Called without c.mu.
func (c *Client) recordCall(cl *call, err *Error, data []byte) {
	rec := &TelemetryRecord{
		Kind: RecordCall, Method: cl.method, Target: callTarget(cl.method, cl.params),
		CallID: cl.id, RequestID: cl.lastReqID, StartUnixNano: cl.started.UnixNano(),
		DurationNS: time.Since(cl.started).Nanoseconds(), BytesOut: len(cl.params),
		TraceParent: cl.trace.TraceParent, FrontSession: cl.opts.FrontSession,
	}
	if err != nil {
		rec.Status, rec.ErrorType = err.Status, errorType(err)
		rec.BytesIn = len(err.JSON())
	} else {
		rec.BytesIn = len(data)
		if cl.method == "tools/call" && isToolError(data) {
			rec.ErrorType = "tool_error"
		}
	}
	if cl.retried {
		rec.Retries++
	}
	if cl.mod != nil {
		rec.Retries += cl.mod.rounds
		rec.ProtocolVersion = cl.mod.version
	}
	if cl.opts.TelemetryID != 0 {
		rec.CallID = cl.opts.TelemetryID
	}
	c.fillClientFacts(rec)
	observeDuration(cl.method, rec.DurationNS)
	c.deliverRecord(rec)
}

// recordLifecycle reports a restart or a failure of the client; locked
// says whether the caller holds c.mu (a restart is decided under it).
func (c *Client) recordLifecycle(kind string, err *Error, locked bool) {
	rec := &TelemetryRecord{Kind: kind, StartUnixNano: time.Now().UnixNano()}
	if err != nil {
		rec.Status, rec.ErrorType, rec.Message = err.Status, errorType(err), err.Message
	}
	if locked {
		c.fillClientFactsLocked(rec)
	} else {
		c.fillClientFacts(rec)
	}
	c.deliverRecord(rec)
}

// startSessionLocked marks the start of a session (ready, or initialized
// again after an expiry) for its "session" record.
func (c *Client) startSessionLocked() {
	c.sessionStart = time.Now()
	c.sessionID = ""
	if s, ok := c.tr.(interface{ SessionID() string }); ok {
		c.sessionID = s.SessionID()
	}
}

// endSessionLocked ends the current session, if one is ready: with a
// handler set, a "session" record says how long it lasted (the
// mcp.client.session.duration metric) and, when lost is not nil, why it
// ended. Called under c.mu; the record only queues.
func (c *Client) endSessionLocked(lost *Error) {
	start := c.sessionStart
	if start.IsZero() {
		return
	}
	c.sessionStart = time.Time{}
	if !c.telemetryOn() {
		return
	}
	rec := &TelemetryRecord{Kind: RecordSession, StartUnixNano: start.UnixNano(), DurationNS: time.Since(start).Nanoseconds()}
	if lost != nil {
		rec.Status, rec.ErrorType, rec.Message = lost.Status, errorType(lost), lost.Message
	}
	c.fillClientFactsLocked(rec)
	if c.sessionID != "" {
		rec.SessionID = c.sessionID // the transport may have forgotten it
	}
	if c.freed {
		return // its handler is gone
	}
	// Queued as a completion is (owed, delivered even once the gate
	// closes): a close followed at once by a free must not lose it.
	DeliverRecord(&c.out, &c.telemetry, rec, callbackgate.Completion)
}

// fillClientFacts adds what the client knows beyond the call: protocol
// version (legacy era), session and restarts.
func (c *Client) fillClientFacts(rec *TelemetryRecord) {
	c.mu.Lock()
	c.fillClientFactsLocked(rec)
	c.mu.Unlock()
}

func (c *Client) fillClientFactsLocked(rec *TelemetryRecord) {
	if rec.ProtocolVersion == "" && c.server != nil {
		rec.ProtocolVersion = c.server.version
	}
	if c.sup != nil {
		rec.Restarts = c.sup.restarts
	}
	if s, ok := c.tr.(interface{ SessionID() string }); ok {
		rec.SessionID = s.SessionID()
	}
}

// deliverRecord hands rec to the handler installed when it runs.
func (c *Client) deliverRecord(rec *TelemetryRecord) {
	DeliverRecord(&c.out, &c.telemetry, rec, callbackgate.Event)
}

// DeliverRecord queues rec on gate g for the telemetry handler that is in
// slot when the delivery runs (one replaced meanwhile is not called): how a
// client hands its records to the application, and a host its own. A
// record of kind callbackgate.Completion is owed as a completion is:
// delivered even once the gate closes.
func DeliverRecord(g *callbackgate.Gate, slot *atomic.Pointer[callbackgate.Registration[TelemetryHandler]], rec *TelemetryRecord, kind callbackgate.Kind) {
	if kind == callbackgate.Completion {
		g.Owe()
	}
	g.Push(func() {
		reg := slot.Load()
		if reg == nil || reg.Handler == nil || !reg.Enter() {
			return
		}
		defer reg.Exit()
		reg.Handler(rec)
	}, kind)
}

// callTarget is the name a call acts on: the tool or prompt name, or the
// resource URI ("" for other methods).
func callTarget(method string, params []byte) string {
	switch method {
	case "tools/call", "prompts/get", "resources/read", "resources/subscribe", "resources/unsubscribe":
	default:
		return ""
	}
	// Only the two members are decoded; the rest (a tool's arguments) is
	// skipped without being built.
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	if len(params) == 0 || jsonx.Unmarshal(params, &p) != nil {
		return ""
	}
	if method == "tools/call" || method == "prompts/get" {
		return p.Name
	}
	return p.URI
}

// isToolError reports whether a tools/call result says "isError": true.
func isToolError(result []byte) bool {
	if !bytes.Contains(result, []byte(`isError`)) {
		return false
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	return jsonx.Unmarshal(result, &r) == nil && r.IsError
}

// errorTypes are the statuses' names as error.type values ("timeout",
// "transport_error", ...), built once from Status.String.
var errorTypes = func() map[Status]string {
	m := map[Status]string{}
	for _, s := range Statuses() {
		m[s] = strings.ReplaceAll(strings.ToLower(s.String()), " ", "_")
	}
	return m
}()

// errorType is err's error.type: a server's JSON-RPC error code, else the
// status's name.
func errorType(err *Error) string {
	if err.Status == StatusProtocol && err.Code != nil {
		return strconv.FormatInt(*err.Code, 10)
	}
	if t, ok := errorTypes[err.Status]; ok {
		return t
	}
	return "unknown"
}
