package callbackgate

import (
	"sync"
	"sync/atomic"
)

// Registration is one host handler with its destroy function. It counts the
// callbacks running through it so that destroy runs exactly once, after the
// registration is closed and no callback of it is running.
//
// A nil *Registration is a valid "no handler": Enter refuses and Close does
// nothing. (Only the host's copy tolerated a nil in Enter; every caller that
// loads a registration from an atomic slot can meet one, so both do now.)
type Registration[H any] struct {
	// Handler is the host's function; the owner calls it between Enter and
	// Exit.
	Handler H
	destroy func()
	gate    *Gate

	mu        sync.Mutex
	inflight  int
	closed    bool
	destroyed bool
}

// NewRegistration registers handler and its destroy (either may be nil)
// under gate, which counts the destroy so that Drain waits for it.
func NewRegistration[H any](gate *Gate, handler H, destroy func()) *Registration[H] {
	return &Registration[H]{Handler: handler, destroy: destroy, gate: gate}
}

// Enter reports whether a callback may start; each true must be followed by
// Exit.
func (r *Registration[H]) Enter() bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.inflight++
	return true
}

// Exit ends a callback. When it was the last of a closed registration, the
// destroy runs on a goroutine of its own (never on the delivery goroutine,
// where a destroy that frees the owner could not be told apart from a
// stranger), counted by the gate so that Drain waits for it.
func (r *Registration[H]) Exit() {
	r.mu.Lock()
	r.inflight--
	run := r.closed && r.inflight == 0 && !r.destroyed
	r.destroyed = r.destroyed || run
	r.mu.Unlock()
	if run && r.destroy != nil {
		r.gate.Hold()
		go func() {
			defer r.gate.Exit()
			defer r.gate.Recover(r.gate.hooks.DestroyWhere)
			r.destroy()
		}()
	}
}

// Close stops new callbacks and runs destroy now, or when the last running
// callback returns. The caller counts itself in the gate (Hold) when a Free
// may be waiting, so that Free waits for a destroy run here.
func (r *Registration[H]) Close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.closed = true
	run := r.inflight == 0 && !r.destroyed
	r.destroyed = r.destroyed || run
	r.mu.Unlock()
	if run && r.destroy != nil {
		defer r.gate.Recover(r.gate.hooks.DestroyWhere)
		r.destroy()
	}
}

// Emit queues, as a delivery of kind k, an event for the handler that is
// in slot when the delivery runs (a handler replaced meanwhile is not
// called: its destroy may have run).
func Emit[H ~func(kind string, payload []byte)](g *Gate, slot *atomic.Pointer[Registration[H]], kind string, payload []byte, k Kind) {
	g.Push(func() {
		reg := slot.Load()
		if reg == nil || reg.Handler == nil || !reg.Enter() {
			return
		}
		defer reg.Exit()
		reg.Handler(kind, payload)
	}, k)
}

// Install puts reg (nil: no handler) in slot and closes the registration
// it replaces, whose destroy runs once its callbacks have returned. refused
// runs under lock, the owner's lock under which Free marks it freed, and
// reports whether reg may not be installed now (the owner is freed, or
// past the state where this handler may change); reg is then closed at
// once instead. The gate counts the whole step, so that a Free meanwhile
// waits until the replaced handler's destroy ran.
func Install[H any](g *Gate, lock sync.Locker, slot *atomic.Pointer[Registration[H]], reg *Registration[H], refused func() bool) {
	g.Hold()
	defer g.Exit()
	lock.Lock()
	if refused() {
		lock.Unlock()
		reg.Close()
		return
	}
	old := slot.Swap(reg)
	lock.Unlock()
	old.Close()
}
