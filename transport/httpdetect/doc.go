// Package httpdetect is the transport behind configuration type "http": it
// finds out which HTTP transport a server speaks, as the specification's
// backwards-compatibility procedure describes (2025-11-25, "Backwards
// Compatibility").
//
// The first message, initialize, is POSTed with Streamable HTTP. If the
// server answers 400, 404 or 405, it is taken for a 2024-11-05 server: the
// transport opens the legacy HTTP+SSE stream on the same URL, waits for its
// endpoint event, and sends the same initialize there. Any other outcome
// settles on Streamable HTTP; in particular 401 and 403 mean authorization
// and network errors mean the server is unreachable, so neither is a reason
// to try another transport. Name reports the choice ("streamable_http" or
// "sse") from the moment it is made, which is before the core reads it for
// the server info.
package httpdetect
