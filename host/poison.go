package host

import (
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// A recovered panic poisons the host, as it poisons a client (the state and
// the report are internal/callbackgate's): every later call fails with
// StatusInternal instead of running on the state the panic interrupted. The
// panic is reported once as an "error" "log" event of the host ("server":
// null: it is the host's own), never swallowed. Free still releases a
// poisoned host.

// Poisoned returns the error every call of a poisoned host fails with, or
// nil while the host is healthy.
func (h *Host) Poisoned() *core.Error {
	if msg := h.out.Poisoned(); msg != "" {
		return &core.Error{Status: core.StatusInternal, Message: msg}
	}
	return nil
}

// Recovered poisons the host after a panic the caller recovered (r) while
// serving it in where, and reports it. The C exports call it from their
// deferred recovery; it must be called from the deferred function itself,
// so that the stack still shows where the panic happened.
func (h *Host) Recovered(r any, where string) { h.poison(r, where) }

// recoverPanic is deferred at the top of the host's own goroutines.
func (h *Host) recoverPanic(where string) {
	if r := recover(); r != nil {
		h.poison(r, where)
	}
}

// poison is the one way into the gate's poisoned state.
func (h *Host) poison(r any, where string) { h.out.Poison(r, where) }

// emitLog queues a log event of the host's own ("server": null).
func (h *Host) emitLog(level, message string) {
	h.emit("log", jsonx.MustMarshal(struct {
		Server  *string `json:"server"`
		Level   string  `json:"level"`
		Source  string  `json:"source"`
		Message string  `json:"message"`
	}{nil, level, "library", message}))
}
