package host

import (
	"bytes"
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
	held      [3]atomic.Pointer[map[string]string]
	instrHeld atomic.Pointer[string]
}

// heldReason says why a definition is held ("" when it is not).
func (g *guard) heldReason(k listKind, name string) string {
	if k != listResources {
		if r := g.instrHeld.Load(); r != nil {
			return *r
		}
	}
	if m := g.held[k].Load(); m != nil {
		return (*m)[name]
	}
	return ""
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

// guardList cleans a freshly fetched list and, with pins, checks it
// against them: what it returns is what the application may see.
func (s *server) guardList(kind listKindInfo, items []item) []item {
	k := kindOf(kind)
	g := &s.guard
	pinning := s.h.pins != nil
	var others map[string][]string
	if k == listTools && len(s.h.servers) > 1 {
		others = s.h.toolNamesBesides(s) // before g.mu: each guard is locked alone
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	prev := g.offered[k]
	next := make(map[string]*offered, len(items))
	var fresh []*offered
	for _, it := range items {
		if p := prev[it.name]; p != nil && bytes.Equal(p.raw, it.raw) {
			next[it.name] = p // unchanged bytes: nothing to compute again
			continue
		}
		o := &offered{name: it.name, raw: it.raw}
		o.clean, o.findings = hiddenchars.CleanJSON(it.raw)
		if clean, n := hiddenchars.Clean(it.name); clean != it.name || !n.Zero() {
			o.badName = true
		}
		if pinning {
			o.hash = pinHash(it.raw)
		}
		next[it.name] = o
		fresh = append(fresh, o)
	}
	g.offered[k] = next
	for _, o := range fresh {
		for _, f := range s.h.shadowing(s, o.raw, next, others) {
			s.h.emitLog("warning", "the description of the tool "+jsonQuote(hiddenchars.Strip(o.name))+" of the server "+jsonQuote(s.name)+" names the tool "+jsonQuote(f.Tool)+" of the server "+jsonQuote(f.Server)+" (shadowing)")
		}
	}
	if pinning {
		s.checkPins(k, len(fresh) == 0 && len(next) == len(prev))
	} else {
		held := map[string]string{}
		for _, o := range next {
			if o.badName {
				held[o.name] = s.heldText(k, o.name, "its name carries hidden characters")
			}
		}
		g.held[k].Store(&held)
		for _, o := range fresh {
			if len(o.findings) > 0 || o.badName {
				s.h.emitLog("warning", "the "+pinKindNames[k]+" "+jsonQuote(hiddenchars.Strip(o.name))+" of the server "+jsonQuote(s.name)+" carried hidden characters; they were removed")
			}
		}
	}
	out := make([]item, 0, len(items))
	for _, it := range items {
		if g.heldReason(k, it.name) != "" {
			continue
		}
		out = append(out, item{name: it.name, raw: next[it.name].clean})
	}
	return out
}

func kindOf(kind listKindInfo) listKind {
	for i, ki := range listKinds {
		if ki.key == kind.key {
			return listKind(i)
		}
	}
	return listTools
}

func (s *server) heldText(k listKind, name, why string) string {
	return "the " + pinKindNames[k] + " " + jsonQuote(hiddenchars.Strip(name)) + " of the server " + jsonQuote(s.name) + " is held: " + why
}

// whyHeld is the reason of a held status.
func whyHeld(status string) string {
	switch status {
	case PinChanged:
		return "its definition changed since it was pinned (review it with lmcp_host_pins, approve it with lmcp_host_approve)"
	case PinNew:
		return "it is new on a server already pinned (review it with lmcp_host_pins, approve it with lmcp_host_approve)"
	case PinFlagged:
		return "its definition carries hidden characters (review it with lmcp_host_pins, approve it with lmcp_host_approve)"
	}
	return status
}

// loadPins reads the server's pins; with first_use "trust", a kind never
// seen is pinned as offered (what carries hidden characters excepted).
// The caller holds g.mu.
func (s *server) loadPins(kindKey string, trust func() map[string]*pinEntry) (*pinServer, error) {
	ps, _, err := s.h.pins.load(s.identKey)
	if err != nil {
		return nil, err
	}
	seen := ps != nil && (kindKey == pinInstructions && ps.Instructions != nil || kindKey != pinInstructions && ps.Kinds[kindKey] != nil)
	if seen || s.h.cfg.Pins.FirstUse != FirstUseTrust {
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
	ps, err := s.loadPins(key, func() map[string]*pinEntry {
		m := map[string]*pinEntry{}
		for name, o := range cur {
			if len(o.findings) == 0 && !o.badName {
				m[name] = &pinEntry{Hash: o.hash, Definition: o.clean}
			}
		}
		return m
	})
	held := map[string]string{}
	verdicts := make(map[string]verdict, len(cur))
	if err != nil {
		g.checked[k] = nil
		g.storeErr = err.Error()
		for name := range cur {
			held[name] = s.heldText(k, name, "the pin store failed: "+err.Error())
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
			v.reason = s.heldText(k, name, whyHeld(v.status))
			held[name] = v.reason
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

// checkInstructions pins the instructions of a handshake (nil: none) and
// holds every tool and prompt when they are not approved. It returns the
// instructions the application may see (nil: none, or held).
func (s *server) checkInstructions(text *string) *string {
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
	return s.judgeInstructions(visible)
}

// judgeInstructions is checkInstructions' verdict. The caller holds g.mu.
func (s *server) judgeInstructions(visible *string) *string {
	g := &s.guard
	o := g.instr
	if o == nil {
		return visible
	}
	ps, err := s.loadPins(pinInstructions, func() map[string]*pinEntry {
		if len(o.findings) > 0 {
			return map[string]*pinEntry{}
		}
		return map[string]*pinEntry{"": {Hash: o.hash, Definition: o.clean}}
	})
	if err != nil {
		g.storeErr = err.Error()
		why := "the server " + jsonQuote(s.name) + " is held: the pin store failed: " + err.Error()
		g.instrHeld.Store(&why)
		return nil
	}
	g.instrPins = ps
	var pe *pinEntry
	if ps != nil {
		pe = ps.Instructions
	}
	v := judge(o, pe)
	if v.status != PinApproved {
		v.reason = "every tool and prompt of the server " + jsonQuote(s.name) + " is held: its instructions are " + v.status + " (review them with lmcp_host_pins, approve them with lmcp_host_approve)"
		g.instrHeld.Store(&v.reason)
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
	if h.pins == nil {
		return core.Errorf(core.StatusInvalidState, "the host has no \"pins\" configuration")
	}
	s := h.byName[serverName]
	if s == nil {
		return core.Errorf(core.StatusNotFound, "no server named %s in the host", jsonQuote(serverName))
	}
	k := listKind(-1)
	for i, n := range pinKindNames {
		if n == kind {
			k = listKind(i)
		}
	}
	if k < 0 && kind != pinInstructions {
		return invalid("kind", `must be one of "tool", "prompt", "resource", "instructions"`)
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
	g.mu.Unlock()
	for _, rk := range refresh {
		s.lists[rk].invalidate()
		h.background("the "+listKinds[rk].key+" refresh of server "+s.name, func() { s.refresh(rk) })
	}
	return nil
}

// guardReady checks the instructions of a ready event's server info and
// returns the info with the instructions the application may see.
func (s *server) guardReady(info []byte) []byte {
	var m map[string]any
	if len(info) == 0 || jsonx.Unmarshal(info, &m) != nil {
		s.checkInstructions(nil)
		return info
	}
	var text *string
	if t, ok := m["instructions"].(string); ok {
		text = &t
	}
	visible := s.checkInstructions(text)
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

// heldTool is the refusal of a call to a tool no route leads to because
// it is held: name as list_tools would give it (server__tool or the
// server's own name). nil: no server holds such a tool.
func (h *Host) heldTool(name string) *core.Error {
	if i := strings.Index(name, Separator); i > 0 {
		if s := h.byName[name[:i]]; s != nil {
			if why := s.guard.heldReason(listTools, name[i+len(Separator):]); why != "" {
				return core.Errorf(core.StatusPolicyDenied, "%s", why)
			}
		}
	}
	for _, s := range h.servers {
		if why := s.guard.heldReason(listTools, name); why != "" && s.guard.offers(listTools, name) {
			return core.Errorf(core.StatusPolicyDenied, "%s", why)
		}
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

// heldCall refuses a request the application sends itself (lmcp_host_call)
// that uses a held definition.
func (s *server) heldCall(method string, params []byte) *core.Error {
	hm, ok := heldMethods[method]
	if !ok {
		return nil
	}
	if s.guard.instrHeld.Load() == nil {
		if m := s.guard.held[hm.kind].Load(); m == nil || len(*m) == 0 {
			return nil // nothing held: no need to read the params
		}
	}
	var p map[string]any
	_ = jsonx.Unmarshal(params, &p)
	name, _ := p[hm.member].(string)
	if why := s.guard.heldReason(hm.kind, name); why != "" {
		return core.Errorf(core.StatusPolicyDenied, "%s", why)
	}
	return nil
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
