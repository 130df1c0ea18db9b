package gateway

import (
	"crypto/subtle"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// The HTTP front's bounds against slow clients (slow-loris): headers
// within readHeaderTimeout, a whole body within readBodyTimeout.
const (
	readHeaderTimeout = 10 * time.Second
	readBodyTimeout   = 30 * time.Second
	maxHeaderBytes    = 64 << 10
	sessionHeader     = "Mcp-Session-Id"
	metadataPath      = "/.well-known/oauth-protected-resource"
)

// httpFront is the Streamable HTTP front's state.
type httpFront struct {
	s        *Server
	ln       net.Listener
	srv      *http.Server
	base     string // http://host:port
	loopback bool   // bound to loopback: the Host header must name loopback too
	jwt      *jwtVerifier

	mu      sync.Mutex
	streams map[*Session]map[string]*sseStream
	nextSID int64
}

// ServeHTTP serves Streamable HTTP at /mcp on addr (host:port; port 0
// picks one) and returns the endpoint's URL once listening. It binds
// loopback unless told otherwise, and refuses any other address unless
// the options allow it and authenticate.
func (s *Server) ServeHTTP(addr string) (string, *core.Error) {
	hostPart, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", core.Errorf(core.StatusInvalidArgument, "addr %s is not host:port (%v)", quote(addr), err)
	}
	if hostPart == "" {
		hostPart = "127.0.0.1"
	}
	loopback := isLoopbackHost(hostPart)
	if !loopback {
		if !s.opts.AllowNonLoopback {
			return "", core.Errorf(core.StatusPolicyDenied, "addr %s is not loopback: set allow_non_loopback (and auth) to serve beyond this machine", quote(addr))
		}
		if s.opts.Auth == nil {
			return "", core.Errorf(core.StatusPolicyDenied, "addr %s is not loopback and the gateway has no auth: set auth.bearer_env or auth.jwks_url/issuer/audience", quote(addr))
		}
	}
	ln, lerr := net.Listen("tcp", net.JoinHostPort(hostPart, port))
	if lerr != nil {
		return "", core.Errorf(core.StatusTransport, "cannot listen on %s: %v", quote(addr), lerr)
	}
	f := &httpFront{s: s, ln: ln, loopback: loopback, streams: map[*Session]map[string]*sseStream{}}
	f.base = "http://" + ln.Addr().String()
	if a := s.opts.Auth; a != nil && a.JWKSURL != "" {
		f.jwt = newJWTVerifier(a)
	}
	f.srv = &http.Server{Handler: f, ReadHeaderTimeout: readHeaderTimeout, MaxHeaderBytes: maxHeaderBytes, IdleTimeout: 2 * time.Minute}
	if berr := s.begin(func() { _ = ln.Close() }); berr != nil {
		_ = ln.Close()
		return "", berr
	}
	s.mu.Lock()
	s.onFinish = func() { _ = f.srv.Close() }
	s.onClosed = f.forget
	s.mu.Unlock()
	go func() {
		err := f.srv.Serve(ln)
		if err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			s.finish(core.Errorf(core.StatusTransport, "the HTTP front stopped: %v", err))
		}
	}()
	return f.base + "/mcp", nil
}

func (f *httpFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !f.hostAllowed(r.Host) {
		http.Error(w, "the Host header names no address of this gateway", http.StatusMisdirectedRequest)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && !f.originAllowed(origin) {
		httpError(w, http.StatusForbidden, "the Origin "+quote(origin)+" is not allowed (allowed_origins)")
		return
	}
	switch r.URL.Path {
	case metadataPath, metadataPath + "/mcp":
		f.metadata(w)
		return
	case "/mcp":
	default:
		http.NotFound(w, r)
		return
	}
	if !f.authorized(w, r) {
		return
	}
	switch r.Method {
	case http.MethodPost:
		f.post(w, r)
	case http.MethodGet:
		f.get(w, r)
	case http.MethodDelete:
		f.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		httpError(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on /mcp")
	}
}

// hostAllowed: a loopback gateway answers only requests addressed to a
// loopback name (DNS rebinding).
func (f *httpFront) hostAllowed(hostHeader string) bool {
	if !f.loopback {
		return true
	}
	h := hostHeader
	if hp, _, err := net.SplitHostPort(hostHeader); err == nil {
		h = hp
	}
	return isLoopbackHost(h)
}

// originAllowed: a loopback origin, or one the options list.
func (f *httpFront) originAllowed(origin string) bool {
	for _, o := range f.s.opts.AllowedOrigins {
		if strings.EqualFold(o, origin) {
			return true
		}
	}
	return isLoopbackURL(origin)
}

func (f *httpFront) metadata(w http.ResponseWriter) {
	a := f.s.opts.Auth
	if a == nil || a.JWKSURL == "" {
		http.Error(w, "this gateway is not an OAuth resource server", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(raw(map[string]any{"resource": a.Audience, "authorization_servers": []string{a.Issuer}, "bearer_methods_supported": []string{"header"}}))
}

// authorized checks the bearer token; a refusal is 401 with
// WWW-Authenticate naming the resource metadata.
func (f *httpFront) authorized(w http.ResponseWriter, r *http.Request) bool {
	a := f.s.opts.Auth
	if a == nil {
		return true
	}
	token, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	var why string
	switch {
	case !found || token == "":
		why = ""
	case a.token != "":
		if subtle.ConstantTimeCompare([]byte(token), []byte(a.token)) == 1 {
			return true
		}
		why = "the token is not valid"
	default:
		err := f.jwt.verify(token)
		if err == nil {
			return true
		}
		why = err.Error()
	}
	challenge := `Bearer`
	if a.JWKSURL != "" {
		challenge += ` resource_metadata="` + f.base + metadataPath + `"`
	}
	if why != "" {
		challenge += `, error="invalid_token", error_description=` + strconv.Quote(why)
	}
	w.Header().Set("WWW-Authenticate", challenge)
	msg := "authentication required: send Authorization: Bearer <token>"
	if why != "" {
		msg = "the bearer token was refused: " + why
	}
	httpError(w, http.StatusUnauthorized, msg)
	return false
}

// httpError answers with a JSON-RPC error body (id null).
func httpError(w http.ResponseWriter, status int, message string) {
	code := int64(core.CodeInvalidRequest)
	if status >= 500 {
		code = core.CodeInternal
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorMsg(nil, code, message, nil))
}

// relatedMethods answer with an SSE stream when the front accepts one:
// their server may send progress and requests before the result.
var relatedMethods = map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true, "completion/complete": true, methodListen: true}

func (f *httpFront) post(w http.ResponseWriter, r *http.Request) {
	// Stop waits for the response written, not only for the call's end.
	f.s.inflight.Add(1)
	defer f.s.inflight.Done()
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		httpError(w, http.StatusUnsupportedMediaType, "the body must be application/json")
		return
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(readBodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, f.s.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpError(w, http.StatusRequestEntityTooLarge, "the body is longer than the gateway's max_body_bytes ("+itoa(f.s.opts.MaxBodyBytes)+" bytes)")
			return
		}
		httpError(w, http.StatusBadRequest, "the body could not be read in time")
		return
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	m, derr := core.DecodeMessage(body)
	modern := r.Header.Get("Mcp-Protocol-Version") == modernVersion
	if derr == nil && m.Method != "" {
		var p struct {
			Meta map[string]jsonx.RawMessage `json:"_meta"`
		}
		_ = jsonx.Unmarshal(m.Params, &p)
		if _, ok := p.Meta[metaVersion]; ok || m.Method == "server/discover" {
			modern = true
		}
	}
	var sess *Session
	sid := r.Header.Get(sessionHeader)
	switch {
	case modern && sid == "":
		sess = f.s.transientSession()
	case sid != "":
		sess = f.s.session(sid)
		if sess == nil {
			httpError(w, http.StatusNotFound, "no session "+quote(sid)+": it expired or was deleted; initialize again")
			return
		}
	case derr == nil && m.Method == "initialize":
		var serr *core.Error
		sess, serr = f.s.newSession(nil, false)
		if serr != nil {
			httpError(w, http.StatusServiceUnavailable, serr.Message)
			return
		}
		w.Header().Set(sessionHeader, sess.id)
	default:
		if derr != nil || m.Invalid != "" || core.FirstByte(body) == '[' {
			break // the dispatcher names what is wrong with it
		}
		httpError(w, http.StatusBadRequest, "the request has no "+sessionHeader+" header: send initialize first (or use the 2026-07-28 era)")
		return
	}
	if sess == nil {
		sess = f.s.transientSession()
	}
	sess.streamCount.Add(1)
	defer sess.streamCount.Add(-1)
	useSSE := derr == nil && relatedMethods[m.Method] && strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	if useSSE {
		f.postSSE(w, r, sess, body, m.ID, modern)
		return
	}
	result := make(chan []byte, 1)
	kind := f.s.handle(sess, body, &reply{done: func(msg []byte) { result <- msg }})
	if kind == kindNotification || kind == kindResponse {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	select {
	case msg := <-result:
		if msg == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		status := http.StatusOK
		if kind == kindInvalid {
			status = http.StatusBadRequest
		}
		w.WriteHeader(status)
		_, _ = w.Write(msg)
	case <-r.Context().Done():
		f.frontGone(sess, m.ID)
	}
}

// postSSE answers a request with an SSE stream that carries its
// progress, the server's requests, then the response.
func (f *httpFront) postSSE(w http.ResponseWriter, r *http.Request, sess *Session, body, id []byte, modern bool) {
	st := f.newStream(sess)
	if !modern {
		st.orphaned = func() { f.frontGone(sess, id) }
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	f.s.handle(sess, body, &reply{related: st, done: st.final})
	if st.serve(w, r.Context().Done(), 0) {
		f.dropStream(sess, st)
		return
	}
	if modern {
		// 2026-07-28: closing the stream is how an HTTP client cancels.
		f.frontGone(sess, id)
		f.dropStream(sess, st)
	}
}

// frontGone: the front stopped waiting for request id; its call is
// cancelled upstream.
func (f *httpFront) frontGone(sess *Session, id []byte) {
	sess.mu.Lock()
	c := sess.calls[string(id)]
	l := sess.listens[string(id)]
	sess.mu.Unlock()
	if c != nil {
		f.s.abandon(c)
	}
	if l != nil {
		f.s.endListen(l)
	}
}

func (f *httpFront) newStream(sess *Session) *sseStream {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextSID++
	st := newStream(sess, "s"+itoa(f.nextSID))
	if sess.id != "" {
		m := f.streams[sess]
		if m == nil {
			m = map[string]*sseStream{}
			f.streams[sess] = m
		}
		m[st.id] = st
	}
	return st
}

func (f *httpFront) dropStream(sess *Session, st *sseStream) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m := f.streams[sess]; m != nil {
		delete(m, st.id)
		if len(m) == 0 {
			delete(f.streams, sess)
		}
	}
}

func (f *httpFront) stream(sess *Session, id string) *sseStream {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.streams[sess][id]
}

// get opens the session's standalone stream, or resumes a stream after
// Last-Event-ID.
func (f *httpFront) get(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		httpError(w, http.StatusNotAcceptable, "GET /mcp is an SSE stream: Accept text/event-stream")
		return
	}
	sess := f.s.session(r.Header.Get(sessionHeader))
	if sess == nil {
		httpError(w, http.StatusNotFound, "no such session: send initialize first")
		return
	}
	sess.touch()
	sess.streamCount.Add(1)
	defer sess.streamCount.Add(-1)
	st, after := (*sseStream)(nil), 0
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		sid, seq, ok := parseEventID(last)
		if ok {
			st = f.stream(sess, sid)
			after = seq
		}
		if st == nil {
			httpError(w, http.StatusNotFound, "no stream to resume after event "+quote(last))
			return
		}
	} else {
		sess.mu.Lock()
		cur, _ := sess.standalone.(*sseStream)
		sess.mu.Unlock()
		if cur != nil {
			st = cur // one standalone stream: a new GET takes it over
		} else {
			st = f.newStream(sess)
			sess.mu.Lock()
			sess.standalone = st
			sess.mu.Unlock()
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	if after == 0 && st == sess.standaloneStream() {
		st.mu.Lock()
		after = st.base + len(st.events) // a fresh GET hears what comes from now on
		st.mu.Unlock()
	}
	if st.serve(w, r.Context().Done(), after) {
		f.dropStream(sess, st)
	}
}

func (sess *Session) standaloneStream() *sseStream {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	st, _ := sess.standalone.(*sseStream)
	return st
}

// forget drops a closed session's streams (ending them).
func (f *httpFront) forget(sess *Session) {
	f.mu.Lock()
	streams := f.streams[sess]
	delete(f.streams, sess)
	f.mu.Unlock()
	for _, st := range streams {
		st.close()
	}
}

// delete ends a session at the front's request.
func (f *httpFront) delete(w http.ResponseWriter, r *http.Request) {
	sess := f.s.session(r.Header.Get(sessionHeader))
	if sess == nil {
		httpError(w, http.StatusNotFound, "no such session")
		return
	}
	f.s.closeSession(sess)
	w.WriteHeader(http.StatusNoContent)
}
