package main

/*
#include "bridge.h"
*/
import "C"

import (
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// The telemetry handler is an lmcp_event_cb in shape: its kind is the
// record's kind ("call", "restart", "failure", "list_changed") and its JSON
// the record (docs/telemetry.md). It runs on the object's delivery thread,
// like events, so it goes through the event trampoline of its handle kind.

// telemetry adapts a C telemetry callback (nil when cb is NULL).
func (k *handleKind[T, P, H]) telemetry(cb C.lmcp_telemetry_cb, ud C.uintptr_t, key C.uintptr_t) core.TelemetryHandler {
	event := k.event(C.lmcp_event_cb(cb), ud, key)
	if event == nil {
		return nil
	}
	return func(rec *core.TelemetryRecord) { event(rec.Kind, jsonx.MustMarshal(rec)) }
}

//export lmcpgo_client_set_telemetry_handler
func lmcpgo_client_set_telemetry_handler(cp *C.lmcp_client, cb C.lmcp_telemetry_cb, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char) (st C.lmcp_status) {
	defer clients.recover(&st, errOut, cp, "lmcp_client_set_telemetry_handler")
	return clients.setTelemetryHandler(cp, cb, ud, destroy, errOut)
}

// A host's handler gets its servers' records, each naming its server, and
// the host's own (list changes of the aggregated lists).

//export lmcpgo_host_set_telemetry_handler
func lmcpgo_host_set_telemetry_handler(hp *C.lmcp_host, cb C.lmcp_telemetry_cb, ud C.uintptr_t, destroy C.lmcp_destroy_cb, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_set_telemetry_handler")
	return hosts.setTelemetryHandler(hp, cb, ud, destroy, errOut)
}

// durationsDoc is lmcp_diagnostics' "durations": the bucket bounds and
// each measured method's histogram.
func durationsDoc() map[string]any {
	return map[string]any{"bounds_ms": core.DurationBoundsMS, "methods": core.DurationHistograms()}
}
