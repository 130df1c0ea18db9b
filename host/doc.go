// Package host runs many named MCP servers for one application: it parses
// the common "mcpServers" configuration, owns one supervised core.Client
// per server, connects them in parallel (a server that fails never fails
// the others), aggregates their tools, prompts and resources (cached per
// server, refreshed on list_changed), guards what they offer (hidden
// characters, shadowing, pins, tool filters, deferred loading), routes tool
// calls by name, and passes every server's events and requests to one set
// of handlers with the server's name attached. The C ABI's lmcp_host is a
// handle to a Host.
//
// What host holds, by file; tests sit beside what they test.
//
//   - The host and its servers (host.go, server.go): Host, New, Connect,
//     WaitReady, Call, CallTool (routed by name), Cancel, Close and Free;
//     one server's client, state and report, and its events (ready,
//     restarting, failed, list_changed) turned into the host's;
//     frontcall.go finds the host's call behind a client's call id, for a
//     gateway that routes a server's request to the session that called;
//     subset.go makes a host of some of this one's servers (a gateway's
//     "per_session" servers, one instance per front session).
//   - Starting and stopping (lazy.go, idle.go): "start": "lazy" servers
//     start on their first use; with "idle_ms" a lazy server nothing uses
//     is stopped and replaced by an unstarted client (a generation).
//   - The configuration (config.go, file.go, dialects.go, jsonc.go,
//     variables.go, envfile.go): the "mcpServers" document and the host
//     options, the config file read from a path (LoadFile), the other
//     applications' dialects (Claude Desktop, Claude Code, Cursor, VS Code,
//     Cline, Roo Code, Windsurf), JSON with comments, ${VAR} references,
//     and VS Code's envFile.
//   - The lists (lists.go, catalogue.go): one cache per server and kind,
//     fetched on use, kept until list_changed, a restart, a listen gap or
//     its ttlMs; the aggregated tool list under the host's names
//     (tool_prefix) with the routes of those names.
//   - The guard chain (guardchain.go): every list a server sends and every
//     use of one of its definitions (a call, a prompt get, a resource read)
//     pass through one chain of stages, in order: the pin verdict (a use
//     waits until its server's definitions were judged on its current
//     connection), the route (a tool name routed by its server prefix alone
//     names the tool the server offers under it), hidden characters,
//     shadowing, pins, tool filters
//     (tools.allow / tools.deny), deferred loading. The stages' own work
//     lives in shadowing.go (a description naming another server's tool),
//     pins.go (definitions pinned by hash, verdicts, held reasons as data,
//     lmcp_host_pins and lmcp_host_approve), pinsconfig.go (the "pins"
//     option), pindocs.go (each server's pins, one document of the
//     store's "pins" collection: the host's one door to package store),
//     pinwatch.go (the pins re-read every 250 ms, so an approval made by
//     another process or machine sharing the store takes effect here),
//     appask.go (the host's own requests to the application: store_load
//     and store_save of {"type": "app"}), deferred.go (the
//     "deferred_tools" option and the host's search_tools).
//   - Search and queries (search.go, query.go): the tool search over the
//     catalogue (internal/toolsearch), search_tools' answer, and the
//     host's own questions answered like calls (StartQuery).
//   - Why a server failed (failure.go): the first cause of a trouble, exit
//     status or signal, and the server's last stderr lines, scrubbed of its
//     configured secrets.
//   - Callbacks (queue.go, poison.go): every callback into the application
//     (events, requests, completions) runs through the host's gate, the
//     internal/callbackgate.Gate a client runs its own callbacks through:
//     one at a time, in order, on one library goroutine, counted, so that
//     Free can promise what core.Client.Free promises: when it returns,
//     every accepted call has completed, no callback runs or will start,
//     and the destroys have run. A recovered panic poisons the host.
//   - Telemetry (telemetry.go): the servers' call records and the host's
//     own (list changes, failures), named by server.
package host
