package gateway

import (
	"slices"
	"strings"
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// eventsFrom is the event handler of h: the shared host (sess nil), or a
// session's own host of its per_session servers, whose events concern
// that session alone (its lists are the shared instance's). It runs on
// h's delivery goroutine: nothing here waits on a front.
func (s *Server) eventsFrom(h *host.Host, sess *Session) core.EventHandler {
	return func(kind string, payload []byte) { s.onEvent(h, sess, kind, payload) }
}

// requestsFrom is the app-request handler of h (see eventsFrom).
func (s *Server) requestsFrom(h *host.Host, sess *Session) core.AppRequestHandler {
	return func(id uint64, kind string, payload []byte) { s.onAppRequest(h, sess, id, kind, payload) }
}

func (s *Server) onEvent(h *host.Host, only *Session, kind string, payload []byte) {
	if only == nil {
		defer s.forward(kind, payload)
	}
	switch kind {
	case "list_changed":
		if only != nil {
			return
		}
		var ev struct {
			List string `json:"list"`
		}
		_ = jsonx.Unmarshal(payload, &ev)
		s.listChanged(ev.List)
	case "restarting", "ready":
		if only == nil {
			s.onRestart(kind, payload)
		}
	case "progress":
		s.onProgress(h, payload)
	case "notification":
		var n struct {
			Server string           `json:"server"`
			Method string           `json:"method"`
			Params jsonx.RawMessage `json:"params"`
		}
		if jsonx.Unmarshal(payload, &n) != nil {
			return
		}
		switch n.Method {
		case "notifications/message":
			s.onLog(only, n.Server, n.Params)
		case "notifications/resources/updated":
			s.onResourceUpdated(only, n.Server, n.Params)
		}
	}
}

// listChanged tells every initialized session, and every listen that
// asked, that a list changed. The exposed names stay until the next
// listing remakes them: an exposed name is a function of the host's, so
// what the last table holds still routes where it did.
func (s *Server) listChanged(list string) {
	var method string
	switch list {
	case "tools":
		method = "notifications/tools/list_changed"
	case "prompts":
		method = "notifications/prompts/list_changed"
	case "resources":
		method = "notifications/resources/list_changed"
	default:
		return
	}
	for _, l := range s.listenersFor(list) {
		l.send(method, nil)
	}
	msg := core.AppendNotification(nil, method, nil)
	for _, sess := range s.sessionList() {
		sess.mu.Lock()
		ok := sess.version != "" && !sess.modern
		sess.mu.Unlock()
		if ok {
			sess.sendStandalone(msg)
		}
	}
}

// onRestart tells the fronts that a restarting server's items left the
// lists and, once it is ready again, that they are back: the host
// announces neither when the server returns with the same lists, yet a
// front that listed in between holds a list without them.
func (s *Server) onRestart(kind string, payload []byte) {
	var ev struct {
		Server string `json:"server"`
	}
	if jsonx.Unmarshal(payload, &ev) != nil || ev.Server == "" {
		return
	}
	s.mu.Lock()
	was := s.restarting[ev.Server]
	if kind == "restarting" {
		if s.restarting == nil {
			s.restarting = map[string]bool{}
		}
		s.restarting[ev.Server] = true
	} else {
		delete(s.restarting, ev.Server)
	}
	s.mu.Unlock()
	if kind == "ready" && !was {
		return // a first start: the host's own list_changed says what came
	}
	for _, list := range []string{"tools", "prompts", "resources"} {
		s.listChanged(list)
	}
}

// sessionsOf is only, or every session when only is nil.
func (s *Server) sessionsOf(only *Session) []*Session {
	if only != nil {
		return []*Session{only}
	}
	return s.sessionList()
}

func (s *Server) sessionList() []*Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		out = append(out, sess)
	}
	return out
}

// callByHostID finds a call in flight by h's call id. A call whose
// start has not returned its id yet may be the one (its server can
// answer before the host's Call returns): those are waited for, briefly.
func (s *Server) callByHostID(h *host.Host, id uint64) *call {
	var starting []*call
	s.mu.Lock()
	for c := range s.calls {
		if c.h != h {
			continue
		}
		c.mu.Lock()
		hid := c.hostID
		c.mu.Unlock()
		if hid == id {
			s.mu.Unlock()
			return c
		}
		if hid == 0 {
			starting = append(starting, c)
		}
	}
	s.mu.Unlock()
	deadline := time.NewTimer(time.Second)
	defer deadline.Stop()
	for _, c := range starting {
		select {
		case <-c.idSet:
		case <-deadline.C:
			return nil
		}
		c.mu.Lock()
		hid := c.hostID
		c.mu.Unlock()
		if hid == id {
			return c
		}
	}
	return nil
}

// onProgress relays a server's progress to the front's progress token.
func (s *Server) onProgress(h *host.Host, payload []byte) {
	var p struct {
		CallID   uint64           `json:"call_id"`
		Progress jsonx.RawMessage `json:"progress"`
		Total    jsonx.RawMessage `json:"total"`
		Message  jsonx.RawMessage `json:"message"`
	}
	if jsonx.Unmarshal(payload, &p) != nil {
		return
	}
	c := s.callByHostID(h, p.CallID)
	if c == nil || c.progress == nil {
		return
	}
	params := map[string]jsonx.RawMessage{"progressToken": c.progress, "progress": p.Progress}
	if len(p.Total) > 0 {
		params["total"] = p.Total
	}
	if len(p.Message) > 0 {
		params["message"] = p.Message
	}
	s.sendRelated(c, core.AppendNotification(nil, "notifications/progress", raw(params)))
}

// sendRelated sends a message related to a call where the call's front
// request listens, else on its session's standalone stream.
func (s *Server) sendRelated(c *call, msg []byte) bool {
	c.mu.Lock()
	r := c.r
	c.mu.Unlock()
	if r != nil && r.related != nil && r.related.send(msg) {
		return true
	}
	return c.sess != nil && c.sess.sendStandalone(msg)
}

// onLog sends a server's log message to the sessions whose level lets it
// through.
func (s *Server) onLog(only *Session, server string, params []byte) {
	var p map[string]jsonx.RawMessage
	if jsonx.Unmarshal(params, &p) != nil {
		return
	}
	level := slices.Index(logLevels, str2(p["level"]))
	if level < 0 {
		return
	}
	if _, ok := p["logger"]; !ok {
		p["logger"] = raw(server)
	}
	msg := core.AppendNotification(nil, "notifications/message", raw(p))
	for _, sess := range s.sessionsOf(only) {
		sess.mu.Lock()
		want := sess.level >= 0 && level >= sess.level
		sess.mu.Unlock()
		if want {
			sess.sendStandalone(msg)
		}
	}
	// 2026-07-28: on the stream of each request in flight to that server
	// that asked for the level in its _meta, never elsewhere (a server's
	// log line names no request: every such call to it hears it).
	s.mu.Lock()
	var calls []*call
	for c := range s.calls {
		if c.level >= 0 && level >= c.level && c.server == server && (only == nil || c.sess == only) {
			calls = append(calls, c)
		}
	}
	s.mu.Unlock()
	for _, c := range calls {
		c.mu.Lock()
		r := c.r
		c.mu.Unlock()
		if r != nil && r.related != nil {
			r.related.send(msg)
		}
	}
}

// logToSession sends the gateway's own log line to one session, when it
// asked for logs.
func (s *Server) logToSession(sess *Session, level, text string) {
	sess.mu.Lock()
	want := sess.level >= 0 && slices.Index(logLevels, level) >= sess.level
	sess.mu.Unlock()
	if want {
		sess.sendStandalone(core.AppendNotification(nil, "notifications/message", raw(map[string]string{"level": level, "logger": "lemonmcp-gateway", "data": text})))
	}
}

// onResourceUpdated sends notifications/resources/updated to the
// sessions subscribed to the resource, under the URI they know.
func (s *Server) onResourceUpdated(only *Session, server string, params []byte) {
	var p struct {
		URI string `json:"uri"`
	}
	if jsonx.Unmarshal(params, &p) != nil {
		return
	}
	k := subKey{server: server, uri: p.URI, own: only != nil}
	if only == nil {
		for l, uri := range s.listenersOf(k) {
			l.send("notifications/resources/updated", map[string]any{"uri": uri})
		}
	}
	for _, sess := range s.sessionsOf(only) {
		sess.mu.Lock()
		var exposed string
		for uri, sk := range sess.subs {
			if sk == k {
				exposed = uri
			}
		}
		sess.mu.Unlock()
		if exposed != "" {
			sess.sendStandalone(core.AppendNotification(nil, "notifications/resources/updated", raw(map[string]string{"uri": exposed})))
		}
	}
}

// onAppRequest relays a server's request (sampling, elicitation, roots)
// to the front whose call caused it, or refuses it at once with a reason.
func (s *Server) onAppRequest(h *host.Host, only *Session, id uint64, kind string, payload []byte) {
	var p struct {
		Server string           `json:"server"`
		Method string           `json:"method"`
		Params jsonx.RawMessage `json:"params"`
		CallID *uint64          `json:"call_id"`
	}
	if jsonx.Unmarshal(payload, &p) != nil {
		_ = h.Respond(id, core.StatusInternal, raw(map[string]any{"code": core.CodeInternal, "message": "the gateway could not read the request"}))
		return
	}
	switch p.Method {
	case "sampling/createMessage", "elicitation/create", "roots/list":
	default:
		s.refuse(h, id, core.CodeMethodNotFound, "the gateway relays sampling, elicitation and roots to its front clients; it cannot answer a "+kind+" request")
		return
	}
	c, why := s.causingCall(h, p.Server, p.CallID, p.Method, p.Params)
	if c == nil {
		s.refuse(h, id, core.CodeInternal, "the gateway cannot relay "+p.Method+" from the server "+quote(p.Server)+": "+why)
		return
	}
	if missing := c.lacks(p.Method, p.Params); missing != "" {
		s.refuse(h, id, core.CodeMethodNotFound, "the front client did not declare the "+missing+" capability, so the gateway cannot ask it "+p.Method)
		return
	}
	a := &ask{h: h, hostReq: id, method: p.Method, params: orEmptyObj(p.Params), sess: c.sess, c: c}
	if c.modern {
		s.askInput(c, a)
		return
	}
	s.askSession(c, a)
}

func orEmptyObj(b []byte) []byte {
	if len(b) == 0 {
		return []byte("{}")
	}
	return b
}

// causingCall finds the front call that caused a server request: the
// call it names (a 2026-07-28 server's input request), else the one front
// call in flight to that server (among those whose front could answer;
// a call its front cancelled, which lingers until its server answers, is
// no one's cause). A server shared by several sessions with calls in
// flight at once cannot tell whose call it serves (a legacy server
// request names none): that is refused, never guessed.
func (s *Server) causingCall(h *host.Host, server string, clientCallID *uint64, method string, params []byte) (*call, string) {
	if clientCallID != nil {
		// The host learns its call's client id when the client's Call
		// returns, which the server's input request can beat: a moment's
		// wait, bounded.
		for wait := time.Millisecond; wait < time.Second; wait *= 2 {
			if hid, ok := h.CallOfClient(server, *clientCallID); ok {
				if c := s.callByHostID(h, hid); c != nil {
					return c, ""
				}
				break
			}
			time.Sleep(wait)
		}
	}
	s.mu.Lock()
	var found []*call
	for c := range s.calls {
		if c.server == server && c.h == h {
			c.mu.Lock()
			cancelled := c.cancelled
			c.mu.Unlock()
			if !cancelled {
				found = append(found, c)
			}
		}
	}
	s.mu.Unlock()
	if len(found) == 0 {
		return nil, "no front request is in flight to it"
	}
	// Only a front that can answer may have caused it.
	able := found[:0:0]
	for _, c := range found {
		if c.lacks(method, params) == "" {
			able = append(able, c)
		}
	}
	if len(able) > 0 {
		found = able
	}
	slices.SortFunc(found, func(a, b *call) int { return a.started.Compare(b.started) })
	owner := found[0].sess
	for _, c := range found[1:] {
		if c.sess != owner || owner == nil || owner.modern {
			return nil, "front requests of several sessions are in flight to it, and its request does not say which one it serves"
		}
	}
	return found[0], ""
}

// lacks names the capability a front did not declare for method, or "".
func (c *call) lacks(method string, params []byte) string {
	c.mu.Lock()
	caps := c.caps
	c.mu.Unlock()
	if !c.modern && c.sess != nil {
		c.sess.mu.Lock()
		caps = c.sess.caps
		c.sess.mu.Unlock()
	}
	switch method {
	case "sampling/createMessage":
		if !caps.sampling {
			return "sampling"
		}
	case "roots/list":
		if !caps.roots {
			return "roots"
		}
	case "elicitation/create":
		var p struct {
			Mode string `json:"mode"`
		}
		_ = jsonx.Unmarshal(params, &p)
		if p.Mode == "url" && !caps.elicitURL {
			return "elicitation (url mode)"
		}
		if p.Mode != "url" && !caps.elicitForm {
			return "elicitation (form mode)"
		}
	}
	return ""
}

func (s *Server) refuse(h *host.Host, id uint64, code int64, message string) {
	_ = h.Respond(id, core.StatusUnsupported, raw(map[string]any{"code": code, "message": message}))
}

func (s *Server) refuseAsk(a *ask, why string) {
	s.refuse(a.h, a.hostReq, core.CodeInternal, "the gateway could not get an answer to "+a.method+": "+why)
}

// askSession sends the request to an initialize-era front, on the stream
// of the call that caused it.
func (s *Server) askSession(c *call, a *ask) {
	sess := c.sess
	sess.mu.Lock()
	if sess.closed {
		sess.mu.Unlock()
		s.refuseAsk(a, "the front session closed")
		return
	}
	sess.nextID++
	a.frontID = sess.nextID
	sess.out[a.frontID] = a
	sess.mu.Unlock()
	if !s.sendRelated(c, core.AppendRequest(nil, a.frontID, a.method, a.params)) {
		sess.mu.Lock()
		delete(sess.out, a.frontID)
		sess.mu.Unlock()
		s.refuseAsk(a, "the front session has no open stream to ask on")
	}
}

// askInput gives a 2026-07-28 front the request as an input of an
// input_required result: at once when its request is waiting, else with
// its retry.
func (s *Server) askInput(c *call, a *ask) {
	c.mu.Lock()
	if c.finished {
		c.mu.Unlock()
		s.refuseAsk(a, "its call ended")
		return
	}
	a.key = "input-" + itoa(int64(a.hostReq))
	c.inputs = append(c.inputs, a)
	c.mu.Unlock()
	s.flushInputs(c)
}

// flushInputs answers the call's waiting front request with
// input_required for the inputs not given yet, and parks the call.
func (s *Server) flushInputs(c *call) {
	c.mu.Lock()
	r := c.r
	if r == nil || len(c.inputs) == 0 {
		c.mu.Unlock()
		return
	}
	reqs := make(map[string]any, len(c.inputs))
	for _, a := range c.inputs {
		reqs[a.key] = map[string]any{"method": a.method, "params": jsonx.RawMessage(a.params)}
	}
	if c.asked == nil {
		c.asked = map[string]*ask{}
	}
	for _, a := range c.inputs {
		c.asked[a.key] = a
	}
	c.inputs = nil
	c.r = nil
	c.token = newToken()
	c.parked = time.Now()
	token := c.token
	c.mu.Unlock()
	s.mu.Lock()
	s.parked[token] = c
	s.mu.Unlock()
	r.done(core.AppendResult(nil, r.id, raw(map[string]any{"resultType": "input_required", "inputRequests": reqs, "requestState": token})))
	s.inflight.Done()
}

// resume takes a 2026-07-28 retry: the answers go to the servers that
// asked, and the request waits for what comes next (the result, or more
// input requests).
func (s *Server) resume(sess *Session, req *request, rawToken []byte, r *reply) {
	token := str2(rawToken)
	s.mu.Lock()
	c := s.parked[token]
	delete(s.parked, token)
	s.mu.Unlock()
	if c == nil || !strings.EqualFold(c.method, req.m.Method) {
		r.done(errorMsg(req.m.ID, core.CodeInvalidParams, "invalid params: requestState names no call waiting for input (it expired, was answered, or is not this gateway's)", nil))
		s.inflight.Done()
		return
	}
	var answers map[string]jsonx.RawMessage
	_ = jsonx.Unmarshal(req.params["inputResponses"], &answers)
	c.mu.Lock()
	asked := c.asked
	c.asked = nil
	c.mu.Unlock()
	for key, a := range asked {
		ans, ok := answers[key]
		if !ok {
			s.refuseAsk(a, "the front's retry did not answer input "+quote(key))
			continue
		}
		if err := a.h.Respond(a.hostReq, core.StatusOK, ans); err != nil && err.Status == core.StatusInvalidArgument {
			s.refuse(a.h, a.hostReq, core.CodeInternal, "the front's answer to "+a.method+" was invalid: "+err.Message)
		}
	}
	c.mu.Lock()
	c.token = ""
	c.parked = time.Time{}
	c.r = r
	c.caps = req.caps
	finished := c.finished
	outcome, outErr := c.outcome, c.outcomeE
	if finished {
		c.r = nil
	}
	c.mu.Unlock()
	if finished {
		s.forget(c)
		if outErr != nil {
			r.done(errorMsg(r.id, outErr.code, outErr.message, outErr.data))
		} else {
			r.done(core.AppendResult(nil, r.id, withResultType(outcome)))
		}
		s.inflight.Done()
		return
	}
	s.flushInputs(c)
}
