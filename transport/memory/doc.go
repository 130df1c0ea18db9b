// Package memory is an in-process transport pair for tests: the client side
// is a transport.Transport, the other side a Peer that a test drives as a
// scripted MCP server, reading what the client sent and writing replies.
package memory
