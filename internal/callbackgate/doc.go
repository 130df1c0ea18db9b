// Package callbackgate is the one machinery that makes the free guarantees
// of the C ABI true, for a client (core) and for a multi-server host (host)
// alike: registration of handlers with a destroy that runs exactly once,
// in-order delivery of completions and events on a library goroutine, a
// Free that may be called from inside a callback and still waits out every
// other callback, and poisoning after a recovered panic.
//
// By file:
//
//   - gate.go: Gate, the serial delivery queue and the count of host code
//     running now. Its owner closes it on Free and drains it: after Drain
//     no callback starts or runs but the freeing thread's own, and every
//     completion owed by an accepted call has been delivered.
//   - registration.go: Registration, one handler with its destroy, counted
//     per callback so that destroy runs once, after the handler is replaced
//     and none of its callbacks is running; Install, which replaces the
//     handler in an owner's slot, and Emit, which delivers an event to the
//     handler in the slot when the delivery runs.
//   - poison.go: the poisoned state a recovered panic leaves in the gate's
//     owner, and the bounded report (panic value, short stack) of it.
//
// The package knows nothing of its owners: what a panic report becomes (a
// client's log event, a host's) and how a dropped-logs notice is worded are
// hooks the owner sets once with Init.
package callbackgate
