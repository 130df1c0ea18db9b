package host

import (
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/callbackgate"
)

// telemetryRegistration is the application's telemetry handler.
type telemetryRegistration = callbackgate.Registration[core.TelemetryHandler]

// SetTelemetryHandler installs fn (nil removes it); the previous handler's
// destroy runs once none of its callbacks is running, and on a freed host
// destroy runs at once (and the error says the host was freed). While a handler is set, every server's client
// measures its calls (core.TelemetryRecord, named by the server, with the
// host's call id), and the host adds its own records: list changes of the
// aggregated lists. Restarts and failures come from the clients. Without
// one, no server measures anything.
func (h *Host) SetTelemetryHandler(fn core.TelemetryHandler, destroy func()) *core.Error {
	h.telemetryMu.Lock()
	defer h.telemetryMu.Unlock()
	var err *core.Error
	callbackgate.Install(&h.out, &h.mu, &h.telemetry, callbackgate.NewRegistration(&h.out, fn, destroy), h.refuseIfFreed(&err))
	if err != nil {
		return err
	}
	// A lazy server's later generations take the handler in newGeneration
	// (under telemetryMu too).
	for _, s := range h.servers {
		c := s.client()
		if c == nil {
			continue
		}
		if fn == nil {
			_ = c.SetTelemetryHandler(nil, nil)
		} else {
			_ = c.SetTelemetryHandler(s.onTelemetry, nil)
		}
	}
	return nil
}

// telemetryOn reports whether the application wants records.
func (h *Host) telemetryOn() bool {
	reg := h.telemetry.Load()
	return reg != nil && reg.Handler != nil
}

// onTelemetry takes one of the server's client's records (on the client's
// delivery goroutine) and passes it on, named by the server.
func (s *server) onTelemetry(rec *core.TelemetryRecord) {
	rec.Server = s.name // the call id is the host's already (TelemetryID)
	if rec.Kind == core.RecordCall {
		s.durations.Observe(rec.Method, rec.DurationNS)
	}
	if rec.Kind == core.RecordSession {
		s.h.deliverOwedRecord(rec)
		return
	}
	s.h.deliverRecord(rec)
}

// deliverOwedRecord queues rec as a completion is (owed, delivered even
// once the gate closes), as the client queued it: a session that a close
// ended is still reported when a free follows at once. It runs on a
// server's client's delivery goroutine, which Free waits for (freeClients)
// before it drains the host's gate, so the debt is always seen.
func (h *Host) deliverOwedRecord(rec *core.TelemetryRecord) {
	core.DeliverRecord(&h.out, &h.telemetry, rec, callbackgate.Completion)
}

// recordListChanged reports a change of an aggregated list.
func (h *Host) recordListChanged(server, list string) {
	if !h.telemetryOn() {
		return
	}
	h.deliverRecord(&core.TelemetryRecord{Kind: core.RecordListChanged, Server: server, List: list, StartUnixNano: time.Now().UnixNano()})
}

// deliverRecord hands rec to the handler installed when it runs, on the
// host's delivery goroutine, as a client hands its own.
func (h *Host) deliverRecord(rec *core.TelemetryRecord) {
	core.DeliverRecord(&h.out, &h.telemetry, rec, callbackgate.Event)
}
