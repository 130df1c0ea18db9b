package gateway

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// What the gateway is, as initialize and server/discover say it.
const (
	modernVersion   = "2026-07-28"
	metaVersion     = "io.modelcontextprotocol/protocolVersion"
	metaCaps        = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo  = "io.modelcontextprotocol/serverInfo"
	metaLogLevel    = "io.modelcontextprotocol/logLevel"
	codeUnsupported = -32022 // 2026-07-28: unsupported protocol version
	codeNoResource  = -32002
)

// kind of a front message, for the HTTP front's status line.
type msgKind int

const (
	kindInvalid msgKind = iota
	kindRequest
	kindNotification
	kindResponse
)

// handle takes one message from a front session; a request's answer
// goes through r. It returns what the message was.
func (s *Server) handle(sess *Session, data []byte, r *reply) msgKind {
	sess.touch()
	if b := core.FirstByte(data); b == '[' {
		return s.handleBatch(sess, data, r)
	}
	m, err := core.DecodeMessage(data)
	if err != nil {
		r.done(core.AppendErrorResponse(nil, nil, core.CodeParseError, "parse error: the message is not one JSON object", nil))
		return kindInvalid
	}
	if m.Invalid != "" {
		id := m.ID
		if len(id) > 0 && (id[0] == '{' || id[0] == '[' || id[0] == 't' || id[0] == 'f') {
			id = nil
		}
		r.done(core.AppendErrorResponse(nil, id, core.CodeInvalidRequest, "invalid request: "+m.Invalid, nil))
		return kindInvalid
	}
	switch {
	case m.IsResponse():
		s.onFrontResponse(sess, &m)
		return kindResponse
	case m.IsNotification():
		s.onFrontNotification(sess, &m)
		return kindNotification
	}
	r.id = m.ID
	s.onFrontRequest(sess, &m, r)
	return kindRequest
}

// batchVersion is the one revision with JSON-RPC batches.
const batchVersion = "2025-03-26"

// handleBatch serves a batch for a session that negotiated 2025-03-26,
// answering with one array of the responses once all are in; any other
// session gets an error (the revisions since removed batches).
func (s *Server) handleBatch(sess *Session, data []byte, r *reply) msgKind {
	sess.mu.Lock()
	version := sess.version
	sess.mu.Unlock()
	if version != batchVersion {
		r.done(core.AppendErrorResponse(nil, nil, core.CodeInvalidRequest, "JSON-RPC batches are not accepted in this session: only 2025-03-26 has them (the revisions since removed them); send one message at a time", nil))
		return kindInvalid
	}
	elems, err := core.SplitBatch(data)
	if err != nil || len(elems) == 0 {
		r.done(core.AppendErrorResponse(nil, nil, core.CodeInvalidRequest, "the batch must be a non-empty JSON array of messages", nil))
		return kindInvalid
	}
	var mu sync.Mutex
	var out [][]byte
	expected, got := -1, 0
	flush := func() {
		// mu is held; the array goes out once every answer is in.
		if expected < 0 || got < expected {
			return
		}
		expected = -2 // sent
		if len(out) == 0 {
			r.done(nil)
			return
		}
		buf := []byte{'['}
		for i, m := range out {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, m...)
		}
		r.done(append(buf, ']'))
	}
	collect := func(msg []byte) {
		mu.Lock()
		defer mu.Unlock()
		got++
		if msg != nil {
			out = append(out, msg)
		}
		flush()
	}
	answers := 0
	for _, elem := range elems {
		er := &reply{related: r.related, done: collect}
		if core.FirstByte(elem) == '[' {
			answers++
			collect(core.AppendErrorResponse(nil, nil, core.CodeInvalidRequest, "a batch cannot hold a batch", nil))
			continue
		}
		switch s.handle(sess, elem, er) {
		case kindRequest, kindInvalid:
			answers++
		}
	}
	mu.Lock()
	expected = answers
	flush()
	mu.Unlock()
	if answers == 0 {
		return kindNotification
	}
	return kindRequest
}

// request is a front request being served.
type request struct {
	m      *core.Message
	params map[string]jsonx.RawMessage
	meta   map[string]jsonx.RawMessage
	modern bool
	caps   clientCaps
	level  int // 2026-07-28: the logs the request asked for (index in logLevels); -1: none
}

func (s *Server) onFrontRequest(sess *Session, m *core.Message, r *reply) {
	req := &request{m: m, level: -1}
	if len(m.Params) > 0 {
		if m.Params[0] != '{' || jsonx.Unmarshal(m.Params, &req.params) != nil {
			r.done(errorMsg(m.ID, core.CodeInvalidParams, "invalid params: "+m.Method+" takes a JSON object", nil))
			return
		}
		if raw, ok := req.params["_meta"]; ok && jsonx.Unmarshal(raw, &req.meta) != nil {
			r.done(errorMsg(m.ID, core.CodeInvalidParams, "invalid params: _meta must be an object", nil))
			return
		}
	}
	if v, ok := req.meta[metaVersion]; ok {
		var version string
		_ = jsonx.Unmarshal(v, &version)
		if version != modernVersion {
			r.done(errorMsg(m.ID, codeUnsupported, "unsupported protocol version "+quote(version), raw(map[string]any{"supported": []string{modernVersion}, "requested": version})))
			return
		}
		req.modern = true
		req.caps = parseCaps(req.meta[metaCaps])
		if v, ok := req.meta[metaLogLevel]; ok {
			if req.level = slices.Index(logLevels, str2(v)); req.level < 0 {
				r.done(errorMsg(m.ID, core.CodeInvalidParams, "invalid params: _meta "+quote(metaLogLevel)+" must be one of "+strings.Join(logLevels, ", "), nil))
				return
			}
		}
	} else if m.Method == "server/discover" {
		req.modern = true
	}
	sess.mu.Lock()
	initialized, caps := sess.initialized || sess.version != "", sess.caps
	sess.mu.Unlock()
	if !req.modern {
		req.caps = caps
		switch m.Method {
		case "initialize", "ping":
		default:
			if !initialized {
				r.done(errorMsg(m.ID, core.CodeInvalidRequest, "the session is not initialized: send initialize first (or, in the 2026-07-28 era, "+metaVersion+" in _meta)", nil))
				return
			}
		}
	}
	s.inflight.Add(1)
	served := false
	defer func() {
		if !served {
			s.inflight.Done()
		}
	}()
	done := r.done
	r.done = func(msg []byte) {
		done(msg)
	}
	switch m.Method {
	case "initialize":
		s.initialize(sess, req, r)
	case "server/discover":
		r.done(core.AppendResult(nil, m.ID, s.discoverResult()))
	case "ping":
		r.done(core.AppendResult(nil, m.ID, s.emptyResult(req)))
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
		served = true
		go func() {
			defer s.inflight.Done()
			s.list(req, r)
		}()
	case "tools/call", "prompts/get", "resources/read", "completion/complete":
		served = true
		s.startCall(sess, req, r)
	case "logging/setLevel":
		s.setLevel(sess, req, r)
	case methodListen:
		if !req.modern {
			r.done(errorMsg(m.ID, core.CodeMethodNotFound, "method not found: subscriptions/listen is of the 2026-07-28 era; this session uses the GET stream and resources/subscribe", nil))
			break
		}
		s.listen(sess, req, r)
	case "resources/subscribe", "resources/unsubscribe":
		served = true
		go func() {
			defer s.inflight.Done()
			s.subscribe(sess, req, r)
		}()
	default:
		r.done(errorMsg(m.ID, core.CodeMethodNotFound, "method not found: "+quote(m.Method), nil))
	}
}

// emptyResult is {} (2026-07-28: with resultType).
func (s *Server) emptyResult(req *request) []byte {
	if req.modern {
		return []byte(`{"resultType":"complete"}`)
	}
	return []byte("{}")
}

func (s *Server) serverInfo() map[string]any {
	info := map[string]any{"name": s.opts.Name, "version": s.opts.Version}
	if s.opts.Version == "" {
		info["version"] = "0"
	}
	return info
}

func (s *Server) capabilities() map[string]any {
	return map[string]any{
		"tools":       map[string]any{"listChanged": true},
		"prompts":     map[string]any{"listChanged": true},
		"resources":   map[string]any{"listChanged": true, "subscribe": true},
		"completions": map[string]any{},
		"logging":     map[string]any{},
	}
}

// initialize negotiates the initialize era: the front's version when this
// library speaks it, else the newest it speaks.
func (s *Server) initialize(sess *Session, req *request, r *reply) {
	var asked string
	_ = jsonx.Unmarshal(req.params["protocolVersion"], &asked)
	if asked == "" {
		r.done(errorMsg(req.m.ID, core.CodeInvalidParams, "invalid params: initialize needs protocolVersion", nil))
		return
	}
	version := core.LegacyVersions[0]
	if slices.Contains(core.LegacyVersions, asked) {
		version = asked
	}
	var caps struct {
		Capabilities jsonx.RawMessage `json:"capabilities"`
	}
	caps.Capabilities = req.params["capabilities"]
	sess.mu.Lock()
	sess.version = version
	sess.caps = parseLegacyCaps(caps.Capabilities, version)
	sess.mu.Unlock()
	res := map[string]any{"protocolVersion": version, "capabilities": s.capabilities(), "serverInfo": s.serverInfo()}
	if s.opts.Instructions != "" {
		res["instructions"] = s.opts.Instructions
	}
	r.done(core.AppendResult(nil, req.m.ID, raw(res)))
}

func (s *Server) discoverResult() []byte {
	res := map[string]any{
		"resultType":        "complete",
		"supportedVersions": append([]string{modernVersion}, core.LegacyVersions...),
		"capabilities":      s.capabilities(),
		"serverInfo":        s.serverInfo(),
		"_meta":             map[string]any{metaServerInfo: s.serverInfo()},
		"ttlMs":             0, // stale at once, as the lists: a gateway restarted with other options says otherwise
		"cacheScope":        cacheScope,
	}
	if s.opts.Instructions != "" {
		res["instructions"] = s.opts.Instructions
	}
	return raw(res)
}

// parseLegacyCaps reads initialize's client capabilities. Before
// 2025-11-25 elicitation had no modes: an elicitation capability means
// form.
func parseLegacyCaps(rawCaps []byte, version string) clientCaps {
	return parseCaps(rawCaps)
}

func parseCaps(rawCaps []byte) clientCaps {
	var c struct {
		Sampling    jsonx.RawMessage `json:"sampling"`
		Roots       jsonx.RawMessage `json:"roots"`
		Elicitation *struct {
			Form jsonx.RawMessage `json:"form"`
			URL  jsonx.RawMessage `json:"url"`
		} `json:"elicitation"`
	}
	if len(rawCaps) == 0 || jsonx.Unmarshal(rawCaps, &c) != nil {
		return clientCaps{}
	}
	out := clientCaps{sampling: present(c.Sampling), roots: present(c.Roots)}
	if c.Elicitation != nil {
		out.elicitURL = present(c.Elicitation.URL)
		// {} alone means form (the spec's backwards compatibility).
		out.elicitForm = present(c.Elicitation.Form) || !out.elicitURL
	}
	return out
}

func present(v []byte) bool { return len(v) > 0 && string(v) != "null" }

// setLevel records the session's log level and asks the servers for the
// lowest level any session wants.
func (s *Server) setLevel(sess *Session, req *request, r *reply) {
	var level string
	_ = jsonx.Unmarshal(req.params["level"], &level)
	n := slices.Index(logLevels, level)
	if n < 0 {
		r.done(errorMsg(req.m.ID, core.CodeInvalidParams, "invalid params: level must be one of debug, info, notice, warning, error, critical, alert, emergency", nil))
		return
	}
	sess.mu.Lock()
	sess.level = n
	sess.mu.Unlock()
	s.forwardLevel(false)
	r.done(core.AppendResult(nil, req.m.ID, s.emptyResult(req)))
}

var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// forwardLevel asks every ready server for the lowest level a session
// or a 2026-07-28 request wants (each then gets only what it asked for).
// With wait it returns once the servers answered (bounded): a request
// that asked for logs goes out after the level it needs is set.
func (s *Server) forwardLevel(wait bool) {
	s.mu.Lock()
	lowest := s.modernLevel
	for _, sess := range s.sessions {
		sess.mu.Lock()
		if sess.level >= 0 && (lowest < 0 || sess.level < lowest) {
			lowest = sess.level
		}
		sess.mu.Unlock()
	}
	if lowest < 0 || s.level == logLevels[lowest] {
		s.mu.Unlock()
		return
	}
	s.level = logLevels[lowest]
	s.mu.Unlock()
	params := raw(map[string]string{"level": logLevels[lowest]})
	var answered sync.WaitGroup
	for _, name := range s.readyServers() {
		answered.Add(1)
		if _, err := s.h.Call(name, "logging/setLevel", params, core.CallOptions{}, func(uint64, core.Status, []byte) { answered.Done() }); err != nil {
			answered.Done()
		}
	}
	if wait {
		waitBounded(&answered, setLevelWait)
	}
}

// setLevelWait bounds forwardLevel's wait for the servers' answers.
const setLevelWait = 5 * time.Second

// onFrontNotification: cancellation, initialized, the rest ignored.
func (s *Server) onFrontNotification(sess *Session, m *core.Message) {
	switch m.Method {
	case "notifications/initialized":
		sess.mu.Lock()
		sess.initialized = true
		sess.mu.Unlock()
	case "notifications/cancelled":
		var p struct {
			RequestID jsonx.RawMessage `json:"requestId"`
		}
		if jsonx.Unmarshal(m.Params, &p) != nil || len(p.RequestID) == 0 {
			return
		}
		sess.mu.Lock()
		c := sess.calls[string(p.RequestID)]
		l := sess.listens[string(p.RequestID)]
		sess.mu.Unlock()
		if c != nil {
			s.cancel(c)
		}
		if l != nil {
			s.endListen(l)
		}
	}
}

// onFrontResponse is a front's answer to a server request it was asked.
func (s *Server) onFrontResponse(sess *Session, m *core.Message) {
	id, ok := jsonx.Integer(m.ID)
	if !ok {
		return
	}
	sess.mu.Lock()
	a := sess.out[id]
	delete(sess.out, id)
	sess.mu.Unlock()
	if a == nil {
		return
	}
	if m.HasError {
		code, msg, data := core.ErrorObject(m.Error)
		_ = a.h.Respond(a.hostReq, core.StatusProtocol, raw(map[string]any{"code": code, "message": msg, "data": jsonx.RawMessage(orNull(data))}))
		return
	}
	if err := a.h.Respond(a.hostReq, core.StatusOK, m.Result); err != nil && err.Status == core.StatusInvalidArgument {
		s.logToSession(sess, "warning", "the answer to "+a.method+" was refused: "+err.Message)
	}
}

// errorMsg is an error response.
func errorMsg(id []byte, code int64, message string, data []byte) []byte {
	return core.AppendErrorResponse(nil, id, code, message, data)
}

func orNull(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}

func quote(s string) string { return string(jsonx.AppendString(nil, s)) }

func nowNano() int64 { return time.Now().UnixNano() }
