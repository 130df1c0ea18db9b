package host

import (
	"bytes"
	"strings"
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/hiddenchars"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// The guard chain: what a server offers and what the application does with
// it pass through the same stages, in this order, each wrapping the next as
// go-sdk's middleware wraps a method handler:
//
//	verdict   a use waits for the server's pin verdict on its current
//	          connection (a list fetched after a start or a restart), or
//	          fails; a list has the connection's instructions judged first
//	route     a tool use routed by its name's server prefix alone is a use
//	          of the tool the server offers under that name (toolOfGuess)
//	hidden    a list loses its hidden characters (internal/hiddenchars)
//	shadowing a tool description naming another server's tool is reported
//	pins      what is not approved (or, without pins, a name with hidden
//	          characters) is held: left out of the list, a use refused
//	filters   tools.allow / tools.deny: left out of the list, a use refused
//	deferred  with deferred_tools, list_tools exposes only the tools always
//	          loaded and the host's search tool
//
// Three things pass through it: one server's freshly fetched list of one
// kind (guardList, from lists.go), one use of a definition (guardUse: a
// tool call, a prompt get, a resource read, from host.go), and the host's
// aggregated tool list as list_tools exposes it (guardExpose). Searches and
// search_tools read the catalogue, built from guarded lists.

type guardOp int

const (
	guardList   guardOp = iota // one server's freshly fetched list of kind k
	guardUse                   // one use of a definition of kind k named name
	guardExpose                // the host's aggregated tools, as list_tools returns them
)

// guardReq is what passes the chain.
type guardReq struct {
	op   guardOp
	s    *server // nil for guardExpose
	k    listKind
	conn connKey // the connection the list was fetched on (guardList)

	// guardList: the items in, then what the application may see.
	items  []item
	fresh  []*offered          // what changed since the last list (set by the hidden stage)
	same   bool                // the definitions of the last list, unchanged (set by the hidden stage)
	others map[string][]string // the other servers' tool names (set by the hidden stage)

	// guardUse: the definition used; wait lets the verdict stage wait for
	// the server (otherwise it answers errVerdictPending); stop ends that
	// wait (the call was cancelled). guessed: name was routed by the
	// server prefix of the name called, not by a list; renamed: the route
	// stage changed name, so the request's params name another (the bools
	// sit in wait's padding: a call's guardReq is no larger for them).
	name    string
	wait    bool
	guessed bool
	renamed bool
	stop    <-chan struct{}

	// guardExpose: the host, its catalogue and the tools list_tools
	// returns.
	h       *Host
	cat     *catalogue
	exposed []jsonx.RawMessage
}

type guardHandler func(r *guardReq) *core.Error

// guardStage wraps the next stage's handler.
type guardStage func(next guardHandler) guardHandler

// guardStages are the chain's stages, in order.
var guardStages = [...]guardStage{verdictStage, routeStage, hiddenStage, shadowingStage, pinStage, filterStage, deferredStage}

// newGuardChain composes the stages into one handler (Host.guards).
func newGuardChain() guardHandler {
	h := guardHandler(func(*guardReq) *core.Error { return nil })
	for i := len(guardStages) - 1; i >= 0; i-- {
		h = guardStages[i](h)
	}
	return h
}

// errVerdictPending is the verdict stage's answer to a use that may not
// wait (wait false) when the verdict is not given yet: the caller runs the
// use again, off its own goroutine, with wait true.
var errVerdictPending = &core.Error{Status: core.StatusInvalidState, Message: "the pin verdict is pending"}

// connKey names one connection of a server: its client and how many times
// that client had restarted its server (core.Client.Restarts counts a
// restart at the loss, so a later connection never has the same key).
type connKey struct {
	c        *core.Client
	restarts int
}

func connOf(c *core.Client) connKey {
	if c == nil {
		return connKey{}
	}
	return connKey{c, c.Restarts()}
}

// judgedOn reports whether p records the connection k.
func judgedOn(p *connKey, k connKey) bool { return p != nil && *p == k }

// verdictGiven reports whether the definitions of kind k (and, for tools
// and prompts, the instructions) were judged on connection conn.
func (g *guard) verdictGiven(k listKind, conn connKey) bool {
	if k != listResources && !judgedOn(g.instrJudged.Load(), conn) {
		return false
	}
	return judgedOn(g.judged[k].Load(), conn)
}

func verdictStage(next guardHandler) guardHandler {
	return func(r *guardReq) *core.Error {
		if r.op == guardExpose || r.s.h.pins == nil {
			return next(r)
		}
		s := r.s
		switch r.op {
		case guardList:
			if r.k != listResources {
				s.judgeInstructionsOn(r.conn)
			}
		case guardUse:
			if !s.guard.verdictGiven(r.k, connOf(s.client())) {
				if !r.wait {
					return errVerdictPending
				}
				if err := s.awaitVerdict(r); err != nil {
					return s.verdictWaitEnded(r, err)
				}
			}
		}
		return next(r)
	}
}

// verdictWaitEnded is the error of a use whose wait for the verdict (or
// for the list a guessed route is read against) failed: a host freed or a
// call cancelled meanwhile ends the use as cancelled, as Free and Cancel
// end a call already sent, whatever the list or the handshake it waited on
// said while they closed.
func (s *server) verdictWaitEnded(r *guardReq, err *core.Error) *core.Error {
	select {
	case <-s.h.gone:
		return core.Errorf(core.StatusCancelled, "the host was freed")
	case <-r.stop:
		return core.Errorf(core.StatusCancelled, "the call was cancelled")
	default:
		return err
	}
}

// verdictPoll is how often a use waiting for its server's handshake looks
// whether the host was freed or the call cancelled.
const verdictPoll = 50 * time.Millisecond

// awaitVerdict waits until the server is ready and its definitions of kind
// r.k were judged on the connection it is ready on: it lists them (through
// the chain) when no list of that connection did.
func (s *server) awaitVerdict(r *guardReq) *core.Error {
	for attempt := 0; attempt < 2; attempt++ {
		c, err := s.awaitReady(r)
		if err != nil {
			return err
		}
		conn := connOf(c)
		if r.k != listResources {
			s.judgeInstructionsOn(conn)
		}
		if attempt > 0 {
			s.lists[r.k].invalidate() // a list cached from an earlier connection
		}
		s.useBegin()
		_, err = s.lists[r.k].get(s)
		s.useEnd()
		if err != nil && err.Status != core.StatusUnsupported {
			return &core.Error{Status: err.Status, Message: "the " + listKinds[r.k].key + " of the server " + jsonQuote(s.name) + " could not be listed to check them against their pins: " + err.Message}
		}
		if s.guard.verdictGiven(r.k, connOf(c)) {
			return nil
		}
	}
	return core.Errorf(core.StatusClosed, "the server %s restarted while its %s were checked against their pins; try again", jsonQuote(s.name), listKinds[r.k].key)
}

// awaitReady waits until the server's client is ready (starting a lazy
// server the use wakes), the host is freed or r's call is cancelled.
func (s *server) awaitReady(r *guardReq) (*core.Client, *core.Error) {
	c := s.client()
	if c == nil {
		return nil, core.Errorf(core.StatusInvalidState, "the server %s is disabled (enabled: false)", jsonQuote(s.name))
	}
	for {
		// The state is read before WaitReady: a lazy server's start
		// (lazy.go) may begin in between, and a client once started
		// never is StateNew again.
		unstarted := c.State() == core.StateNew
		err := c.WaitReady(verdictPoll)
		if err == nil {
			return c, nil
		}
		if err.Status != core.StatusTimeout {
			if !unstarted || !s.lazy() {
				if refusal := c.CallRefusal(); refusal != nil {
					return nil, refusal // as a call sent to it is refused
				}
				return nil, err
			}
			// A lazy server this call wakes is started right after the
			// call is queued (lazy.go): wait for that start.
			select {
			case <-s.h.gone:
				return nil, core.Errorf(core.StatusCancelled, "the host was freed")
			case <-r.stop:
				return nil, core.Errorf(core.StatusCancelled, "the call was cancelled")
			case <-s.gen().settled:
				if c.State() == core.StateNew {
					s.mu.Lock()
					why := s.lastErr
					s.mu.Unlock()
					return nil, core.Errorf(core.StatusClosed, "the server %s could not be started: %s", jsonQuote(s.name), why)
				}
			case <-time.After(verdictPoll / 5):
				if !s.gen().started.Load() && !s.h.wakeable(s) {
					return nil, err // the host closed before the server was started
				}
			}
			continue
		}
		select {
		case <-s.h.gone:
			return nil, core.Errorf(core.StatusCancelled, "the host was freed")
		case <-r.stop:
			return nil, core.Errorf(core.StatusCancelled, "the call was cancelled")
		default:
		}
	}
}

// routeStage: a tool use routed by its server prefix alone (before the
// host listed its tools, or a tool the catalogue leaves out: held or
// filtered) names what the server offers, once its list is known (the
// verdict stage's; without pins, listed here): the host's name of one of
// its tools ("r__echo_it" of "echo it") is a use of that tool, refused or
// sent by its own name.
func routeStage(next guardHandler) guardHandler {
	return func(r *guardReq) *core.Error {
		if r.op == guardUse && r.guessed {
			if r.s.h.pins == nil && strings.IndexByte(r.name, '_') >= 0 && r.s.guard.tools.Load() == nil {
				// Without pins no verdict stage listed the tools: list them
				// here (off the caller's goroutine) before reading the name.
				if !r.wait {
					return errVerdictPending
				}
				if err := r.s.listForGuess(r); err != nil {
					return r.s.verdictWaitEnded(r, err)
				}
			}
			tool, err := r.s.toolOfGuess(r.name)
			if err != nil {
				return err
			}
			if tool != r.name {
				r.name, r.renamed = tool, true
			}
		}
		return next(r)
	}
}

// listForGuess lists the server's tools (through the chain) once it is
// ready, for a use routed by a guess on a host without pins.
func (s *server) listForGuess(r *guardReq) *core.Error {
	if _, err := s.awaitReady(r); err != nil {
		return err
	}
	s.useBegin()
	_, err := s.lists[listTools].get(s)
	s.useEnd()
	if err != nil && err.Status != core.StatusUnsupported {
		return &core.Error{Status: err.Status, Message: "the tools of the server " + jsonQuote(s.name) + " could not be listed to route " + jsonQuote(r.name) + ": " + err.Message}
	}
	return nil
}

// retarget is the params of a tools/call as CallTool built them
// ({"name":"<the name routed>", ...}), naming r.name instead when the
// route stage renamed the tool.
func (r *guardReq) retarget(params []byte) []byte {
	if r == nil || !r.renamed {
		return params
	}
	head := len(`{"name":"`)
	for head < len(params) && params[head] != '"' {
		if params[head] == '\\' {
			head++ // the escaped byte: never the closing quote
		}
		head++
	}
	head++
	out := make([]byte, 0, len(params)+len(r.name)+8)
	out = append(out, `{"name":`...)
	out = jsonx.AppendString(out, r.name)
	return append(out, params[head:]...)
}

func hiddenStage(next guardHandler) guardHandler {
	return func(r *guardReq) *core.Error {
		if r.op != guardList {
			return next(r)
		}
		s, k := r.s, r.k
		g := &s.guard
		if k == listTools && len(s.h.servers) > 1 {
			r.others = s.h.toolNamesBesides(s) // before g.mu: each guard is locked alone
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		prev := g.offered[k]
		cur := make(map[string]*offered, len(r.items))
		for _, it := range r.items {
			if p := prev[it.name]; p != nil && bytes.Equal(p.raw, it.raw) {
				cur[it.name] = p // unchanged bytes: nothing to compute again
				continue
			}
			o := &offered{name: it.name, raw: it.raw}
			o.clean, o.findings = hiddenchars.CleanJSON(it.raw)
			if clean, n := hiddenchars.Clean(it.name); clean != it.name || !n.Zero() {
				o.badName = true
			}
			if s.h.pins != nil {
				o.hash = pinHash(it.raw)
			}
			cur[it.name] = o
			r.fresh = append(r.fresh, o)
		}
		g.offered[k] = cur
		if k == listTools {
			g.tools.Store(&cur)
		}
		r.same = len(r.fresh) == 0 && len(cur) == len(prev)
		if s.h.pins == nil {
			for _, o := range r.fresh {
				if len(o.findings) > 0 || o.badName {
					s.h.emitLog("warning", "the "+pinKindNames[k]+" "+jsonQuote(hiddenchars.Strip(o.name))+" of the server "+jsonQuote(s.name)+" carried hidden characters; they were removed")
				}
			}
		}
		clean := make([]item, len(r.items))
		for i, it := range r.items {
			clean[i] = item{name: it.name, raw: cur[it.name].clean}
		}
		r.items = clean
		return next(r) // the pins stage runs under g.mu
	}
}

func shadowingStage(next guardHandler) guardHandler {
	return func(r *guardReq) *core.Error {
		if r.op == guardList && r.k == listTools {
			s := r.s
			cur := s.guard.offered[listTools]
			for _, o := range r.fresh {
				for _, f := range s.h.shadowing(s, o.raw, cur, r.others) {
					s.h.emitLog("warning", "the description of the tool "+jsonQuote(hiddenchars.Strip(o.name))+" of the server "+jsonQuote(s.name)+" names the tool "+jsonQuote(f.Tool)+" of the server "+jsonQuote(f.Server)+" (shadowing)")
				}
			}
		}
		return next(r)
	}
}

func pinStage(next guardHandler) guardHandler {
	return func(r *guardReq) *core.Error {
		switch r.op {
		case guardList:
			s, k := r.s, r.k
			g := &s.guard
			if s.h.pins != nil {
				s.checkPins(k, r.same)
			} else {
				held := map[string]*heldWhy{}
				for name, o := range g.offered[k] {
					if o.badName {
						held[name] = s.heldFor(k, name, FindingHiddenName)
					}
				}
				g.held[k].Store(&held)
			}
			g.judged[k].Store(&r.conn)
			kept := r.items[:0]
			for _, it := range r.items {
				if g.heldReason(k, it.name) == nil {
					kept = append(kept, it)
				}
			}
			r.items = kept
		case guardUse:
			if why := r.s.guard.heldReason(r.k, r.name); why != nil {
				return why.refusal()
			}
		}
		return next(r)
	}
}

func filterStage(next guardHandler) guardHandler {
	return func(r *guardReq) *core.Error {
		if r.k != listTools || r.op == guardExpose {
			return next(r)
		}
		sc := r.s.cfg
		switch r.op {
		case guardList:
			kept := r.items[:0]
			for _, it := range r.items {
				if sc.Permits(it.name) {
					kept = append(kept, it)
				}
			}
			r.items = kept
		case guardUse:
			if !sc.Permits(r.name) {
				return core.Errorf(core.StatusPolicyDenied, "the tool %s of the server %s is not allowed by its tools.allow/tools.deny", jsonQuote(r.name), jsonQuote(r.s.name))
			}
		}
		return next(r)
	}
}

func deferredStage(next guardHandler) guardHandler {
	return func(r *guardReq) *core.Error {
		if r.op == guardExpose {
			if r.h.cfg.Deferred != nil {
				r.exposed = r.h.deferredTools(r.cat)
			} else {
				r.exposed = r.cat.raws
			}
		}
		return next(r)
	}
}
