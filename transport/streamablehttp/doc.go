// Package streamablehttp is the Streamable HTTP transport of MCP revisions
// 2025-03-26 to 2025-11-25: every client message is a POST to one endpoint,
// and the server answers a request with a JSON body or an SSE stream.
//
// Requests run concurrently, one POST each: Send returns once the POST is
// on its way, and the goroutine that owns it (a runner the transport keeps
// between requests: transport/internal/runners) delivers what arrives
// (server requests and notifications on the stream, then the response) to
// the Sink, or reports the request's failure through Sink.RequestFailed. A
// failure concerns that request only; the transport never closes on its
// own, so a dead server fails the calls that try it, promptly, and the next
// call may succeed. Notifications and responses are delivered before Send
// returns (202 Accepted). A request whose sender waits for it anyway
// (Outbound.Waiting: a synchronous call) is POSTed on the sender's
// goroutine instead, and a JSON reply is delivered before Send returns: no
// goroutine is started and none hands the response back, which is most of
// a call's cost over loopback. With the transport's own client the POST is
// made in blocking system calls on a connection kept for such requests
// (transport/internal/callerhttp), so the sender's thread, a C host's
// included, is woken by the kernel when the server answers and by nothing
// else (ExchangesOnCaller). Any other reply (an SSE stream, an error
// status) goes on in a goroutine of its own, and Abort (the core's timeout)
// releases the sender. A request nobody waits on is POSTed by a runner,
// which with the transport's own client makes the exchange itself, over a
// kept connection in the netpoller (callerhttp.Pooled), without net/http's
// two goroutines per connection.
//
// Sessions: the Mcp-Session-Id the server gives with the initialize
// response is sent on every later request (POST, GET and DELETE), and the
// negotiated version goes in MCP-Protocol-Version once the core has set it.
// A 404 for a request that carried a session id means the server forgot
// the session: the transport drops the id and reports CodeSessionExpired,
// and the core re-initializes once and re-sends the request. Close ends the
// session with a DELETE (bounded in time; 405 is fine).
//
// Streams: once the session is initialized the transport opens the optional
// GET stream for messages the server starts itself (405, 404 or 406 mean
// there is none). A stream that breaks after an event id arrived is resumed
// with a GET carrying Last-Event-ID, after the delay the server asked for
// with its retry field (SEP-1699) or a bounded backoff; a response stream
// that ends before its response without an id to resume from fails its
// request. A response may arrive on any stream: each is matched by id.
//
// Limits: a JSON body or SSE event larger than MaxMessageBytes fails the
// request it answers with a clear error, in bounded memory. Configured
// headers are merged with the transport's own, which they can never
// replace, and no message includes the URL or a header value.
package streamablehttp
