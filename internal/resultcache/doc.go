// Package resultcache is the pure part of the result caching of the
// 2026-07-28 era (SEP-2549, server/utilities/caching): which methods are
// cacheable, the key of a request, the freshness (ttlMs) and scope
// (cacheScope) a result declares, the authorization context a private
// result is kept under, and invalidation by a server's notifications.
//
// A complete result of a cacheable method that carries a positive ttlMs is
// fresh for that long after it arrived, and a request with the same method
// and the same params (the _meta aside) may be answered from it without a
// round trip. A "private" result is kept under the authorization context it
// was fetched with and is never served to another one; a list_changed or
// resources/updated notification makes the matching entries stale at once.
// Every invalidation bumps a generation, so that a response to a request
// sent before it is never stored after it.
//
// It knows nothing of calls, sessions or the wire: core asks it for a
// lookup when it sends a cacheable request, stores the complete result
// when it arrives, and counts hits and misses. Time is passed in, so the
// tests control it.
package resultcache
