package core

import (
	"slices"
	"strconv"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// maxInputRounds bounds the input_required rounds of one call: a server
// that keeps asking gets a protocol error instead of an endless loop.
const maxInputRounds = 10

// inputRound is one input_required result being answered: every input
// request goes through the same host machinery as a legacy server request,
// and the call is retried once all are answered.
type inputRound struct {
	want    int
	answers map[string][]byte
	state   []byte // requestState as sent, nil when absent
	done    bool
}

// onModernResult takes a 2026-07-28 result by its resultType (missing
// means complete, for older servers): a complete result finishes the call,
// input_required starts an MRTR round, anything else is invalid.
func (c *Client) onModernResult(cl *call, result []byte) {
	if cl.mod.task != nil {
		c.onTaskResponse(cl, result)
		return
	}
	switch rt := resultTypeOf(result); rt {
	case "", "complete":
		if lk := cl.mod.cached; lk != nil {
			cl.mod.cached = nil
			c.cacheStore(lk, cl.method, result)
		}
		if cl.method == "tools/list" && c.headers {
			result = c.filterToolsList(result)
		}
		if cl.pages != nil {
			c.mu.Lock()
			cl.lastActivity = time.Now() // each page restarts the timeout, as in the legacy era
			c.mu.Unlock()
			c.onPage(cl, result)
			return
		}
		c.finishResult(cl, result)
	case "input_required":
		if !slices.Contains(mrtrMethods, cl.method) {
			c.finish(cl, Errorf(StatusProtocol, "the server answered %s with input_required, which only tools/call, resources/read and prompts/get may return", cl.method), nil)
			return
		}
		c.onInputRequired(cl, result)
	case "task":
		if cl.method == "tools/call" && hasTopLevelKey(cl.params, "task") {
			// The application's own task (params.task as it wrote it):
			// the CreateTaskResult is its answer, and it follows the task
			// itself (tasks/get, tasks/update, tasks/cancel).
			c.finishResult(cl, result)
			return
		}
		c.onTaskCreated(cl, result)
	default:
		c.finish(cl, Errorf(StatusProtocol, "the server's result has resultType %s, which this client does not know", strconv.Quote(rt)), nil)
	}
}

var mrtrMethods = []string{"tools/call", "resources/read", "prompts/get"}

// resultTypeOf reads a result's resultType member ("" when absent or not a
// string).
func resultTypeOf(result []byte) string {
	it := jsonx.BorrowIterator(result)
	defer jsonx.ReturnIterator(it)
	if it.WhatIsNext() != jsonx.KindObject {
		return ""
	}
	for field := it.ReadObject(); field != ""; field = it.ReadObject() {
		if field == "resultType" && it.WhatIsNext() == jsonx.KindString {
			return it.ReadString()
		}
		it.Skip()
		if it.Error != nil {
			return ""
		}
	}
	return ""
}

type inputRequest struct {
	Method string           `json:"method"`
	Params jsonx.RawMessage `json:"params"`
}

// onInputRequired answers an InputRequiredResult (spec 2026-07-28, MRTR):
// every input request is produced before the retry, through the host
// requests the legacy era uses; the retry carries the original params plus
// inputResponses and the requestState echoed exactly, under a new id. The
// round belongs to this call alone.
func (c *Client) onInputRequired(cl *call, result []byte) {
	var ir struct {
		InputRequests map[string]inputRequest `json:"inputRequests"`
		RequestState  jsonx.RawMessage        `json:"requestState"`
	}
	if jsonx.Unmarshal(result, &ir) != nil {
		c.finish(cl, Errorf(StatusProtocol, "the server's input_required result is malformed"), nil)
		return
	}
	if len(ir.RequestState) > 0 && (ir.RequestState[0] != '"') {
		c.finish(cl, Errorf(StatusProtocol, "the server's requestState is not a string"), nil)
		return
	}
	if ir.InputRequests == nil && ir.RequestState == nil {
		c.finish(cl, Errorf(StatusProtocol, "the server's input_required result has neither inputRequests nor requestState"), nil)
		return
	}
	keys := make([]string, 0, len(ir.InputRequests))
	for key, req := range ir.InputRequests {
		if !c.declaresInput(req.Method) {
			c.finish(cl, Errorf(StatusProtocol, "the server asked for input %q with %s, which this client did not declare", key, req.Method), nil)
			return
		}
		keys = append(keys, key)
	}
	slices.Sort(keys)

	round := &inputRound{want: len(keys), answers: make(map[string][]byte, len(keys))}
	if ir.RequestState != nil {
		round.state = append([]byte(nil), ir.RequestState...)
	}
	c.mu.Lock()
	if cl.finished {
		c.mu.Unlock()
		return
	}
	cl.mod.rounds++
	if cl.mod.rounds > maxInputRounds {
		c.mu.Unlock()
		c.finish(cl, Errorf(StatusProtocol, "the server asked for input more than %d times for one %s", maxInputRounds, cl.method), nil)
		return
	}
	cl.mod.round = round
	c.mu.Unlock()

	if len(keys) == 0 {
		c.retryInputs(cl, round)
		return
	}
	for _, key := range keys {
		in := ir.InputRequests[key]
		req := &serverRequest{id: cl.inputOwner(), method: in.Method, params: in.Params, callID: cl.id, inputKey: key}
		req.answer = func(result []byte, err *Error) { c.onInput(cl, round, key, result, err) }
		switch in.Method {
		case "roots/list":
			c.serveRoots(req)
		case "sampling/createMessage":
			c.serveSampling(req)
		case "elicitation/create":
			c.serveElicitation(req)
		}
	}
}

// declaresInput reports whether the client declared the capability an
// input request needs: a server must not ask for anything else.
func (c *Client) declaresInput(method string) bool {
	switch method {
	case "roots/list":
		return c.opts.Handlers.Roots
	case "sampling/createMessage":
		return c.samplingEnabled()
	case "elicitation/create":
		return c.opts.Handlers.Elicitation
	}
	return false
}

// inputOwner identifies the call's input requests among the host
// requests, so that they are dropped when the call ends. It is never
// valid JSON, so it cannot match a server's request id.
func (cl *call) inputOwner() []byte {
	return strconv.AppendUint([]byte("input:"), cl.id, 10)
}

// onInput takes one produced input. A failure ends the call: the spec
// lets a client decline to take part, and the server expects nothing back.
func (c *Client) onInput(cl *call, round *inputRound, key string, result []byte, err *Error) {
	c.mu.Lock()
	if round.done || cl.finished || cl.mod.round != round {
		c.mu.Unlock()
		return
	}
	if err != nil {
		round.done = true
		c.mu.Unlock()
		c.finish(cl, err, nil)
		return
	}
	round.answers[key] = result
	complete := len(round.answers) == round.want
	if complete {
		round.done = true
	}
	c.mu.Unlock()
	if complete {
		c.retryInputs(cl, round)
	}
}

// retryInputs re-sends the call's original request with the round's
// inputs, under a new JSON-RPC id.
func (c *Client) retryInputs(cl *call, round *inputRound) {
	retry := &retryInput{state: round.state}
	if round.want > 0 {
		buf := []byte{'{'}
		keys := make([]string, 0, len(round.answers))
		for k := range round.answers {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = jsonx.AppendString(buf, k)
			buf = append(buf, ':')
			buf = append(buf, orEmptyObject(round.answers[k])...)
		}
		retry.responses = append(buf, '}')
	}
	c.mu.Lock()
	if cl.finished {
		c.mu.Unlock()
		return
	}
	cl.mod.retry = retry
	reqID := c.nextRequestLocked(cl)
	c.mu.Unlock()
	if err := c.sendRequest(cl, reqID, cl.params); err != nil {
		c.finish(cl, err, nil)
	}
}

// dropInputRequests forgets the app requests still open for a call that
// ended: their answers would have nowhere to go.
func (c *Client) dropInputRequests(cl *call) {
	owner := string(cl.inputOwner())
	c.mu.Lock()
	var dropped []*appRequest
	for id, hr := range c.appReqs {
		if string(hr.serverID) == owner {
			dropped = append(dropped, hr)
			delete(c.appReqs, id)
		}
	}
	c.mu.Unlock()
	for _, hr := range dropped {
		hr.timer.Stop()
		c.logf("info", "app request %d (%s) is no longer needed: call %d ended", hr.id, hr.kind, cl.id)
	}
}

// inputError turns a refusal of an input request into the call's error:
// a policy's denial is POLICY_DENIED (data: the structured denial), a
// malformed request from the server a protocol error.
func inputError(req *serverRequest, code int64, message string, data []byte) *Error {
	what := "input " + strconv.Quote(req.inputKey) + " (" + req.method + ")"
	switch code {
	case codeRejected:
		return &Error{Status: StatusPolicyDenied, Message: what + " was refused: " + message, Data: data}
	case codeInvalidParams:
		return &Error{Status: StatusProtocol, Message: "the server's " + what + " is invalid: " + message}
	}
	return &Error{Status: StatusInternal, Message: what + " could not be produced: " + message, Data: data}
}
