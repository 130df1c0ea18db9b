package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "bridge.h"
*/
import "C"

import (
	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// clients maps the hosts' lmcp_client pointers to clients (see handleKind).
// A client's app requests run on its reader, not its delivery goroutine.
var clients = newHandleKind[core.Client, *core.Client, *C.lmcp_client]("client", false)

// The functions that take a host's user_data are exported under an lmcpgo_
// name with user_data as an integer; their public lmcp_ names are thin C
// wrappers in client_bridge.c and host_bridge.c. Go never holds user_data as
// a pointer: the host's value may be any opaque word (a small integer, an
// address Go does not own), which the garbage collector would reject as a
// bad pointer.
//
// Every trampoline is also given the handle, which it records in a
// per-thread callback frame while host code runs: lmcp_client_free and
// lmcp_host_free read those frames (handleKind.free) to learn whether they
// are called from inside one of the freed object's own callbacks
// (core.FreeCaller), so that they never wait for themselves.

//export lmcp_client_new
func lmcp_client_new(configJSON *C.cchar_t, n C.size_t, clientOut **C.lmcp_client, errOut **C.char) (st C.lmcp_status) {
	defer recoverExport(&st, errOut, "lmcp_client_new")
	return clients.create(clientOut, "client_out", errOut, func() (*core.Client, *core.Error) {
		parsed, err := config.Parse(goBytes(configJSON, n), libraryVersion)
		if err != nil {
			return nil, err
		}
		return core.New(parsed.Options, parsed.Transport), nil
	})
}

//export lmcpgo_client_set_event_handler
func lmcpgo_client_set_event_handler(client *C.lmcp_client, cb C.lmcp_event_cb, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char) (st C.lmcp_status) {
	defer clients.recover(&st, errOut, client, "lmcp_client_set_event_handler")
	return clients.setEventHandler(client, cb, ud, destroy, errOut)
}

//export lmcpgo_client_set_app_request_handler
func lmcpgo_client_set_app_request_handler(client *C.lmcp_client, cb C.lmcp_app_request_cb, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char) (st C.lmcp_status) {
	defer clients.recover(&st, errOut, client, "lmcp_client_set_app_request_handler")
	return clients.setAppRequestHandler(client, cb, ud, destroy, errOut)
}

//export lmcp_client_connect
func lmcp_client_connect(client *C.lmcp_client, errOut **C.char) (st C.lmcp_status) {
	defer clients.recover(&st, errOut, client, "lmcp_client_connect")
	return clients.with(client, errOut, (*core.Client).Connect)
}

//export lmcp_client_wait_ready
func lmcp_client_wait_ready(client *C.lmcp_client, timeoutMS C.int64_t, errOut **C.char) (st C.lmcp_status) {
	defer clients.recover(&st, errOut, client, "lmcp_client_wait_ready")
	return clients.with(client, errOut, func(c *core.Client) *core.Error { return c.WaitReady(millis(timeoutMS)) })
}

//export lmcp_client_state
func lmcp_client_state(client *C.lmcp_client, stateOut *C.lmcp_state) (st C.lmcp_status) {
	defer clients.recover(&st, nil, client, "lmcp_client_state")
	if stateOut == nil {
		return C.LMCP_E_INVALID_ARGUMENT
	}
	c, err := clients.lookup(client)
	if err != nil {
		return C.lmcp_status(err.Status)
	}
	*stateOut = C.lmcp_state(c.State())
	return C.LMCP_OK
}

//export lmcpgo_client_call
func lmcpgo_client_call(client *C.lmcp_client, method *C.cchar_t, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t, done C.lmcp_done_cb, ud C.uintptr_t, callIDOut *C.lmcp_call_id, errOut **C.char) (st C.lmcp_status) {
	defer clients.recover(&st, errOut, client, "lmcp_client_call")
	c, err := clients.lookupDone(client, done)
	if err != nil {
		return setErr(errOut, err)
	}
	m, p, opts, err := callArgs(method, params, plen, options, olen)
	if err != nil {
		return setErr(errOut, err)
	}
	id, err := c.Call(m, p, opts, doneFunc(done, ud, handleKey(client)))
	return callStarted(id, err, callIDOut, errOut)
}

// lmcpgo_client_call_sync is the Go half of lmcp_client_call_sync
// (client_bridge.c), by the client's core.SyncRoute: over Streamable HTTP
// the call is made right here, its exchange in blocking system calls on
// this thread (onThread); over legacy HTTP+SSE the request's POST is made
// here alike and the reply, which comes on the stream, is waited for as
// a stdio server's; for another networked client it only answers that
// the call is to be submitted (syncqueue.go); otherwise the call's
// outcome goes to sync, where the C caller waits (syncwait.go), or, when
// the C waits are all taken, the caller parks here as before.
//
//export lmcpgo_client_call_sync
func lmcpgo_client_call_sync(client *C.lmcp_client, method *C.cchar_t, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t, resultOut **C.char, resultLenOut *C.size_t, sync *C.lmcp_bridge_sync, errOut **C.char) (st C.lmcp_status) {
	defer clients.recover(&st, errOut, client, "lmcp_client_call_sync")
	if resultOut == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "result_out is NULL"))
	}
	*resultOut = nil
	c, m, p, opts, err := clientCall(client, method, params, plen, options, olen)
	if err != nil {
		return setErr(errOut, err)
	}
	opts.Thread = true // a C thread: its exchanges block however many do
	post := false
	switch c.SyncRoute() {
	case core.SyncOnThread:
		return onThread(resultOut, resultLenOut, errOut, func() ([]byte, *core.Error) { return c.CallSync(m, p, opts) })
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
		_, err := c.Call(m, p, o, done)
		return err
	}, func() ([]byte, *core.Error) {
		return c.CallSyncFromThread(m, p, opts) // a C thread: see CallSyncFromThread
	})
}

// clientCall is the client and the checked arguments of a blocking call
// (lmcpgo_client_call_sync, lmcp_client_call_begin).
func clientCall(client *C.lmcp_client, method, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t) (*core.Client, string, []byte, core.CallOptions, *core.Error) {
	c, err := clients.lookup(client)
	if err != nil {
		return nil, "", nil, core.CallOptions{}, err
	}
	m, p, opts, err := callArgs(method, params, plen, options, olen)
	return c, m, p, opts, err
}

// lmcp_client_call_begin starts a blocking call in two steps (see
// lemonmcp.h): the outcome goes to call, where lmcp_sync_call_wait waits.
//
//export lmcp_client_call_begin
func lmcp_client_call_begin(client *C.lmcp_client, method *C.cchar_t, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t, call *C.lmcp_sync_call, callIDOut *C.lmcp_call_id, errOut **C.char) (st C.lmcp_status) {
	defer clients.recover(&st, errOut, client, "lmcp_client_call_begin")
	c, m, p, opts, err := clientCall(client, method, params, plen, options, olen)
	if err != nil {
		return setErr(errOut, err)
	}
	return beginCall(call, callIDOut, errOut, &opts, func(done core.DoneFunc) (uint64, *core.Error) {
		return c.Call(m, p, opts, done)
	})
}

//export lmcp_client_cancel
func lmcp_client_cancel(client *C.lmcp_client, callID C.lmcp_call_id) (st C.lmcp_status) {
	defer clients.recover(&st, nil, client, "lmcp_client_cancel")
	return clients.with(client, nil, func(c *core.Client) *core.Error { return c.Cancel(uint64(callID)) })
}

//export lmcp_client_notify
func lmcp_client_notify(client *C.lmcp_client, method *C.cchar_t, params *C.cchar_t, plen C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer clients.recover(&st, errOut, client, "lmcp_client_notify")
	c, err := clients.lookup(client)
	if err != nil {
		return setErr(errOut, err)
	}
	m, err := cString(method, "method")
	if err != nil {
		return setErr(errOut, err)
	}
	return setErr(errOut, c.Notify(m, goBytes(params, plen)))
}

//export lmcp_client_respond
func lmcp_client_respond(client *C.lmcp_client, requestID C.lmcp_request_id, status C.lmcp_status, json *C.cchar_t, n C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer clients.recover(&st, errOut, client, "lmcp_client_respond")
	return clients.with(client, errOut, func(c *core.Client) *core.Error {
		return c.Respond(uint64(requestID), core.Status(status), goBytes(json, n))
	})
}

//export lmcp_client_server_info
func lmcp_client_server_info(client *C.lmcp_client, jsonOut **C.char, lenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer clients.recover(&st, errOut, client, "lmcp_client_server_info")
	return jsonResult(jsonOut, lenOut, "json_out", errOut, func() ([]byte, *core.Error) {
		c, err := clients.lookup(client)
		if err != nil {
			return nil, err
		}
		return c.ServerInfo()
	})
}

//export lmcp_client_close
func lmcp_client_close(client *C.lmcp_client, timeoutMS C.int64_t, errOut **C.char) (st C.lmcp_status) {
	defer clients.recover(&st, errOut, client, "lmcp_client_close")
	return clients.with(client, errOut, func(c *core.Client) *core.Error { return c.Close(millis(timeoutMS)) })
}

//export lmcp_client_free
func lmcp_client_free(client *C.lmcp_client) { clients.free(client) }
