package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "bridge.h"
*/
import "C"

import (
	"unsafe"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/handles"
)

// handlePtr is the C type of a handle the exports serve one object through:
// an lmcp_client or an lmcp_host.
type handlePtr interface {
	*C.lmcp_client | *C.lmcp_host
}

// servedObject is what an object behind a handle gives its exports: the
// poisoning of a panic (core.Client.Poisoned, host.Host.Poisoned), the
// free that knows its caller's callback frames, and the application's
// handlers, installed alike on a client and a host.
type servedObject[T any] interface {
	*T
	Poisoned() *core.Error
	Recovered(r any, where string)
	FreeFrom(from core.FreeCaller)
	SetEventHandler(fn core.EventHandler, destroy func()) *core.Error
	SetAppRequestHandler(fn core.AppRequestHandler, destroy func()) *core.Error
	SetTelemetryHandler(fn core.TelemetryHandler, destroy func()) *core.Error
}

// handleKind is one kind of handle the C ABI hands out for a client or a
// host: its registry, and the glue every export of that kind shares
// (lookup, panic recovery, the handler setters, free). A freed handle stays
// behind as a tombstone, so a call racing the free either finds the object
// (which answers it as an object being freed) or gets
// LMCP_E_INVALID_HANDLE; it never reaches freed memory.
type handleKind[T any, P servedObject[T], H handlePtr] struct {
	registry handles.Registry[T]
	// invalid is the message of a NULL, unknown or freed handle.
	invalid string
	// freeExport names the free export in a recovered panic's report.
	freeExport string
	// requestsDelivered says the kind's app requests run on its delivery
	// goroutine (a host's do; a client's run on their reader), which their
	// callback frames must say (see bridge.c).
	requestsDelivered C.int
}

func newHandleKind[T any, P servedObject[T], H handlePtr](noun string, requestsDelivered bool) *handleKind[T, P, H] {
	k := &handleKind[T, P, H]{
		invalid:    "the " + noun + " handle is NULL, unknown, or freed",
		freeExport: "lmcp_" + noun + "_free",
	}
	if requestsDelivered {
		k.requestsDelivered = 1
	}
	return k
}

// create is the body of lmcp_<kind>_new and its siblings: *out (named
// outName in the NULL error) is cleared first, then receives a new handle
// for the object build makes, or stays NULL with build's error.
func (k *handleKind[T, P, H]) create(out *H, outName string, errOut **C.char, build func() (P, *core.Error)) C.lmcp_status {
	if out == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "%s is NULL", outName))
	}
	var none H
	*out = none
	obj, err := build()
	if err != nil {
		return setErr(errOut, err)
	}
	*out = k.save(obj)
	return setErr(errOut, nil)
}

// save registers obj and returns its new handle.
func (k *handleKind[T, P, H]) save(obj P) H { return H(k.registry.Save((*T)(obj))) }

// lookup resolves a handle. A poisoned object answers every call with its
// LMCP_E_INTERNAL error.
func (k *handleKind[T, P, H]) lookup(h H) (P, *core.Error) {
	v, ok := k.registry.Get(unsafe.Pointer(h))
	if !ok {
		return nil, core.Errorf(core.StatusInvalidHandle, "%s", k.invalid)
	}
	obj := P(v)
	if err := obj.Poisoned(); err != nil {
		return nil, err
	}
	return obj, nil
}

// lookupDone resolves the handle of a call whose completion goes to a done
// callback (lmcp_client_call, lmcp_host_call, lmcp_host_query, ...), which
// must not be NULL; lookupQueued is its twin for a queue.
func (k *handleKind[T, P, H]) lookupDone(h H, done C.lmcp_done_cb) (P, *core.Error) {
	obj, err := k.lookup(h)
	if err != nil {
		return nil, err
	}
	if done == nil {
		return nil, core.Errorf(core.StatusInvalidArgument, "done is NULL")
	}
	return obj, nil
}

// with runs fn on the object of a handle that resolves: the body of every
// export that only converts its arguments and reports fn's error. With
// errOut NULL it is the status alone.
func (k *handleKind[T, P, H]) with(h H, errOut **C.char, fn func(obj P) *core.Error) C.lmcp_status {
	obj, err := k.lookup(h)
	if err != nil {
		return setErr(errOut, err)
	}
	return setErr(errOut, fn(obj))
}

// recover turns a panic into LMCP_E_INTERNAL; it must be deferred by the
// export itself. When the export served an object (h resolves), the object
// is poisoned and the panic reported through it.
func (k *handleKind[T, P, H]) recover(st *C.lmcp_status, errOut **C.char, h H, export string) {
	if r := recover(); r != nil {
		if v, ok := k.registry.Get(unsafe.Pointer(h)); ok {
			P(v).Recovered(r, export)
		}
		*st = setErr(errOut, core.Errorf(core.StatusInternal, "internal error in %s: %v", export, r))
	}
}

// setHandler is the glue of the handler setters: the host's destroy runs
// exactly once, at once when the handle does not resolve, else when install
// (the object's setter, given the release) replaces or refuses it.
func (k *handleKind[T, P, H]) setHandler(h H, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char, install func(obj P, key C.uintptr_t, release func()) *core.Error) C.lmcp_status {
	key := handleKey(h)
	release := destroyFunc(destroy, ud, key)
	obj, err := k.lookup(h)
	if err != nil {
		release()
		return setErr(errOut, err)
	}
	return setErr(errOut, install(obj, key, release))
}

// setEventHandler, setAppRequestHandler and setTelemetryHandler are the
// bodies of lmcp_<kind>_set_*_handler.
func (k *handleKind[T, P, H]) setEventHandler(h H, cb C.lmcp_event_cb, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char) C.lmcp_status {
	return k.setHandler(h, ud, destroy, errOut, func(obj P, key C.uintptr_t, release func()) *core.Error {
		return obj.SetEventHandler(k.event(cb, ud, key), release)
	})
}

func (k *handleKind[T, P, H]) setAppRequestHandler(h H, cb C.lmcp_app_request_cb, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char) C.lmcp_status {
	return k.setHandler(h, ud, destroy, errOut, func(obj P, key C.uintptr_t, release func()) *core.Error {
		return obj.SetAppRequestHandler(k.appRequest(cb, ud, key), release)
	})
}

func (k *handleKind[T, P, H]) setTelemetryHandler(h H, cb C.lmcp_telemetry_cb, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char) C.lmcp_status {
	return k.setHandler(h, ud, destroy, errOut, func(obj P, key C.uintptr_t, release func()) *core.Error {
		return obj.SetTelemetryHandler(k.telemetry(cb, ud, key), release)
	})
}

// event adapts a C event callback (nil when cb is NULL); it runs on the
// object's delivery goroutine, and its frame names the handle.
func (k *handleKind[T, P, H]) event(cb C.lmcp_event_cb, ud C.uintptr_t, key C.uintptr_t) func(kind string, payload []byte) {
	if cb == nil {
		return nil
	}
	return func(kind string, payload []byte) {
		ptr, n, keep := borrow(payload)
		C.lmcp_bridge_event(cb, ud, key, cKind(kind), ptr, n)
		_ = keep
	}
}

// appRequest adapts a C app-request callback (nil when cb is NULL).
func (k *handleKind[T, P, H]) appRequest(cb C.lmcp_app_request_cb, ud C.uintptr_t, key C.uintptr_t) func(id uint64, kind string, payload []byte) {
	if cb == nil {
		return nil
	}
	delivering := k.requestsDelivered
	return func(id uint64, kind string, payload []byte) {
		ptr, n, keep := borrow(payload)
		C.lmcp_bridge_app_request(cb, ud, key, delivering, C.uint64_t(id), cKind(kind), ptr, n)
		_ = keep
	}
}

// free is lmcp_<kind>_free. It first counts the freed object's callback
// frames on the calling thread (a cgo export runs on its C caller's
// thread, so the C side's per-thread frames are that caller's): Free waits
// for the object's running callbacks but these, and when one of them is on
// its delivery thread, it delivers the remaining completions itself.
func (k *handleKind[T, P, H]) free(h H) {
	var st C.lmcp_status
	// A panic is recovered (never let it reach a finalizer) and reported
	// through the object; there is no status to return.
	defer k.recover(&st, nil, h, k.freeExport)
	var delivering C.int
	callbacks := C.lmcp_bridge_frames(handleKey(h), &delivering)
	// Release first: from here on every new call with this handle gets
	// LMCP_E_INVALID_HANDLE, and only calls already past their lookup reach
	// the object, which answers them as a freed one.
	if v, ok := k.registry.Release(unsafe.Pointer(h)); ok {
		P(v).FreeFrom(core.FreeCaller{Callbacks: int(callbacks), Delivering: delivering != 0})
	}
}

// handleKey is a handle as the integer the trampolines record in their
// callback frames (see bridge.c).
func handleKey[H handlePtr](h H) C.uintptr_t { return C.uintptr_t(uintptr(unsafe.Pointer(h))) }

// destroyFunc returns a function that runs the host's destroy once.
func destroyFunc(destroy C.lmcp_destroy_cb, userData C.uintptr_t, key C.uintptr_t) func() {
	if destroy == nil {
		return func() {}
	}
	return func() { C.lmcp_bridge_destroy(destroy, userData, key) }
}

// doneFunc adapts a C completion callback; it runs on the object's delivery
// goroutine, and its frame names the handle.
func doneFunc(done C.lmcp_done_cb, ud C.uintptr_t, key C.uintptr_t) core.DoneFunc {
	return func(callID uint64, status core.Status, data []byte) {
		ptr, n, keep := borrow(data)
		C.lmcp_bridge_done(done, ud, key, C.uint64_t(callID), C.int32_t(status), ptr, n)
		_ = keep
	}
}
