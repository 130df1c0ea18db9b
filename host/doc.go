// Package host runs many named MCP servers for one application: it parses
// the common "mcpServers" configuration, owns one supervised core.Client
// per server, connects them in parallel (a server that fails never fails
// the others), aggregates their tools, prompts and resources (cached per
// server, refreshed on list_changed), routes tool calls by name, and
// passes every server's events and requests to one set of handlers with
// the server's name attached. The C ABI's lmcp_host is a handle to a Host.
package host
