// Package gateway serves a host.Host as one MCP server: an application
// that only speaks MCP (Claude Desktop, VS Code, an agent framework) gets
// the host's supervision, search, pins, sandbox and telemetry through one
// entry in its config. It is the server side of the library and reuses
// the core's codec (core.DecodeMessage, core.Append*) and eras: there is
// no second protocol stack.
//
// What it holds, by file:
//
//   - The server and its sessions (server.go, session.go): Server takes
//     the host's handlers, counts the front sessions (bounded by
//     max_sessions, closed after session_idle_timeout_ms), stops
//     gracefully; Session is one front client's negotiated era,
//     capabilities, calls, log level and subscriptions.
//   - Options (options.go): the JSON the C ABI's lmcp_server_new takes.
//   - Dispatch (dispatch.go): one front message, by method, in either era:
//     initialize (2024-11-05 ... 2025-11-25, negotiated), server/discover
//     and per-request _meta (2026-07-28), ping, logging/setLevel,
//     cancellation, the front's answers to relayed requests.
//   - Calls (calls.go, route.go): tools/call, prompts/get, resources/read
//     and completion/complete as host calls with no deadline of the
//     gateway's own; what an exposed name or URI stands for; resource
//     subscriptions shared upstream.
//   - Lists and names (lists.go, names.go): the host's aggregated lists
//     with names bounded to 64 characters and shared URIs told apart.
//   - Caching hints (cachehints.go): ttlMs and cacheScope on the
//     2026-07-28 era's cacheable results, always "private".
//   - Relay (relay.go): the host's (and the sessions' own hosts') events to the sessions they concern
//     (list_changed, progress, logs, resource updates) and a server's
//     sampling, elicitation and roots requests to the front call that
//     caused them: a request in the initialize era, an input_required
//     result in 2026-07-28, refused at once when the front lacks the
//     capability or the request cannot be attributed.
//   - The application's ear (forward.go): the host's events handed on,
//     after the gateway's use, to a handler the application sets on the
//     server (lmcp_server_set_event_handler), since the gateway holds the
//     host's own.
//   - Listens (listen.go): subscriptions/listen, how a 2026-07-28 front
//     hears list changes and resource updates.
//   - Per-session servers (in server.go): a server marked per_session
//     gets one instance per front session (host.Subset), closed with it.
//   - The stdio front (stream.go): newline-delimited messages on a
//     reader and a writer, bounded lines, a queue so that no sender waits
//     on the front.
//   - The Streamable HTTP front (http.go, sse.go, loopback.go): POST with
//     JSON or SSE replies, the GET stream, Mcp-Session-Id, DELETE,
//     Last-Event-ID resumption; loopback binding, Host and Origin checks,
//     body and header bounds.
//   - Front authentication (jwt.go, and the bearer check in http.go): a
//     static bearer token, or JWTs checked against the issuer's JWKS as an
//     OAuth 2.1 resource server.
package gateway
