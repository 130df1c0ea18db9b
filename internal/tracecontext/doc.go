// Package tracecontext validates and carries W3C trace context
// (traceparent, tracestate, baggage) the way MCP puts it in a request's
// params._meta (SEP-414). It knows nothing of clients or transports: the
// core asks it whether a value may leave, and for the _meta members to
// send, and reads trace context back out of a server's request.
package tracecontext
