// Package transport defines the message channel between the client core and
// one MCP server: a Transport sends compact JSON-RPC texts and delivers what
// it reads to a Sink. Concrete transports live in sub-packages (stdio, and the
// HTTP transports); none of them knows JSON-RPC semantics beyond framing, so
// the core alone owns ids, methods and results. respawn wraps any of them
// for a supervised client, swapping in a new generation on each restart.
package transport
