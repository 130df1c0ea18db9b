package core

import (
	"strconv"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/internal/tracecontext"
)

// JSON-RPC error codes the client sends.
const (
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	codeRejected       = -1 // the user (or a policy) rejected the request
)

// appRequest is a question put to the host, waiting for its answer. One
// server request may lead to several in turn (a review, then the delegate).
type appRequest struct {
	id       uint64
	kind     string
	serverID []byte // the id of the server request it serves
	timer    *time.Timer
	// onAnswer takes the host's answer. It replies to the server itself and
	// returns an error when the answer was unusable (the server then got
	// -32603 and the host a log event).
	onAnswer func(status Status, data []byte) *Error
	// onExpire runs when the host did not answer in time.
	onExpire func()
	// onDrop, when set, runs when the request is dropped unanswered
	// because the client was freed.
	onDrop func()
}

// serverRequest is a request from the server being served: a legacy
// server request, or one input request of a 2026-07-28 input_required
// result, which the same validation, policy and app requests serve.
type serverRequest struct {
	id     []byte // as the server sent it, echoed in the response
	method string
	params []byte
	// answer, when set, takes the outcome instead of the wire: the request
	// came inside an input_required result of call callID, under inputKey.
	answer   func(result []byte, err *Error)
	callID   uint64
	inputKey string
	// served, when set, takes the outcome instead of the wire: the request
	// was task-augmented (tasks_receiver.go).
	served *servedTask
}

// onServerRequest answers ping itself, serves the requests the client
// declared a capability for, and refuses the rest with -32601.
func (c *Client) onServerRequest(env *envelope) {
	if c.modernEra() {
		// 2026-07-28 servers never send requests and clients never send
		// responses: input comes through input_required results.
		c.logf("warning", "ignored a %s request from the server: the 2026-07-28 protocol has no server requests", env.method)
		return
	}
	req := &serverRequest{id: env.idRaw, method: env.method, params: env.params}
	if c.serveTaskRequest(req) {
		return
	}
	h := c.opts.Handlers
	switch {
	case env.method == "ping":
		c.replyResult(req, []byte("{}"))
	case env.method == "roots/list" && h.Roots:
		c.serveRoots(req)
	case env.method == "sampling/createMessage" && c.samplingEnabled():
		c.serveSampling(req)
	case env.method == "elicitation/create" && h.Elicitation:
		c.serveElicitation(req)
	default:
		c.replyError(req, codeMethodNotFound, "method not found: "+env.method, nil)
	}
}

// askHost puts a question to the app-request handler. payload is the JSON
// the host receives.
func (c *Client) askHost(kind string, req *serverRequest, payload []byte, onAnswer func(Status, []byte) *Error, onExpire func()) {
	reg := c.hosts.Load()
	if reg == nil || reg.Handler == nil {
		c.replyError(req, codeInternal, "the client has no handler for "+req.method, nil)
		return
	}
	hr := &appRequest{id: c.nextHostID.Add(1), kind: kind, serverID: req.id, onAnswer: onAnswer, onExpire: onExpire}
	c.mu.Lock()
	if c.freed {
		c.mu.Unlock()
		return
	}
	c.appReqs[hr.id] = hr
	if req.served != nil {
		req.served.appReqs = append(req.served.appReqs, hr.id)
	}
	hr.timer = time.AfterFunc(c.opts.Timeouts.AppRequest, func() { c.expireAppRequest(hr) })
	c.mu.Unlock()
	go func() {
		defer c.recoverPanic("a app request callback")
		if !c.callHost(reg, hr.id, kind, payload) {
			if c.takeAppRequest(hr.id) != nil {
				c.replyError(req, codeInternal, "the client is shutting down", nil)
			}
		}
	}()
}

// callHost runs the app-request callback through the client's gate (see
// deliver.go); false when the client is being freed and it did not run.
func (c *Client) callHost(reg *hostRegistration, id uint64, kind string, payload []byte) bool {
	if !c.out.Enter() {
		return false
	}
	defer c.out.Exit()
	if !reg.Enter() {
		return false
	}
	defer reg.Exit()
	reg.Handler(id, kind, payload)
	return true
}

// hostPayload builds {"method","params",...extra} for the host; an input
// request also names its call and key ("call_id", "input_key").
func hostPayload(req *serverRequest, extra ...any) []byte {
	m := map[string]any{"method": req.method, "params": jsonx.RawMessage(orEmptyObject(req.params))}
	if req.answer != nil {
		m["call_id"], m["input_key"] = req.callID, req.inputKey
	}
	if req.served != nil {
		m["task_id"] = req.served.id
	}
	if tc := tracecontext.FromParams(req.params); !tc.Empty() {
		m["trace"] = tc // the server's trace context, for the host's span
	}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	return jsonx.MustMarshal(m)
}

// takeAppRequest removes a pending app request.
func (c *Client) takeAppRequest(id uint64) *appRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	hr := c.appReqs[id]
	if hr == nil {
		return nil
	}
	delete(c.appReqs, id)
	hr.timer.Stop()
	return hr
}

func (c *Client) expireAppRequest(hr *appRequest) {
	defer c.recoverPanic("a app request timer")
	if c.takeAppRequest(hr.id) == nil {
		return
	}
	c.logf("warning", "app request %d (%s) expired: the host did not answer within %s", hr.id, hr.kind, formatMS(c.opts.Timeouts.AppRequest))
	hr.onExpire()
}

// expireWithError is the usual onExpire: tell the server the host did not
// answer.
func (c *Client) expireWithError(req *serverRequest) func() {
	return func() {
		if req.answer != nil {
			req.answer(nil, Errorf(StatusTimeout, "the host did not answer input %q (%s) within %s", req.inputKey, req.method, formatMS(c.opts.Timeouts.AppRequest)))
			return
		}
		c.replyError(req, codeInternal, "the host did not answer "+req.method+" within "+formatMS(c.opts.Timeouts.AppRequest), nil)
	}
}

type hostErrorReply struct {
	Code    *int64           `json:"code"`
	Message string           `json:"message"`
	Data    jsonx.RawMessage `json:"data"`
}

// Respond answers app request id. With StatusOK, data is the result object;
// otherwise data is optional {"code","message","data"}. Malformed JSON leaves
// the request pending; an answer that is valid JSON but not a valid result
// is consumed (the server gets -32603) and reported as StatusInvalidArgument.
func (c *Client) Respond(id uint64, status Status, data []byte) *Error {
	compact, err := compactParams(data)
	if err != nil {
		return Errorf(StatusInvalidArgument, "the answer must be a JSON object")
	}
	hr := c.takeAppRequest(id)
	if hr == nil {
		return Errorf(StatusNotFound, "no pending app request with id %d (answered, expired or unknown)", id)
	}
	return hr.onAnswer(status, compact)
}

// hostErrorToServer maps a host's error answer to a JSON-RPC error: the
// host's code and message when given, -1 for a policy denial, -32603
// otherwise.
func hostErrorToServer(status Status, data []byte) (int64, string, []byte) {
	var reply hostErrorReply
	if len(data) > 0 {
		_ = jsonx.Unmarshal(data, &reply)
	}
	code := int64(codeInternal)
	if status == StatusPolicyDenied {
		code = codeRejected
	}
	if reply.Code != nil {
		code = *reply.Code
	}
	msg := reply.Message
	if msg == "" {
		msg = status.String()
	}
	return code, msg, reply.Data
}

// answerWith returns an onAnswer that validates a result with check and
// forwards it, or forwards the host's error.
func (c *Client) answerWith(req *serverRequest, check func([]byte) ([]byte, *Error)) func(Status, []byte) *Error {
	return func(status Status, data []byte) *Error {
		if status != StatusOK && req.answer != nil {
			// The host declined: the call ends with the host's own status.
			_, msg, edata := hostErrorToServer(status, data)
			req.answer(nil, &Error{Status: status, Message: "the host refused input " + strconv.Quote(req.inputKey) + " (" + req.method + "): " + msg, Data: edata})
			return nil
		}
		if status != StatusOK {
			code, msg, edata := hostErrorToServer(status, data)
			c.replyError(req, code, msg, edata)
			return nil
		}
		result, err := check(data)
		if err != nil {
			c.rejectHostAnswer(req, err)
			return err
		}
		c.replyResult(req, result)
		return nil
	}
}

// rejectHostAnswer tells the server the host's answer was unusable, and the
// host why.
func (c *Client) rejectHostAnswer(req *serverRequest, err *Error) {
	c.logf("warning", "invalid host answer to %s: %s", req.method, err.Message)
	if req.answer != nil {
		req.answer(nil, &Error{Status: StatusInvalidArgument, Message: "the host's answer to input " + strconv.Quote(req.inputKey) + " (" + req.method + ") is invalid: " + err.Message})
		return
	}
	c.replyError(req, codeInternal, "the client produced an invalid "+req.method+" result", nil)
}

func (c *Client) replyResult(req *serverRequest, result []byte) {
	if req.served != nil {
		c.servedTaskDone(req.served, orEmptyObject(result), 0, "", nil)
		return
	}
	if req.answer != nil {
		req.answer(orEmptyObject(result), nil)
		return
	}
	go c.sendResponse(appendResult(nil, req.id, orEmptyObject(result)))
}

func (c *Client) replyError(req *serverRequest, code int64, message string, data []byte) {
	if req.served != nil {
		c.servedTaskDone(req.served, nil, code, message, data)
		return
	}
	if req.answer != nil {
		req.answer(nil, inputError(req, code, message, data))
		return
	}
	go c.sendResponse(appendErrorResponse(nil, req.id, code, message, data))
}

// modernEra reports whether the client speaks the 2026-07-28 era with its
// server.
func (c *Client) modernEra() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.server != nil && c.server.modern != ""
}

type cancelledParams struct {
	RequestID jsonx.RawMessage `json:"requestId"`
}

// onServerCancelled drops the app requests serving a server request the
// server abandoned: they get no response, as the spec asks.
func (c *Client) onServerCancelled(raw []byte) {
	var p cancelledParams
	if jsonx.Unmarshal(raw, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	c.mu.Lock()
	var dropped []*appRequest
	for id, hr := range c.appReqs {
		if sameID(hr.serverID, p.RequestID) {
			dropped = append(dropped, hr)
			delete(c.appReqs, id)
		}
	}
	c.mu.Unlock()
	for _, hr := range dropped {
		hr.timer.Stop()
		c.logf("info", "the server cancelled app request %d (%s)", hr.id, hr.kind)
	}
}
