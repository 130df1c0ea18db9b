package host

import (
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

// listCache is one server's cached list: valid until list_changed, a
// restart, or (2026-07-28 era) its ttlMs runs out.
type listCache struct {
	kind listKindInfo

	mu      sync.Mutex
	items   []item
	valid   bool
	expires time.Time // zero: until invalidated
	gen     uint64    // bumped by invalidate: a fetch begun before stores nothing
	flight  chan struct{}
	lastErr *core.Error
}

func (l *listCache) invalidate() {
	l.mu.Lock()
	l.valid = false
	l.gen++
	l.mu.Unlock()
}

// get returns the cached list, fetching it when stale; concurrent callers
// share one fetch.
func (l *listCache) get(s *server) ([]item, *core.Error) {
	for {
		l.mu.Lock()
		if l.valid && (l.expires.IsZero() || time.Now().Before(l.expires)) {
			items := l.items
			l.mu.Unlock()
			return items, nil
		}
		if l.flight != nil {
			ch := l.flight
			l.mu.Unlock()
			<-ch
			l.mu.Lock()
			err, fresh := l.lastErr, l.valid
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
		ch := make(chan struct{})
		l.flight = ch
		gen := l.gen
		l.mu.Unlock()

		items, ttl, err := l.fetch(s)
		if err == nil {
			items = s.guardList(l.kind, items) // hidden characters and pins (pins.go)
		}
		l.mu.Lock()
		l.flight, l.lastErr = nil, err
		if err == nil && gen == l.gen {
			l.items, l.valid = items, true
			l.expires = time.Time{}
			if ttl != nil {
				// 2026-07-28: the result says how long it stays fresh; 0 or
				// less is stale at once (it serves this call only).
				l.expires = time.Now().Add(time.Duration(max(*ttl, 0)) * time.Millisecond)
			}
		}
		l.mu.Unlock()
		close(ch)
		return items, err
	}
}

// fetch walks every page of the list. A server without the capability has
// an empty list. ttl is the smallest ttlMs of the pages, in the modern era.
func (l *listCache) fetch(s *server) ([]item, *int64, *core.Error) {
	var out []item
	var ttl *int64
	modern := s.isModern()
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
			var t int64
			if v, ok := doc["ttlMs"]; ok && jsonx.Unmarshal(v, &t) == nil {
				if ttl == nil || t < *ttl {
					ttl = &t
				}
			} else {
				zero := int64(0)
				ttl = &zero
			}
		}
		var next string
		if v, ok := doc["nextCursor"]; ok {
			_ = jsonx.Unmarshal(v, &next)
		}
		if next == "" || seen[next] {
			return out, ttl, nil
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

// gather fetches one list from every ready server in parallel.
func (h *Host) gather(k listKind) ([]*server, [][]item, map[string]string) {
	h.wakeAll()
	servers := h.readyServers()
	lists := make([][]item, len(servers))
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

// ListTools lists the tools of every ready server, named by the host's
// tool_prefix mode, each with "server" and "original_name":
// {"tools":[...], "errors"?: {server: message}}. With deferred_tools it
// lists only the tools always loaded and the host's search tool.
func (h *Host) ListTools() ([]byte, *core.Error) {
	c, failed, err := h.toolCatalogue()
	if err != nil {
		return nil, err
	}
	if h.cfg.Deferred != nil {
		return listResult("tools", h.deferredTools(c), failed), nil
	}
	return listResult("tools", c.raws, failed), nil
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
	doc := map[string]any{key: entries}
	if len(failed) > 0 {
		doc["errors"] = failed
	}
	return jsonx.MustMarshal(doc)
}
