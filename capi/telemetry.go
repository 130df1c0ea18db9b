package main

/*
#include "bridge.h"
*/
import "C"

import (
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// The telemetry handler is an lmcp_event_cb whose kind is the record's
// kind ("call", "restart", "failure") and whose JSON is the record
// (docs/telemetry.md); it runs on the client's delivery thread, like
// events, so it goes through the event trampoline.

//export lmcpgo_client_set_telemetry_handler
func lmcpgo_client_set_telemetry_handler(client *C.lmcp_client, cb C.lmcp_telemetry_cb, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char) (st C.lmcp_status) {
	defer recoverInto(&st, errOut, client, "lmcp_client_set_telemetry_handler")
	key := handleKey(client)
	release := destroyFunc(destroy, ud, key)
	c, err := lookup(client)
	if err != nil {
		release()
		return setErr(errOut, err)
	}
	if cb == nil {
		return setErr(errOut, c.SetTelemetryHandler(nil, release))
	}
	return setErr(errOut, c.SetTelemetryHandler(func(rec *core.TelemetryRecord) {
		doc := jsonx.MustMarshal(rec)
		ptr, n, keep := borrow(doc)
		C.lmcp_bridge_event(C.lmcp_event_cb(cb), ud, key, cKind(rec.Kind), ptr, n)
		_ = keep
	}, release))
}

// durationsDoc is lmcp_diagnostics' "durations": the bucket bounds and
// each measured method's histogram.
func durationsDoc() map[string]any {
	return map[string]any{"bounds_ms": core.DurationBoundsMS, "methods": core.DurationHistograms()}
}
