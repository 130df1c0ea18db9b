package core

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lemonmcp/lemonmcp/auth"
	"github.com/lemonmcp/lemonmcp/internal/canonjson"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// Result caching of the 2026-07-28 era (SEP-2549, server/utilities/caching):
// a complete result of one of the cacheable methods that carries a positive
// ttlMs is fresh for that long after it arrived, and a call with the same
// method and the same params (the _meta aside) is answered from it without a
// round trip. A "private" result is kept under the authorization context it
// was fetched with and is never served to another one; a list_changed or
// resources/updated notification makes the matching entries stale at once.

// cacheableMethods are the methods whose complete results carry caching
// hints.
var cacheableMethods = []string{"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}

// maxCacheEntries bounds one client's cache: past it, expired entries are
// dropped and, if none are, a new result is simply not cached.
const maxCacheEntries = 1024

// Process-wide counters for lmcp_diagnostics.
var cacheHits, cacheMisses atomic.Int64

// CacheStats reports how many cacheable calls were answered from the result
// cache (hits) and how many went to the server (misses), across clients.
func CacheStats() (hits, misses int64) { return cacheHits.Load(), cacheMisses.Load() }

type cacheEntry struct {
	result  []byte
	expires time.Time
	method  string
	uri     string // resources/read only, for resources/updated
}

// resultCache is one client's cache. gen is bumped by every invalidation,
// so a response to a request sent before one is never stored after it.
type resultCache struct {
	mu      sync.Mutex
	entries map[string]cacheEntry
	gen     uint64
}

// cacheLookup is what a cacheable request remembers between its send and
// its response.
type cacheLookup struct {
	key     string // method and canonical params
	uri     string
	authCtx string
	gen     uint64
}

// AuthContextFor returns the authorization context of an HTTP client: a
// digest of the configured credential-bearing headers and of the OAuth
// layer's current access token. The digest never reveals either.
func AuthContextFor(headers map[string]string, m *auth.Manager) func() string {
	var static []string
	for k, v := range headers {
		switch strings.ToLower(k) {
		case "authorization", "cookie", "proxy-authorization", "x-api-key":
			static = append(static, strings.ToLower(k)+"\x00"+v)
		}
	}
	slices.Sort(static)
	base := ""
	if len(static) > 0 {
		sum := sha256.Sum256([]byte(strings.Join(static, "\x00")))
		base = hex.EncodeToString(sum[:8])
	}
	if m == nil {
		return func() string { return base }
	}
	return func() string { return base + "/" + m.TokenDigest() }
}

func (c *Client) authContext() string {
	if c.opts.AuthContext == nil {
		return ""
	}
	return c.opts.AuthContext()
}

// cacheKeyFor is the key of a request: "" when it is not cacheable (not a
// cacheable method, the cache disabled or bypassed, an MRTR retry).
func (c *Client) cacheKeyFor(cl *call, params []byte) (string, string) {
	if c.opts.NoResultCache || cl.internal != nil || cl.mod == nil || cl.mod.retry != nil || !slices.Contains(cacheableMethods, cl.method) {
		return "", ""
	}
	var v map[string]any
	if len(params) > 0 {
		if jsonx.Unmarshal(params, &v) != nil {
			return "", ""
		}
	}
	delete(v, "_meta")
	canon, err := canonjson.Append(nil, v)
	if err != nil {
		return "", ""
	}
	uri := ""
	if cl.method == "resources/read" {
		uri, _ = v["uri"].(string)
	}
	return cl.method + "\x00" + string(canon), uri
}

// cacheServe answers a cacheable request from the cache when it can. On a
// miss it records the lookup on the call, for cacheStore. It reports
// whether the call was answered.
func (c *Client) cacheServe(cl *call, reqID int64, params []byte) bool {
	if cl.mod != nil {
		cl.mod.cached = nil
	}
	key, uri := c.cacheKeyFor(cl, params)
	if key == "" {
		return false
	}
	lk := &cacheLookup{key: key, uri: uri, authCtx: c.authContext()}
	now := time.Now()
	rc := &c.cache
	rc.mu.Lock()
	lk.gen = rc.gen
	e, ok := rc.entries["public\x00"+key]
	if !ok || !now.Before(e.expires) {
		e, ok = rc.entries["private\x00"+lk.authCtx+"\x00"+key]
	}
	hit := ok && now.Before(e.expires) && !cl.opts.NoCache
	rc.mu.Unlock()
	if !hit {
		cacheMisses.Add(1)
		cl.mod.cached = lk
		return false
	}
	cacheHits.Add(1)
	c.mu.Lock()
	if c.pending[reqID] != cl || cl.finished {
		c.mu.Unlock()
		return true
	}
	delete(c.pending, reqID)
	cl.reqID = 0
	c.mu.Unlock()
	c.onModernResult(cl, e.result)
	return true
}

// cacheStore keeps a complete result of a request that missed, when it
// carries a positive ttlMs and nothing invalidated the method meanwhile.
func (c *Client) cacheStore(lk *cacheLookup, method string, result []byte) {
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
		if c.authContext() != lk.authCtx {
			return // the credentials changed while the request was out
		}
		key = "private\x00" + lk.authCtx + "\x00" + lk.key
	default:
		return // an unknown scope is not a promise that sharing is safe
	}
	ttl := time.Duration(*hints.TTL * float64(time.Millisecond))
	now := time.Now()
	rc := &c.cache
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.gen != lk.gen {
		return
	}
	if rc.entries == nil {
		rc.entries = make(map[string]cacheEntry)
	}
	if len(rc.entries) >= maxCacheEntries {
		for k, e := range rc.entries {
			if !now.Before(e.expires) {
				delete(rc.entries, k)
			}
		}
		if len(rc.entries) >= maxCacheEntries {
			return
		}
	}
	rc.entries[key] = cacheEntry{result: append([]byte(nil), result...), expires: now.Add(ttl), method: method, uri: lk.uri}
}

// cacheInvalidate makes stale what a server notification says changed.
func (c *Client) cacheInvalidate(method string, params []byte) {
	var methods []string
	uri := ""
	switch method {
	case "notifications/tools/list_changed":
		methods = []string{"tools/list"}
	case "notifications/prompts/list_changed":
		methods = []string{"prompts/list"}
	case "notifications/resources/list_changed":
		methods = []string{"resources/list", "resources/templates/list"}
	case "notifications/resources/updated":
		var p struct {
			URI string `json:"uri"`
		}
		if jsonx.Unmarshal(params, &p) != nil {
			return
		}
		methods, uri = []string{"resources/read"}, p.URI
	default:
		return
	}
	rc := &c.cache
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.gen++
	for k, e := range rc.entries {
		if slices.Contains(methods, e.method) && (uri == "" || e.uri == uri) {
			delete(rc.entries, k)
		}
	}
}

// cacheDiscover keeps the handshake's server/discover result, so that a
// host's server/discover is answered without a round trip while fresh.
func (c *Client) cacheDiscover(result []byte) {
	if c.opts.NoResultCache {
		return
	}
	rc := &c.cache
	rc.mu.Lock()
	gen := rc.gen
	rc.mu.Unlock()
	c.cacheStore(&cacheLookup{key: "server/discover\x00{}", authCtx: c.authContext(), gen: gen}, "server/discover", result)
}
