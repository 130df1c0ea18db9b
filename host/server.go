package host

import (
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/callbackgate"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/internal/redact"
)

// server is one named server of a host.
type server struct {
	h    *Host
	cfg  *ServerConfig
	name string
	// cur is the server's current client and its start state (idle.go): a
	// lazy server stopped after idle_ms gets a new one. Never nil.
	cur atomic.Pointer[generation]
	// idle counts the uses in flight and stops an idle lazy server.
	idle idleState

	mu        sync.Mutex
	everReady bool
	lastErr   string
	era       string
	version   string
	transport string
	fail      failure    // why it is in trouble (failure.go)
	secrets   redact.Set // its configured env and header values
	// refusals are the last requests the sandbox's proxy refused the
	// server (its warnings), for lmcp_host_servers.
	refusals []string

	lists [3]*listCache
	// guard cleans and pins what the server offers (pins.go); identKey
	// and identity name the server in the pin store.
	guard    guard
	identKey string
	identity map[string]any

	// durations are the server's call durations, per method, measured
	// while the host has a telemetry handler (lmcp_host_servers).
	durations core.Histograms

	// announceMu guards announced: per list, the fingerprint of what the
	// aggregated list holds of this server as last announced by
	// list_changed (zero: nothing).
	announceMu sync.Mutex
	announced  [3]uint64
}

// gen is the current generation; client its client (nil when disabled).
func (s *server) gen() *generation     { return s.cur.Load() }
func (s *server) client() *core.Client { return s.cur.Load().client }

func (s *server) setError(err *core.Error) {
	s.mu.Lock()
	s.lastErr = err.Message
	s.mu.Unlock()
}

// state derives the server's host-level state from its client.
func (s *server) state() string {
	c := s.client()
	if c == nil {
		return StateDisabled
	}
	s.mu.Lock()
	everReady := s.everReady
	s.mu.Unlock()
	switch c.State() {
	case core.StateNew:
		return StateNew
	case core.StateReady:
		return StateReady
	case core.StateConnecting:
		switch {
		case !c.Restarting():
			return StateConnecting
		case everReady:
			return StateRestarting
		default:
			return StateFailed
		}
	case core.StateFailed:
		return StateFailed
	default:
		// A server that gave up without ever being ready failed; one that
		// was closed by the host or lost after serving is closed.
		s.h.mu.Lock()
		closing := s.h.closed
		s.h.mu.Unlock()
		if !everReady && !closing {
			return StateFailed
		}
		return StateClosed
	}
}

// maxRefusalsReported bounds the refusals lmcp_host_servers shows.
const maxRefusalsReported = 4

// noteRefusal keeps a warning of the sandbox's proxy (a request it
// refused while the server runs), the last few, for the report.
func (s *server) noteRefusal(payload []byte) {
	var ev struct {
		Level   string `json:"level"`
		Source  string `json:"source"`
		Message string `json:"message"`
	}
	if jsonx.Unmarshal(payload, &ev) != nil || ev.Level != "warning" || ev.Source != "transport" ||
		!strings.HasPrefix(ev.Message, "the sandbox refused ") {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.refusals, ev.Message) {
		s.refusals = append(s.refusals, ev.Message)
		if len(s.refusals) > maxRefusalsReported {
			s.refusals = s.refusals[1:]
		}
	}
}

func (s *server) report() map[string]any {
	st := s.state()
	c := s.client()
	r := map[string]any{"state": st, "enabled": c != nil, "restarts": 0}
	if d := s.durations.Report(); len(d) > 0 {
		r["durations"] = d
	}
	if s.lazy() {
		r["start"] = StartLazy
	}
	if c == nil {
		r["summary"] = summary(s.name, r)
		return r
	}
	r["restarts"] = c.Restarts()
	if sb := c.SandboxReport(); sb != nil {
		r["sandbox"] = sb // what this start of the server got
	}
	loss, losses := c.LastLoss()
	clientErr := c.LastError()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.era != "" {
		r["era"] = s.era
		r["protocol_version"] = s.version
		r["transport"] = s.transport
	}
	if len(s.refusals) > 0 {
		r["sandbox_refusals"] = slices.Clone(s.refusals)
	}
	if st != StateReady && s.lastErr != "" {
		r["last_error"] = s.lastErr
	} else if st == StateFailed && clientErr != nil {
		// The failed event that records it may not be delivered yet.
		r["last_error"] = clientErr.Message
	}
	if st != StateReady {
		s.addFailure(r, loss, losses)
	}
	if st == StateFailed {
		_, exited := r["exit_code"]
		_, killed := r["signal"]
		r["final"] = exited || killed || c.TransportDone()
	}
	r["summary"] = summary(s.name, r)
	return r
}

// onEvent takes the client's events (on its delivery goroutine): it keeps
// the server's bookkeeping, then passes the event on with the server's
// name.
func (s *server) onEvent(g *generation, kind string, payload []byte) {
	if g != s.gen() {
		return // a client stopped after idle_ms (its Free already ran)
	}
	switch kind {
	case "log":
		s.noteRefusal(payload)
	case "ready":
		var ev struct {
			Server jsonx.RawMessage `json:"server"`
		}
		var info struct {
			ProtocolVersion string `json:"protocolVersion"`
			Era             string `json:"era"`
			Transport       string `json:"transport"`
		}
		_ = jsonx.Unmarshal(payload, &ev)
		_ = jsonx.Unmarshal(ev.Server, &info)
		s.mu.Lock()
		s.everReady = true
		s.era, s.version, s.transport = info.Era, info.ProtocolVersion, info.Transport
		s.mu.Unlock()
		s.noteReady(g.client)
		for _, l := range s.lists {
			l.invalidate()
		}
		// Instructions are checked before anything is listed: changed
		// ones hold every tool and prompt (pins.go).
		ev.Server = s.guardReady(ev.Server, connOf(g.client))
		g.settle()
		// The client's {"server": info} becomes {"server": name, "info": info}.
		s.h.emit(kind, withServer(s.name, jsonx.MustMarshal(map[string]jsonx.RawMessage{"info": orEmpty(ev.Server)})))
		// A server that comes (back) may change the aggregated tools
		// (and, pinned, its prompts and resources are checked at once).
		s.h.background("the tools refresh of server "+s.name, func() { s.refresh(listTools) })
		if s.h.pins != nil {
			for _, k := range []listKind{listPrompts, listResources} {
				s.h.background("the "+listKinds[k].key+" refresh of server "+s.name, func() { s.refresh(k) })
			}
		}
		return
	case "restarting":
		var ev struct {
			Reason string `json:"reason"`
		}
		_ = jsonx.Unmarshal(payload, &ev)
		s.mu.Lock()
		s.lastErr = ev.Reason
		s.mu.Unlock()
		s.noteLoss(payload)
		for _, l := range s.lists {
			l.invalidate()
		}
		s.h.dropRequestsOf(s)
		g.settle()
	case "failed", "closed":
		var ev struct {
			Message string `json:"message"`
			Reason  string `json:"reason"`
		}
		_ = jsonx.Unmarshal(payload, &ev)
		s.mu.Lock()
		if ev.Message != "" {
			s.lastErr = ev.Message
		} else if ev.Reason != "" {
			s.lastErr = ev.Reason
		}
		s.mu.Unlock()
		s.noteLoss(payload)
		s.h.dropRequestsOf(s)
		g.settle()
		// Its items left the aggregated lists.
		for k := range s.lists {
			s.announce(listKind(k), 0)
		}
	case "progress":
		// The client's call id becomes the host's.
		var p map[string]any
		if jsonx.Unmarshal(payload, &p) == nil {
			if n, ok := p["call_id"].(jsonx.Number); ok {
				if cid, err := n.Int64(); err == nil {
					if hid, ok := s.h.hostCallID(s, uint64(cid)); ok {
						p["call_id"] = hid
						payload = jsonx.MustMarshal(p)
					}
				}
			}
		}
	case "notification":
		var n struct {
			Method string `json:"method"`
		}
		_ = jsonx.Unmarshal(payload, &n)
		for i, method := range listChangedMethods {
			if n.Method == method {
				s.lists[i].invalidate()
				k := listKind(i)
				s.h.background("the "+listKinds[k].key+" refresh of server "+s.name, func() { s.refresh(k) })
			}
		}
	}
	s.h.emit(kind, withServer(s.name, payload))
}

// refresh re-fetches one list and tells the application when the
// aggregated list changed.
func (s *server) refresh(k listKind) {
	s.useBegin()
	defer s.useEnd()
	if c := s.client(); c == nil || c.State() != core.StateReady {
		return
	}
	items, err := s.lists[k].get(s)
	if err != nil && err.Status != core.StatusUnsupported {
		return
	}
	s.announce(k, s.fingerprint(k, items))
}

// announce records what the aggregated list k holds of this server and
// emits list_changed when that differs from the last announcement. It
// never blocks on the server (the client's delivery goroutine calls it).
func (s *server) announce(k listKind, print uint64) {
	s.announceMu.Lock()
	defer s.announceMu.Unlock()
	if s.announced[k] == print {
		return
	}
	s.announced[k] = print
	s.h.emit("list_changed", jsonx.MustMarshal(map[string]string{"server": s.name, "list": listKinds[k].key}))
	s.h.recordListChanged(s.name, listKinds[k].key)
}

// fingerprint sums what the aggregated list k takes of items (the guard
// chain left out what tools.allow and tools.deny do not permit); 0 means
// nothing.
func (s *server) fingerprint(k listKind, items []item) uint64 {
	sum := fnv.New64a()
	n := 0
	for _, it := range items {
		n++
		_, _ = sum.Write(it.raw)
		_, _ = sum.Write([]byte{0})
	}
	if n == 0 {
		return 0
	}
	return sum.Sum64() | 1 // never 0
}

// onRequest takes a server request and passes it to the host's handler
// with a host-wide id and the server's name.
func (s *server) onRequest(c *core.Client, id uint64, kind string, payload []byte) {
	h := s.h
	hid := h.nextRequest.Add(1)
	h.mu.Lock()
	h.requests[hid] = pendingRequest{srv: s, client: c, id: id}
	h.mu.Unlock()
	body := withServer(s.name, payload)
	h.out.Push(func() {
		reg := h.handlers.Load()
		if reg == nil || reg.Handler == nil || !reg.Enter() {
			if h.takeRequest(hid) {
				_ = c.Respond(id, core.StatusUnsupported, nil)
			}
			return
		}
		defer reg.Exit()
		reg.Handler(hid, kind, body)
	}, callbackgate.Event)
}

func (h *Host) takeRequest(hid uint64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.requests[hid]
	delete(h.requests, hid)
	return ok
}

// dropRequestsOf forgets the requests of a server whose connection is gone
// (its client dropped them).
func (h *Host) dropRequestsOf(s *server) {
	h.mu.Lock()
	for id, pr := range h.requests {
		if pr.srv == s {
			delete(h.requests, id)
		}
	}
	h.mu.Unlock()
}

// hasTool reports whether the server's cached tool list has name.
func (s *server) hasTool(name string) bool {
	s.useBegin()
	defer s.useEnd()
	if c := s.client(); c == nil || c.State() != core.StateReady {
		return false
	}
	items, err := s.lists[listTools].get(s)
	if err != nil {
		return false
	}
	for _, it := range items {
		if it.name == name {
			return true
		}
	}
	return false
}

// exposedName keeps a name within the characters MCP allows in tool
// names.
func exposedName(name string) string {
	if name == "" {
		return "_"
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

func orEmpty(raw []byte) []byte {
	if len(raw) == 0 {
		return []byte("{}")
	}
	return raw
}

// hostCallID finds the host's id of one of s's calls.
func (h *Host) hostCallID(s *server, clientID uint64) (uint64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, hc := range h.calls {
		if hc.srv == s && hc.clientID == clientID {
			return id, true
		}
	}
	return 0, false
}

// maxToolName is the longest tool name MCP allows (2025-11-25: 1 to 128
// characters).
const maxToolName = 128

// boundedName shortens a name past maxToolName to a prefix of it and a hash
// of the whole, so two long names stay distinct.
func boundedName(name string) string {
	if len(name) <= maxToolName {
		return name
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	sum := strconv.FormatUint(uint64(h.Sum32()), 16)
	return name[:maxToolName-len(sum)-1] + "_" + sum
}
