// Package core is the MCP client engine: one Client runs one session with
// one server over a transport.Transport, and holds nothing else. It is pure
// Go and knows nothing of cgo: the C ABI in capi is a thin layer over it,
// and the configuration (including the per-call options) is parsed in
// config.
//
// What core holds, by file:
//
//   - The codec (wire.go, params.go): JSON-RPC envelopes decoded into
//     copies the client owns, and requests built around the host's params,
//     which pass through as given unless _meta or a progress token is
//     merged in.
//   - The session (client.go, inbound.go): the client's states, the inbound
//     Sink the transport feeds (responses, notifications such as progress
//     and cancellation, server requests), and events for the host.
//   - The pending table and call lifecycle (calls.go): request ids, per-call
//     timeouts (with reset on progress and a total bound), cancellation and
//     progress.
//   - Options and features (options.go, features.go): the client's options
//     with their defaults and the protocol revisions it speaks, and what
//     lmcp_features reports about this build.
//   - Era negotiation and capability gating (handshake.go, discover.go): the
//     legacy-era initialize handshake with version negotiation, in ModeAuto
//     a server/discover probe that picks the 2026-07-28 era when the server
//     speaks it, and the server's capabilities, which gate calls (a method
//     the server did not declare is refused before anything is sent).
//   - The 2026-07-28 era (modernsend.go, modernparams.go, toolheaders.go,
//     mrtr.go): per-request _meta and HTTP headers, and multi round-trip
//     requests (MRTR): a server may answer a call with input_required
//     instead of a result; the library asks the host for each input
//     (sampling, elicitation, roots) through the same path as a legacy
//     server request, then retries the call with the answers and the
//     server's requestState, a bounded number of times. Beside them, the
//     era's subscriptions/listen (listen.go), the ttlMs result cache
//     (resultcache.go) and the tasks extension (tasks.go).
//   - Pagination (pages.go): the AllPages option walks list cursors and
//     returns one merged result.
//   - Server request dispatch (hostreq.go, roots.go, elicitation.go,
//     sampling.go, authhost.go): server-to-client requests go to the host's
//     handler and its answer back to the server; the requests and answers
//     are checked by internal/hostvalidate. The sampling policy (local
//     bounds, a review that sees a redacted summary, then the delegate)
//     lives here, as does the OAuth layer's host boundary.
//   - Result verification (verify.go): the resources/read "verify" option
//     checks size, digest and skill frontmatter (parsed by
//     internal/frontmatter) before content reaches the host.
//   - Supervision (supervise.go): the restart policy that brings a lost
//     server back with backoff.
//   - Delivery and status (deliver.go, poison.go, status.go): host callbacks
//     run in order on a library goroutine; a recovered panic poisons the
//     client; Status and Error are the ABI's result codes.
//
// Its callbacks (call completions, events, host requests) never run while
// a lock of the client is held, and never on the goroutine of the call that
// started the operation unless the caller asked for an inline completion
// (CallOptions.Inline), which blocking wrappers use.
//
// Transport differences reach core only as properties a transport exposes
// (transport.HeaderCarrier, Aborter, Negotiator, LineStreamer), never as a
// test of its name.
package core
