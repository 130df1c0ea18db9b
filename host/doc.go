// Package host runs many named MCP servers for one application: it parses
// the common "mcpServers" configuration, owns one supervised core.Client
// per server, connects them in parallel (a server that fails never fails
// the others), aggregates their tools, prompts and resources (cached per
// server, refreshed on list_changed), routes tool calls by name, and
// passes every server's events and requests to one set of handlers with
// the server's name attached. The C ABI's lmcp_host is a handle to a Host.
//
// Every callback into the application (events, requests, completions)
// runs through the host's gate (queue.go), the internal/callbackgate.Gate
// a client runs its own callbacks through: one at a time, in order, on one
// library goroutine, counted, so that Free can promise what
// core.Client.Free promises: when it returns, every accepted call has
// completed, no callback runs or will start, and the destroys have run. A
// recovered panic poisons the host (poison.go).
package host
