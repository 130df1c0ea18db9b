package gateway

import (
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// startFunc starts a call's host call.
type startFunc func(opts core.CallOptions, done host.DoneFunc) (uint64, *core.Error)

// route finds what a call goes to: the host's tool, or a server's prompt,
// resource or completion; nil and the front's error message when nothing
// answers to the name.
func (s *Server) route(c *call, req *request) (startFunc, []byte) {
	id := req.m.ID
	switch req.m.Method {
	case "tools/call":
		name := str2(req.params["name"])
		if name == "" {
			return nil, errorMsg(id, core.CodeInvalidParams, "invalid params: tools/call needs a tool name", nil)
		}
		args := req.params["arguments"]
		if len(args) > 0 && args[0] != '{' {
			if string(args) != "null" {
				return nil, errorMsg(id, core.CodeInvalidParams, "invalid params: arguments must be an object", nil)
			}
			args = nil
		}
		t, ok := s.toolTarget(name)
		if !ok {
			t = toolTarget{hostName: name}
		}
		c.server = t.server
		if s.perSession[t.server] && t.original != "" {
			// The session's own instance: the shared host's list said
			// what may be called (filters, pins); the call goes there.
			params := map[string]jsonx.RawMessage{"name": raw(t.original)}
			if args != nil {
				params["arguments"] = args
			}
			return s.serverCall(c, t.server, "tools/call", raw(params))
		}
		c.h = s.h
		return func(opts core.CallOptions, done host.DoneFunc) (uint64, *core.Error) {
			return s.h.CallTool(t.hostName, args, opts, done)
		}, nil
	case "prompts/get":
		name := str2(req.params["name"])
		t, ok := s.promptTarget(name)
		if !ok {
			return nil, errorMsg(id, core.CodeInvalidParams, "invalid params: no prompt named "+quote(name), nil)
		}
		params := map[string]jsonx.RawMessage{"name": raw(t.name)}
		if a, ok := req.params["arguments"]; ok {
			params["arguments"] = a
		}
		return s.serverCall(c, t.server, "prompts/get", raw(params))
	case "resources/read":
		uri := str2(req.params["uri"])
		t, ok := s.resolveURI(uri)
		if !ok {
			return nil, errorMsg(id, codeNoResource, "resource not found: "+quote(uri), raw(map[string]string{"uri": uri}))
		}
		return s.serverCall(c, t.server, "resources/read", raw(map[string]string{"uri": t.name}))
	default: // completion/complete
		var ref map[string]jsonx.RawMessage
		_ = jsonx.Unmarshal(req.params["ref"], &ref)
		var t target
		var ok bool
		switch str2(ref["type"]) {
		case "ref/prompt":
			t, ok = s.promptTarget(str2(ref["name"]))
			ref["name"] = raw(t.name)
		case "ref/resource":
			t, ok = s.templateTarget(str2(ref["uri"]))
			ref["uri"] = raw(t.name)
		}
		if !ok {
			return nil, errorMsg(id, core.CodeInvalidParams, "invalid params: the completion's ref names no prompt or resource template of this gateway", nil)
		}
		params := map[string]jsonx.RawMessage{"ref": raw(ref)}
		for k, v := range req.params {
			if k != "ref" && k != "_meta" {
				params[k] = v
			}
		}
		return s.serverCall(c, t.server, "completion/complete", raw(params))
	}
}

// serverCall starts method on server, on the host that serves it for the
// call's session.
func (s *Server) serverCall(c *call, server, method string, params []byte) (startFunc, []byte) {
	c.server = server
	h, err := s.hostFor(c.sess, server)
	if err != nil {
		code, msg, data := frontError(err.Status, err.JSON())
		return nil, errorMsg([]byte(c.key), code, msg, data)
	}
	c.h = h
	return func(opts core.CallOptions, done host.DoneFunc) (uint64, *core.Error) {
		return h.Call(server, method, params, opts, done)
	}, nil
}

// lookupName finds name in the table table reads (under s.mu), listing
// first when the front never listed that kind (table nil).
func lookupName[T any](s *Server, name string, table func(*nameTable) map[string]T, list func() ([]jsonx.RawMessage, *core.Error)) (T, bool) {
	s.mu.Lock()
	m := table(s.names)
	s.mu.Unlock()
	if m == nil {
		if _, err := list(); err != nil {
			var zero T
			return zero, false
		}
		s.mu.Lock()
		m = table(s.names)
		s.mu.Unlock()
	}
	t, ok := m[name]
	return t, ok
}

func (s *Server) toolTarget(name string) (toolTarget, bool) {
	return lookupName(s, name, func(n *nameTable) map[string]toolTarget { return n.tools }, s.listTools)
}

func (s *Server) promptTarget(name string) (target, bool) {
	return lookupName(s, name, func(n *nameTable) map[string]target { return n.prompts }, s.listPrompts)
}

// templates are the exposed resource templates, listed when the front
// never listed them.
func (s *Server) templates() []templateTarget {
	s.mu.Lock()
	templates := s.names.templates
	s.mu.Unlock()
	if templates == nil {
		s.listTemplates()
		s.mu.Lock()
		templates = s.names.templates
		s.mu.Unlock()
	}
	return templates
}

func (s *Server) templateTarget(exposed string) (target, bool) {
	for _, t := range s.templates() {
		if t.exposed == exposed {
			return t.target, true
		}
	}
	return s.resolveURI(exposed)
}

// subscribe answers resources/subscribe and resources/unsubscribe: the
// server is subscribed once however many sessions asked, and unsubscribed
// when the last one leaves.
func (s *Server) subscribe(sess *Session, req *request, r *reply) {
	uri := str2(req.params["uri"])
	t, ok := s.resolveURI(uri)
	if !ok {
		r.done(errorMsg(req.m.ID, codeNoResource, "resource not found: "+quote(uri), raw(map[string]string{"uri": uri})))
		return
	}
	k := subKey{server: t.server, uri: t.name, own: s.perSession[t.server] && !sess.modern}
	if k.own {
		s.subscribeOwn(sess, req, uri, k, r)
		return
	}
	if req.m.Method == "resources/unsubscribe" {
		sess.mu.Lock()
		_, had := sess.subs[uri]
		delete(sess.subs, uri)
		sess.mu.Unlock()
		if had {
			s.unsubscribe(k)
		}
		r.done(core.AppendResult(nil, req.m.ID, s.emptyResult(req)))
		return
	}
	sess.mu.Lock()
	_, had := sess.subs[uri]
	sess.subs[uri] = k
	sess.mu.Unlock()
	if had {
		r.done(core.AppendResult(nil, req.m.ID, s.emptyResult(req)))
		return
	}
	if err := s.subscribeShared(k); err != nil {
		sess.mu.Lock()
		delete(sess.subs, uri)
		sess.mu.Unlock()
		code, msg, data := frontError(err.Status, err.JSON())
		r.done(errorMsg(req.m.ID, code, msg, data))
		return
	}
	r.done(core.AppendResult(nil, req.m.ID, s.emptyResult(req)))
}

// subscribeShared counts one more front subscribed to k, subscribing
// upstream for the first; a failed upstream subscription counts none.
func (s *Server) subscribeShared(k subKey) *core.Error {
	s.mu.Lock()
	s.subs[k]++
	first := s.subs[k] == 1
	s.mu.Unlock()
	if !first {
		return nil
	}
	if _, err := s.h.CallSync(k.server, "resources/subscribe", raw(map[string]string{"uri": k.uri}), core.CallOptions{}); err != nil {
		s.mu.Lock()
		s.subs[k]--
		if s.subs[k] <= 0 {
			delete(s.subs, k)
		}
		s.mu.Unlock()
		return err
	}
	return nil
}

// subscribeOwn (un)subscribes on the session's own instance of a
// per_session server: nothing shared to count.
func (s *Server) subscribeOwn(sess *Session, req *request, uri string, k subKey, r *reply) {
	h, err := s.sessionHost(sess)
	if err == nil {
		_, err = h.CallSync(k.server, req.m.Method, raw(map[string]string{"uri": k.uri}), core.CallOptions{WaitReady: true})
	}
	if err != nil {
		code, msg, data := frontError(err.Status, err.JSON())
		r.done(errorMsg(req.m.ID, code, msg, data))
		return
	}
	sess.mu.Lock()
	if req.m.Method == "resources/unsubscribe" {
		delete(sess.subs, uri)
	} else {
		sess.subs[uri] = k
	}
	sess.mu.Unlock()
	r.done(core.AppendResult(nil, req.m.ID, s.emptyResult(req)))
}

func (s *Server) unsubscribe(k subKey) {
	if k.own {
		return // the session's own server goes with it
	}
	s.mu.Lock()
	s.subs[k]--
	last := s.subs[k] <= 0
	if last {
		delete(s.subs, k)
	}
	s.mu.Unlock()
	if last {
		_, _ = s.h.Call(k.server, "resources/unsubscribe", raw(map[string]string{"uri": k.uri}), core.CallOptions{}, func(uint64, core.Status, []byte) {})
	}
}
