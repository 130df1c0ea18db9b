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
)

// hosts maps lmcp_host handles to hosts (see handleKind). A host's
// completions, events and app requests all run on its one delivery
// goroutine.
var hosts = newHandleKind[host.Host, *host.Host, *C.lmcp_host]("host", true)

//export lmcp_host_new
func lmcp_host_new(configJSON *C.cchar_t, n C.size_t, hostOut **C.lmcp_host, errOut **C.char) (st C.lmcp_status) {
	defer recoverExport(&st, errOut, "lmcp_host_new")
	return hosts.create(hostOut, "host_out", errOut, func() (*host.Host, *core.Error) {
		return host.Parse(goBytes(configJSON, n), libraryVersion)
	})
}

//export lmcpgo_host_set_event_handler
func lmcpgo_host_set_event_handler(hp *C.lmcp_host, cb C.lmcp_event_cb, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_set_event_handler")
	return hosts.setEventHandler(hp, cb, ud, destroy, errOut)
}

//export lmcpgo_host_set_app_request_handler
func lmcpgo_host_set_app_request_handler(hp *C.lmcp_host, cb C.lmcp_app_request_cb, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_set_app_request_handler")
	return hosts.setAppRequestHandler(hp, cb, ud, destroy, errOut)
}

//export lmcp_host_connect
func lmcp_host_connect(hp *C.lmcp_host, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_connect")
	return hosts.with(hp, errOut, (*host.Host).Connect)
}

//export lmcp_host_wait_ready
func lmcp_host_wait_ready(hp *C.lmcp_host, timeoutMS C.int64_t, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_wait_ready")
	return hosts.with(hp, errOut, func(h *host.Host) *core.Error { return h.WaitReady(millis(timeoutMS)) })
}

// hostJSON runs one of the host's JSON-returning functions.
func hostJSON(hp *C.lmcp_host, out **C.char, lenOut *C.size_t, errOut **C.char, get func(*host.Host) ([]byte, *core.Error)) C.lmcp_status {
	return jsonResult(out, lenOut, "json_out", errOut, func() ([]byte, *core.Error) {
		h, err := hosts.lookup(hp)
		if err != nil {
			return nil, err
		}
		return get(h)
	})
}

//export lmcp_host_servers
func lmcp_host_servers(hp *C.lmcp_host, out **C.char, lenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_servers")
	return hostJSON(hp, out, lenOut, errOut, func(h *host.Host) ([]byte, *core.Error) { return h.Servers(), nil })
}

//export lmcp_host_list_tools
func lmcp_host_list_tools(hp *C.lmcp_host, out **C.char, lenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_list_tools")
	return hostJSON(hp, out, lenOut, errOut, (*host.Host).ListTools)
}

//export lmcp_host_list_prompts
func lmcp_host_list_prompts(hp *C.lmcp_host, out **C.char, lenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_list_prompts")
	return hostJSON(hp, out, lenOut, errOut, (*host.Host).ListPrompts)
}

//export lmcp_host_list_resources
func lmcp_host_list_resources(hp *C.lmcp_host, out **C.char, lenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_list_resources")
	return hostJSON(hp, out, lenOut, errOut, (*host.Host).ListResources)
}

//export lmcp_host_tool_route
func lmcp_host_tool_route(hp *C.lmcp_host, name *C.cchar_t, out **C.char, lenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_tool_route")
	return hostJSON(hp, out, lenOut, errOut, func(h *host.Host) ([]byte, *core.Error) {
		tool, err := cString(name, "name")
		if err != nil {
			return nil, err
		}
		return h.ToolRoute(tool)
	})
}

// toolArgs converts the arguments of the call_tool functions, as callArgs
// does a call's.
func toolArgs(name *C.cchar_t, args *C.cchar_t, alen C.size_t, options *C.cchar_t, olen C.size_t) (string, []byte, core.CallOptions, *core.Error) {
	tool, err := cString(name, "name")
	if err != nil {
		return "", nil, core.CallOptions{}, err
	}
	opts, err := config.ParseCallOptions(goBytes(options, olen))
	if err != nil {
		return "", nil, opts, err
	}
	return tool, goBytes(args, alen), opts, nil
}

// serverCallArgs converts the arguments of the lmcp_host_call functions:
// the server's name, then callArgs'.
func serverCallArgs(server, method, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t) (string, string, []byte, core.CallOptions, *core.Error) {
	srv, err := cString(server, "server")
	if err != nil {
		return "", "", nil, core.CallOptions{}, err
	}
	m, p, opts, err := callArgs(method, params, plen, options, olen)
	return srv, m, p, opts, err
}

//export lmcpgo_host_call_tool
func lmcpgo_host_call_tool(hp *C.lmcp_host, name *C.cchar_t, args *C.cchar_t, alen C.size_t, options *C.cchar_t, olen C.size_t, done C.lmcp_done_cb, ud C.uintptr_t, callIDOut *C.lmcp_call_id, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_call_tool")
	h, err := hosts.lookupDone(hp, done)
	if err != nil {
		return setErr(errOut, err)
	}
	tool, a, opts, err := toolArgs(name, args, alen, options, olen)
	if err != nil {
		return setErr(errOut, err)
	}
	id, err := h.CallTool(tool, a, opts, doneFunc(done, ud, handleKey(hp)))
	return callStarted(id, err, callIDOut, errOut)
}

// lmcpgo_host_call_tool_sync is the Go half of lmcp_host_call_tool_sync
// (host_bridge.c), as lmcpgo_client_call_sync is the client's.
//
//export lmcpgo_host_call_tool_sync
func lmcpgo_host_call_tool_sync(hp *C.lmcp_host, name *C.cchar_t, args *C.cchar_t, alen C.size_t, options *C.cchar_t, olen C.size_t, resultOut **C.char, resultLenOut *C.size_t, sync *C.lmcp_bridge_sync, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_call_tool_sync")
	if resultOut == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "result_out is NULL"))
	}
	*resultOut = nil
	h, tool, a, opts, err := hostToolCall(hp, name, args, alen, options, olen)
	if err != nil {
		return setErr(errOut, err)
	}
	opts.Thread = true // a C thread: its exchanges block however many do
	post := false
	switch h.ToolSyncRoute(tool) {
	case core.SyncOnThread:
		opts.Waiting = true
		return onThread(resultOut, resultLenOut, errOut, func() ([]byte, *core.Error) { return h.CallToolSync(tool, a, opts) })
	case core.SyncPostThenWait:
		post = true
	case core.SyncSubmit:
		if submits() {
			return C.LMCP_BRIDGE_SYNC_SUBMIT // this thread's next calls skip Go
		}
	}
	return blockingCall(sync, resultOut, resultLenOut, errOut, &opts, func(done core.DoneFunc) *core.Error {
		o := opts
		o.Waiting = post // the POST on this thread, the wait in C
		_, err := h.CallTool(tool, a, o, done)
		return err
	}, func() ([]byte, *core.Error) {
		return h.CallToolSync(tool, a, opts)
	})
}

//export lmcpgo_host_call
func lmcpgo_host_call(hp *C.lmcp_host, server *C.cchar_t, method *C.cchar_t, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t, done C.lmcp_done_cb, ud C.uintptr_t, callIDOut *C.lmcp_call_id, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_call")
	h, err := hosts.lookupDone(hp, done)
	if err != nil {
		return setErr(errOut, err)
	}
	srv, m, p, opts, err := serverCallArgs(server, method, params, plen, options, olen)
	if err != nil {
		return setErr(errOut, err)
	}
	id, err := h.Call(srv, m, p, opts, doneFunc(done, ud, handleKey(hp)))
	return callStarted(id, err, callIDOut, errOut)
}

// lmcpgo_host_call_sync is the Go half of lmcp_host_call_sync
// (host_bridge.c), as lmcpgo_client_call_sync is the client's.
//
//export lmcpgo_host_call_sync
func lmcpgo_host_call_sync(hp *C.lmcp_host, server *C.cchar_t, method *C.cchar_t, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t, resultOut **C.char, resultLenOut *C.size_t, sync *C.lmcp_bridge_sync, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_call_sync")
	if resultOut == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "result_out is NULL"))
	}
	*resultOut = nil
	h, srv, m, p, opts, err := hostServerCall(hp, server, method, params, plen, options, olen)
	if err != nil {
		return setErr(errOut, err)
	}
	opts.Thread = true // a C thread: its exchanges block however many do
	post := false
	switch h.SyncRoute(srv) {
	case core.SyncOnThread:
		opts.Waiting = true
		return onThread(resultOut, resultLenOut, errOut, func() ([]byte, *core.Error) { return h.CallSync(srv, m, p, opts) })
	case core.SyncPostThenWait:
		post = true
	case core.SyncSubmit:
		if submits() {
			return C.LMCP_BRIDGE_SYNC_SUBMIT // this thread's next calls skip Go
		}
	}
	return blockingCall(sync, resultOut, resultLenOut, errOut, &opts, func(done core.DoneFunc) *core.Error {
		o := opts
		o.Waiting = post // the POST on this thread, the wait in C
		_, err := h.Call(srv, m, p, o, done)
		return err
	}, func() ([]byte, *core.Error) {
		return h.CallSync(srv, m, p, opts)
	})
}

// hostToolCall is the host and the checked arguments of a blocking tool
// call (lmcpgo_host_call_tool_sync, lmcp_host_call_tool_begin).
func hostToolCall(hp *C.lmcp_host, name, args *C.cchar_t, alen C.size_t, options *C.cchar_t, olen C.size_t) (*host.Host, string, []byte, core.CallOptions, *core.Error) {
	h, err := hosts.lookup(hp)
	if err != nil {
		return nil, "", nil, core.CallOptions{}, err
	}
	tool, a, opts, err := toolArgs(name, args, alen, options, olen)
	return h, tool, a, opts, err
}

// hostServerCall is the host and the checked arguments of a blocking call
// to one server (lmcpgo_host_call_sync, lmcp_host_call_begin).
func hostServerCall(hp *C.lmcp_host, server, method, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t) (*host.Host, string, string, []byte, core.CallOptions, *core.Error) {
	h, err := hosts.lookup(hp)
	if err != nil {
		return nil, "", "", nil, core.CallOptions{}, err
	}
	srv, m, p, opts, err := serverCallArgs(server, method, params, plen, options, olen)
	return h, srv, m, p, opts, err
}

// lmcp_host_call_begin is lmcp_host_call in two steps, as
// lmcp_client_call_begin is lmcp_client_call.
//
//export lmcp_host_call_begin
func lmcp_host_call_begin(hp *C.lmcp_host, server *C.cchar_t, method *C.cchar_t, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t, call *C.lmcp_sync_call, callIDOut *C.lmcp_call_id, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_call_begin")
	h, srv, m, p, opts, err := hostServerCall(hp, server, method, params, plen, options, olen)
	if err != nil {
		return setErr(errOut, err)
	}
	return beginCall(call, callIDOut, errOut, &opts, func(done core.DoneFunc) (uint64, *core.Error) {
		return h.Call(srv, m, p, opts, done)
	})
}

// lmcp_host_call_tool_begin is lmcp_host_call_tool in two steps, as
// lmcp_client_call_begin is lmcp_client_call.
//
//export lmcp_host_call_tool_begin
func lmcp_host_call_tool_begin(hp *C.lmcp_host, name *C.cchar_t, args *C.cchar_t, alen C.size_t, options *C.cchar_t, olen C.size_t, call *C.lmcp_sync_call, callIDOut *C.lmcp_call_id, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_call_tool_begin")
	h, tool, a, opts, err := hostToolCall(hp, name, args, alen, options, olen)
	if err != nil {
		return setErr(errOut, err)
	}
	return beginCall(call, callIDOut, errOut, &opts, func(done core.DoneFunc) (uint64, *core.Error) {
		return h.CallTool(tool, a, opts, done)
	})
}

//export lmcp_host_cancel
func lmcp_host_cancel(hp *C.lmcp_host, callID C.lmcp_call_id) (st C.lmcp_status) {
	defer hosts.recover(&st, nil, hp, "lmcp_host_cancel")
	return hosts.with(hp, nil, func(h *host.Host) *core.Error { return h.Cancel(uint64(callID)) })
}

//export lmcp_host_respond
func lmcp_host_respond(hp *C.lmcp_host, requestID C.lmcp_request_id, status C.lmcp_status, json *C.cchar_t, n C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_respond")
	return hosts.with(hp, errOut, func(h *host.Host) *core.Error {
		return h.Respond(uint64(requestID), core.Status(status), goBytes(json, n))
	})
}

//export lmcp_host_close
func lmcp_host_close(hp *C.lmcp_host, timeoutMS C.int64_t, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_close")
	return hosts.with(hp, errOut, func(h *host.Host) *core.Error { return h.Close(millis(timeoutMS)) })
}

//export lmcp_host_free
func lmcp_host_free(hp *C.lmcp_host) { hosts.free(hp) }
