package resultcache

import (
	"slices"
	"sync"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/canonjson"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// methods are the methods whose complete results carry caching hints.
var methods = []string{"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}

// MaxEntries bounds one cache: past it, expired entries are dropped and, if
// none are, a new result is simply not cached.
const MaxEntries = 1024

// Cacheable reports whether complete results of method carry caching hints.
func Cacheable(method string) bool { return slices.Contains(methods, method) }

// Key is the key of a request of a cacheable method: the method and its
// params in canonical JSON, the _meta aside; uri is the resource of a
// resources/read (for resources/updated). ok is false when the method is
// not cacheable or params are not a JSON object.
func Key(method string, params []byte) (key, uri string, ok bool) {
	if !Cacheable(method) {
		return "", "", false
	}
	var v map[string]any
	if len(params) > 0 {
		if jsonx.Unmarshal(params, &v) != nil {
			return "", "", false
		}
	}
	delete(v, "_meta")
	canon, err := canonjson.Append(nil, v)
	if err != nil {
		return "", "", false
	}
	if method == "resources/read" {
		uri, _ = v["uri"].(string)
	}
	return method + "\x00" + string(canon), uri, true
}

type entry struct {
	result  []byte
	expires time.Time
	method  string
	uri     string // resources/read only, for resources/updated
}

// Cache is one client's cache; the zero Cache is empty and ready. It is
// safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	entries map[string]entry
	gen     uint64
}

// Lookup is what a cacheable request remembers between its send and its
// response, for Store.
type Lookup struct {
	key     string // method and canonical params
	uri     string
	authCtx string
	gen     uint64
}

// Get looks up a fresh result for the request with key (and uri) made
// under the authorization context authCtx: a public entry, else a private
// one of that context. It also returns the Lookup with which to Store the
// response when the result is not used.
func (c *Cache) Get(key, uri, authCtx string, now time.Time) (result []byte, fresh bool, lk *Lookup) {
	lk = &Lookup{key: key, uri: uri, authCtx: authCtx}
	c.mu.Lock()
	defer c.mu.Unlock()
	lk.gen = c.gen
	e, ok := c.entries["public\x00"+key]
	if !ok || !now.Before(e.expires) {
		e, ok = c.entries["private\x00"+authCtx+"\x00"+key]
	}
	if !ok || !now.Before(e.expires) {
		return nil, false, lk
	}
	return e.result, true, lk
}

// Store keeps a complete result of method that lk looked up, when it
// carries a positive ttlMs and a known cacheScope, and nothing invalidated
// the cache since the lookup. authCtx is the authorization context now: a
// private result is not kept when the credentials changed while the
// request was out. result is copied.
func (c *Cache) Store(lk *Lookup, authCtx, method string, result []byte, now time.Time) {
	var hints struct {
		TTL   *float64 `json:"ttlMs"`
		Scope string   `json:"cacheScope"`
	}
	if jsonx.Unmarshal(result, &hints) != nil || hints.TTL == nil || *hints.TTL <= 0 {
		return
	}
	var key string
	switch hints.Scope {
	case "public":
		key = "public\x00" + lk.key
	case "private":
		if authCtx != lk.authCtx {
			return // the credentials changed while the request was out
		}
		key = "private\x00" + lk.authCtx + "\x00" + lk.key
	default:
		return // an unknown scope is not a promise that sharing is safe
	}
	ttl := time.Duration(*hints.TTL * float64(time.Millisecond))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != lk.gen {
		return
	}
	if c.entries == nil {
		c.entries = make(map[string]entry)
	}
	if len(c.entries) >= MaxEntries {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= MaxEntries {
			return
		}
	}
	c.entries[key] = entry{result: append([]byte(nil), result...), expires: now.Add(ttl), method: method, uri: lk.uri}
}

// StoreDiscover keeps the handshake's server/discover result as the answer
// to a later server/discover without params, while fresh.
func (c *Cache) StoreDiscover(authCtx string, result []byte, now time.Time) {
	key, _, _ := Key("server/discover", nil)
	c.mu.Lock()
	gen := c.gen
	c.mu.Unlock()
	c.Store(&Lookup{key: key, authCtx: authCtx, gen: gen}, authCtx, "server/discover", result, now)
}

// Invalidate makes stale what a server notification (method, params) says
// changed; other notifications change nothing.
func (c *Cache) Invalidate(method string, params []byte) {
	var stale []string
	uri := ""
	switch method {
	case "notifications/tools/list_changed":
		stale = []string{"tools/list"}
	case "notifications/prompts/list_changed":
		stale = []string{"prompts/list"}
	case "notifications/resources/list_changed":
		stale = []string{"resources/list", "resources/templates/list"}
	case "notifications/resources/updated":
		var p struct {
			URI string `json:"uri"`
		}
		if jsonx.Unmarshal(params, &p) != nil {
			return
		}
		stale, uri = []string{"resources/read"}, p.URI
	default:
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for k, e := range c.entries {
		if slices.Contains(stale, e.method) && (uri == "" || e.uri == uri) {
			delete(c.entries, k)
		}
	}
}
