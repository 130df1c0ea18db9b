package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "bridge.h"
*/
import "C"

import (
	"os"
	"sync"
	"syscall"
	"unsafe"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/gateway"
	"github.com/lemonmcp/lemonmcp/internal/handles"
)

// servers maps lmcp_server handles to gateways (package gateway). A freed
// handle stays a tombstone, as clients' and hosts' do.
var servers handles.Registry[gateway.Server]

const invalidServer = "the server handle is NULL, unknown, or freed"

func lookupServer(sp *C.lmcp_server) (*gateway.Server, *core.Error) {
	s, ok := servers.Get(unsafe.Pointer(sp))
	if !ok {
		return nil, core.Errorf(core.StatusInvalidHandle, invalidServer)
	}
	return s, nil
}

//export lmcp_server_new
func lmcp_server_new(hp *C.lmcp_host, optionsJSON *C.cchar_t, n C.size_t, serverOut **C.lmcp_server, errOut **C.char) (st C.lmcp_status) {
	defer recoverExport(&st, errOut, "lmcp_server_new")
	if serverOut == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "server_out is NULL"))
	}
	*serverOut = nil
	h, err := hosts.lookup(hp)
	if err != nil {
		return setErr(errOut, err)
	}
	opts, err := gateway.ParseOptions(goBytes(optionsJSON, n))
	if err != nil {
		return setErr(errOut, err)
	}
	opts.Version = libraryVersion
	s, err := gateway.New(h, opts)
	if err != nil {
		return setErr(errOut, err)
	}
	serverHosts.Store(s, handleKey(hp))
	*serverOut = (*C.lmcp_server)(servers.Save(s))
	return setErr(errOut, nil)
}

// serverHosts is each server's host handle key: the host's events reach
// the application's handler on the server (lmcp_server_set_event_handler)
// in a frame that names the host, as the host's own handler's do.
var serverHosts sync.Map // *gateway.Server → C.uintptr_t

//export lmcpgo_server_set_event_handler
func lmcpgo_server_set_event_handler(sp *C.lmcp_server, cb C.lmcp_event_cb, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char) (st C.lmcp_status) {
	defer recoverExport(&st, errOut, "lmcp_server_set_event_handler")
	s, err := lookupServer(sp)
	if err != nil {
		if destroy != nil {
			C.lmcp_bridge_destroy(destroy, ud, 0)
		}
		return setErr(errOut, err)
	}
	k, _ := serverHosts.Load(s)
	key, _ := k.(C.uintptr_t)
	var fn func(kind string, payload []byte)
	if cb != nil {
		fn = func(kind string, payload []byte) {
			ptr, n, keep := borrow(payload)
			C.lmcp_bridge_event(cb, ud, key, cKind(kind), ptr, n)
			_ = keep
		}
	}
	return setErr(errOut, s.SetEventHandler(fn, destroyFunc(destroy, ud, key)))
}

// ownFile duplicates a caller's descriptor, non-blocking so that Stop can
// interrupt a read of it.
func ownFile(fd C.int, name string) (*os.File, *core.Error) {
	if fd < 0 {
		return nil, core.Errorf(core.StatusInvalidArgument, "%s is negative", name)
	}
	dup, err := syscall.Dup(int(fd))
	if err != nil {
		return nil, core.Errorf(core.StatusInvalidArgument, "%s (%d) is not an open descriptor", name, int(fd))
	}
	syscall.CloseOnExec(dup)
	_ = syscall.SetNonblock(dup, true)
	return os.NewFile(uintptr(dup), name), nil
}

//export lmcp_server_serve_fds
func lmcp_server_serve_fds(sp *C.lmcp_server, inFD C.int, outFD C.int, errOut **C.char) (st C.lmcp_status) {
	defer recoverExport(&st, errOut, "lmcp_server_serve_fds")
	s, err := lookupServer(sp)
	if err != nil {
		return setErr(errOut, err)
	}
	in, err := ownFile(inFD, "in_fd")
	if err != nil {
		return setErr(errOut, err)
	}
	out, err := ownFile(outFD, "out_fd")
	if err != nil {
		_ = in.Close()
		return setErr(errOut, err)
	}
	if err := s.ServeStream(in, out, func() { _ = in.Close() }); err != nil {
		_ = in.Close()
		_ = out.Close()
		return setErr(errOut, err)
	}
	go func() {
		<-s.Done()
		_ = in.Close()
		s.Flushed()
		_ = out.Close()
	}()
	return setErr(errOut, nil)
}

//export lmcp_server_serve_http
func lmcp_server_serve_http(sp *C.lmcp_server, addr *C.cchar_t, urlOut **C.char, errOut **C.char) (st C.lmcp_status) {
	defer recoverExport(&st, errOut, "lmcp_server_serve_http")
	if urlOut != nil {
		*urlOut = nil
	}
	s, err := lookupServer(sp)
	if err != nil {
		return setErr(errOut, err)
	}
	a, err := cString(addr, "addr")
	if err != nil {
		return setErr(errOut, err)
	}
	url, err := s.ServeHTTP(a)
	if err != nil {
		return setErr(errOut, err)
	}
	if urlOut != nil {
		*urlOut = cBytes([]byte(url))
	}
	return setErr(errOut, nil)
}

//export lmcp_server_wait
func lmcp_server_wait(sp *C.lmcp_server, timeoutMS C.int64_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverExport(&st, errOut, "lmcp_server_wait")
	s, err := lookupServer(sp)
	if err != nil {
		return setErr(errOut, err)
	}
	return setErr(errOut, s.Wait(millis(timeoutMS)))
}

//export lmcp_server_stop
func lmcp_server_stop(sp *C.lmcp_server, timeoutMS C.int64_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverExport(&st, errOut, "lmcp_server_stop")
	s, err := lookupServer(sp)
	if err != nil {
		return setErr(errOut, err)
	}
	return setErr(errOut, s.Stop(millis(timeoutMS)))
}

//export lmcp_server_free
func lmcp_server_free(sp *C.lmcp_server) {
	var st C.lmcp_status
	defer recoverExport(&st, nil, "lmcp_server_free")
	if s, ok := servers.Release(unsafe.Pointer(sp)); ok {
		_ = s.Stop(-1)
		s.Release()
		serverHosts.Delete(s)
	}
}
