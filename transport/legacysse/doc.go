// Package legacysse is the HTTP+SSE transport of MCP revision 2024-11-05,
// deprecated since 2025-03-26 but still spoken by many servers.
//
// Start opens one long-lived GET stream and waits (bounded by
// Config.EndpointTimeout and Start's context) for the server's "endpoint"
// event, which names the URL to POST messages to. That URL is resolved
// against the stream's URL and must have the same origin (scheme, host and
// port): a server cannot send the client's messages, and the credentials
// in the configured headers, somewhere else. Every message is then POSTed
// there (the server answers 202), and everything the server says arrives
// as "message" events on the stream, where the core matches responses to
// requests by id.
//
// As with Streamable HTTP, Send returns as soon as a request's POST is on
// its way and reports a failed POST through Sink.RequestFailed. With the
// transport's own client the POSTs skip net/http's connection goroutines
// (transport/internal/callerhttp): a waiting sender's on its own thread
// in blocking system calls, any other over a kept connection in the
// netpoller. The
// session lives and dies with the stream: when it ends, the transport
// closes (Closed with the reason), and the core fails every pending call.
// There is no resumption, no session header and no protocol-version
// header in this revision.
package legacysse
