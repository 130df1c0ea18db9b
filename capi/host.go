package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "host_bridge.h"
*/
import "C"

import (
	"unsafe"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
	"github.com/lemonmcp/lemonmcp/internal/handles"
)

// hosts maps lmcp_host handles to hosts. As for clients, a freed handle
// stays behind as a tombstone, so a call racing lmcp_host_free either finds
// the host (which answers it as a host being freed) or gets
// LMCP_E_INVALID_HANDLE; it never reaches freed memory.
var hosts handles.Registry[host.Host]

// lookupHost resolves a handle. A poisoned host (see host.Host.Poisoned)
// answers every call with its LMCP_E_INTERNAL error.
func lookupHost(p *C.lmcp_host) (*host.Host, *core.Error) {
	h, ok := hosts.Get(unsafe.Pointer(p))
	if !ok {
		return nil, core.Errorf(core.StatusInvalidHandle, "the host handle is NULL, unknown, or freed")
	}
	if err := h.Poisoned(); err != nil {
		return nil, err
	}
	return h, nil
}

// hostKey is the handle as the integer the trampolines record in their
// callback frames (see bridge.c), as handleKey is a client's.
func hostKey(p *C.lmcp_host) C.uintptr_t { return C.uintptr_t(uintptr(unsafe.Pointer(p))) }

// recoverHost turns a panic in a host export into LMCP_E_INTERNAL, poisons
// the host and reports the panic through it, as recoverInto does for
// clients.
func recoverHost(st *C.lmcp_status, errOut **C.char, hp *C.lmcp_host, export string) {
	if r := recover(); r != nil {
		if h, ok := hosts.Get(unsafe.Pointer(hp)); ok {
			h.Recovered(r, export)
		}
		*st = setErr(errOut, core.Errorf(core.StatusInternal, "internal error in %s: %v", export, r))
	}
}

// jsonOut hands data to the host as library-allocated memory.
func jsonOut(data []byte, out **C.char, lenOut *C.size_t) {
	*out = cBytes(data)
	if lenOut != nil {
		*lenOut = C.size_t(len(data))
	}
}

//export lmcp_host_new
func lmcp_host_new(configJSON *C.cchar_t, n C.size_t, hostOut **C.lmcp_host, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut, nil, "lmcp_host_new")
	if hostOut == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "host_out is NULL"))
	}
	*hostOut = nil
	h, err := host.Parse(goBytes(configJSON, n), libraryVersion)
	if err != nil {
		return setErr(errOut, err)
	}
	*hostOut = (*C.lmcp_host)(hosts.Save(h))
	return setErr(errOut, nil)
}

//export lmcpgo_host_set_event_handler
func lmcpgo_host_set_event_handler(hp *C.lmcp_host, cb C.lmcp_event_cb, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char) (st C.lmcp_status) {
	defer recoverHost(&st, errOut, hp, "lmcp_host_set_event_handler")
	key := hostKey(hp)
	release := destroyFunc(destroy, ud, key)
	h, err := lookupHost(hp)
	if err != nil {
		release()
		return setErr(errOut, err)
	}
	if cb == nil {
		h.SetEventHandler(nil, release)
		return setErr(errOut, nil)
	}
	h.SetEventHandler(func(kind string, payload []byte) {
		ptr, n, keep := borrow(payload)
		C.lmcp_bridge_event(cb, ud, key, cKind(kind), ptr, n)
		_ = keep
	}, release)
	return setErr(errOut, nil)
}

//export lmcpgo_host_set_host_request_handler
func lmcpgo_host_set_host_request_handler(hp *C.lmcp_host, cb C.lmcp_host_request_cb, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char) (st C.lmcp_status) {
	defer recoverHost(&st, errOut, hp, "lmcp_host_set_host_request_handler")
	key := hostKey(hp)
	release := destroyFunc(destroy, ud, key)
	h, err := lookupHost(hp)
	if err != nil {
		release()
		return setErr(errOut, err)
	}
	if cb == nil {
		h.SetHostRequestHandler(nil, release)
		return setErr(errOut, nil)
	}
	h.SetHostRequestHandler(func(id uint64, kind string, payload []byte) {
		ptr, n, keep := borrow(payload)
		C.lmcp_bridge_queued_host_request(cb, ud, key, C.uint64_t(id), cKind(kind), ptr, n)
		_ = keep
	}, release)
	return setErr(errOut, nil)
}

//export lmcp_host_connect
func lmcp_host_connect(hp *C.lmcp_host, errOut **C.char) (st C.lmcp_status) {
	defer recoverHost(&st, errOut, hp, "lmcp_host_connect")
	h, err := lookupHost(hp)
	if err != nil {
		return setErr(errOut, err)
	}
	return setErr(errOut, h.Connect())
}

//export lmcp_host_wait_ready
func lmcp_host_wait_ready(hp *C.lmcp_host, timeoutMS C.int64_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverHost(&st, errOut, hp, "lmcp_host_wait_ready")
	h, err := lookupHost(hp)
	if err != nil {
		return setErr(errOut, err)
	}
	return setErr(errOut, h.WaitReady(millis(timeoutMS)))
}

// hostJSON runs one of the host's JSON-returning functions.
func hostJSON(hp *C.lmcp_host, out **C.char, lenOut *C.size_t, errOut **C.char, get func(*host.Host) ([]byte, *core.Error)) C.lmcp_status {
	if out == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "json_out is NULL"))
	}
	*out = nil
	h, err := lookupHost(hp)
	if err != nil {
		return setErr(errOut, err)
	}
	data, err := get(h)
	if err != nil {
		return setErr(errOut, err)
	}
	jsonOut(data, out, lenOut)
	return setErr(errOut, nil)
}

//export lmcp_host_servers
func lmcp_host_servers(hp *C.lmcp_host, out **C.char, lenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverHost(&st, errOut, hp, "lmcp_host_servers")
	return hostJSON(hp, out, lenOut, errOut, func(h *host.Host) ([]byte, *core.Error) { return h.Servers(), nil })
}

//export lmcp_host_list_tools
func lmcp_host_list_tools(hp *C.lmcp_host, out **C.char, lenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverHost(&st, errOut, hp, "lmcp_host_list_tools")
	return hostJSON(hp, out, lenOut, errOut, (*host.Host).ListTools)
}

//export lmcp_host_list_prompts
func lmcp_host_list_prompts(hp *C.lmcp_host, out **C.char, lenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverHost(&st, errOut, hp, "lmcp_host_list_prompts")
	return hostJSON(hp, out, lenOut, errOut, (*host.Host).ListPrompts)
}

//export lmcp_host_list_resources
func lmcp_host_list_resources(hp *C.lmcp_host, out **C.char, lenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverHost(&st, errOut, hp, "lmcp_host_list_resources")
	return hostJSON(hp, out, lenOut, errOut, (*host.Host).ListResources)
}

// hostDone adapts a C completion callback; it runs on the host's delivery
// goroutine, and its frame names the host.
func hostDone(done C.lmcp_done_cb, ud C.uintptr_t, hp *C.lmcp_host) core.DoneFunc {
	key := hostKey(hp)
	return func(callID uint64, status core.Status, data []byte) {
		ptr, n, keep := borrow(data)
		C.lmcp_bridge_done(done, ud, key, C.uint64_t(callID), C.int32_t(status), ptr, n)
		_ = keep
	}
}

func cString(p *C.cchar_t, what string) (string, *core.Error) {
	if p == nil {
		return "", core.Errorf(core.StatusInvalidArgument, "%s is NULL", what)
	}
	return C.GoString(p), nil
}

//export lmcpgo_host_call_tool
func lmcpgo_host_call_tool(hp *C.lmcp_host, name *C.cchar_t, args *C.cchar_t, alen C.size_t, options *C.cchar_t, olen C.size_t, done C.lmcp_done_cb, ud C.uintptr_t, callIDOut *C.lmcp_call_id, errOut **C.char) (st C.lmcp_status) {
	defer recoverHost(&st, errOut, hp, "lmcp_host_call_tool")
	h, err := lookupHost(hp)
	if err != nil {
		return setErr(errOut, err)
	}
	if done == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "done is NULL"))
	}
	tool, err := cString(name, "name")
	if err != nil {
		return setErr(errOut, err)
	}
	opts, err := config.ParseCallOptions(goBytes(options, olen))
	if err != nil {
		return setErr(errOut, err)
	}
	id, err := h.CallTool(tool, goBytes(args, alen), opts, hostDone(done, ud, hp))
	if err != nil {
		return setErr(errOut, err)
	}
	if callIDOut != nil {
		*callIDOut = C.lmcp_call_id(id)
	}
	return setErr(errOut, nil)
}

//export lmcp_host_call_tool_sync
func lmcp_host_call_tool_sync(hp *C.lmcp_host, name *C.cchar_t, args *C.cchar_t, alen C.size_t, options *C.cchar_t, olen C.size_t, resultOut **C.char, resultLenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverHost(&st, errOut, hp, "lmcp_host_call_tool_sync")
	if resultOut == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "result_out is NULL"))
	}
	*resultOut = nil
	h, err := lookupHost(hp)
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
	res, err := h.CallToolSync(tool, goBytes(args, alen), opts)
	if err != nil {
		return setErr(errOut, err)
	}
	jsonOut(res, resultOut, resultLenOut)
	return setErr(errOut, nil)
}

//export lmcpgo_host_call
func lmcpgo_host_call(hp *C.lmcp_host, server *C.cchar_t, method *C.cchar_t, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t, done C.lmcp_done_cb, ud C.uintptr_t, callIDOut *C.lmcp_call_id, errOut **C.char) (st C.lmcp_status) {
	defer recoverHost(&st, errOut, hp, "lmcp_host_call")
	h, err := lookupHost(hp)
	if err != nil {
		return setErr(errOut, err)
	}
	if done == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "done is NULL"))
	}
	srv, err := cString(server, "server")
	if err != nil {
		return setErr(errOut, err)
	}
	m, p, opts, err := callArgs(method, params, plen, options, olen)
	if err != nil {
		return setErr(errOut, err)
	}
	id, err := h.Call(srv, m, p, opts, hostDone(done, ud, hp))
	if err != nil {
		return setErr(errOut, err)
	}
	if callIDOut != nil {
		*callIDOut = C.lmcp_call_id(id)
	}
	return setErr(errOut, nil)
}

//export lmcp_host_call_sync
func lmcp_host_call_sync(hp *C.lmcp_host, server *C.cchar_t, method *C.cchar_t, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t, resultOut **C.char, resultLenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverHost(&st, errOut, hp, "lmcp_host_call_sync")
	if resultOut == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "result_out is NULL"))
	}
	*resultOut = nil
	h, err := lookupHost(hp)
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
	res, err := h.CallSync(srv, m, p, opts)
	if err != nil {
		return setErr(errOut, err)
	}
	jsonOut(res, resultOut, resultLenOut)
	return setErr(errOut, nil)
}

//export lmcp_host_cancel
func lmcp_host_cancel(hp *C.lmcp_host, callID C.lmcp_call_id) (st C.lmcp_status) {
	defer recoverHost(&st, nil, hp, "lmcp_host_cancel")
	h, err := lookupHost(hp)
	if err != nil {
		return C.lmcp_status(err.Status)
	}
	if err := h.Cancel(uint64(callID)); err != nil {
		return C.lmcp_status(err.Status)
	}
	return C.LMCP_OK
}

//export lmcp_host_respond
func lmcp_host_respond(hp *C.lmcp_host, requestID C.lmcp_request_id, status C.lmcp_status, json *C.cchar_t, n C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverHost(&st, errOut, hp, "lmcp_host_respond")
	h, err := lookupHost(hp)
	if err != nil {
		return setErr(errOut, err)
	}
	return setErr(errOut, h.Respond(uint64(requestID), core.Status(status), goBytes(json, n)))
}

//export lmcp_host_close
func lmcp_host_close(hp *C.lmcp_host, timeoutMS C.int64_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverHost(&st, errOut, hp, "lmcp_host_close")
	h, err := lookupHost(hp)
	if err != nil {
		return setErr(errOut, err)
	}
	return setErr(errOut, h.Close(millis(timeoutMS)))
}

// lmcpgo_host_free is lmcp_host_free (host_bridge.c) once the wrapper has
// counted the freed host's callbacks on the calling thread's stack.
//
//export lmcpgo_host_free
func lmcpgo_host_free(hp *C.lmcp_host, callbacks C.int, delivering C.int) {
	var st C.lmcp_status
	// A panic is recovered (never let it reach a finalizer) and reported
	// through the host; there is no status to return.
	defer recoverHost(&st, nil, hp, "lmcp_host_free")
	// Release first: from here on every new call with this handle gets
	// LMCP_E_INVALID_HANDLE, and only calls already past their lookup reach
	// the host, which answers them as a freed host.
	if h, ok := hosts.Release(unsafe.Pointer(hp)); ok {
		h.FreeFrom(core.FreeCaller{Callbacks: int(callbacks), Delivering: delivering != 0})
	}
}
