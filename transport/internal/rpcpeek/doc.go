// Package rpcpeek reads just enough of a JSON-RPC message for a transport to
// route it: whether it is a response and to which request id, or which
// request a notifications/cancelled abandons. It stops reading as soon as it
// knows, so a large result costs almost nothing, and it works on the head of
// a message that was cut short (an SSE event over the size limit). The core
// alone decodes messages for real.
package rpcpeek
