package gateway

import (
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// Caching hints of the 2026-07-28 era (SEP-2549): the complete results of
// server/discover, the four lists and resources/read carry ttlMs and
// cacheScope, and the official clients refuse them without.
//
// The scope is always "private". What the gateway serves is its host's:
// lists shaped by the host's pins, approvals, filters and sandbox, from
// servers reached with the host's own credentials (whose results may be
// private to them; the host's aggregate no longer says which), and a
// front may need a token to see any of it. Nothing of it may be shared
// across the front's authorization contexts.
//
// The lists' ttlMs is 0 (stale at once): they change whenever a server
// comes, goes or restarts, a pin holds or an approval lands, and a client
// that does not listen would keep a stale list (a held tool, a missing
// approved one) for as long as a positive TTL said; the host answers a
// re-fetch from memory. A read keeps its server's ttlMs (the server knows
// its content; the front hears resources/updated when it subscribed).
const cacheScope = "private"

// withCacheHints sets ttlMs and cacheScope on a complete 2026-07-28
// result: ttlMs as its server gave it when it is a number >= 0, else 0.
func withCacheHints(result []byte) []byte {
	var doc map[string]jsonx.RawMessage
	if jsonx.Unmarshal(result, &doc) != nil || doc == nil {
		return result
	}
	var ttl *float64
	if jsonx.Unmarshal(doc["ttlMs"], &ttl) != nil || ttl == nil || *ttl < 0 {
		doc["ttlMs"] = jsonx.RawMessage("0")
	}
	doc["cacheScope"] = raw(cacheScope)
	return raw(doc)
}
