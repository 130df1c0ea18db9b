package gateway

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
)

// Session is one front client's session: for the initialize era, what
// it negotiated and declared; its calls in flight, the server requests it
// was asked and has not answered, its log level and subscriptions.
// A 2026-07-28 front has no session: each of its requests carries what a
// session would (clientCapabilities in _meta), and the gateway keeps one
// Session per connection (stdio) or a transient one per request (HTTP).
type Session struct {
	srv    *Server
	id     string
	modern bool // a transient session of 2026-07-28 requests
	// connection: the session is a connection's (stdio), which ends it;
	// the idle timeout does not apply.
	connection bool

	mu          sync.Mutex
	initialized bool
	version     string
	caps        clientCaps
	level       int                  // the lowest log level it asked for; -1: none
	subs        map[string]subKey    // resources/subscribe, by exposed URI
	calls       map[string]*call     // in flight, by the front's request id as sent
	listens     map[string]*listener // open 2026-07-28 listens, by request id
	out         map[int64]*ask       // requests sent to the front, by their id
	nextID      int64
	standalone  sink // messages not related to a request (stdio: the output; HTTP: the GET stream)
	closed      bool
	sub         *host.Host // its own instances of the per_session servers, once used
	subErr      *core.Error
	lastUse     atomic.Int64 // unix nanoseconds
	streamCount atomic.Int64 // HTTP: open streams (a session with one is not idle)
}

// clientCaps are the capabilities a front client declared.
type clientCaps struct {
	sampling, elicitForm, elicitURL, roots bool
}

func (sess *Session) touch() { sess.lastUse.Store(time.Now().UnixNano()) }

// idleSince: unused since before cutoff, nothing in flight, no stream.
func (sess *Session) idleSince(cutoff time.Time) bool {
	if sess.connection {
		return false // a stdio front's session lasts as long as its connection
	}
	if sess.lastUse.Load() >= cutoff.UnixNano() || sess.streamCount.Load() > 0 {
		return false
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return len(sess.calls) == 0 && len(sess.out) == 0
}

// ID is the session's id (HTTP: its Mcp-Session-Id).
func (sess *Session) ID() string { return sess.id }

// sendStandalone sends a message unrelated to any request; false when the
// session has nowhere to send it now.
func (sess *Session) sendStandalone(msg []byte) bool {
	sess.mu.Lock()
	out := sess.standalone
	sess.mu.Unlock()
	return out != nil && out.send(msg)
}

// sink is where a session's messages go: the stdio output, an HTTP
// response's SSE stream, the GET stream. send never blocks on the front:
// it queues, and a front that reads nothing is cut off at a bound.
type sink interface {
	send(msg []byte) bool
	close()
}

// reply is the front request a call answers now: its id, where the
// messages related to it go, and the response.
type reply struct {
	id      []byte
	related sink
	done    func(msg []byte)
}

// call is a front request served by a host call (tools/call,
// prompts/get, resources/read, completion/complete and the rest).
type call struct {
	srv      *Server
	h        *host.Host // the host serving it: the shared one, or the session's own
	sess     *Session
	key      string // the front's request id as sent, in sess.calls
	server   string // the upstream server ("" when the host answers itself)
	method   string
	hostID   uint64
	idSet    chan struct{} // closed once hostID is known (or the start failed)
	progress []byte        // the front's progress token
	caps     clientCaps
	modern   bool
	level    int // 2026-07-28: the logs its request asked for, on its stream; -1: none

	mu       sync.Mutex
	r        *reply          // the front request waiting; nil while a 2026-07-28 call is parked
	inputs   []*ask          // 2026-07-28: inputs the front has not been given yet
	asked    map[string]*ask // 2026-07-28: inputs given, by key, awaiting the retry
	outcome  []byte          // 2026-07-28: the result that came while parked (a response without its id)
	outcomeE *errBody        // ... or the error
	token    string          // 2026-07-28: requestState while parked
	parked   time.Time
	finished bool
	// cancelled: the front cancelled it or vanished; it still counts as in
	// flight until its server answers, but causes no relayed request.
	cancelled bool
	started   time.Time
}

type errBody struct {
	code    int64
	message string
	data    []byte
}

func (c *call) parkedAt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.parked.IsZero() {
		return time.Now()
	}
	return c.parked
}

// ask is a server's request (sampling, elicitation, roots) relayed to a
// front: as a request on its session (initialize era), or as an input of
// an input_required result (2026-07-28).
type ask struct {
	h       *host.Host // the host that asked
	hostReq uint64
	method  string
	params  []byte
	sess    *Session
	frontID int64 // the id it was sent under (initialize era)
	c       *call // its call (2026-07-28)
	key     string
}
