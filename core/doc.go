// Package core is the MCP client engine: one Client runs one session with
// one server over a transport.Transport, and holds nothing else. It is pure
// Go and knows nothing of cgo: the C ABI in capi is a thin layer over it,
// and the configuration (including the per-call options) is parsed in
// config.
//
// What core holds, by file. Files of the 2026-07-28 era are named
// modern_*.go, those of server-to-client requests serverreq_*.go; tests
// sit beside what they test, fake_server_test.go and modern_fake_test.go
// are the in-memory servers they talk to, example_test.go is the package
// example.
//
//   - The session (client.go, inbound.go): Client, its states, handler
//     registration, Connect, Close and Free; the inbound Sink the transport
//     feeds (responses, notifications such as progress and cancellation,
//     server requests), and events for the host.
//   - The codec (wire.go, wire_params.go, wire_serve.go, the server side a
//     gateway answers its front clients with): JSON-RPC envelopes decoded into
//     copies the client owns, and requests built around the host's params,
//     which pass through as given unless _meta or a progress token is
//     merged in. Its server side (wire_serve.go): the messages a server
//     reads and writes, for the gateway (package gateway), so that the
//     library has one JSON-RPC codec.
//   - The pending table and call lifecycle (calls.go): request ids, per-call
//     timeouts (with reset on progress and a total bound), cancellation and
//     progress; the cancellation notices on their way, which Close lets out
//     before it closes the transport (notices.go).
//   - Legacy-era negotiation and capability gating (handshake.go): the
//     initialize handshake with version negotiation, and the server's
//     capabilities, which gate calls (a method the server did not declare
//     is refused before anything is sent).
//   - Era choice (modern_discover.go): in ModeAuto, a server/discover probe
//     that picks the 2026-07-28 era when the server speaks it.
//   - Requests of the 2026-07-28 era (modern_send.go, modern_params.go,
//     modern_headers.go): per-request _meta, the standard HTTP headers and
//     the x-mcp-header tool parameters (a tool whose annotations break the
//     rules is dropped from tools/list).
//   - Multi round-trip requests (modern_mrtr.go): a server may answer a
//     call with input_required instead of a result; the library asks the
//     host for each input (sampling, elicitation, roots) through the same
//     path as a legacy server request, then retries the call with the
//     answers and the server's requestState, a bounded number of times.
//   - Subscriptions (modern_listen.go): subscriptions/listen, the one open
//     request whose filter names what the host wants to hear about.
//   - Tasks (modern_tasks.go): the tasks extension, where a tools/call the
//     server turns into a task stays one call to the host.
//   - Tasks of the 2025-11-25 revision (tasks_legacy.go, tasks_receiver.go):
//     as requestor, a task-augmented tools/call followed with tasks/get,
//     tasks/result and tasks/cancel until it completes once; as receiver,
//     task-augmented sampling and elicitation requests the client serves.
//   - Result caching (modern_cache.go): which calls use the cache and how
//     a call is answered from it; the cache itself (keys, ttlMs, scope,
//     invalidation) is internal/resultcache.
//   - Pagination (pages.go): the AllPages option walks list cursors and
//     returns one merged result.
//   - Server-to-client requests (serverreq_*.go): serverreq_dispatch.go
//     passes a server's request to the host's handler and its answer back
//     to the server (requests and answers checked by internal/hostvalidate);
//     serverreq_roots.go, serverreq_elicitation.go and serverreq_sampling.go
//     are the three kinds, the last with the sampling policy (local bounds,
//     a review that sees a redacted summary, then the delegate);
//     validate.go lets a binding check an answer with the same validator
//     before it gives it (lmcp_validate_answer).
//   - The OAuth layer's host boundary (authhost.go): the library's own
//     questions to the host (authorize, token load and save), over the same
//     app requests.
//   - Supervision (supervise.go): a supervised client restarts its server
//     after a loss, by its RestartPolicy; the transport it restarts is a
//     transport/respawn wrapper, so the Client stays the same object.
//   - Why a server failed (lastloss.go, permanent.go): the last loss the
//     server caused (exit status or signal, its last stderr lines), read at
//     once by a host reporting a failed call; and the start failures that
//     cannot be cured by retrying (no such executable, the config refused),
//     which a supervised client reports at once instead of backing off;
//     TransportDone, which makes a host's failure report "final".
//   - Result verification (verify.go): the resources/read "verify" option
//     checks size, digest and skill frontmatter (parsed by
//     internal/frontmatter) before content reaches the host.
//   - Callbacks (deliver.go, poison.go): host callbacks run in order on a
//     library goroutine through the client's internal/callbackgate.Gate,
//     which Free closes and drains; a recovered panic poisons the client.
//   - What the ABI reports (status.go, options.go, features.go): Status and
//     Error, the ABI's result codes; Options with their defaults and the
//     protocol revisions; Features, what lmcp_features says of this build.
//   - Trace context (tracecontext.go): a call's W3C trace context, checked
//     by internal/tracecontext, merged into the _meta of its every request.
//   - Telemetry (telemetry.go, telemetry_hist.go): with a handler set, each
//     finished call, restart and failure is one TelemetryRecord, and calls
//     feed the per-method duration histograms of lmcp_diagnostics.
//
// Its callbacks (call completions, events, app requests) never run while
// a lock of the client is held, and never on the goroutine of the call that
// started the operation unless the caller asked for an inline completion
// (CallOptions.Inline), which blocking wrappers use; with
// CallOptions.Waiting too, the caller's goroutine may run the HTTP exchange
// itself, as CallSync's does (over Streamable HTTP in blocking system
// calls, so that a C host's thread, CallOptions.Thread, is woken by the
// kernel alone: SyncRoute; a goroutine only when no other such exchange
// is under way, else parked in the netpoller).
//
// Transport differences reach core only as properties a transport exposes
// (transport.HeaderCarrier, Aborter, Negotiator, LineStreamer, Networked,
// CallerExchanger), never as a test of its name.
package core
