package core

import "github.com/lemonmcp/lemonmcp/internal/callbackgate"

// The client's callbacks (completions, events, app requests, destroys) run
// through its gate, Client.out, an internal/callbackgate.Gate: in order on
// a library goroutine, counted while they run, so that Free waits them out
// and no callback starts after it. The multi-server host runs its own
// callbacks through the same machinery.

// FreeCaller says where Free is called from, so that it never waits for
// itself: a host may free a client from inside one of that client's
// callbacks.
type FreeCaller = callbackgate.FreeCaller

// The kinds of delivery: a log event may be dropped when the host falls
// behind, an event is dropped once the client is freed, a completion never.
const (
	deliverEvent = callbackgate.Event
	deliverLog   = callbackgate.Log
	deliverDone  = callbackgate.Completion
)

// eventRegistration and hostRegistration are the host's handlers with their
// destroys.
type (
	eventRegistration = callbackgate.Registration[EventHandler]
	hostRegistration  = callbackgate.Registration[AppRequestHandler]
)
