package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "bridge.h"
*/
import "C"

import (
	"runtime"
	"unsafe"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/cqueue"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/sandbox"
)

// The library-wide exports, which serve no handle. The exports of each
// handle kind are in client.go, host.go and queue.go.

// libraryVersion is LMCP_VERSION_STRING, read from the header's C side so the
// two can never disagree.
var libraryVersion = C.GoString(C.lmcp_bridge_version())

// recoverExport turns a panic in an export that serves no handle into
// LMCP_E_INTERNAL; handleKind.recover is its twin for the exports of a
// handle, which also poisons the handle's object.
func recoverExport(st *C.lmcp_status, errOut **C.char, export string) {
	if r := recover(); r != nil {
		*st = setErr(errOut, core.Errorf(core.StatusInternal, "internal error in %s: %v", export, r))
	}
}

//export lmcp_version
func lmcp_version() *C.cchar_t { return C.lmcp_bridge_version() }

//export lmcp_abi_version
func lmcp_abi_version() C.int32_t { return C.LMCP_ABI_VERSION }

//export lmcp_free
func lmcp_free(p unsafe.Pointer) { C.free(p) }

//export lmcp_features
func lmcp_features(jsonOut **C.char, lenOut *C.size_t) (st C.lmcp_status) {
	defer recoverExport(&st, nil, "lmcp_features")
	if jsonOut == nil {
		return C.LMCP_E_INVALID_ARGUMENT
	}
	f := core.BuildFeatures(libraryVersion, int(C.LMCP_ABI_VERSION), config.Transports)
	if sb := sandbox.Features(); sb != nil {
		f.Sandbox = sb
	}
	writeJSON(jsonx.MustMarshal(f), jsonOut, lenOut)
	return C.LMCP_OK
}

//export lmcp_diagnostics
func lmcp_diagnostics(jsonOut **C.char, lenOut *C.size_t) (st C.lmcp_status) {
	defer recoverExport(&st, nil, "lmcp_diagnostics")
	if jsonOut == nil {
		return C.LMCP_E_INVALID_ARGUMENT
	}
	hits, misses := core.CacheStats()
	writeJSON(jsonx.MustMarshal(map[string]any{
		"result_cache":  map[string]int64{"hits": hits, "misses": misses},
		"goroutines":    runtime.NumGoroutine(),
		"live_clients":  clients.registry.Live(),
		"live_hosts":    hosts.registry.Live(),
		"pending_calls": core.PendingCalls(),
		"live_queues":   cqueue.Live(),
		"durations":     durationsDoc(),
	}), jsonOut, lenOut)
	return C.LMCP_OK
}

//export lmcp_validate_answer
func lmcp_validate_answer(kind *C.cchar_t, request *C.cchar_t, requestLen C.size_t, answer *C.cchar_t, answerLen C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverExport(&st, errOut, "lmcp_validate_answer")
	if kind == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "kind is NULL"))
	}
	return setErr(errOut, core.ValidateAnswer(C.GoString(kind), goBytes(request, requestLen), goBytes(answer, answerLen)))
}
