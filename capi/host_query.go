package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "bridge.h"
*/
import "C"

import (
	"github.com/lemonmcp/lemonmcp/host"
)

// The host's queries without blocking (lmcp_host_query,
// lmcp_host_query_queued): host.StartQuery, whose completion runs as a
// host call's does, to a done callback or into a completion queue.

//export lmcpgo_host_query
func lmcpgo_host_query(hp *C.lmcp_host, query C.lmcp_query, args *C.cchar_t, alen C.size_t, done C.lmcp_done_cb, ud C.uintptr_t, callIDOut *C.lmcp_call_id, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_query")
	h, err := hosts.lookupDone(hp, done)
	if err != nil {
		return setErr(errOut, err)
	}
	id, err := h.StartQuery(host.Query(query), goBytes(args, alen), doneFunc(done, ud, handleKey(hp)))
	return callStarted(id, err, callIDOut, errOut)
}

//export lmcp_host_query_queued
func lmcp_host_query_queued(hp *C.lmcp_host, query C.lmcp_query, args *C.cchar_t, alen C.size_t, queue *C.lmcp_queue, tag C.uint64_t, callIDOut *C.lmcp_call_id, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_query_queued")
	h, q, err := hosts.lookupQueued(hp, queue)
	if err != nil {
		return setErr(errOut, err)
	}
	id, err := h.StartQuery(host.Query(query), goBytes(args, alen), queuedDone(q, tag))
	return callStarted(id, err, callIDOut, errOut)
}

// The header's query numbers are host's: on any drift the build fails (a
// constant index other than 0 is out of range).
var (
	_ = [1]struct{}{}[host.QueryListTools-C.LMCP_QUERY_LIST_TOOLS]
	_ = [1]struct{}{}[host.QueryListPrompts-C.LMCP_QUERY_LIST_PROMPTS]
	_ = [1]struct{}{}[host.QueryListResources-C.LMCP_QUERY_LIST_RESOURCES]
	_ = [1]struct{}{}[host.QuerySearchTools-C.LMCP_QUERY_SEARCH_TOOLS]
)
