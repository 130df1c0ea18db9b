package host

import (
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// A recovered panic poisons the host, as it poisons a client (see
// core/poison.go): the state the panic interrupted is unknown, so every
// later call fails with StatusInternal instead of running on it. The panic
// is reported once as an "error" "log" event of the host ("server": null:
// it is the host's own), never swallowed. Free still releases a poisoned
// host.

// Poisoned returns the error every call of a poisoned host fails with, or
// nil while the host is healthy.
func (h *Host) Poisoned() *core.Error { return h.poisoned.Load() }

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

func (h *Host) poison(r any, where string) {
	h.poisoned.CompareAndSwap(nil, &core.Error{Status: core.StatusInternal,
		Message: "the host is unusable: it was poisoned by an earlier internal error (in " + where + ")"})
	payload := jsonx.MustMarshal(struct {
		Server  *string `json:"server"`
		Level   string  `json:"level"`
		Source  string  `json:"source"`
		Message string  `json:"message"`
	}{nil, "error", "library", core.PanicMessage(r, where, "host")})
	h.emit("log", payload)
}
