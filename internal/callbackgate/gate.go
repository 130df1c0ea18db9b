package callbackgate

import (
	"sync"
	"sync/atomic"
)

// MaxQueuedLogs bounds the log events waiting for a slow host: past it, log
// events are dropped and counted, so a chatty server cannot grow memory
// without bound. Completions and other events are never dropped.
//
// The client's copy of the gate bounded its logs and the host's did not; the
// bound is right for both: a host's application can fall behind its servers'
// logs as surely as a client's can.
const MaxQueuedLogs = 1024

// Kind is what a delivery is, which decides what happens to it once the gate
// is closed and whether it counts against MaxQueuedLogs.
type Kind uint8

const (
	// Event is an event or a request for the host: dropped once the gate is
	// closed.
	Event Kind = iota
	// Log is an Event that may also be dropped when MaxQueuedLogs are
	// waiting.
	Log
	// Completion is a call's completion: delivered even once the gate is
	// closed, so that every accepted call completes. Each one was announced
	// with Owe.
	Completion
)

type delivery struct {
	fn   func()
	kind Kind
}

// FreeCaller says where Free is called from, so that it never waits for
// itself: a host may free a client (or a multi-server host) from inside one
// of its callbacks.
type FreeCaller struct {
	// Callbacks counts the owner's callbacks the freeing thread is inside.
	Callbacks int
	// Delivering is true when one of them is a completion or an event
	// callback: the freeing thread is then the owner's delivery goroutine,
	// and Drain delivers the remaining completions itself.
	Delivering bool
}

// Hooks are what the gate's owner makes of what the gate sees. Every field
// is optional.
type Hooks struct {
	// Owner names the owner in poison messages ("client", "host").
	Owner string
	// DeliveryWhere and DestroyWhere name, in a panic report, a delivery and
	// a registration's destroy ("a callback delivery").
	DeliveryWhere, DestroyWhere string
	// Report receives the text of a recovered panic (see Poison).
	Report func(text string)
	// Dropped receives how many log events were dropped, once the queue has
	// emptied; it usually queues a notice (a Log the queue now has room for).
	Dropped func(n int)
}

// Gate runs the owner's callbacks one at a time, in order, on a library
// goroutine. It keeps no goroutine while idle: the first push after an idle
// period starts one worker, which exits when the queue is empty.
//
// It is also the owner's callback gate. Every call into host code (a
// completion, an event, a app request, a destroy) is counted in active
// while it runs, and the check that the gate is open and that count are one
// step under mu. Free closes the gate and drains it, so once Drain returns
// no callback of the owner starts or runs (except the ones on the freeing
// thread's own stack, which Drain is told about).
//
// The zero Gate is not ready: call Init once before any other method.
type Gate struct {
	hooks Hooks

	mu          sync.Mutex
	idle        sync.Cond // broadcast when active, owed or running drop, or a completion is queued once closed
	queue       []delivery
	head        int
	running     bool
	queuedLogs  int
	droppedLogs int

	closed bool // Close was called: no event or app request starts again
	active int  // host callbacks running now
	// owed counts completions of calls already accepted whose delivery is
	// not queued yet: Drain waits for them too, so that every accepted call
	// completes before Free returns.
	//
	// It is atomic and Owe takes no lock (the host's copy took mu): Owe is
	// on every call's path, and raising the count never has to wake a
	// waiter. Only the decrements (Push of a Completion, Forgive) must be
	// under mu and broadcast, so that Drain cannot miss the last one. The
	// owner calls Owe under its own lock, under which Free marks it freed,
	// so Free either sees the debt or the call sees the owner freed.
	owed atomic.Int64

	poisoned atomic.Pointer[string] // the poison message; nil while healthy
}

// Init sets the owner's hooks; call it once, before the gate is used.
func (g *Gate) Init(h Hooks) {
	g.hooks = h
	g.idle.L = &g.mu
}

// Push queues fn. Once the gate is closed only completions are queued.
func (g *Gate) Push(fn func(), kind Kind) {
	g.mu.Lock()
	if kind == Completion {
		g.owed.Add(-1)
	} else if g.closed {
		g.mu.Unlock()
		return
	}
	if kind == Log {
		if g.queuedLogs >= MaxQueuedLogs {
			g.droppedLogs++
			g.mu.Unlock()
			return
		}
		g.queuedLogs++
	}
	g.queue = append(g.queue, delivery{fn: fn, kind: kind})
	if g.closed {
		g.idle.Broadcast() // a Drain delivering on this goroutine takes it
	}
	if !g.running {
		g.running = true
		go g.run()
	}
	g.mu.Unlock()
}

// PushQuick delivers a completion that runs no host code and never blocks
// (one that queues the outcome for the host to pop, lmcp_*_call_queued).
// When nothing is queued or running it runs at once on the caller's
// goroutine: a steady stream of such completions then starts no delivery
// goroutine, and wakes no other thread to run one, per completion. Behind
// an earlier delivery it is queued as Push queues it, so the order holds:
// a call's completion still comes after its last event's callback.
func (g *Gate) PushQuick(fn func()) {
	g.mu.Lock()
	g.owed.Add(-1)
	if g.running || g.head != len(g.queue) {
		g.queue = append(g.queue, delivery{fn: fn, kind: Completion})
		if g.closed {
			g.idle.Broadcast() // a Drain delivering on this goroutine takes it
		}
		g.mu.Unlock()
		return
	}
	// Running, as the delivery goroutine would be: later pushes queue
	// behind this one, and Drain waits for it.
	g.running = true
	g.mu.Unlock()
	g.runQuick(fn)
	g.mu.Lock()
	if g.head != len(g.queue) || g.droppedLogs > 0 {
		go g.run() // what was pushed meanwhile, on a goroutine of its own
	} else {
		g.running = false
		g.idle.Broadcast()
	}
	g.mu.Unlock()
}

// runQuick runs a PushQuick completion, a panic in it poisoning the owner as
// a delivery's does.
func (g *Gate) runQuick(fn func()) {
	defer g.Recover(g.hooks.DeliveryWhere)
	fn()
}

// popLocked takes the next delivery; false when the queue is empty. The
// queue is a slice with a moving head (reset when it empties), so a steady
// stream reuses one backing array instead of growing a new one.
func (g *Gate) popLocked() (delivery, bool) {
	if g.head == len(g.queue) {
		g.queue, g.head = g.queue[:0], 0
		return delivery{}, false
	}
	item := g.queue[g.head]
	g.queue[g.head] = delivery{}
	g.head++
	if item.kind == Log {
		g.queuedLogs--
	}
	return item, true
}

func (g *Gate) run() {
	g.mu.Lock()
	for {
		item, ok := g.popLocked()
		if !ok {
			if g.droppedLogs > 0 && g.hooks.Dropped != nil && !g.closed {
				n := g.droppedLogs
				g.droppedLogs = 0
				g.mu.Unlock()
				g.hooks.Dropped(n)
				g.mu.Lock()
				continue
			}
			g.running = false
			g.idle.Broadcast()
			g.mu.Unlock()
			return
		}
		if item.kind != Completion && g.closed {
			continue // an event or request nobody may receive any more
		}
		g.runLocked(item)
	}
}

// runLocked runs one delivery with mu released, counted as active.
func (g *Gate) runLocked(item delivery) {
	g.active++
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.active--
		g.idle.Broadcast()
	}()
	defer g.Recover(g.hooks.DeliveryWhere)
	item.fn()
}

// Enter reports whether a app-request callback may start now: false once
// the gate is closed. Each true must be followed by Exit.
func (g *Gate) Enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.active++
	return true
}

// Hold counts a callback that runs whether or not the gate is closed (a
// registration's destroy, a handler being replaced); it is followed by
// Exit.
func (g *Gate) Hold() {
	g.mu.Lock()
	g.active++
	g.mu.Unlock()
}

// Exit ends what Enter or Hold counted.
func (g *Gate) Exit() {
	g.mu.Lock()
	g.active--
	g.idle.Broadcast()
	g.mu.Unlock()
}

// Owe records a completion that will be pushed (or forgiven) later.
func (g *Gate) Owe() { g.owed.Add(1) }

// Forgive cancels an Owe whose completion will never run (the call was
// withdrawn or refused and its caller got an error instead).
func (g *Gate) Forgive() {
	g.mu.Lock()
	g.owed.Add(-1)
	g.idle.Broadcast()
	g.mu.Unlock()
}

// Close shuts the gate: no event or app-request callback starts after it.
func (g *Gate) Close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// Drain waits, after Close, until every owed completion has run and no
// callback is running but the caller's own. It waits for host code only,
// never for a server. When the caller is the delivery goroutine
// (from.Delivering), it runs the remaining completions itself.
func (g *Gate) Drain(from FreeCaller) {
	g.mu.Lock()
	for {
		if from.Delivering {
			if item, ok := g.popLocked(); ok {
				if item.kind == Completion {
					g.runLocked(item)
				}
				continue
			}
		}
		if g.active > from.Callbacks || g.owed.Load() > 0 || (!from.Delivering && g.running) {
			g.idle.Wait()
			continue
		}
		break
	}
	g.mu.Unlock()
}
