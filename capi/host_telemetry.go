package main

/*
#include "host_bridge.h"
*/
import "C"

import (
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// A host's telemetry handler gets its servers' records, each naming its
// server, and the host's own (list changes), on the host's delivery
// thread, through the event trampoline as the client's does.

//export lmcpgo_host_set_telemetry_handler
func lmcpgo_host_set_telemetry_handler(hp *C.lmcp_host, cb C.lmcp_telemetry_cb, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char) (st C.lmcp_status) {
	defer recoverHost(&st, errOut, hp, "lmcp_host_set_telemetry_handler")
	key := hostKey(hp)
	release := destroyFunc(destroy, ud, key)
	h, err := lookupHost(hp)
	if err != nil {
		release()
		return setErr(errOut, err)
	}
	if cb == nil {
		h.SetTelemetryHandler(nil, release)
		return setErr(errOut, nil)
	}
	h.SetTelemetryHandler(func(rec *core.TelemetryRecord) {
		doc := jsonx.MustMarshal(rec)
		ptr, n, keep := borrow(doc)
		C.lmcp_bridge_event(C.lmcp_event_cb(cb), ud, key, cKind(rec.Kind), ptr, n)
		_ = keep
	}, release)
	return setErr(errOut, nil)
}
