package core

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lemonmcp/lemonmcp/auth"
	"github.com/lemonmcp/lemonmcp/internal/resultcache"
)

// Result caching of the 2026-07-28 era (SEP-2549): what is cacheable, keys,
// freshness, scope and invalidation are internal/resultcache's; here is what
// ties it to a client: which calls may use the cache, the authorization
// context of an HTTP client, answering a call from the cache, and the
// process-wide hit and miss counters.

// Process-wide counters for lmcp_diagnostics.
var cacheHits, cacheMisses atomic.Int64

// CacheStats reports how many cacheable calls were answered from the result
// cache (hits) and how many went to the server (misses), across clients.
func CacheStats() (hits, misses int64) { return cacheHits.Load(), cacheMisses.Load() }

// resultCache is one client's cache; cacheLookup is what a cacheable
// request remembers between its send and its response.
type (
	resultCache = resultcache.Cache
	cacheLookup = resultcache.Lookup
)

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

// authContext is the authorization context private results are kept
// under ("" for a client without credentials).
func (c *Client) authContext() string {
	if c.opts.AuthContext == nil {
		return ""
	}
	return c.opts.AuthContext()
}

// cacheKeyFor is the key of a request: "" when it is not cacheable (not a
// cacheable method, the cache disabled or bypassed, an MRTR retry).
func (c *Client) cacheKeyFor(cl *call, params []byte) (string, string) {
	if c.opts.NoResultCache || cl.internal != nil || cl.mod == nil || cl.mod.retry != nil {
		return "", ""
	}
	key, uri, ok := resultcache.Key(cl.method, params)
	if !ok {
		return "", ""
	}
	return key, uri
}

// cacheServe answers a cacheable request from the cache when it can. On a
// miss (or when the call bypasses the cache with no_cache) it records the
// lookup on the call, for cacheStore. It reports whether the call was
// answered.
func (c *Client) cacheServe(cl *call, reqID int64, params []byte) bool {
	if cl.mod != nil {
		cl.mod.cached = nil
	}
	key, uri := c.cacheKeyFor(cl, params)
	if key == "" {
		return false
	}
	result, fresh, lk := c.cache.Get(key, uri, c.authContext(), time.Now())
	if !fresh || cl.opts.NoCache {
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
	c.onModernResult(cl, result)
	return true
}

// cacheStore keeps a complete result of a request that missed, when it
// carries a positive ttlMs and nothing invalidated the method meanwhile.
func (c *Client) cacheStore(lk *cacheLookup, method string, result []byte) {
	c.cache.Store(lk, c.authContext(), method, result, time.Now())
}

// cacheInvalidate makes stale what a server notification says changed.
func (c *Client) cacheInvalidate(method string, params []byte) {
	c.cache.Invalidate(method, params)
}

// cacheDiscover keeps the handshake's server/discover result, so that a
// host's server/discover is answered without a round trip while fresh.
func (c *Client) cacheDiscover(result []byte) {
	if c.opts.NoResultCache {
		return
	}
	c.cache.StoreDiscover(c.authContext(), result, time.Now())
}
