package gateway

import (
	"crypto/rand"
	"encoding/hex"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// Server serves one host.Host as one MCP server to any number of front
// sessions, over stdio (ServeStream) or Streamable HTTP (ServeHTTP). It
// takes the host's event and app-request handlers: every server's events
// and requests go to the front sessions they concern.
type Server struct {
	h    *host.Host
	opts *Options

	mu          sync.Mutex
	sessions    map[string]*Session
	calls       map[*call]struct{}     // in flight
	parked      map[string]*call       // 2026-07-28 calls waiting for inputResponses, by requestState
	subs        map[subKey]int         // resources/subscribe upstream, by sessions subscribed
	names       *nameTable             // the last lists' exposed names
	listeners   map[*listener]struct{} // open 2026-07-28 listens
	perSession  map[string]bool        // servers each front session gets its own instance of
	restarting  map[string]bool        // servers gone from the lists until their restart is ready
	subs2       sync.WaitGroup         // session hosts being closed
	level       string                 // the log level asked upstream
	fwdMu       sync.Mutex
	fwd         forwarder // the application's handler of the host's events (forward.go)
	fwdReleased bool
	modernLevel int // the lowest level a 2026-07-28 request asked for; -1: none
	started     bool
	stopping    bool
	finishing   bool          // finish has begun: done closes once it ends
	done        chan struct{} // closed once serving ended
	endErr      *core.Error
	inflight    sync.WaitGroup // front requests being answered

	stopFront func()          // ends the front (closes the listener or the input)
	onFinish  func()          // the front's last teardown (the HTTP server's connections)
	onClosed  func(*Session)  // the front forgets a closed session's streams
	flushed   <-chan struct{} // stdio: closed once the output is written
	janitor   *time.Ticker
}

// subKey is one upstream resource subscription; own: on a session's own
// instance of a per_session server (not shared, not counted).
type subKey struct {
	server, uri string
	own         bool
}

// New makes a Server over h. It installs the gateway's handlers on h
// (replacing the application's).
func New(h *host.Host, opts *Options) (*Server, *core.Error) {
	if opts == nil {
		opts, _ = ParseOptions(nil)
	}
	s := &Server{h: h, opts: opts, modernLevel: -1, sessions: map[string]*Session{}, calls: map[*call]struct{}{}, parked: map[string]*call{},
		subs: map[subKey]int{}, names: &nameTable{}, done: make(chan struct{})}
	s.listeners = map[*listener]struct{}{}
	s.perSession = map[string]bool{}
	for _, name := range h.PerSessionServers() {
		s.perSession[name] = true
	}
	if err := h.SetEventHandler(s.eventsFrom(h, nil), s.eventsReleased); err != nil {
		return nil, err
	}
	if err := h.SetAppRequestHandler(s.requestsFrom(h, nil), nil); err != nil {
		return nil, err
	}
	return s, nil
}

// Done is closed when serving has ended.
func (s *Server) Done() <-chan struct{} { return s.done }

// Err is why serving ended (nil: the front closed or Stop).
func (s *Server) Err() *core.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endErr
}

// begin marks the server as serving; a server serves once.
func (s *Server) begin(stop func()) *core.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return core.Errorf(core.StatusInvalidState, "this server is already serving (a server handle serves once)")
	}
	s.started, s.stopFront = true, stop
	s.janitor = time.NewTicker(janitorPeriod(s.opts.SessionIdle))
	go s.sweep(s.janitor)
	return nil
}

func janitorPeriod(idle time.Duration) time.Duration {
	p := idle / 4
	if p < 10*time.Millisecond {
		p = 10 * time.Millisecond
	}
	if p > time.Minute {
		p = time.Minute
	}
	return p
}

// Stop ends serving: no new front message is taken, calls under way get
// up to timeout to finish, then every session is closed and the calls
// left are cancelled. It returns once serving has ended, or StatusTimeout.
func (s *Server) Stop(timeout time.Duration) *core.Error {
	if timeout < 0 {
		timeout = s.opts.StopTimeout
	}
	s.mu.Lock()
	if !s.started {
		s.started = true
		s.mu.Unlock()
		s.finish(nil)
		return nil
	}
	first := !s.stopping
	s.stopping = true
	stop := s.stopFront
	s.mu.Unlock()
	if first {
		go func() {
			if stop != nil {
				stop()
			}
			drained := make(chan struct{})
			go func() { s.inflight.Wait(); close(drained) }()
			select {
			case <-drained:
			case <-time.After(timeout):
			}
			s.finish(nil)
		}()
	}
	select {
	case <-s.done:
		return nil
	case <-time.After(timeout + 2*time.Second):
		return core.Errorf(core.StatusTimeout, "the gateway did not stop within %d ms", timeout.Milliseconds())
	}
}

// finish ends serving once: every session closes, calls left are
// cancelled upstream.
func (s *Server) finish(err *core.Error) {
	s.mu.Lock()
	if s.finishing {
		s.mu.Unlock()
		<-s.done
		return
	}
	s.finishing = true
	s.stopping = true
	s.endErr = err
	sessions := make([]*Session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	stop := s.stopFront
	s.stopFront = nil
	if s.janitor != nil {
		s.janitor.Stop()
	}
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	s.endAllListens()
	for _, sess := range sessions {
		s.closeSession(sess)
	}
	s.mu.Lock()
	parked := s.parked
	s.parked = map[string]*call{}
	s.mu.Unlock()
	for _, c := range parked {
		s.abandon(c)
	}
	waitBounded(&s.subs2, s.opts.StopTimeout) // the sessions' own servers are closed
	s.mu.Lock()
	onFinish := s.onFinish
	s.mu.Unlock()
	if onFinish != nil {
		onFinish()
	}
	close(s.done)
}

// Wait blocks until serving ended or timeout (negative: no limit).
func (s *Server) Wait(timeout time.Duration) *core.Error {
	if timeout < 0 {
		<-s.done
		return s.Err()
	}
	select {
	case <-s.done: // ended wins over a timeout that passed too
		return s.Err()
	default:
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-s.done:
		return s.Err()
	case <-t.C:
		return core.Errorf(core.StatusTimeout, "the gateway is still serving after %d ms", timeout.Milliseconds())
	}
}

// Release drops the gateway's handlers from the host, so the application
// may install its own again. The server must have stopped.
func (s *Server) Release() {
	_ = s.h.SetEventHandler(nil, nil)
	_ = s.h.SetAppRequestHandler(nil, nil)
}

// transientSession is the session of one 2026-07-28 request over HTTP
// (that era has none): not registered, gone with its request.
func (s *Server) transientSession() *Session {
	return &Session{srv: s, calls: map[string]*call{}, listens: map[string]*listener{}, out: map[int64]*ask{}, subs: map[string]subKey{}, level: -1, modern: true}
}

// newSession registers a front session; nil when the gateway is full or
// stopping.
func (s *Server) newSession(standalone sink, connection bool) (*Session, *core.Error) {
	sess := s.transientSession()
	sess.id, sess.standalone, sess.modern, sess.connection = newToken(), standalone, false, connection
	sess.touch()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return nil, core.Errorf(core.StatusClosed, "the gateway is stopping")
	}
	if len(s.sessions) >= s.opts.MaxSessions {
		return nil, core.Errorf(core.StatusUnsupported, "the gateway has %d sessions open, its max_sessions", len(s.sessions))
	}
	s.sessions[sess.id] = sess
	return sess, nil
}

func (s *Server) session(id string) *Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

// closeSession ends a session: its calls are cancelled upstream, the
// server requests waiting on it are refused, its subscriptions dropped.
func (s *Server) closeSession(sess *Session) {
	s.mu.Lock()
	if s.sessions[sess.id] == sess {
		delete(s.sessions, sess.id)
	}
	s.mu.Unlock()
	sess.mu.Lock()
	if sess.closed {
		sess.mu.Unlock()
		return
	}
	sess.closed = true
	calls := make([]*call, 0, len(sess.calls))
	for _, c := range sess.calls {
		calls = append(calls, c)
	}
	asks := make([]*ask, 0, len(sess.out))
	for _, a := range sess.out {
		asks = append(asks, a)
	}
	clear(sess.out)
	subs := make([]subKey, 0, len(sess.subs))
	for _, k := range sess.subs {
		subs = append(subs, k)
	}
	clear(sess.subs)
	listens := make([]*listener, 0, len(sess.listens))
	for _, l := range sess.listens {
		listens = append(listens, l)
	}
	standalone := sess.standalone
	sess.standalone = nil
	sess.mu.Unlock()
	for _, a := range asks {
		s.refuseAsk(a, "the front session that was asked closed")
	}
	for _, c := range calls {
		s.abandon(c)
	}
	for _, k := range subs {
		s.unsubscribe(k)
	}
	for _, l := range listens {
		s.endListen(l)
	}
	if standalone != nil {
		standalone.close()
	}
	sess.mu.Lock()
	sub := sess.sub
	sess.sub = nil
	sess.mu.Unlock()
	if sub != nil {
		s.subs2.Add(1)
		go func() {
			defer s.subs2.Done()
			_ = sub.Close(s.opts.StopTimeout)
			sub.Free()
		}()
	}
	s.mu.Lock()
	onClosed := s.onClosed
	s.mu.Unlock()
	if onClosed != nil {
		onClosed(sess)
	}
}

// Flushed waits (a bounded time) until a stdio front's output has been
// written out.
func (s *Server) Flushed() {
	s.mu.Lock()
	ch := s.flushed
	s.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-time.After(s.opts.StopTimeout):
	}
}

// sweep closes idle sessions and expired parked calls.
func (s *Server) sweep(t *time.Ticker) {
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		cutoff := time.Now().Add(-s.opts.SessionIdle)
		var idle []*Session
		var stale []*call
		s.mu.Lock()
		for _, sess := range s.sessions {
			if sess.idleSince(cutoff) {
				idle = append(idle, sess)
			}
		}
		for tok, c := range s.parked {
			if c.parkedAt().Before(cutoff) {
				delete(s.parked, tok)
				stale = append(stale, c)
			}
		}
		s.mu.Unlock()
		for _, sess := range idle {
			s.closeSession(sess)
		}
		for _, c := range stale {
			s.abandon(c)
		}
	}
}

// SessionCount is the number of open front sessions.
func (s *Server) SessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// sessionHost is the session's own host of the per_session servers,
// started on first use.
func (s *Server) sessionHost(sess *Session) (*host.Host, *core.Error) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.sub != nil || sess.subErr != nil {
		return sess.sub, sess.subErr
	}
	if sess.closed {
		return nil, core.Errorf(core.StatusClosed, "the front session closed")
	}
	names := make([]string, 0, len(s.perSession))
	for name := range s.perSession {
		names = append(names, name)
	}
	sort.Strings(names)
	sub, err := s.h.Subset(names)
	if err == nil {
		if err = sub.SetEventHandler(s.eventsFrom(sub, sess), nil); err == nil {
			if err = sub.SetAppRequestHandler(s.requestsFrom(sub, sess), nil); err == nil {
				err = sub.Connect()
			}
		}
		if err != nil {
			sub.Free()
			sub = nil
		}
	}
	sess.sub, sess.subErr = sub, err
	return sub, err
}

// hostFor is the host that serves server for a session: the session's
// own for a per_session server (a 2026-07-28 request over HTTP has no
// session, and gets the shared instance), else the shared one.
func (s *Server) hostFor(sess *Session, server string) (*host.Host, *core.Error) {
	if !s.perSession[server] || sess == nil || sess.modern {
		return s.h, nil
	}
	return s.sessionHost(sess)
}

// waitBounded waits for wg at most d.
func waitBounded(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// newToken is a 128-bit random token, hex: session ids and requestStates.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// raw marshals v for a payload.
func raw(v any) []byte { return jsonx.MustMarshal(v) }
