package host

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/canonjson"
	"github.com/lemonmcp/lemonmcp/internal/hiddenchars"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// The host guards the application against what its servers say about
// their definitions. Every listed definition loses its hidden characters
// (internal/hiddenchars), pins or not. With "pins", every definition a
// server offers is pinned as the SHA-256 of its canonical JSON (the whole
// object as offered), its instructions apart, and one that differs from its
// pin (changed), is new on a kind already pinned (new: a rename is new) or
// carries hidden characters (flagged) is held: not listed, so neither
// searched nor offered by deferred loading, and a call to it is refused at
// once (heldReason, a map lookup). Changed instructions hold every tool and
// prompt of the server. An approval pins exactly the hash that was shown.

// Definition statuses.
const (
	PinApproved = "approved"
	PinChanged  = "changed"
	PinNew      = "new"
	PinFlagged  = "flagged"
	PinRemoved  = "removed"
)

// pinKindNames are the kinds as events and approvals name them, by
// listKind; instructions are "instructions".
var pinKindNames = [...]string{"tool", "prompt", "resource"}

const pinInstructions = "instructions"

// offered is one definition as the server last offered it.
type offered struct {
	name     string
	raw      []byte // as sent: the hash is over it
	clean    []byte // without hidden characters: what the application sees
	hash     string // sha256:<hex> of raw's canonical JSON ("" without pins)
	findings []hiddenchars.Finding
	badName  bool // the name itself carries hidden characters
}

// verdict is a definition's status after a check.
type verdict struct {
	status     string
	pinnedHash string
	pinned     jsonx.RawMessage // the pinned definition, for a diff
	reason     string           // why it is held ("" when it is not)
}

// guard is one server's side of it.
type guard struct {
	mu       sync.Mutex
	offered  [3]map[string]*offered // by name, from the last list
	verdicts [3]map[string]verdict  // by name, removed ones included
	instr    *offered               // the instructions of the last handshake
	instrV   verdict
	storeErr string // the pin store's last failure
	// checked is, per kind, the pins the verdicts were given against: a
	// refresh that brings the same definitions while the pin file was not
	// replaced keeps them (the usual list_changed or restart).
	checked   [3]*pinServer
	instrPins *pinServer        // the pins the instructions were judged against
	reported  map[string]string // kind/name → status and hash last announced

	// held: name → why, per kind; instrHeld: why every tool and prompt is
	// held (nil: they are not). Read on every call without a lock.
	held      [3]atomic.Pointer[map[string]*heldWhy]
	instrHeld atomic.Pointer[heldWhy]
	// judged is, per kind, the connection whose list was last judged;
	// instrJudged the connection whose instructions were (guardchain.go:
	// a use waits for both).
	judged      [3]atomic.Pointer[connKey]
	instrJudged atomic.Pointer[connKey]
	// tools is offered[listTools], read without g.mu (which a pin store's
	// load holds): the tool names a route guessed from a prefix is checked
	// against (toolOfGuess). Each list stores a new map.
	tools atomic.Pointer[map[string]*offered]
}

// PinUnchecked is the status of a definition held because the pin store
// failed: it could not be checked.
const PinUnchecked = "unchecked"

// heldWhy is why a definition is held, as data (the "held" member of a
// refusal's error data) and in words that fit every host: a binding that
// names its own commands builds its message from the data, never from the
// words. Kind "instructions" (name "") holds every tool and prompt.
type heldWhy struct {
	Server string `json:"server"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Status string `json:"status"`
	text   string
}

// refusal is the error of a use of what w holds.
func (w *heldWhy) refusal() *core.Error {
	return &core.Error{Status: core.StatusPolicyDenied, Message: w.text, Data: jsonx.MustMarshal(map[string]*heldWhy{"held": w})}
}

// heldFor is why the definition name of kind k is held, with status (a
// pin status, or FindingHiddenName for a name with hidden characters and
// no pins); detail, when not "", replaces the status's own words.
func (s *server) heldFor(k listKind, name, status string) *heldWhy {
	return s.heldWithDetail(k, name, status, "")
}

func (s *server) heldWithDetail(k listKind, name, status, detail string) *heldWhy {
	why := detail
	if why == "" {
		why = whyHeld(status)
	}
	w := &heldWhy{Server: s.name, Kind: pinKindNames[k], Name: hiddenchars.Strip(name), Status: status}
	w.text = "the " + w.Kind + " " + jsonQuote(w.Name) + " of the server " + jsonQuote(s.name) + " is held: " + why
	if status == PinFlagged || status == FindingHiddenName {
		w.Status = PinFlagged
	}
	return w
}

// FindingHiddenName holds, without pins, a definition whose name carries
// hidden characters (its status is "flagged").
const FindingHiddenName = "hidden_name"

// heldReason says why a definition is held (nil when it is not).
func (g *guard) heldReason(k listKind, name string) *heldWhy {
	if k != listResources {
		if r := g.instrHeld.Load(); r != nil {
			return r
		}
	}
	if m := g.held[k].Load(); m != nil {
		return (*m)[name]
	}
	return nil
}

// pinHash is sha256:<hex> of raw's canonical JSON.
func pinHash(raw []byte) string {
	canon, err := canonjson.Canonicalize(raw)
	if err != nil {
		canon = raw // not JSON: its bytes, which still change when it does
	}
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// identity is what names a server in the pin store: its name and its
// command, arguments and working directory, or its URL (never its env or
// headers, where secrets live).
func serverIdentity(name string, client []byte) (string, map[string]any) {
	var cfg struct {
		Transport map[string]any `json:"transport"`
	}
	_ = jsonx.Unmarshal(client, &cfg)
	id := map[string]any{"name": name}
	for _, k := range []string{"command", "args", "cwd", "url"} {
		if v, ok := cfg.Transport[k]; ok {
			id[k] = v
		}
	}
	canon, _ := canonjson.Append(nil, id)
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:]), id
}

func kindOf(kind listKindInfo) listKind {
	for i, ki := range listKinds {
		if ki.key == kind.key {
			return listKind(i)
		}
	}
	return listTools
}

// whyHeld is the reason of a held status.
func whyHeld(status string) string {
	switch status {
	case PinChanged:
		return "its definition changed since it was pinned; review the change and approve it to use it"
	case PinNew:
		return "it is new on a server already pinned; review it and approve it to use it"
	case PinFlagged:
		return "its definition carries hidden characters; review it and approve it to use it"
	case FindingHiddenName:
		return "its name carries hidden characters"
	}
	return status
}

// loadPins reads the server's pins; with first_use "trust", or when there
// is nothing to approve (absent: instructions the server does not offer,
// pinned as absent so that adding some later is a change), a kind never
// seen is pinned as offered (what carries hidden characters excepted).
// The caller holds g.mu.
func (s *server) loadPins(kindKey string, absent bool, trust func() map[string]*pinEntry) (*pinServer, error) {
	ps, _, err := s.h.pins.load(s.identKey)
	if err != nil {
		return nil, err
	}
	seen := ps != nil && (kindKey == pinInstructions && ps.Instructions != nil || kindKey != pinInstructions && ps.Kinds[kindKey] != nil)
	if seen || (s.h.cfg.Pins.FirstUse != FirstUseTrust && !absent) {
		return ps, nil
	}
	entries := trust()
	return s.h.pins.update(s.identKey, s.name, s.identity, func(p *pinServer) (bool, error) {
		if kindKey == pinInstructions {
			if p.Instructions != nil {
				return false, nil // another process was first
			}
			p.Instructions = entries[""]
			return p.Instructions != nil, nil
		}
		if p.Kinds[kindKey] != nil {
			return false, nil
		}
		p.Kinds[kindKey] = entries
		return true, nil
	})
}

// checkPins gives each offered definition of kind k its verdict, holds
// what is not approved and announces each change; same says the offered
// definitions are those of the last check. The caller holds g.mu.
func (s *server) checkPins(k listKind, same bool) {
	g := &s.guard
	key := listKinds[k].key
	cur := g.offered[k]
	ps, err := s.loadPins(key, false, func() map[string]*pinEntry {
		m := map[string]*pinEntry{}
		for name, o := range cur {
			if len(o.findings) == 0 && !o.badName {
				m[name] = &pinEntry{Hash: o.hash, Definition: o.clean}
			}
		}
		return m
	})
	held := map[string]*heldWhy{}
	verdicts := make(map[string]verdict, len(cur))
	if err != nil {
		g.checked[k] = nil
		g.storeErr = err.Error()
		for name := range cur {
			held[name] = s.heldWithDetail(k, name, PinUnchecked, "the pin store failed: "+err.Error())
		}
		g.held[k].Store(&held)
		return
	}
	g.storeErr = ""
	if same && ps != nil && ps == g.checked[k] && g.verdicts[k] != nil {
		return // the same definitions against the same pins
	}
	g.checked[k] = ps
	var pins map[string]*pinEntry
	if ps != nil {
		pins = ps.Kinds[key]
	}
	for name, o := range cur {
		v := judge(o, pins[name])
		if v.status != PinApproved {
			w := s.heldFor(k, name, v.status)
			v.reason = w.text
			held[name] = w
		}
		verdicts[name] = v
	}
	for name, pe := range pins {
		if cur[name] == nil {
			verdicts[name] = verdict{status: PinRemoved, pinnedHash: pe.Hash, pinned: pe.Definition}
		}
	}
	g.held[k].Store(&held)
	g.verdicts[k] = verdicts
	// Announce what is not approved, and forget what was announced and is
	// approved now (no need to walk every approved definition).
	var changed []string
	for name, v := range verdicts {
		if v.status != PinApproved {
			changed = append(changed, name)
		}
	}
	prefix := pinKindNames[k] + "/"
	for key := range g.reported {
		if name, ok := strings.CutPrefix(key, prefix); ok && verdicts[name].status == PinApproved {
			changed = append(changed, name)
		}
	}
	sort.Strings(changed)
	for _, name := range changed {
		s.announceVerdict(pinKindNames[k], name, cur[name], verdicts[name])
	}
}

// judge compares one offered definition with its pin (nil: none).
func judge(o *offered, pe *pinEntry) verdict {
	v := verdict{}
	if pe != nil {
		v.pinnedHash, v.pinned = pe.Hash, pe.Definition
	}
	switch {
	case pe != nil && pe.Hash == o.hash:
		v.status = PinApproved
	case len(o.findings) > 0 || o.badName:
		v.status = PinFlagged
	case pe != nil:
		v.status = PinChanged
	default:
		v.status = PinNew
	}
	return v
}

// judgeInstructionsOn judges the instructions of connection conn, read
// from the client, unless they were (by the ready event or a use that
// came first).
func (s *server) judgeInstructionsOn(conn connKey) {
	if conn.c == nil || judgedOn(s.guard.instrJudged.Load(), conn) {
		return
	}
	info, err := conn.c.ServerInfo()
	if err != nil {
		return // not ready: the use waits for it, a list has nothing
	}
	var m struct {
		Instructions *string `json:"instructions"`
	}
	_ = jsonx.Unmarshal(info, &m)
	s.checkInstructions(m.Instructions, conn)
}

// checkInstructions pins the instructions of a handshake (nil: none) on
// connection conn and holds every tool and prompt when they are not
// approved. It returns the instructions the application may see (nil:
// none, or held).
func (s *server) checkInstructions(text *string, conn connKey) *string {
	g := &s.guard
	raw := []byte("null")
	if text != nil {
		raw = jsonx.MustMarshal(*text)
	}
	o := &offered{name: "", raw: raw}
	o.clean, o.findings = hiddenchars.CleanJSON(raw)
	var visible *string
	if text != nil {
		c := hiddenchars.Strip(*text)
		visible = &c
	}
	if s.h.pins == nil {
		if len(o.findings) > 0 {
			s.h.emitLog("warning", "the instructions of the server "+jsonQuote(s.name)+" carried hidden characters; they were removed")
		}
		return visible
	}
	o.hash = pinHash(raw)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.instr = o
	visible = s.judgeInstructions(visible)
	g.instrJudged.Store(&conn)
	return visible
}

// judgeInstructions is checkInstructions' verdict. The caller holds g.mu.
func (s *server) judgeInstructions(visible *string) *string {
	g := &s.guard
	o := g.instr
	if o == nil {
		return visible
	}
	ps, err := s.loadPins(pinInstructions, string(o.raw) == "null", func() map[string]*pinEntry {
		if len(o.findings) > 0 {
			return map[string]*pinEntry{}
		}
		return map[string]*pinEntry{"": {Hash: o.hash, Definition: o.clean}}
	})
	if err != nil {
		g.storeErr = err.Error()
		why := &heldWhy{Server: s.name, Kind: pinInstructions, Status: PinUnchecked}
		why.text = "every tool and prompt of the server " + jsonQuote(s.name) + " is held: the pin store failed: " + err.Error()
		g.instrHeld.Store(why)
		return nil
	}
	g.instrPins = ps
	var pe *pinEntry
	if ps != nil {
		pe = ps.Instructions
	}
	v := judge(o, pe)
	if v.status != PinApproved {
		why := &heldWhy{Server: s.name, Kind: pinInstructions, Status: v.status}
		why.text = "every tool and prompt of the server " + jsonQuote(s.name) + " is held: its instructions are " + v.status + "; review them and approve them to use the server"
		v.reason = why.text
		g.instrHeld.Store(why)
		visible = nil
	} else {
		g.instrHeld.Store(nil)
	}
	g.instrV = v
	s.announceVerdict(pinInstructions, "", o, v)
	return visible
}

// announceVerdict emits one definition_changed event per change of a
// definition's status or hash, and none for an approved one.
func (s *server) announceVerdict(kind, name string, o *offered, v verdict) {
	g := &s.guard
	key := kind + "/" + name
	if v.status == PinApproved {
		delete(g.reported, key)
		return
	}
	hash := ""
	if o != nil {
		hash = o.hash
	}
	if g.reported == nil {
		g.reported = map[string]string{}
	}
	if g.reported[key] == v.status+" "+hash {
		return
	}
	g.reported[key] = v.status + " " + hash
	s.h.emit("definition_changed", jsonx.MustMarshal(defReport(s.name, kind, name, o, v)))
}

// defReport is one definition as events and lmcp_host_pins show it.
func defReport(server, kind, name string, o *offered, v verdict) map[string]any {
	r := map[string]any{"status": v.status, "findings": []hiddenchars.Finding{}}
	if server != "" {
		r["server"], r["kind"], r["name"] = server, kind, hiddenchars.Strip(name)
	}
	if o != nil {
		r["hash"] = o.hash
		if len(o.findings) > 0 {
			r["findings"] = o.findings
		}
	}
	if v.pinnedHash != "" {
		r["pinned_hash"] = v.pinnedHash
	}
	return r
}

// Pins reports, per server with pins, what each definition's status is:
// {server: {"instructions": {..}, "tools": {name: {"status", "hash",
// "pinned_hash"?, "findings", "held"?, "reason"?, "offered"?, "pinned"?}},
// "prompts": {..}, "resources": {..}, "error"?}}. It lists every ready
// server's lists first (cached ones are not fetched again).
func (h *Host) Pins() ([]byte, *core.Error) {
	if h.pins == nil {
		return nil, core.Errorf(core.StatusInvalidState, "the host has no \"pins\" configuration")
	}
	for k := range listKinds {
		h.gather(listKind(k))
	}
	out := map[string]any{}
	for _, s := range h.servers {
		if s.client() == nil {
			continue
		}
		out[s.name] = s.pinsReport()
	}
	return jsonx.MustMarshal(out), nil
}

func (s *server) pinsReport() map[string]any {
	g := &s.guard
	others := s.h.toolNamesBesides(s) // before g.mu: each guard is locked alone
	g.mu.Lock()
	defer g.mu.Unlock()
	r := map[string]any{}
	if g.storeErr != "" {
		r["error"] = g.storeErr
	}
	if g.instr != nil && g.instrV.status != "" {
		e := defReport("", "", "", g.instr, g.instrV)
		detail(e, g.instr, g.instrV)
		r[pinInstructions] = e
	}
	for k := range listKinds {
		m := map[string]any{}
		for name, v := range g.verdicts[k] {
			o := g.offered[k][name]
			e := defReport("", "", "", o, v)
			detail(e, o, v)
			if k == int(listTools) && o != nil {
				if sf := s.h.shadowing(s, o.raw, g.offered[k], others); len(sf) > 0 {
					all := []any{}
					for _, f := range o.findings {
						all = append(all, f)
					}
					for _, f := range sf {
						all = append(all, f)
					}
					e["findings"] = all
				}
			}
			m[hiddenchars.Strip(name)] = e
		}
		r[listKinds[k].key] = m
	}
	return r
}

// detail adds to a report entry what a reviewer needs: whether it is held
// and why, and for a change both definitions (without hidden characters).
func detail(e map[string]any, o *offered, v verdict) {
	if v.reason != "" {
		e["held"], e["reason"] = true, v.reason
	}
	if v.status == PinApproved || v.status == PinRemoved {
		return
	}
	if o != nil {
		e["offered"] = jsonx.RawMessage(o.clean)
	}
	if len(v.pinned) > 0 {
		e["pinned"] = v.pinned
	}
}

// Approve pins exactly hash for one definition of a server: kind is
// "tool", "prompt", "resource" or "instructions" (name ignored). A hash
// the server does not offer now is refused with StatusInvalidState: an
// approval is bound to what was shown.
func (h *Host) Approve(serverName, kind, name, hash string) *core.Error {
	k := listKind(-1)
	for i, n := range pinKindNames {
		if n == kind {
			k = listKind(i)
		}
	}
	if k < 0 && kind != pinInstructions {
		return invalid("approval.kind", `must be one of "tool", "prompt", "resource", "instructions"`)
	}
	if h.pins == nil {
		return core.Errorf(core.StatusInvalidState, "the host has no \"pins\" configuration")
	}
	s := h.byName[serverName]
	if s == nil {
		return core.Errorf(core.StatusNotFound, "no server named %s in the host", jsonQuote(serverName))
	}
	g := &s.guard
	g.mu.Lock()
	var o *offered
	what := "the instructions"
	if k >= 0 {
		o = g.offered[k][name]
		what = "a " + kind + " named " + jsonQuote(name)
	} else {
		o = g.instr
	}
	if o == nil {
		g.mu.Unlock()
		return core.Errorf(core.StatusInvalidState, "the server %s does not offer %s now (list it first)", jsonQuote(s.name), what)
	}
	if o.hash != hash {
		g.mu.Unlock()
		return core.Errorf(core.StatusInvalidState, "the server %s no longer offers %s with the hash %s (it offers %s now: review it again)", jsonQuote(s.name), what, jsonQuote(hash), o.hash)
	}
	entry := &pinEntry{Hash: o.hash, Definition: o.clean}
	_, err := h.pins.update(s.identKey, s.name, s.identity, func(p *pinServer) (bool, error) {
		if k < 0 {
			p.Instructions = entry
			return true, nil
		}
		key := listKinds[k].key
		if p.Kinds[key] == nil {
			p.Kinds[key] = map[string]*pinEntry{}
		}
		p.Kinds[key][name] = entry
		return true, nil
	})
	if err != nil {
		g.mu.Unlock()
		return core.Errorf(core.StatusInternal, "%s", err.Error())
	}
	// The new verdicts at once (a call right after is not refused), then
	// fresh lists for the application (with their list_changed).
	refresh := []listKind{k}
	if k < 0 {
		s.judgeInstructions(nil)
		refresh = []listKind{listTools, listPrompts}
	} else {
		s.checkPins(k, false)
	}
	for _, rk := range refresh {
		s.lists[rk].invalidate() // before the verdicts show, as rejudgeIfPinsChanged does
	}
	g.mu.Unlock()
	for _, rk := range refresh {
		h.background("the "+listKinds[rk].key+" refresh of server "+s.name, func() { s.refresh(rk) })
	}
	return nil
}

// guardReady checks the instructions of a ready event's server info, of
// connection conn, and returns the info with the instructions the
// application may see.
func (s *server) guardReady(info []byte, conn connKey) []byte {
	var m map[string]any
	if len(info) == 0 || jsonx.Unmarshal(info, &m) != nil {
		s.checkInstructions(nil, conn)
		return info
	}
	var text *string
	if t, ok := m["instructions"].(string); ok {
		text = &t
	}
	visible := s.checkInstructions(text, conn)
	if text == nil || (visible != nil && *visible == *text) {
		return info
	}
	if visible == nil {
		delete(m, "instructions")
	} else {
		m["instructions"] = *visible
	}
	return jsonx.MustMarshal(m)
}

// refusedTool is the refusal of a call to a tool no route leads to because
// the chain refuses it (held, or denied by tools.allow/tools.deny): name
// as list_tools would give it (server__tool, or the tool alone: the
// server's own name or the host's, see toolOfGuess). nil: no server offers
// such a tool.
func (h *Host) refusedTool(name string) *core.Error {
	if i := strings.Index(name, Separator); i > 0 {
		if s := h.byName[name[:i]]; s != nil {
			if err := h.refusedUse(s, name[i+len(Separator):]); err != nil {
				return err
			}
		}
	}
	for _, s := range h.servers {
		if err := h.refusedUse(s, name); err != nil {
			return err
		}
	}
	return nil
}

// refusedUse is the chain's refusal of a use of the tool of s that name
// (its own or the host's name of it) names, nil when s does not offer it.
func (h *Host) refusedUse(s *server, name string) *core.Error {
	tool, err := s.toolOfGuess(name)
	if err != nil {
		return err
	}
	if !s.guard.offers(listTools, tool) {
		return nil
	}
	if err := h.guards(&guardReq{op: guardUse, s: s, k: listTools, name: tool}); err != nil && err != errVerdictPending {
		return err
	}
	return nil
}

// offers reports whether the server's last list of kind k had name.
func (g *guard) offers(k listKind, name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.offered[k][name] != nil
}

// heldMethods are the requests that use one definition, by the member of
// their params that names it.
var heldMethods = map[string]struct {
	kind   listKind
	member string
}{
	"tools/call":     {listTools, "name"},
	"prompts/get":    {listPrompts, "name"},
	"resources/read": {listResources, "uri"},
}

// useOf is the guard chain's use of the definition a request the
// application sends itself (lmcp_host_call) names: nil for a request that
// uses none.
func (s *server) useOf(method string, params []byte) *guardReq {
	hm, ok := heldMethods[method]
	if !ok {
		return nil
	}
	var p map[string]any
	_ = jsonx.Unmarshal(params, &p)
	name, _ := p[hm.member].(string)
	return &guardReq{op: guardUse, s: s, k: hm.kind, name: name}
}

// ApproveJSON is Approve of {"server", "kind"? ["tool"], "name", "hash"}
// (lmcp_host_approve).
func (h *Host) ApproveJSON(raw []byte) *core.Error {
	var m map[string]any
	if jsonx.Unmarshal(raw, &m) != nil || m == nil {
		return invalid("approval", `must be a JSON object {"server", "kind", "name", "hash"}`)
	}
	a := map[string]string{"kind": "tool"}
	for k, v := range m {
		switch k {
		case "server", "kind", "name", "hash":
			s, ok := v.(string)
			if !ok {
				return invalid("approval."+k, "must be a string")
			}
			a[k] = s
		default:
			return invalid("approval."+k, "is not a known field (known: server, kind, name, hash)")
		}
	}
	for _, k := range []string{"server", "hash"} {
		if a[k] == "" {
			return invalid("approval."+k, "is required")
		}
	}
	if _, ok := m["name"]; !ok && a["kind"] != pinInstructions {
		return invalid("approval.name", "is required (except for the instructions)")
	}
	return h.Approve(a["server"], a["kind"], a["name"], a["hash"])
}
