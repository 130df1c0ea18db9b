package host

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/callbackgate"
	"github.com/lemonmcp/lemonmcp/internal/hiddenchars"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/sandbox"
	"github.com/lemonmcp/lemonmcp/store"
)

// Server states as servers() reports them.
const (
	StateDisabled   = "disabled"   // enabled: false
	StateNew        = "new"        // connect not called yet
	StateConnecting = "connecting" // first handshake under way
	StateReady      = "ready"
	StateRestarting = "restarting" // was ready, lost, coming back
	StateFailed     = "failed"     // never got ready: retried by its restart policy while it has restarts left, then given up
	StateClosed     = "closed"     // closed by the host, or lost after serving and given up
)

// Host owns the clients of many named servers. All methods are safe for
// concurrent use.
type Host struct {
	cfg     *Config
	version string    // the library's, for the clients of idle-stopped servers
	servers []*server // by name
	byName  map[string]*server

	mu        sync.Mutex
	connected bool
	closed    bool
	freed     bool
	routes    map[string]route // exposed tool name → server and tool, from the last list_tools
	requests  map[uint64]pendingRequest
	calls     map[uint64]*hostCall

	nextRequest atomic.Uint64
	nextCall    atomic.Uint64

	events   atomic.Pointer[eventRegistration]
	handlers atomic.Pointer[requestRegistration]
	// telemetry is the application's telemetry handler (telemetry.go);
	// telemetryMu orders its installs with the clients'.
	telemetry   atomic.Pointer[telemetryRegistration]
	telemetryMu sync.Mutex
	// out is the host's callback gate (see queue.go); it also holds the
	// poisoned state a recovered panic leaves (see poison.go).
	out callbackgate.Gate
	// bg counts the list refreshes running in the background: Free waits
	// for them (after freeing the clients they wait on), so a freed host
	// leaves no goroutine behind.
	bg sync.WaitGroup

	gone chan struct{} // closed by Free: wakes WaitReady

	// tools is the last aggregated tool list, with its search index
	// (catalogue.go).
	tools atomic.Pointer[catalogue]

	// pins is the pin store (nil without "pins"; pins.go).
	pins *pinDocs
	// guards is the guard chain every list and use passes through
	// (guardchain.go).
	guards guardHandler
}

type route struct {
	srv  *server
	tool string
	// guessed: from the server prefix of the name alone (knownRoute), not
	// from a list; the guard chain's route stage checks it (toolOfGuess).
	guessed bool
}

type pendingRequest struct {
	srv    *server
	client *core.Client // the generation it came from
	id     uint64
	// answer is set for the host's own requests (appask.go): the
	// application's answer goes there instead of to a server.
	answer chan appAnswer
}

type hostCall struct {
	srv      *server
	client   *core.Client // the generation it went to
	clientID uint64
	done     bool
	// hidden: a blocking wrapper's call, whose id the application never
	// received, so Cancel does not reach it.
	hidden bool
	// stop is closed by Cancel while the call waits for its server's pin
	// verdict (guardchain.go), before it reached the client.
	stop     chan struct{}
	stopOnce sync.Once
}

// DoneFunc receives a call's completion, as core.DoneFunc, with the host's
// call id.
type DoneFunc = core.DoneFunc

// New builds a host from cfg; nothing starts until Connect.
func New(cfg *Config, libraryVersion string) (*Host, *core.Error) {
	h := &Host{cfg: cfg, version: libraryVersion, byName: map[string]*server{}, routes: map[string]route{}, requests: map[uint64]pendingRequest{}, calls: map[uint64]*hostCall{}}
	h.gone = make(chan struct{})
	h.guards = newGuardChain()
	h.out.Init(callbackgate.Hooks{
		Owner:         "host",
		DeliveryWhere: "a host callback delivery",
		DestroyWhere:  "a host destroy callback",
		Report:        func(text string) { h.emitLog("error", text) },
		Dropped:       h.reportDroppedLogs,
	})
	if cfg.Pins != nil {
		s, err := store.Open(cfg.Pins.Store, h.askApp)
		if err != nil {
			return nil, core.Errorf(core.StatusInvalidArgument, "config.pins.store.%s", err)
		}
		h.pins = newPinDocs(s)
	}
	// The pin file and every token store file the servers use are the
	// library's secrets: no confined server may read them, listed or
	// not (whichever server starts first).
	if cfg.Pins != nil && cfg.Pins.Store.Type == "file" {
		// Made now, as its first write would: a confined server started
		// before then must find the directory to be kept out of it.
		_ = os.MkdirAll(filepath.Dir(cfg.Pins.Store.Path), 0o700)
	}
	sandbox.DenySecret(cfg.secretFiles()...)
	for _, sc := range cfg.Servers {
		s := &server{h: h, cfg: sc, name: sc.Name, secrets: configuredSecrets(sc.Client)}
		s.identKey, s.identity = serverIdentity(sc.Name, sc.Client)
		for i := range s.lists {
			s.lists[i] = &listCache{kind: listKinds[i]}
		}
		g, err := s.newGeneration()
		if err != nil {
			h.freeClients()
			if h.pins != nil {
				_ = h.pins.s.Close()
			}
			return nil, err
		}
		s.cur.Store(g)
		h.servers = append(h.servers, s)
		h.byName[s.name] = s
	}
	if h.pins != nil {
		h.background("the pin watch", h.watchPins)
	}
	return h, nil
}

// Parse is ParseConfig and New in one step.
func Parse(raw []byte, libraryVersion string) (*Host, *core.Error) {
	cfg, err := ParseConfig(raw)
	if err != nil {
		return nil, err
	}
	return New(cfg, libraryVersion)
}

func (h *Host) freeClients() {
	for _, s := range h.servers {
		if c := s.client(); c != nil {
			c.Free()
		}
	}
}

// SetEventHandler installs fn (nil removes it); the previous handler's
// destroy runs once none of its callbacks is running. On a freed host
// destroy runs at once and the error says the host was freed, as
// core.Client.SetEventHandler's does.
func (h *Host) SetEventHandler(fn core.EventHandler, destroy func()) *core.Error {
	var err *core.Error
	callbackgate.Install(&h.out, &h.mu, &h.events, callbackgate.NewRegistration(&h.out, fn, destroy), h.refuseIfFreed(&err))
	return err
}

// SetAppRequestHandler installs the handler of every server's requests
// (sampling, elicitation, roots, authorization), which answers with
// Respond. Without one, such requests are refused. A freed host refuses
// it, as SetEventHandler does.
func (h *Host) SetAppRequestHandler(fn core.AppRequestHandler, destroy func()) *core.Error {
	var err *core.Error
	callbackgate.Install(&h.out, &h.mu, &h.handlers, callbackgate.NewRegistration(&h.out, fn, destroy), h.refuseIfFreed(&err))
	return err
}

// refuseIfFreed is the refusal of a handler install on a freed host, for
// callbackgate.Install (it runs under h.mu): it sets *err.
func (h *Host) refuseIfFreed(err **core.Error) func() bool {
	return func() bool {
		if h.freed {
			*err = errHostFreed()
		}
		return *err != nil
	}
}

// Connect starts every enabled server at once. It returns when each has
// been started; readiness arrives as events and through WaitReady. A
// server that fails is reported in its state and retried by its restart
// policy; it never fails the others.
func (h *Host) Connect() *core.Error {
	h.mu.Lock()
	if h.freed {
		h.mu.Unlock()
		return errHostFreed()
	}
	if h.connected || h.closed {
		h.mu.Unlock()
		return core.Errorf(core.StatusInvalidState, "connect was already called, or the host is closed")
	}
	h.connected = true
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range h.servers {
		if s.client() == nil || s.lazy() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer h.recoverPanic("the connect of server " + s.name)
			s.start()
		}()
	}
	wg.Wait()
	return nil
}

// WaitReady waits until every enabled server is ready or has failed (its
// first attempt failed or it closed), or timeout passes (negative: no
// limit). It returns nil once all have settled, StatusTimeout naming the
// servers still connecting otherwise; Servers tells which are ready. When
// every enabled server has failed for good, the host can serve nothing:
// the error is the first one's failure (allFailed).
func (h *Host) WaitReady(timeout time.Duration) *core.Error {
	h.mu.Lock()
	connected, freed := h.connected, h.freed
	h.mu.Unlock()
	if freed {
		return errHostFreed()
	}
	if !connected {
		return core.Errorf(core.StatusInvalidState, "connect was not called")
	}
	var deadline <-chan time.Time
	if timeout >= 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	for _, s := range h.servers {
		g := s.gen()
		if s.lazy() && !g.started.Load() {
			continue // waits for its first use
		}
		select {
		case <-g.settled:
			continue // settled wins over an expired deadline
		default:
		}
		select {
		case <-g.settled:
		case <-h.gone:
			return errHostFreed()
		case <-deadline:
			var waiting []string
			for _, s := range h.servers {
				g := s.gen()
				if s.lazy() && !g.started.Load() {
					continue
				}
				select {
				case <-g.settled:
				default:
					waiting = append(waiting, s.name)
				}
			}
			return core.Errorf(core.StatusTimeout, "after %d ms, still connecting: %s", timeout.Milliseconds(), strings.Join(waiting, ", "))
		}
	}
	return h.allFailed()
}

// allFailed is nil unless the host has enabled servers and each one is
// "failed" (lmcp_host_servers' state: it gave up, or never was ready and
// is retrying). Then it is the first server's failure, its status and
// every server's reason. A lazy server not started yet may still work: it
// is not failed. The status is never StatusTimeout, which says servers
// are still connecting: a handshake that ran out of ready_ms is
// StatusClosed here (the client gave the server up).
func (h *Host) allFailed() *core.Error {
	var first *core.Error
	var reasons []string
	for _, s := range h.servers {
		c := s.client()
		if c == nil {
			continue // disabled
		}
		if s.state() != StateFailed {
			return nil
		}
		err := c.LastError()
		if err == nil {
			s.mu.Lock()
			err = core.Errorf(core.StatusClosed, "%s", s.lastErr) // a start that failed before the client did
			s.mu.Unlock()
		}
		if err.Status == core.StatusTimeout {
			err = &core.Error{Status: core.StatusClosed, Message: err.Message}
		}
		if first == nil {
			first = err
		}
		reasons = append(reasons, s.name+": "+err.Message)
	}
	if first == nil {
		return nil
	}
	return &core.Error{Status: first.Status, Message: "every enabled server failed: " + strings.Join(reasons, "; ")}
}

// Servers reports each server: {name: {"state","era","protocol_version",
// "transport","restarts","last_error"?, "enabled"}}.
func (h *Host) Servers() []byte {
	out := make(map[string]any, len(h.servers))
	for _, s := range h.servers {
		out[s.name] = s.report()
	}
	return jsonx.MustMarshal(out)
}

// Warnings are the configuration's warnings: one per member of the file
// the host ignored.
func (h *Host) Warnings() []string { return append([]string(nil), h.cfg.Warnings...) }

// ServerNames lists the servers, sorted.
func (h *Host) ServerNames() []string {
	names := make([]string, len(h.servers))
	for i, s := range h.servers {
		names[i] = s.name
	}
	return names
}

func (h *Host) server(name string) (*server, *core.Error) {
	s := h.byName[name]
	if s == nil {
		return nil, core.Errorf(core.StatusNotFound, "no server named %s in the host (servers: %s)", jsonQuote(name), strings.Join(h.ServerNames(), ", "))
	}
	if s.client() == nil {
		return nil, core.Errorf(core.StatusInvalidState, "the server %s is disabled (enabled: false)", jsonQuote(name))
	}
	return s, nil
}

// Call sends method to the named server, as core.Client.Call. done gets
// the host's call id, which Cancel takes.
func (h *Host) Call(serverName, method string, params []byte, opts core.CallOptions, done DoneFunc) (uint64, *core.Error) {
	s, err := h.server(serverName)
	if err != nil {
		return 0, err
	}
	return h.call(s, method, params, opts, done, s.useOf(method, params))
}

// call sends method to s. use, when the request uses one definition,
// passes the guard chain first: at once when the server's verdict on its
// current connection is given (the usual case), otherwise on a goroutine
// that waits for it, so the caller never blocks on a server.
func (h *Host) call(s *server, method string, params []byte, opts core.CallOptions, done DoneFunc, use *guardReq) (uint64, *core.Error) {
	if done == nil {
		return 0, core.Errorf(core.StatusInvalidArgument, "a completion callback is required")
	}
	// With idle_ms, counted as a use from here (so that the client this
	// call is given to is never stopped under it) until its completion.
	idle := s.cfg.Idle > 0
	if idle {
		s.useBegin()
	}
	// A blocking wrapper's completion (Inline) is library code: it runs
	// where the call completes. Any other completion is the application's
	// and goes through the host's gate, in order with the host's events.
	queued := !opts.Inline
	owed, accepted := false, false
	defer func() {
		// Refused, or a panic on the way (the export recovers it): the
		// completion will not come, so Free must not wait for it.
		if accepted {
			return
		}
		if owed {
			h.out.Forgive()
		}
		if idle {
			s.useEnd()
		}
	}()
	wakes := h.wakeable(s)
	if wakes || (s.lazy() && s.gen().started.Load()) {
		opts.WaitReady = true // a lazy server's first calls wait for the handshake they started
	}
	if wakes {
		// Queued first (WaitReady on a client not connected yet), then
		// started: see wakeable.
		defer h.startAfter(s)
	}
	client := s.client()
	pending := false
	if use != nil {
		err := h.guards(use)
		switch {
		case err == errVerdictPending && !waitsForServer(client, opts):
			return 0, notReady(s, client)
		case err == errVerdictPending:
			pending = true
		case err != nil:
			return 0, err
		default:
			params = use.retarget(params)
		}
	}
	id := h.nextCall.Add(1)
	hc := &hostCall{srv: s, client: client, hidden: opts.Inline && !opts.Handed}
	if pending {
		hc.stop = make(chan struct{})
	}
	h.mu.Lock()
	if h.freed {
		h.mu.Unlock()
		return 0, errHostFreed()
	}
	h.calls[id] = hc
	if queued {
		h.out.Owe() // Free waits until the completion is delivered
		owed = true
	}
	if pending {
		h.bg.Add(1) // under mu: Free marks the host freed before it waits
	}
	h.mu.Unlock()
	opts.TelemetryID = id
	if pending {
		accepted = true // the completion ends the use, and pays what is owed
		go h.sendAfterVerdict(hc, id, method, params, opts, done, use)
		return id, nil
	}
	if err := h.send(hc, id, method, params, opts, done); err != nil {
		return 0, err
	}
	accepted = true // the completion ends the use
	return id, nil
}

// waitsForServer reports whether a call to c would wait for its server
// (a handshake or a restart under way) rather than fail at once.
func waitsForServer(c *core.Client, opts core.CallOptions) bool {
	if c.State() == core.StateReady {
		return true
	}
	if c.Restarting() {
		return !opts.FailIfRestarting
	}
	st := c.State()
	return opts.WaitReady && (st == core.StateNew || st == core.StateConnecting)
}

// notReady is the refusal of a call to a server that is not ready: a
// failed or closed one's is the client's own, as a call sent to it gets.
func notReady(s *server, c *core.Client) *core.Error {
	if st := c.State(); st == core.StateFailed || st == core.StateClosed {
		if err := c.CallRefusal(); err != nil {
			return err
		}
	}
	if err := c.WaitReady(0); err != nil && err.Status != core.StatusTimeout {
		return err
	}
	return core.Errorf(core.StatusInvalidState, "the server %s is not ready (state %s)", jsonQuote(s.name), s.state())
}

// sendAfterVerdict is a call whose server's pin verdict was not given yet:
// it waits for it (or for Cancel, or Free), runs the chain again, then
// sends the call or completes it with the refusal.
func (h *Host) sendAfterVerdict(hc *hostCall, id uint64, method string, params []byte, opts core.CallOptions, done DoneFunc, use *guardReq) {
	defer h.bg.Done()
	s := hc.srv
	var err *core.Error
	func() {
		defer func() {
			if r := recover(); r != nil {
				h.Recovered(r, "the pin verdict of a call to server "+s.name)
				err = h.Poisoned()
			}
		}()
		use.wait, use.stop = true, hc.stop
		if err = h.guards(use); err == nil {
			select {
			case <-hc.stop: // cancelled while its server's list was fetched
				err = core.Errorf(core.StatusCancelled, "the call was cancelled")
			default:
				err = h.send(hc, id, method, use.retarget(params), opts, done)
				if err == nil {
					select {
					case <-hc.stop: // cancelled while it was being sent
						h.mu.Lock()
						c, cid := hc.client, hc.clientID
						h.mu.Unlock()
						_ = c.Cancel(cid)
					default:
					}
				}
			}
		}
	}()
	if err == nil {
		return
	}
	select {
	case <-h.gone: // whatever a closing client said: Free ends it cancelled
		err = core.Errorf(core.StatusCancelled, "the host was freed")
	default:
	}
	h.mu.Lock()
	hc.done = true
	delete(h.calls, id)
	h.mu.Unlock()
	if s.cfg.Idle > 0 {
		s.useEnd()
	}
	data := err.JSON()
	if opts.Inline {
		done(id, err.Status, data)
		return
	}
	h.out.Push(func() { done(id, err.Status, data) }, callbackgate.Completion)
}

// send gives the call to the server's client; its completion comes back
// through the host's gate (unless inline).
func (h *Host) send(hc *hostCall, id uint64, method string, params []byte, opts core.CallOptions, done DoneFunc) *core.Error {
	s, client := hc.srv, hc.client
	if c := s.client(); c != client {
		client = c // a lazy server stopped after idle_ms while the call waited
		h.mu.Lock()
		hc.client = client
		h.mu.Unlock()
	}
	idle := s.cfg.Idle > 0
	queued := !opts.Inline
	clientID, err := client.Call(method, params, opts, func(_ uint64, st core.Status, data []byte) {
		h.mu.Lock()
		hc.done = true
		delete(h.calls, id)
		h.mu.Unlock()
		if idle {
			s.useEnd()
		}
		if !queued {
			done(id, st, data)
			return
		}
		// data is a fresh slice (core.DoneFunc): it may wait in the queue.
		h.out.Push(func() { done(id, st, data) }, callbackgate.Completion)
	})
	h.mu.Lock()
	if err != nil {
		delete(h.calls, id)
	} else {
		hc.clientID = clientID
	}
	freed := h.freed
	h.mu.Unlock()
	if err != nil && freed && err.Status == core.StatusInvalidHandle {
		return errHostFreed()
	}
	return err
}

// CallSync is Call that waits for the completion.
func (h *Host) CallSync(serverName, method string, params []byte, opts core.CallOptions) ([]byte, *core.Error) {
	return syncCall(func(done DoneFunc) (uint64, *core.Error) { return h.Call(serverName, method, params, opts, done) }, &opts)
}

// CallTool calls a tool by the name list_tools gives it (server__tool when
// prefixed); arguments is a JSON object or nil.
func (h *Host) CallTool(name string, arguments []byte, opts core.CallOptions, done DoneFunc) (uint64, *core.Error) {
	if h.cfg.Deferred != nil && name == SearchToolName {
		return h.callSearchTool(arguments, opts, done)
	}
	s, tool, guessed, err := h.resolveTool(name)
	if err != nil {
		return 0, err
	}
	use := &guardReq{op: guardUse, s: s, k: listTools, name: tool, guessed: guessed}
	params := make([]byte, 0, 32+len(tool)+len(arguments))
	params = append(params, `{"name":`...)
	params = jsonx.AppendString(params, tool)
	if len(arguments) > 0 {
		if _, cerr := jsonx.CompactObject(arguments); cerr != nil {
			return 0, core.Errorf(core.StatusInvalidArgument, "the tool arguments must be a JSON object")
		}
		params = append(params, `,"arguments":`...)
		params = append(params, arguments...)
	}
	params = append(params, '}')
	return h.call(s, "tools/call", params, opts, done, use)
}

// CallToolSync is CallTool that waits for the completion.
func (h *Host) CallToolSync(name string, arguments []byte, opts core.CallOptions) ([]byte, *core.Error) {
	return syncCall(func(done DoneFunc) (uint64, *core.Error) { return h.CallTool(name, arguments, opts, done) }, &opts)
}

func syncCall(start func(DoneFunc) (uint64, *core.Error), opts *core.CallOptions) ([]byte, *core.Error) {
	opts.Inline = true
	return core.WaitFor(start)
}

// knownRoute is the route of an exposed tool name known without asking a
// server: the catalogue's, else the server prefix of a prefixed name (a
// guess: the rest may be the host's name of a tool, which toolOfGuess
// reads once the server's list is known).
func (h *Host) knownRoute(name string) (route, bool) {
	h.mu.Lock()
	r, ok := h.routes[name]
	h.mu.Unlock()
	if !ok && h.cfg.ToolPrefix != PrefixNever {
		if i := strings.Index(name, Separator); i > 0 {
			if s := h.byName[name[:i]]; s != nil {
				r, ok = route{srv: s, tool: name[i+len(Separator):], guessed: true}, true
			}
		}
	}
	return r, ok
}

// toolOfGuess is the server's own name of the tool name names, routed to
// s by its server prefix alone (name: the rest), by the server's last list
// of its tools (never fetched here): name itself when the server offers
// it, else the one tool the host exposes as name (catalogue.go: its
// characters MCP does not allow in tool names replaced, bounded; the
// numbering of two that meet aside), else name (the list is not known, or
// has no such tool: the server answers). Two tools exposed as name are an
// error naming both.
func (s *server) toolOfGuess(name string) (string, *core.Error) {
	if strings.IndexByte(name, '_') < 0 {
		return name, nil // the host's name of a tool differs from its own only by '_'
	}
	m := s.guard.tools.Load()
	if m == nil || (*m)[name] != nil {
		return name, nil
	}
	full := s.name + Separator + name
	var found []string
	for own := range *m {
		if e := exposedName(own); boundedName(e) == name || boundedName(s.name+Separator+e) == full {
			found = append(found, own)
		}
	}
	switch len(found) {
	case 0:
		return name, nil
	case 1:
		return found[0], nil
	}
	sort.Strings(found)
	a, b := hiddenchars.Strip(found[0]), hiddenchars.Strip(found[1])
	return "", core.Errorf(core.StatusInvalidArgument, "the tool name %s is the host's name of %d tools of the server %s, %s and %s (their names differ only in characters MCP does not allow in tool names): call one by the server's own name, as %s or %s", jsonQuote(full), len(found), jsonQuote(s.name), jsonQuote(a), jsonQuote(b), jsonQuote(s.name+Separator+a), jsonQuote(s.name+Separator+b))
}

// SyncRoute is how a blocking caller outside Go is best served for the
// named server (core.Client.SyncRoute); SyncWaitOutside for an unknown or
// disabled server, whose call fails at once.
func (h *Host) SyncRoute(serverName string) core.SyncRoute {
	if s := h.byName[serverName]; s != nil {
		return s.syncRoute()
	}
	return core.SyncWaitOutside
}

// ToolSyncRoute is SyncRoute for the server CallTool routes name to, when
// that is known without asking a server (as ToolRoute).
func (h *Host) ToolSyncRoute(name string) core.SyncRoute {
	if r, ok := h.knownRoute(name); ok {
		return r.srv.syncRoute()
	}
	return core.SyncWaitOutside
}

// syncRoute is the server's client's SyncRoute; SyncWaitOutside while it
// has none (disabled).
func (s *server) syncRoute() core.SyncRoute {
	if c := s.client(); c != nil {
		return c.SyncRoute()
	}
	return core.SyncWaitOutside
}

// ToolRoute is {"server", "original_name"} of the exposed tool name, as
// CallTool routes it, when that is known without asking a server (a
// binding names a call's server and tool before it is made): never blocks,
// starts nothing. StatusNotFound when only the servers' lists would tell.
// A route guessed from the server prefix is read against the server's
// last list when there is one (a held tool's included): the server's own
// name of the tool the host exposes under that name.
func (h *Host) ToolRoute(name string) ([]byte, *core.Error) {
	if name == "" {
		return nil, core.Errorf(core.StatusInvalidArgument, "the tool name is empty")
	}
	r, ok := h.knownRoute(name)
	if !ok {
		return nil, core.Errorf(core.StatusNotFound, "the route of the tool %s is not known before its servers' tools are listed", jsonQuote(name))
	}
	if r.guessed {
		tool, err := r.srv.toolOfGuess(r.tool)
		if err != nil {
			return nil, err
		}
		r.tool = tool
	}
	return jsonx.MustMarshal(map[string]string{"server": r.srv.name, "original_name": r.tool}), nil
}

// resolveTool finds the server and tool behind an exposed tool name;
// guessed: by its server prefix alone (the guard chain's route stage
// checks the tool against the server's list).
func (h *Host) resolveTool(name string) (*server, string, bool, *core.Error) {
	if name == "" {
		return nil, "", false, core.Errorf(core.StatusInvalidArgument, "the tool name is empty")
	}
	r, ok := h.knownRoute(name)
	if !ok && h.cfg.ToolPrefix != PrefixAlways {
		h.wakeAll() // an unprefixed name may be any server's
		var found []route
		for _, s := range h.servers {
			if s.hasTool(name) {
				found = append(found, route{srv: s, tool: name})
				continue
			}
			// The host's name of one of its tools ("echo_it" of "echo it"),
			// by the list hasTool just read.
			tool, err := s.toolOfGuess(name)
			if err != nil {
				return nil, "", false, err
			}
			if tool != name && s.hasTool(tool) {
				found = append(found, route{srv: s, tool: tool})
			}
		}
		switch len(found) {
		case 1:
			r, ok = found[0], true
		case 0:
		default:
			return nil, "", false, core.Errorf(core.StatusInvalidArgument, "the tool %s is offered by both %s and %s; call it as %s", jsonQuote(name), jsonQuote(found[0].srv.name), jsonQuote(found[1].srv.name), jsonQuote(found[0].srv.name+Separator+name))
		}
	}
	if !ok {
		if err := h.refusedTool(name); err != nil {
			return nil, "", false, err
		}
		return nil, "", false, core.Errorf(core.StatusNotFound, "no server offers a tool named %s (tool names are server__tool with tool_prefix %q)", jsonQuote(name), h.cfg.ToolPrefix)
	}
	if r.srv.client() == nil {
		return nil, "", false, core.Errorf(core.StatusInvalidState, "the server %s is disabled (enabled: false)", jsonQuote(r.srv.name))
	}
	return r.srv, r.tool, r.guessed, nil
}

// Cancel cancels a call made through the host.
func (h *Host) Cancel(callID uint64) *core.Error {
	h.mu.Lock()
	hc := h.calls[callID]
	var clientID uint64
	if hc != nil {
		clientID = hc.clientID
	}
	h.mu.Unlock()
	if hc != nil && clientID == 0 && hc.stop != nil && !hc.hidden {
		hc.stopOnce.Do(func() { close(hc.stop) }) // waiting for the pin verdict
		return nil
	}
	if hc == nil || clientID == 0 || hc.hidden {
		return core.Errorf(core.StatusNotFound, "no pending host call with id %d", callID)
	}
	return hc.client.Cancel(clientID)
}

// Respond answers a server request the host's handler received.
func (h *Host) Respond(requestID uint64, status core.Status, data []byte) *core.Error {
	h.mu.Lock()
	pr, ok := h.requests[requestID]
	delete(h.requests, requestID)
	h.mu.Unlock()
	if !ok {
		return core.Errorf(core.StatusNotFound, "no pending app request with id %d (already answered, expired, or its server restarted)", requestID)
	}
	if pr.answer != nil {
		pr.answer <- appAnswer{status, append([]byte(nil), data...)} // buffered: never blocks
		return nil
	}
	return pr.client.Respond(pr.id, status, data)
}

// Close closes every server, in parallel, within timeout (negative: the
// clients' own bound).
func (h *Host) Close(timeout time.Duration) *core.Error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]*core.Error, len(h.servers))
	for i, s := range h.servers {
		c := s.client()
		if c == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Close(timeout)
		}()
	}
	wg.Wait()
	var slow []string
	for i, err := range errs {
		if err != nil && err.Status == core.StatusTimeout {
			slow = append(slow, h.servers[i].name)
		}
	}
	if len(slow) > 0 {
		return core.Errorf(core.StatusTimeout, "close did not finish within %d ms for: %s (teardown goes on in the background)", timeout.Milliseconds(), strings.Join(slow, ", "))
	}
	return nil
}

// Free releases the host, as core.Client.Free does a client. It never
// waits for a server: each server's client is freed, its transport torn
// down in the background. It does wait for the application: when it
// returns, every accepted call has completed (pending ones with
// StatusCancelled), every callback of the host has returned and none will
// start again, and the handlers' destroys have run. Free must not be
// called from the host's own callbacks; FreeFrom can be.
func (h *Host) Free() { h.FreeFrom(core.FreeCaller{}) }

// FreeFrom is Free called from inside from.Callbacks of the host's own
// callbacks (from.Delivering: one of them is a completion, event or
// request, so this is the host's delivery goroutine): it does not wait for
// those, which finish after it returns (and the destroy of a handler among
// them runs after its callback returns).
func (h *Host) FreeFrom(from core.FreeCaller) {
	h.mu.Lock()
	if h.freed {
		h.mu.Unlock()
		return
	}
	h.freed, h.closed = true, true
	clear(h.requests) // their clients drop them as they are freed
	close(h.gone)
	h.mu.Unlock()
	h.out.Close()
	for _, s := range h.servers {
		s.stopIdleTimer()
	}
	// The clients' own callbacks are the host's library code, which never
	// blocks on the application, so freeing them waits for nothing but
	// their cancelled completions, which they queue here.
	h.freeClients()
	h.bg.Wait()
	h.out.Drain(from)
	h.events.Swap(nil).Close()
	h.handlers.Swap(nil).Close()
	h.telemetry.Swap(nil).Close()
	if h.pins != nil {
		_ = h.pins.s.Close()
	}
}

// errHostFreed is what a method of a freed host returns (the C ABI's
// answer to a handle freed while the call was on its way in).
func errHostFreed() *core.Error {
	return core.Errorf(core.StatusInvalidHandle, "the host was freed")
}

// emit queues a host event for the handler installed when it runs. A "log"
// event may be dropped when the application falls behind (see
// callbackgate.MaxQueuedLogs).
func (h *Host) emit(kind string, payload []byte) {
	dk := callbackgate.Event
	if kind == "log" {
		dk = callbackgate.Log
	}
	callbackgate.Emit(&h.out, &h.events, kind, payload, dk)
}

// background runs fn on a goroutine Free waits for.
func (h *Host) background(where string, fn func()) {
	h.bg.Add(1)
	go func() {
		defer h.bg.Done()
		defer h.recoverPanic(where)
		fn()
	}()
}

// withServer puts "server": name first in a JSON object payload.
func withServer(name string, payload []byte) []byte {
	buf := make([]byte, 0, len(payload)+len(name)+16)
	buf = append(buf, `{"server":`...)
	buf = jsonx.AppendString(buf, name)
	body := strings.TrimSpace(string(payload))
	if len(body) > 2 && body[0] == '{' {
		buf = append(buf, ',')
		buf = append(buf, body[1:]...)
		return buf
	}
	return append(buf, '}')
}

// sortedKeys is for deterministic reports.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
