package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "bridge.h"
*/
import "C"

import "github.com/lemonmcp/lemonmcp/core"

// The host's calls with completion queues (lmcp_host_call_queued,
// lmcp_host_call_tool_queued): lmcp_host_call and lmcp_host_call_tool whose
// done pushes into a queue, so a binding waits for a host's calls as it
// waits for a client's (see lmcp_client_call_queued). The push runs where
// the host delivers a done callback: on its delivery goroutine, after the
// call's progress events, and lmcp_host_free returns once the cancelled
// completions are queued.

//export lmcp_host_call_queued
func lmcp_host_call_queued(hp *C.lmcp_host, server *C.cchar_t, method *C.cchar_t, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t, queue *C.lmcp_queue, tag C.uint64_t, callIDOut *C.lmcp_call_id, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_call_queued")
	h, q, err := hosts.lookupQueued(hp, queue)
	if err != nil {
		return setErr(errOut, err)
	}
	srv, m, p, opts, err := serverCallArgs(server, method, params, plen, options, olen)
	if err != nil {
		return setErr(errOut, err)
	}
	id, err := startQueued(h.SyncRoute(srv), q, tag, func(done core.DoneFunc) (uint64, *core.Error) {
		return h.Call(srv, m, p, opts, done)
	})
	return callStarted(id, err, callIDOut, errOut)
}

//export lmcp_host_call_tool_queued
func lmcp_host_call_tool_queued(hp *C.lmcp_host, name *C.cchar_t, args *C.cchar_t, alen C.size_t, options *C.cchar_t, olen C.size_t, queue *C.lmcp_queue, tag C.uint64_t, callIDOut *C.lmcp_call_id, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_call_tool_queued")
	h, q, err := hosts.lookupQueued(hp, queue)
	if err != nil {
		return setErr(errOut, err)
	}
	tool, a, opts, err := toolArgs(name, args, alen, options, olen)
	if err != nil {
		return setErr(errOut, err)
	}
	id, err := startQueued(h.ToolSyncRoute(tool), q, tag, func(done core.DoneFunc) (uint64, *core.Error) {
		return h.CallTool(tool, a, opts, done)
	})
	return callStarted(id, err, callIDOut, errOut)
}
