package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "bridge.h"
*/
import "C"

import (
	"runtime"
	"time"
	"unsafe"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/cqueue"
	"github.com/lemonmcp/lemonmcp/internal/handles"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// libraryVersion is LMCP_VERSION_STRING, read from the header's C side so the
// two can never disagree.
var libraryVersion = C.GoString(C.lmcp_bridge_version())

// clients maps the hosts' lmcp_client pointers to clients. A freed handle
// stays behind as a tombstone, so a call racing lmcp_client_free either
// finds the client (and the core answers it as a method of a client being
// freed) or gets LMCP_E_INVALID_HANDLE; it never reaches freed memory.
var clients handles.Registry[core.Client]

// lookup resolves a handle. A poisoned client (see core.Client.Poisoned)
// answers every call with its LMCP_E_INTERNAL error.
func lookup(p *C.lmcp_client) (*core.Client, *core.Error) {
	c, ok := clients.Get(unsafe.Pointer(p))
	if !ok {
		return nil, core.Errorf(core.StatusInvalidHandle, "the client handle is NULL, unknown, or freed")
	}
	if err := c.Poisoned(); err != nil {
		return nil, err
	}
	return c, nil
}

// clientPtr is a registry key as the host's handle type.
func clientPtr(key unsafe.Pointer) *C.lmcp_client { return (*C.lmcp_client)(key) }

// handleKey is the handle as the integer the trampolines record in their
// callback frames (see bridge.c).
func handleKey(p *C.lmcp_client) C.uintptr_t { return C.uintptr_t(uintptr(unsafe.Pointer(p))) }

// recoverInto turns a panic into LMCP_E_INTERNAL. When the export served a
// client, the client is poisoned and the panic reported through it.
func recoverInto(st *C.lmcp_status, errOut **C.char, client *C.lmcp_client, export string) {
	if r := recover(); r != nil {
		if c, ok := clients.Get(unsafe.Pointer(client)); ok {
			c.Recovered(r, export)
		}
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
	defer recoverInto(&st, nil, nil, "lmcp_features")
	if jsonOut == nil {
		return C.LMCP_E_INVALID_ARGUMENT
	}
	doc := jsonx.MustMarshal(core.BuildFeatures(libraryVersion, int(C.LMCP_ABI_VERSION), config.Transports))
	*jsonOut = cBytes(doc)
	if lenOut != nil {
		*lenOut = C.size_t(len(doc))
	}
	return C.LMCP_OK
}

//export lmcp_diagnostics
func lmcp_diagnostics(jsonOut **C.char, lenOut *C.size_t) (st C.lmcp_status) {
	defer recoverInto(&st, nil, nil, "lmcp_diagnostics")
	if jsonOut == nil {
		return C.LMCP_E_INVALID_ARGUMENT
	}
	hits, misses := core.CacheStats()
	doc := jsonx.MustMarshal(map[string]any{
		"result_cache":  map[string]int64{"hits": hits, "misses": misses},
		"goroutines":    runtime.NumGoroutine(),
		"live_clients":  clients.Live(),
		"live_hosts":    hosts.Live(),
		"pending_calls": core.PendingCalls(),
		"live_queues":   cqueue.Live(),
		"durations":     durationsDoc(),
	})
	*jsonOut = cBytes(doc)
	if lenOut != nil {
		*lenOut = C.size_t(len(doc))
	}
	return C.LMCP_OK
}

//export lmcp_client_new
func lmcp_client_new(configJSON *C.cchar_t, n C.size_t, clientOut **C.lmcp_client, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut, nil, "lmcp_client_new")
	if clientOut == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "client_out is NULL"))
	}
	*clientOut = nil
	parsed, err := config.Parse(goBytes(configJSON, n), libraryVersion)
	if err != nil {
		return setErr(errOut, err)
	}
	*clientOut = clientPtr(clients.Save(core.New(parsed.Options, parsed.Transport)))
	return setErr(errOut, nil)
}

// The functions that take a host's user_data are exported under an lmcpgo_
// name with user_data as an integer; their public lmcp_ names are thin C
// wrappers in bridge.c. Go never holds user_data as a pointer: the host's
// value may be any opaque word (a small integer, an address Go does not
// own), which the garbage collector would reject as a bad pointer.
//
// Every trampoline is also given the handle, which it records in a
// per-thread callback frame while host code runs: lmcp_client_free reads
// those frames to learn whether it is called from inside one of the freed
// client's own callbacks (core.FreeCaller), so that it never waits for
// itself.

//export lmcpgo_client_set_event_handler
func lmcpgo_client_set_event_handler(client *C.lmcp_client, cb C.lmcp_event_cb, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut, client, "lmcp_client_set_event_handler")
	key := handleKey(client)
	release := destroyFunc(destroy, ud, key)
	c, err := lookup(client)
	if err != nil {
		release()
		return setErr(errOut, err)
	}
	if cb == nil {
		return setErr(errOut, c.SetEventHandler(nil, release))
	}
	return setErr(errOut, c.SetEventHandler(func(kind string, payload []byte) {
		ptr, n, keep := borrow(payload)
		C.lmcp_bridge_event(cb, ud, key, cKind(kind), ptr, n)
		_ = keep
	}, release))
}

//export lmcpgo_client_set_host_request_handler
func lmcpgo_client_set_host_request_handler(client *C.lmcp_client, cb C.lmcp_host_request_cb, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut, client, "lmcp_client_set_host_request_handler")
	key := handleKey(client)
	release := destroyFunc(destroy, ud, key)
	c, err := lookup(client)
	if err != nil {
		release()
		return setErr(errOut, err)
	}
	if cb == nil {
		return setErr(errOut, c.SetHostRequestHandler(nil, release))
	}
	return setErr(errOut, c.SetHostRequestHandler(func(id uint64, kind string, payload []byte) {
		ptr, n, keep := borrow(payload)
		C.lmcp_bridge_host_request(cb, ud, key, C.uint64_t(id), cKind(kind), ptr, n)
		_ = keep
	}, release))
}

// destroyFunc returns a function that runs the host's destroy once.
func destroyFunc(destroy C.lmcp_destroy_cb, userData C.uintptr_t, key C.uintptr_t) func() {
	if destroy == nil {
		return func() {}
	}
	return func() { C.lmcp_bridge_destroy(destroy, userData, key) }
}

//export lmcp_client_connect
func lmcp_client_connect(client *C.lmcp_client, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut, client, "lmcp_client_connect")
	c, err := lookup(client)
	if err != nil {
		return setErr(errOut, err)
	}
	return setErr(errOut, c.Connect())
}

//export lmcp_client_wait_ready
func lmcp_client_wait_ready(client *C.lmcp_client, timeoutMS C.int64_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut, client, "lmcp_client_wait_ready")
	c, err := lookup(client)
	if err != nil {
		return setErr(errOut, err)
	}
	return setErr(errOut, c.WaitReady(millis(timeoutMS)))
}

func millis(ms C.int64_t) time.Duration {
	if ms < 0 {
		return -1
	}
	return time.Duration(ms) * time.Millisecond
}

//export lmcp_client_state
func lmcp_client_state(client *C.lmcp_client, stateOut *C.lmcp_state) (st C.lmcp_status) {
	defer recoverInto(&st, nil, client, "lmcp_client_state")
	if stateOut == nil {
		return C.LMCP_E_INVALID_ARGUMENT
	}
	c, err := lookup(client)
	if err != nil {
		return C.lmcp_status(err.Status)
	}
	*stateOut = C.lmcp_state(c.State())
	return C.LMCP_OK
}

// callArgs converts the common arguments of the call functions.
func callArgs(method *C.cchar_t, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t) (string, []byte, core.CallOptions, *core.Error) {
	if method == nil {
		return "", nil, core.CallOptions{}, core.Errorf(core.StatusInvalidArgument, "method is NULL")
	}
	opts, err := config.ParseCallOptions(goBytes(options, olen))
	if err != nil {
		return "", nil, opts, err
	}
	return C.GoString(method), goBytes(params, plen), opts, nil
}

//export lmcpgo_client_call
func lmcpgo_client_call(client *C.lmcp_client, method *C.cchar_t, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t, done C.lmcp_done_cb, ud C.uintptr_t, callIDOut *C.lmcp_call_id, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut, client, "lmcp_client_call")
	c, err := lookup(client)
	if err != nil {
		return setErr(errOut, err)
	}
	if done == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "done is NULL"))
	}
	m, p, opts, err := callArgs(method, params, plen, options, olen)
	if err != nil {
		return setErr(errOut, err)
	}
	key := handleKey(client)
	id, err := c.Call(m, p, opts, func(callID uint64, status core.Status, data []byte) {
		ptr, n, keep := borrow(data)
		C.lmcp_bridge_done(done, ud, key, C.uint64_t(callID), C.int32_t(status), ptr, n)
		_ = keep
	})
	if err != nil {
		return setErr(errOut, err)
	}
	if callIDOut != nil {
		*callIDOut = C.lmcp_call_id(id)
	}
	return setErr(errOut, nil)
}

//export lmcp_client_call_sync
func lmcp_client_call_sync(client *C.lmcp_client, method *C.cchar_t, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t, resultOut **C.char, resultLenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut, client, "lmcp_client_call_sync")
	if resultOut == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "result_out is NULL"))
	}
	*resultOut = nil
	c, err := lookup(client)
	if err != nil {
		return setErr(errOut, err)
	}
	m, p, opts, err := callArgs(method, params, plen, options, olen)
	if err != nil {
		return setErr(errOut, err)
	}
	result, err := c.CallSyncFromThread(m, p, opts) // a C thread: see CallSyncFromThread
	if err != nil {
		return setErr(errOut, err)
	}
	*resultOut = cBytes(result)
	if resultLenOut != nil {
		*resultLenOut = C.size_t(len(result))
	}
	return setErr(errOut, nil)
}

//export lmcp_client_cancel
func lmcp_client_cancel(client *C.lmcp_client, callID C.lmcp_call_id) (st C.lmcp_status) {
	defer recoverInto(&st, nil, client, "lmcp_client_cancel")
	c, err := lookup(client)
	if err != nil {
		return C.lmcp_status(err.Status)
	}
	if err := c.Cancel(uint64(callID)); err != nil {
		return C.lmcp_status(err.Status)
	}
	return C.LMCP_OK
}

//export lmcp_client_notify
func lmcp_client_notify(client *C.lmcp_client, method *C.cchar_t, params *C.cchar_t, plen C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut, client, "lmcp_client_notify")
	c, err := lookup(client)
	if err != nil {
		return setErr(errOut, err)
	}
	if method == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "method is NULL"))
	}
	return setErr(errOut, c.Notify(C.GoString(method), goBytes(params, plen)))
}

//export lmcp_client_respond
func lmcp_client_respond(client *C.lmcp_client, requestID C.lmcp_request_id, status C.lmcp_status, json *C.cchar_t, n C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut, client, "lmcp_client_respond")
	c, err := lookup(client)
	if err != nil {
		return setErr(errOut, err)
	}
	return setErr(errOut, c.Respond(uint64(requestID), core.Status(status), goBytes(json, n)))
}

//export lmcp_client_server_info
func lmcp_client_server_info(client *C.lmcp_client, jsonOut **C.char, lenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut, client, "lmcp_client_server_info")
	if jsonOut == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "json_out is NULL"))
	}
	*jsonOut = nil
	c, err := lookup(client)
	if err != nil {
		return setErr(errOut, err)
	}
	info, err := c.ServerInfo()
	if err != nil {
		return setErr(errOut, err)
	}
	*jsonOut = cBytes(info)
	if lenOut != nil {
		*lenOut = C.size_t(len(info))
	}
	return setErr(errOut, nil)
}

//export lmcp_client_close
func lmcp_client_close(client *C.lmcp_client, timeoutMS C.int64_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut, client, "lmcp_client_close")
	c, err := lookup(client)
	if err != nil {
		return setErr(errOut, err)
	}
	return setErr(errOut, c.Close(millis(timeoutMS)))
}

// lmcpgo_client_free is lmcp_client_free (bridge.c) once the wrapper has
// counted the freed client's callbacks on the calling thread's stack.
//
//export lmcpgo_client_free
func lmcpgo_client_free(client *C.lmcp_client, callbacks C.int, delivering C.int) {
	var st C.lmcp_status
	// A panic is recovered (never let it reach a finalizer) and reported
	// through the client; there is no status to return.
	defer recoverInto(&st, nil, client, "lmcp_client_free")
	// Release first: from here on every new call with this handle gets
	// LMCP_E_INVALID_HANDLE, and only calls already past their lookup reach
	// the client, which answers them as a freed client.
	if c, ok := clients.Release(unsafe.Pointer(client)); ok {
		c.FreeFrom(core.FreeCaller{Callbacks: int(callbacks), Delivering: delivering != 0})
	}
}
