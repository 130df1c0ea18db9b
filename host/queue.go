package host

import (
	"sync"

	"github.com/lemonmcp/lemonmcp/core"
)

// gate runs the host's callbacks one at a time, in order, on a library
// goroutine that exists only while there is work: events, requests and
// completions of many servers reach the application as one serial stream.
//
// It is also the host's callback gate, as core's deliverer is a client's:
// every call into application code (a completion, an event, a host request,
// a destroy) is counted in active while it runs, and the check that the gate
// is open and that count are one step under mu. Free closes the gate and
// waits the count out, so once Free returns no callback of the host starts or
// runs (except those on the freeing thread's own stack, which Free is told
// about).
type gate struct {
	mu      sync.Mutex
	idle    sync.Cond // broadcast when active, owed or running drop, or a completion is queued once closed
	items   []delivery
	running bool
	onPanic func(r any, where string) // poisons the host and reports the panic

	closed bool // Free closed the gate: no event or host request starts again
	active int  // application callbacks running now
	// owed counts completions of accepted host calls not queued yet: Free
	// waits for them too, so that every accepted call completes before Free
	// returns.
	owed int
}

type delivery struct {
	fn   func()
	done bool // a completion: delivered even once the gate is closed
}

// push queues fn. Once the gate is closed only completions are queued.
func (q *gate) push(fn func(), done bool) {
	q.mu.Lock()
	if done {
		q.owed--
	} else if q.closed {
		q.mu.Unlock()
		return
	}
	q.items = append(q.items, delivery{fn: fn, done: done})
	if q.closed {
		q.idle.Broadcast() // a Free delivering on this goroutine takes it
	}
	if !q.running {
		q.running = true
		go q.run()
	}
	q.mu.Unlock()
}

func (q *gate) popLocked() (delivery, bool) {
	if len(q.items) == 0 {
		q.items = nil
		return delivery{}, false
	}
	item := q.items[0]
	q.items[0] = delivery{}
	q.items = q.items[1:]
	return item, true
}

func (q *gate) run() {
	q.mu.Lock()
	for {
		item, ok := q.popLocked()
		if !ok {
			q.running = false
			q.idle.Broadcast()
			q.mu.Unlock()
			return
		}
		if !item.done && q.closed {
			continue // an event or request nobody may receive any more
		}
		q.runLocked(item)
	}
}

// runLocked runs one delivery with mu released, counted as active.
func (q *gate) runLocked(item delivery) {
	q.active++
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		q.active--
		q.idle.Broadcast()
	}()
	defer q.recover("a host callback delivery")
	item.fn()
}

// recover reports a panic to onPanic instead of letting it kill the process.
func (q *gate) recover(where string) {
	if r := recover(); r != nil && q.onPanic != nil {
		q.onPanic(r, where)
	}
}

// hold counts a callback that runs whether or not the gate is closed (a
// registration's destroy); it is followed by exit.
func (q *gate) hold() {
	q.mu.Lock()
	q.active++
	q.mu.Unlock()
}

func (q *gate) exit() {
	q.mu.Lock()
	q.active--
	q.idle.Broadcast()
	q.mu.Unlock()
}

// owe records a completion that will be pushed (or forgiven) later. The
// caller holds the host's mu, under which Free marks the host freed, so
// that Free either sees the debt or the call sees the host freed.
func (q *gate) owe() {
	q.mu.Lock()
	q.owed++
	q.mu.Unlock()
}

// forgive cancels an owe whose completion will never run (the call was
// refused and its caller got an error instead).
func (q *gate) forgive() {
	q.mu.Lock()
	q.owed--
	q.idle.Broadcast()
	q.mu.Unlock()
}

// close shuts the gate: no event or host-request callback starts after it.
func (q *gate) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
}

// drain waits, after close, until every owed completion has run and no
// callback is running but the caller's own. It waits for application code
// only, never for a server. When the caller is the host's delivery
// goroutine (from.Delivering), it runs the remaining completions itself.
func (q *gate) drain(from core.FreeCaller) {
	q.mu.Lock()
	for {
		if from.Delivering {
			if item, ok := q.popLocked(); ok {
				if item.done {
					q.runLocked(item)
				}
				continue
			}
		}
		if q.active > from.Callbacks || q.owed > 0 || (!from.Delivering && q.running) {
			q.idle.Wait()
			continue
		}
		break
	}
	q.mu.Unlock()
}

// registration is one application handler with its destroy function, which
// runs exactly once, after the handler is replaced and none of its
// callbacks is running.
type registration struct {
	event   func(kind string, payload []byte)
	request func(id uint64, kind string, payload []byte)
	destroy func()
	gate    *gate

	mu        sync.Mutex
	inflight  int
	closed    bool
	destroyed bool
}

func (r *registration) enter() bool {
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

// exit ends a callback. When it was the last of a closed registration, the
// destroy runs on a goroutine of its own (never on the delivery goroutine,
// where a destroy that frees the host could not be told apart from a
// stranger), counted by the gate so that Free waits for it.
func (r *registration) exit() {
	r.mu.Lock()
	r.inflight--
	run := r.closed && r.inflight == 0 && !r.destroyed
	r.destroyed = r.destroyed || run
	r.mu.Unlock()
	if run && r.destroy != nil {
		r.gate.hold()
		go func() {
			defer r.gate.exit()
			defer r.gate.recover("a host destroy callback")
			r.destroy()
		}()
	}
}

// close stops new callbacks and runs destroy now, or when the last running
// callback returns.
func (r *registration) close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.closed = true
	run := r.inflight == 0 && !r.destroyed
	r.destroyed = r.destroyed || run
	r.mu.Unlock()
	if run && r.destroy != nil {
		defer r.gate.recover("a host destroy callback")
		r.destroy()
	}
}
