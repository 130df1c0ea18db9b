// Package core is the MCP client engine: the JSON-RPC session over a
// transport, request ids and the pending table, per-call timeouts,
// cancellation and progress, capability gating, the legacy-era handshake with
// version negotiation, pagination, and the dispatch of server requests to
// host handlers.
//
// core is pure Go and knows nothing of cgo: the C ABI in capi is a thin layer
// over it. Its callbacks (call completions, events, host requests) never run
// while a lock of the client is held, and never on the goroutine of the call
// that started the operation unless the caller asked for an inline
// completion (CallOptions.Inline), which blocking wrappers use.
package core
