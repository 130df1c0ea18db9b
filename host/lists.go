package host

import (
	"math"
	"sync"
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

type listKind int

const (
	listTools listKind = iota
	listPrompts
	listResources
)

type listKindInfo struct {
	method string // the list request
	key    string // the result's list member
	id     string // the member that names an item
}

var listKinds = [...]listKindInfo{
	{"tools/list", "tools", "name"},
	{"prompts/list", "prompts", "name"},
	{"resources/list", "resources", "uri"},
}

var listChangedMethods = [...]string{
	"notifications/tools/list_changed",
	"notifications/prompts/list_changed",
	"notifications/resources/list_changed",
}

// maxListPages bounds one list walk.
const maxListPages = 1000

// item is one listed tool, prompt or resource as the server sent it.
type item struct {
	name string
	raw  []byte
}

// listCache is one server's cached list. It answers without a round trip
// until the server says it changed: a list_changed notification (on a
// 2026-07-28 server, through the listen stream), a restart, or a gap in
// that stream (core.Client.ListChangeGaps: changes may have gone unheard),
// each of which makes the next caller fetch it. A positive ttlMs (SEP-2549)
// bounds how long it is fresh; past that the next caller fetches it (on
// use: nothing polls on the TTL). A 2026-07-28 result without ttlMs (or
// with 0) promises no freshness of its own: the list is kept on the listen
// stream's promise, as a legacy server's is on its list_changed
// notifications (docs/host.md, "Lists"); while no listen carries the
// server's changes (protocol.listen off, a listen refused or ended) there
// is no such promise, and it is fetched on every use.
type listCache struct {
	kind listKindInfo

	mu      sync.Mutex
	items   []item
	valid   bool
	expires time.Time    // zero: until invalidated
	client  *core.Client // the client the list was fetched from
	gaps    uint64       // its ListChangeGaps before that fetch
	gen     uint64       // bumped by invalidate: a fetch begun before stores nothing
	flight  chan struct{}
	lastErr *core.Error
}

func (l *listCache) invalidate() {
	l.mu.Lock()
	l.valid = false
	l.gen++
	l.mu.Unlock()
}

// currentLocked reports whether the cached list may answer: valid, within
// its ttlMs if it has one, and no change may have gone unheard since it
// was fetched. l.mu is held.
func (l *listCache) currentLocked(c *core.Client) bool {
	return l.heardLocked(c) && (l.expires.IsZero() || time.Now().Before(l.expires))
}

// heardLocked: the list is valid and no change may have gone unheard
// since it was fetched (its ttlMs aside). l.mu is held.
func (l *listCache) heardLocked(c *core.Client) bool {
	return l.valid && c == l.client && (c == nil || c.ListChangeGaps() == l.gaps)
}

// cached returns the cached list when it is current, without waiting.
func (l *listCache) cached(c *core.Client) ([]item, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.currentLocked(c) {
		return nil, false
	}
	return l.items, true
}

// get returns the cached list, fetching it when it is not current;
// concurrent callers share one fetch.
func (l *listCache) get(s *server) ([]item, *core.Error) {
	for {
		c := s.client()
		l.mu.Lock()
		if l.currentLocked(c) {
			items := l.items
			l.mu.Unlock()
			return items, nil
		}
		if l.flight != nil {
			ch := l.flight
			l.mu.Unlock()
			<-ch
			l.mu.Lock()
			// The fetch waited for answers even if its ttlMs already ran
			// out (a ttlMs shorter than the fetch must not loop).
			err, fresh := l.lastErr, l.heardLocked(c)
			items := l.items
			l.mu.Unlock()
			if err != nil {
				return nil, err
			}
			if fresh {
				return items, nil
			}
			continue
		}
		ch, gen := make(chan struct{}), l.gen
		l.flight = ch
		l.mu.Unlock()
		return l.fetchAndStore(s, ch, gen)
	}
}

// fetchAndStore fetches the list and keeps it, unless it was invalidated
// meanwhile (gen), then lets the callers waiting on ch go on.
func (l *listCache) fetchAndStore(s *server, ch chan struct{}, gen uint64) ([]item, *core.Error) {
	c := s.client()
	var gaps uint64
	if c != nil {
		gaps = c.ListChangeGaps() // before the request: a gap during it makes the list stale
	}
	conn := connOf(c) // before the request: a restart during it is a later connection
	items, ttl, err := l.fetch(s)
	if err == nil {
		r := &guardReq{op: guardList, s: s, k: kindOf(l.kind), conn: conn, items: items}
		_ = s.h.guards(r) // a list is never refused, only cleaned and filtered
		items = r.items
	}
	unheard := c != nil && s.isModern() && !c.HearsListChanges()
	l.mu.Lock()
	l.flight, l.lastErr = nil, err
	if err == nil && gen == l.gen {
		l.items, l.valid, l.client, l.gaps = items, true, c, gaps
		l.expires = time.Time{}
		switch {
		case ttl != nil:
			// 2026-07-28: the result says how long it stays fresh.
			l.expires = time.Now().Add(time.Duration(*ttl) * time.Millisecond)
		case unheard:
			// Without ttlMs and with no listen carrying the server's
			// changes, nothing would say the list changed: it is stale
			// at once (SEP-2549), and serves only the callers that
			// waited for it.
			l.expires = time.Now()
		}
	}
	l.mu.Unlock()
	close(ch)
	return items, err
}

// fetch walks every page of the list. A server without the capability has
// an empty list. ttl is the smallest ttlMs of the pages when every page of
// a 2026-07-28 server's list carries a positive one, otherwise nil.
func (l *listCache) fetch(s *server) ([]item, *int64, *core.Error) {
	var out []item
	modern := s.isModern()
	allTTL, minTTL := modern, int64(math.MaxInt64) // every page's ttlMs positive; the smallest
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page >= maxListPages {
			return nil, nil, core.Errorf(core.StatusProtocol, "the server %s sent more than %d pages of %s", jsonQuote(s.name), maxListPages, l.kind.key)
		}
		var params []byte
		if cursor != "" {
			params = jsonx.MustMarshal(map[string]string{"cursor": cursor})
		}
		// The host's own request: no telemetry record (core.CallOptions.Unrecorded).
		res, err := s.client().CallSync(l.kind.method, params, core.CallOptions{Unrecorded: true})
		if err != nil {
			if err.Status == core.StatusUnsupported {
				return nil, nil, nil
			}
			return nil, nil, err
		}
		var doc map[string]jsonx.RawMessage
		if uerr := jsonx.Unmarshal(res, &doc); uerr != nil {
			return nil, nil, core.Errorf(core.StatusProtocol, "the server %s sent a malformed %s result", jsonQuote(s.name), l.kind.method)
		}
		var raws []jsonx.RawMessage
		if len(doc[l.kind.key]) > 0 {
			if uerr := jsonx.Unmarshal(doc[l.kind.key], &raws); uerr != nil {
				return nil, nil, core.Errorf(core.StatusProtocol, "the server %s sent a malformed %s result (%s is not an array)", jsonQuote(s.name), l.kind.method, l.kind.key)
			}
		}
		for _, raw := range raws {
			var named map[string]any
			if jsonx.Unmarshal(raw, &named) != nil {
				continue
			}
			name, _ := named[l.kind.id].(string)
			out = append(out, item{name: name, raw: append([]byte(nil), raw...)})
		}
		if modern {
			// A page without a positive ttlMs promises no freshness, and
			// then neither does the list.
			var t int64
			if v, ok := doc["ttlMs"]; ok && jsonx.Unmarshal(v, &t) == nil && t > 0 {
				minTTL = min(minTTL, t)
			} else {
				allTTL = false
			}
		}
		var next string
		if v, ok := doc["nextCursor"]; ok {
			_ = jsonx.Unmarshal(v, &next)
		}
		if next == "" || seen[next] {
			if allTTL {
				return out, &minTTL, nil
			}
			return out, nil, nil
		}
		seen[next] = true
		cursor = next
	}
}

func (s *server) isModern() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.era == "modern"
}

// readyServers are the servers a list covers.
func (h *Host) readyServers() []*server {
	h.mu.Lock()
	freed := h.freed
	h.mu.Unlock()
	if freed {
		return nil
	}
	var out []*server
	for _, s := range h.servers {
		if c := s.client(); c != nil && c.State() == core.StateReady {
			out = append(out, s)
		}
	}
	return out
}

// gather fetches one list from every ready server in parallel. When every
// cached list is current (the common case: a search) it answers without a
// goroutine or a wait.
func (h *Host) gather(k listKind) ([]*server, [][]item, map[string]string) {
	h.wakeAll()
	servers := h.readyServers()
	lists := make([][]item, len(servers))
	if h.gatherCached(k, servers, lists) {
		return servers, lists, map[string]string{}
	}
	errs := make([]*core.Error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					h.Recovered(r, "the "+listKinds[k].key+" listing of server "+s.name)
					errs[i] = h.Poisoned()
				}
			}()
			s.useBegin()
			defer s.useEnd()
			lists[i], errs[i] = s.lists[k].get(s)
		}()
	}
	wg.Wait()
	failed := map[string]string{}
	for i, err := range errs {
		if err != nil {
			failed[servers[i].name] = err.Message
		}
	}
	return servers, lists, failed
}

// gatherCached fills lists from the servers' current cached lists, and
// reports whether every one was current. Reading a cached list is a use of
// its server (for idle_ms) like a fetch.
func (h *Host) gatherCached(k listKind, servers []*server, lists [][]item) bool {
	for i, s := range servers {
		s.useBegin()
		items, ok := s.lists[k].cached(s.client())
		s.useEnd()
		if !ok {
			return false
		}
		lists[i] = items
	}
	return true
}

// ListTools lists the tools of every ready server, named by the host's
// tool_prefix mode, each with "server" and "original_name":
// {"tools":[...], "errors"?: {server: message}}. With deferred_tools it
// lists only the tools always loaded and the host's search tool.
func (h *Host) ListTools() ([]byte, *core.Error) {
	c, failed, err := h.toolCatalogue()
	if err != nil {
		return nil, err
	}
	r := &guardReq{op: guardExpose, h: h, cat: c}
	if err := h.guards(r); err != nil {
		return nil, err
	}
	return listResult("tools", r.exposed, failed), nil
}

// ListPrompts lists the prompts of every ready server, each with "server".
func (h *Host) ListPrompts() ([]byte, *core.Error) { return h.listPlain(listPrompts) }

// ListResources lists the resources of every ready server, each with
// "server".
func (h *Host) ListResources() ([]byte, *core.Error) { return h.listPlain(listResources) }

func (h *Host) listPlain(k listKind) ([]byte, *core.Error) {
	servers, lists, failed := h.gather(k)
	entries := make([]jsonx.RawMessage, 0)
	for i, s := range servers {
		for _, it := range lists[i] {
			var obj map[string]any
			if jsonx.Unmarshal(it.raw, &obj) != nil {
				continue
			}
			obj["server"] = s.name
			entries = append(entries, jsonx.MustMarshal(obj))
		}
	}
	return listResult(listKinds[k].key, entries, failed), nil
}

func listResult(key string, entries []jsonx.RawMessage, failed map[string]string) []byte {
	return rawDoc(key, entries, failed)
}

// rawDoc is {"errors"?: failed, key: [entries...]} (members in the order
// jsonx.MustMarshal sorts them) around entries the host made itself, valid
// JSON: marshalling them as raw messages would parse every one again to
// validate it, which was most of what a search of a cached catalogue cost.
func rawDoc(key string, entries []jsonx.RawMessage, failed map[string]string) []byte {
	n := 32 + len(key)
	for _, e := range entries {
		n += len(e) + 1
	}
	buf := make([]byte, 0, n)
	buf = append(buf, '{')
	if len(failed) > 0 {
		buf = append(buf, `"errors":`...)
		buf = append(buf, jsonx.MustMarshal(failed)...)
		buf = append(buf, ',')
	}
	buf = jsonx.AppendString(buf, key)
	buf = append(buf, ':', '[')
	for i, e := range entries {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, e...)
	}
	return append(buf, ']', '}')
}
