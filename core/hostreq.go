package core

import (
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// JSON-RPC error codes the client sends.
const (
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	codeRejected       = -1 // the user (or a policy) rejected the request
)

// hostRequest is a server request waiting for the host's answer.
type hostRequest struct {
	id     uint64
	kind   string
	method string
	idRaw  []byte // the server's request id, echoed in the response
	timer  *time.Timer
}

// hostKinds maps the server requests a host can answer to their kinds.
var hostKinds = map[string]string{
	"roots/list":             "roots",
	"sampling/createMessage": "sampling",
	"elicitation/create":     "elicitation",
}

// onServerRequest answers ping itself, hands the requests the host declared
// to the host, and refuses the rest with -32601.
func (c *Client) onServerRequest(env *envelope) {
	if env.method == "ping" {
		go c.sendResponse(appendResult(nil, env.idRaw, []byte("{}")))
		return
	}
	kind, known := hostKinds[env.method]
	if !known || !c.handles(kind) {
		go c.sendResponse(appendErrorResponse(nil, env.idRaw, codeMethodNotFound, "method not found: "+env.method, nil))
		return
	}
	reg := c.hosts.Load()
	if reg == nil || reg.host == nil {
		go c.sendResponse(appendErrorResponse(nil, env.idRaw, codeInternal, "the client has no handler for "+env.method, nil))
		return
	}
	hr := &hostRequest{id: c.nextHostID.Add(1), kind: kind, method: env.method, idRaw: env.idRaw}
	c.mu.Lock()
	if c.freed {
		c.mu.Unlock()
		return
	}
	c.hostReqs[hr.id] = hr
	hr.timer = time.AfterFunc(c.opts.Timeouts.HostRequest, func() { c.expireHostRequest(hr) })
	c.mu.Unlock()

	payload := make([]byte, 0, 32+len(env.method)+len(env.params))
	payload = append(payload, `{"method":`...)
	payload = jsonx.AppendString(payload, env.method)
	payload = append(payload, `,"params":`...)
	payload = append(payload, orEmptyObject(env.params)...)
	payload = append(payload, '}')
	go func() {
		if !reg.enter() {
			c.answerHostError(hr.id, codeInternal, "the client is shutting down")
			return
		}
		defer reg.exit()
		reg.host(hr.id, kind, payload)
	}()
}

func (c *Client) handles(kind string) bool {
	h := c.opts.Handlers
	switch kind {
	case "roots":
		return h.Roots
	case "sampling":
		return h.Sampling
	case "elicitation":
		return h.Elicitation
	}
	return false
}

// takeHostRequest removes a pending host request.
func (c *Client) takeHostRequest(id uint64) *hostRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	hr := c.hostReqs[id]
	if hr == nil {
		return nil
	}
	delete(c.hostReqs, id)
	hr.timer.Stop()
	return hr
}

func (c *Client) expireHostRequest(hr *hostRequest) {
	if c.takeHostRequest(hr.id) == nil {
		return
	}
	msg := "the host did not answer " + hr.method + " within " + formatMS(c.opts.Timeouts.HostRequest)
	c.logf("warning", "host request %d (%s) expired: %s", hr.id, hr.kind, msg)
	c.sendResponse(appendErrorResponse(nil, hr.idRaw, codeInternal, msg, nil))
}

func (c *Client) answerHostError(id uint64, code int64, message string) {
	if hr := c.takeHostRequest(id); hr != nil {
		c.sendResponse(appendErrorResponse(nil, hr.idRaw, code, message, nil))
	}
}

type hostErrorReply struct {
	Code    *int64           `json:"code"`
	Message string           `json:"message"`
	Data    jsonx.RawMessage `json:"data"`
}

// Respond answers host request id. With StatusOK, data is the result object;
// otherwise data is optional {"code","message","data"}.
func (c *Client) Respond(id uint64, status Status, data []byte) *Error {
	var out []byte
	if status == StatusOK {
		result, err := compactParams(data)
		if err != nil {
			return Errorf(StatusInvalidArgument, "the answer must be a JSON object")
		}
		hr := c.takeHostRequest(id)
		if hr == nil {
			return Errorf(StatusNotFound, "no pending host request with id %d (answered, expired or unknown)", id)
		}
		out = appendResult(nil, hr.idRaw, orEmptyObject(result))
	} else {
		var reply hostErrorReply
		if len(data) > 0 {
			if _, err := compactParams(data); err != nil {
				return Errorf(StatusInvalidArgument, "the error detail must be a JSON object")
			}
			if err := jsonx.Unmarshal(data, &reply); err != nil {
				return Errorf(StatusInvalidArgument, "the error detail must be {\"code\",\"message\",\"data\"}")
			}
		}
		hr := c.takeHostRequest(id)
		if hr == nil {
			return Errorf(StatusNotFound, "no pending host request with id %d (answered, expired or unknown)", id)
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
		out = appendErrorResponse(nil, hr.idRaw, code, msg, reply.Data)
	}
	go c.sendResponse(out)
	return nil
}

type cancelledParams struct {
	RequestID jsonx.RawMessage `json:"requestId"`
}

// onServerCancelled drops a host request the server abandoned: it gets no
// response, as the spec asks.
func (c *Client) onServerCancelled(raw []byte) {
	var p cancelledParams
	if jsonx.Unmarshal(raw, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	c.mu.Lock()
	var found *hostRequest
	for id, hr := range c.hostReqs {
		if string(hr.idRaw) == string(p.RequestID) {
			found = hr
			delete(c.hostReqs, id)
			break
		}
	}
	c.mu.Unlock()
	if found != nil {
		found.timer.Stop()
		c.logf("info", "the server cancelled host request %d (%s)", found.id, found.kind)
	}
}
