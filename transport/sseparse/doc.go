// Package sseparse reads a text/event-stream (Server-Sent Events) body, as
// both HTTP transports receive it: the Streamable HTTP transport on POST and
// GET responses, the legacy HTTP+SSE transport on its single GET stream.
//
// It follows the WHATWG event-stream interpretation rules: lines end in LF,
// CR or CRLF (also split across reads); a leading UTF-8 BOM is skipped;
// "data" lines are joined with "\n"; "event" names the type ("message" when
// absent); "id" sets the last event ID, which persists across events and is
// what a client resumes from; "retry" sets the reconnection delay; lines
// starting with ':' are comments; unknown fields are ignored; an event that
// is still incomplete when the stream ends is discarded.
//
// Memory is bounded whatever the server sends. An event's data may hold at
// most the limit given to NewReader (the client's max_message_bytes), other
// field values at most MaxFieldBytes; an event over either limit is reported
// once as a *TooLargeError, as soon as the limit is crossed, and the rest of
// it is skipped without being stored. Data bytes go straight from the read
// buffer into the event's data buffer, so a large message is copied once.
package sseparse
