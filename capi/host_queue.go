package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "bridge.h"
*/
import "C"

import (
	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
	"github.com/lemonmcp/lemonmcp/internal/cqueue"
)

// The host's calls with completion queues (lmcp_host_call_queued,
// lmcp_host_call_tool_queued): lmcp_host_call and lmcp_host_call_tool whose
// done pushes into a queue, so a binding waits for a host's calls as it
// waits for a client's (see lmcp_client_call_queued). The push runs where
// the host delivers a done callback: on its delivery goroutine, after the
// call's progress events, and lmcp_host_free returns once the cancelled
// completions are queued.

//export lmcp_host_call_queued
func lmcp_host_call_queued(hp *C.lmcp_host, server *C.cchar_t, method *C.cchar_t, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t, queue *C.lmcp_queue, tag C.uint64_t, callIDOut *C.lmcp_call_id, errOut **C.char) (st C.lmcp_status) {
	defer recoverHost(&st, errOut, hp, "lmcp_host_call_queued")
	h, q, err := lookupHostQueue(hp, queue)
	if err != nil {
		return setErr(errOut, err)
	}
	srv, err := cString(server, "server")
	if err != nil {
		return setErr(errOut, err)
	}
	m, p, opts, err := callArgs(method, params, plen, options, olen)
	if err != nil {
		return setErr(errOut, err)
	}
	id, err := h.Call(srv, m, p, opts, queuedDone(q, tag))
	return setCallID(id, err, callIDOut, errOut)
}

//export lmcp_host_call_tool_queued
func lmcp_host_call_tool_queued(hp *C.lmcp_host, name *C.cchar_t, args *C.cchar_t, alen C.size_t, options *C.cchar_t, olen C.size_t, queue *C.lmcp_queue, tag C.uint64_t, callIDOut *C.lmcp_call_id, errOut **C.char) (st C.lmcp_status) {
	defer recoverHost(&st, errOut, hp, "lmcp_host_call_tool_queued")
	h, q, err := lookupHostQueue(hp, queue)
	if err != nil {
		return setErr(errOut, err)
	}
	tool, err := cString(name, "name")
	if err != nil {
		return setErr(errOut, err)
	}
	opts, err := config.ParseCallOptions(goBytes(options, olen))
	if err != nil {
		return setErr(errOut, err)
	}
	id, err := h.CallTool(tool, goBytes(args, alen), opts, queuedDone(q, tag))
	return setCallID(id, err, callIDOut, errOut)
}

// lookupHostQueue resolves the host and the queue of a queued call.
func lookupHostQueue(hp *C.lmcp_host, queue *C.lmcp_queue) (*host.Host, *cqueue.Queue, *core.Error) {
	h, err := lookupHost(hp)
	if err != nil {
		return nil, nil, err
	}
	q, err := lookupQueue(queue)
	if err != nil {
		return nil, nil, err
	}
	return h, q, nil
}

// setCallID ends a call export: the error, or the accepted call's id.
func setCallID(id uint64, err *core.Error, callIDOut *C.lmcp_call_id, errOut **C.char) C.lmcp_status {
	if err != nil {
		return setErr(errOut, err)
	}
	if callIDOut != nil {
		*callIDOut = C.lmcp_call_id(id)
	}
	return setErr(errOut, nil)
}
