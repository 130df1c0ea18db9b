// Package httptests drives LemonMCP's HTTP transports end to end against
// the official Go SDK's servers, run in-process on loopback: Streamable HTTP
// (stateful and stateless, SSE and JSON responses) and the legacy HTTP+SSE
// transport, plus detection (configuration type "http"). The client is built
// exactly as a host builds it: config.Parse, core.New, Connect, WaitReady.
//
// The fault tests wrap the SDK handler in a middleware that can restart the
// server (so the old session is unknown and answers 404), answer 500, reset
// the connection mid-stream, send an event over the size limit, or leave a
// stream silent; each checks that only the affected call fails and the
// client carries on.
package httptests
