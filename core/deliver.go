package core

import (
	"sync"
	"sync/atomic"
)

// maxQueuedLogs bounds the log events waiting for a slow host: past it, log
// events are dropped and counted, so a chatty server cannot grow memory
// without bound. Completions and other events are never dropped.
const maxQueuedLogs = 1024

// deliverer runs host callbacks one at a time, in order, on a library
// goroutine. It keeps no goroutine while idle: the first push after an idle
// period starts one worker, which exits when the queue is empty.
//
// It is also the client's callback gate. Every call into host code (a
// completion, an event, a host request, a destroy) is counted in active
// while it runs, and the check that the gate is open and that count are one
// step under mu. Free closes the gate and waits the count out, so once Free
// returns no callback of the client starts or runs (except the ones on the
// freeing thread's own stack, which Free is told about).
type deliverer struct {
	mu          sync.Mutex
	idle        sync.Cond // broadcast, once closed, when active, owed or running drop
	queue       []delivery
	head        int
	running     bool
	queuedLogs  int
	droppedLogs int
	onDropped   func(n int)               // builds the "N log lines dropped" notice
	onPanic     func(r any, where string) // poisons the client and reports the panic

	closed bool // Free closed the gate: no event or host request starts again
	active int  // host callbacks running now
	// owed counts completions of calls already retired whose delivery is
	// not queued yet: Free waits for them too, so that every accepted call
	// completes before Free returns.
	owed atomic.Int64
}

type deliveryKind uint8

const (
	deliverEvent deliveryKind = iota
	deliverLog
	deliverDone
)

type delivery struct {
	fn   func()
	kind deliveryKind
}

// FreeCaller says where Free is called from, so that it never waits for
// itself: a host may free a client from inside one of that client's
// callbacks.
type FreeCaller struct {
	// Callbacks counts the client's callbacks the freeing thread is inside.
	Callbacks int
	// Delivering is true when one of them is a completion or an event
	// callback: the freeing thread is then the client's delivery goroutine,
	// and Free delivers the remaining completions itself.
	Delivering bool
}

// push queues fn. Once the gate is closed only completions are queued.
func (d *deliverer) push(fn func(), kind deliveryKind) {
	d.mu.Lock()
	if kind == deliverDone {
		d.owed.Add(-1)
	} else if d.closed {
		d.mu.Unlock()
		return
	}
	if kind == deliverLog {
		if d.queuedLogs >= maxQueuedLogs {
			d.droppedLogs++
			d.mu.Unlock()
			return
		}
		d.queuedLogs++
	}
	d.queue = append(d.queue, delivery{fn: fn, kind: kind})
	if d.closed {
		d.idle.Broadcast() // a Free delivering on this goroutine takes it
	}
	if !d.running {
		d.running = true
		go d.run()
	}
	d.mu.Unlock()
}

// popLocked takes the next delivery; false when the queue is empty.
func (d *deliverer) popLocked() (delivery, bool) {
	if d.head == len(d.queue) {
		d.queue, d.head = d.queue[:0], 0
		return delivery{}, false
	}
	item := d.queue[d.head]
	d.queue[d.head] = delivery{}
	d.head++
	if item.kind == deliverLog {
		d.queuedLogs--
	}
	return item, true
}

func (d *deliverer) run() {
	d.mu.Lock()
	for {
		item, ok := d.popLocked()
		if !ok {
			if d.droppedLogs > 0 && d.onDropped != nil && !d.closed {
				n := d.droppedLogs
				d.droppedLogs = 0
				d.mu.Unlock()
				d.onDropped(n)
				d.mu.Lock()
				continue
			}
			d.running = false
			d.idle.Broadcast()
			d.mu.Unlock()
			return
		}
		if item.kind != deliverDone && d.closed {
			continue // an event nobody may receive any more
		}
		d.runLocked(item)
	}
}

// runLocked runs one delivery with mu released, counted as active.
func (d *deliverer) runLocked(item delivery) {
	d.active++
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.active--
		d.idle.Broadcast()
	}()
	defer d.recover("a callback delivery")
	item.fn()
}

// recover reports a panic to onPanic instead of letting it kill the host.
func (d *deliverer) recover(where string) {
	if r := recover(); r != nil && d.onPanic != nil {
		d.onPanic(r, where)
	}
}

// enter reports whether a host request callback may start: false once the
// gate is closed. Each true must be followed by exit.
func (d *deliverer) enter() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return false
	}
	d.active++
	return true
}

// hold counts a callback that runs whether or not the gate is closed (a
// registration's destroy); it is followed by exit.
func (d *deliverer) hold() {
	d.mu.Lock()
	d.active++
	d.mu.Unlock()
}

func (d *deliverer) exit() {
	d.mu.Lock()
	d.active--
	d.idle.Broadcast()
	d.mu.Unlock()
}

// owe records a completion that will be pushed (or forgiven) later.
func (d *deliverer) owe() { d.owed.Add(1) }

// forgive cancels an owe whose completion will never run (the call was
// withdrawn and its caller got an error instead).
func (d *deliverer) forgive() {
	d.mu.Lock()
	d.owed.Add(-1)
	d.idle.Broadcast()
	d.mu.Unlock()
}

// close shuts the gate: no event or host-request callback starts after it.
func (d *deliverer) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
}

// drain waits, after close, until every owed completion has run and no
// callback is running but the caller's own. It waits for host code only,
// never for the server. When the caller is the delivery goroutine, it runs
// the remaining completions itself.
func (d *deliverer) drain(from FreeCaller) {
	d.mu.Lock()
	for {
		if from.Delivering {
			if item, ok := d.popLocked(); ok {
				if item.kind == deliverDone {
					d.runLocked(item)
				}
				continue
			}
		}
		if d.active > from.Callbacks || d.owed.Load() > 0 || (!from.Delivering && d.running) {
			d.idle.Wait()
			continue
		}
		break
	}
	d.mu.Unlock()
}

// registration is one host handler with its destroy function. It counts the
// callbacks running through it so that destroy runs exactly once, after the
// registration is closed and no callback of it is running.
type registration struct {
	event   EventHandler
	host    HostRequestHandler
	destroy func()
	gate    *deliverer

	mu        sync.Mutex
	inflight  int
	closed    bool
	destroyed bool
}

// enter reports whether a callback may start; each true must be followed by
// exit.
func (r *registration) enter() bool {
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
// where a destroy that frees the client could not be told apart from a
// stranger), counted by the gate so that Free waits for it.
func (r *registration) exit() {
	r.mu.Lock()
	r.inflight--
	run := r.closed && r.inflight == 0 && !r.destroyed
	if run {
		r.destroyed = true
	}
	r.mu.Unlock()
	if run && r.destroy != nil {
		r.gate.hold()
		go func() {
			defer r.gate.exit()
			defer r.gate.recover("a destroy callback")
			r.destroy()
		}()
	}
}

// close stops new callbacks and runs destroy now, or when the last running
// callback returns. The caller counts itself in the gate (hold) when Free
// may be waiting, so that Free waits for a destroy run here.
func (r *registration) close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.closed = true
	run := r.inflight == 0 && !r.destroyed
	if run {
		r.destroyed = true
	}
	r.mu.Unlock()
	if run && r.destroy != nil {
		defer r.gate.recover("a destroy callback")
		r.destroy()
	}
}
