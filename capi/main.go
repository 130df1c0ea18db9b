// Command capi is the C ABI of liblemonmcp: the cgo exports declared in
// include/lemonmcp.h, and nothing else. Each export validates its arguments,
// converts C data to Go, calls the core, and converts back; protocol logic
// lives in the pure-Go packages. It is built with -buildmode=c-shared.
//
// Every export recovers panics and reports them as LMCP_E_INTERNAL, so a Go
// panic never crosses into the host; a panic while serving a client poisons
// that client (core.Client.Poisoned), one while serving an lmcp_host that
// host (host.Host.Poisoned). Host function pointers are only ever invoked
// through the bridge functions in bridge.c, which also keep the per-thread
// callback frames lmcp_client_free and lmcp_host_free read (handle.go).
// Handles may be freed while other exports use them: see handleKind.
//
// The files, by object:
//
//	exports.go      the library-wide exports (version, features, diagnostics)
//	handle.go       handleKind: the glue every client and host export shares
//	client.go       the lmcp_client exports      client_bridge.c  their C wrappers
//	host.go         the lmcp_host exports        host_bridge.c    their C wrappers
//	search.go       lmcp_host_search_tools
//	hostfile.go     lmcp_host_new_file, lmcp_host_warnings (config files as other applications write them)
//	queue.go        the completion queue's exports, lmcp_client_call_queued
//	host_queue.go   lmcp_host_call_queued, lmcp_host_call_tool_queued
//	host_query.go   lmcp_host_query, lmcp_host_query_queued (the lists and the search without blocking)
//	pins.go         lmcp_host_pins, lmcp_host_approve
//	server.go       the lmcp_server exports (the gateway)  server_bridge.c  its C wrapper
//	syncwait.go/.c  how a blocking call's C thread waits: in C on a futex, or on its own thread's read(2)
//	syncqueue.go    blocking calls submitted from C to a library goroutine (core.SyncSubmit)
//	threadprocs.go  more Ps while many threads sleep in blocking calls made on their own threads
//	telemetry.go    the telemetry handler setters of both kinds, the diagnostics histograms
//	status.go       lmcp_status_string, and the header's statuses held to core's
//	cmem.go         the conversions between C and Go data
//	bridge.h/.c     the trampolines and callback frames client and host share
package main

func main() {}
