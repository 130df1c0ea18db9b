package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "bridge.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/etf"
	"github.com/lemonmcp/lemonmcp/internal/handles"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// libraryVersion is LMCP_VERSION_STRING, read from the header's C side so the
// two can never disagree.
var libraryVersion = C.GoString(C.lmcp_bridge_version())

// clientHandle is what a host's lmcp_client pointer resolves to.
type clientHandle struct {
	c   *core.Client
	etf bool // payloads go to the host as Erlang external term format
}

// encode turns a JSON payload into the client's result format. A payload
// that cannot be converted (it always can: the library produced or
// validated it) falls back to an error term rather than being lost.
func (h *clientHandle) encode(data []byte) []byte {
	if !h.etf {
		return data
	}
	out, err := etf.FromJSON(data)
	if err != nil {
		out, _ = etf.FromJSON(core.Errorf(core.StatusInternal, "cannot encode a payload as ETF: %s", err.Error()).JSON())
	}
	return out
}

var clients handles.Registry[clientHandle]

func lookup(p *C.lmcp_client) (*core.Client, *core.Error) {
	h, err := lookupHandle(p)
	if err != nil {
		return nil, err
	}
	return h.c, nil
}

func lookupHandle(p *C.lmcp_client) (*clientHandle, *core.Error) {
	h, ok := clients.Get(unsafe.Pointer(p))
	if !ok {
		return nil, core.Errorf(core.StatusInvalidHandle, "the client handle is NULL, unknown, or freed")
	}
	return h, nil
}

// recoverInto turns a panic into LMCP_E_INTERNAL.
func recoverInto(st *C.lmcp_status, errOut **C.char) {
	if r := recover(); r != nil {
		*st = setErr(errOut, core.Errorf(core.StatusInternal, "internal error: %v", r))
	}
}

//export lmcp_version
func lmcp_version() *C.cchar_t { return C.lmcp_bridge_version() }

//export lmcp_abi_version
func lmcp_abi_version() C.int32_t { return C.LMCP_ABI_VERSION }

//export lmcp_status_string
func lmcp_status_string(status C.lmcp_status) *C.cchar_t {
	return C.lmcp_bridge_status_string(C.int32_t(status))
}

//export lmcp_free
func lmcp_free(p unsafe.Pointer) { C.free(p) }

//export lmcp_features
func lmcp_features(jsonOut **C.char, lenOut *C.size_t) (st C.lmcp_status) {
	defer recoverInto(&st, nil)
	if jsonOut == nil {
		return C.LMCP_E_INVALID_ARGUMENT
	}
	doc := jsonx.MustMarshal(map[string]any{
		"version":             libraryVersion,
		"abi_version":         int(C.LMCP_ABI_VERSION),
		"transports":          config.Transports,
		"protocol_versions":   append(append([]string(nil), core.ModernVersions...), core.LegacyVersions...),
		"protocol_modes":      []string{core.ModeLegacy, core.ModeAuto, core.ModeModern},
		"client_capabilities": []string{"roots", "sampling", "elicitation"},
		"auth_flows":          []string{"refresh_token", "client_credentials", "authorization_code", "jwt_bearer", "token_exchange"},
		"auth_token_binding":  []string{"dpop"},
		"resource_verify":     []string{"size", "sha256", "frontmatter"},
		"result_formats":      []string{"json", "etf"},
	})
	*jsonOut = cBytes(doc)
	if lenOut != nil {
		*lenOut = C.size_t(len(doc))
	}
	return C.LMCP_OK
}

//export lmcp_diagnostics
func lmcp_diagnostics(jsonOut **C.char, lenOut *C.size_t) (st C.lmcp_status) {
	defer recoverInto(&st, nil)
	if jsonOut == nil {
		return C.LMCP_E_INVALID_ARGUMENT
	}
	doc := jsonx.MustMarshal(map[string]any{
		"goroutines":    runtime.NumGoroutine(),
		"live_clients":  clients.Live(),
		"pending_calls": core.PendingCalls(),
	})
	*jsonOut = cBytes(doc)
	if lenOut != nil {
		*lenOut = C.size_t(len(doc))
	}
	return C.LMCP_OK
}

//export lmcp_client_new
func lmcp_client_new(configJSON *C.cchar_t, n C.size_t, clientOut **C.lmcp_client, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut)
	if clientOut == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "client_out is NULL"))
	}
	*clientOut = nil
	parsed, err := config.Parse(goBytes(configJSON, n), libraryVersion)
	if err != nil {
		return setErr(errOut, err)
	}
	h := &clientHandle{c: core.New(parsed.Options, parsed.Transport), etf: parsed.ResultFormat == "etf"}
	*clientOut = (*C.lmcp_client)(clients.Save(h))
	return setErr(errOut, nil)
}

// The functions that take a host's user_data are exported under an lmcpgo_
// name with user_data as an integer; their public lmcp_ names are thin C
// wrappers in bridge.c. Go never holds user_data as a pointer: the host's
// value may be any opaque word (a small integer, an address Go does not
// own), which the garbage collector would reject as a bad pointer.

//export lmcpgo_client_set_event_handler
func lmcpgo_client_set_event_handler(client *C.lmcp_client, cb C.lmcp_event_cb, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut)
	release := destroyFunc(destroy, ud)
	h, err := lookupHandle(client)
	if err != nil {
		release()
		return setErr(errOut, err)
	}
	c := h.c
	if cb == nil {
		c.SetEventHandler(nil, release)
		return setErr(errOut, nil)
	}
	c.SetEventHandler(func(kind string, payload []byte) {
		ptr, n, keep := borrow(h.encode(payload))
		C.lmcp_bridge_event(cb, ud, cKind(kind), ptr, n)
		_ = keep
	}, release)
	return setErr(errOut, nil)
}

//export lmcpgo_client_set_host_request_handler
func lmcpgo_client_set_host_request_handler(client *C.lmcp_client, cb C.lmcp_host_request_cb, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut)
	release := destroyFunc(destroy, ud)
	h, err := lookupHandle(client)
	if err != nil {
		release()
		return setErr(errOut, err)
	}
	c := h.c
	if cb == nil {
		return setErr(errOut, c.SetHostRequestHandler(nil, release))
	}
	return setErr(errOut, c.SetHostRequestHandler(func(id uint64, kind string, payload []byte) {
		ptr, n, keep := borrow(h.encode(payload))
		C.lmcp_bridge_host_request(cb, ud, C.uint64_t(id), cKind(kind), ptr, n)
		_ = keep
	}, release))
}

// destroyFunc returns a function that runs the host's destroy once.
func destroyFunc(destroy C.lmcp_destroy_cb, userData C.uintptr_t) func() {
	if destroy == nil {
		return func() {}
	}
	return func() { C.lmcp_bridge_destroy(destroy, userData) }
}

//export lmcp_client_connect
func lmcp_client_connect(client *C.lmcp_client, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut)
	c, err := lookup(client)
	if err != nil {
		return setErr(errOut, err)
	}
	return setErr(errOut, c.Connect())
}

//export lmcp_client_wait_ready
func lmcp_client_wait_ready(client *C.lmcp_client, timeoutMS C.int64_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut)
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
	defer recoverInto(&st, nil)
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
	opts, err := core.ParseCallOptions(goBytes(options, olen))
	if err != nil {
		return "", nil, opts, err
	}
	return C.GoString(method), goBytes(params, plen), opts, nil
}

//export lmcpgo_client_call
func lmcpgo_client_call(client *C.lmcp_client, method *C.cchar_t, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t, done C.lmcp_done_cb, ud C.uintptr_t, callIDOut *C.lmcp_call_id, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut)
	h, err := lookupHandle(client)
	if err != nil {
		return setErr(errOut, err)
	}
	c := h.c
	if done == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "done is NULL"))
	}
	m, p, opts, err := callArgs(method, params, plen, options, olen)
	if err != nil {
		return setErr(errOut, err)
	}
	id, err := c.Call(m, p, opts, func(callID uint64, status core.Status, data []byte) {
		ptr, n, keep := borrow(h.encode(data))
		C.lmcp_bridge_done(done, ud, C.uint64_t(callID), C.int32_t(status), ptr, n)
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
	defer recoverInto(&st, errOut)
	if resultOut == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "result_out is NULL"))
	}
	*resultOut = nil
	h, err := lookupHandle(client)
	if err != nil {
		return setErr(errOut, err)
	}
	m, p, opts, err := callArgs(method, params, plen, options, olen)
	if err != nil {
		return setErr(errOut, err)
	}
	result, err := h.c.CallSyncFromThread(m, p, opts) // a C thread: see CallSyncFromThread
	if err != nil {
		return setErr(errOut, err)
	}
	result = h.encode(result)
	*resultOut = cBytes(result)
	if resultLenOut != nil {
		*resultLenOut = C.size_t(len(result))
	}
	return setErr(errOut, nil)
}

//export lmcp_client_cancel
func lmcp_client_cancel(client *C.lmcp_client, callID C.lmcp_call_id) (st C.lmcp_status) {
	defer recoverInto(&st, nil)
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
	defer recoverInto(&st, errOut)
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
	defer recoverInto(&st, errOut)
	c, err := lookup(client)
	if err != nil {
		return setErr(errOut, err)
	}
	return setErr(errOut, c.Respond(uint64(requestID), core.Status(status), goBytes(json, n)))
}

//export lmcp_client_server_info
func lmcp_client_server_info(client *C.lmcp_client, jsonOut **C.char, lenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut)
	if jsonOut == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "json_out is NULL"))
	}
	*jsonOut = nil
	h, err := lookupHandle(client)
	if err != nil {
		return setErr(errOut, err)
	}
	info, err := h.c.ServerInfo()
	if err != nil {
		return setErr(errOut, err)
	}
	info = h.encode(info)
	*jsonOut = cBytes(info)
	if lenOut != nil {
		*lenOut = C.size_t(len(info))
	}
	return setErr(errOut, nil)
}

//export lmcp_client_close
func lmcp_client_close(client *C.lmcp_client, timeoutMS C.int64_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut)
	c, err := lookup(client)
	if err != nil {
		return setErr(errOut, err)
	}
	return setErr(errOut, c.Close(millis(timeoutMS)))
}

//export lmcp_client_free
func lmcp_client_free(client *C.lmcp_client) {
	defer func() {
		if r := recover(); r != nil {
			_ = fmt.Sprint(r) // never let a panic reach a finalizer
		}
	}()
	if h, ok := clients.Release(unsafe.Pointer(client)); ok {
		h.c.Free()
	}
}
