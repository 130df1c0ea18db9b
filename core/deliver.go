package core

import "sync"

// maxQueuedLogs bounds the log events waiting for a slow host: past it, log
// events are dropped and counted, so a chatty server cannot grow memory
// without bound. Completions and other events are never dropped.
const maxQueuedLogs = 1024

// deliverer runs host callbacks one at a time, in order, on a library
// goroutine. It keeps no goroutine while idle: the first push after an idle
// period starts one worker, which exits when the queue is empty.
type deliverer struct {
	mu          sync.Mutex
	queue       []delivery
	head        int
	running     bool
	queuedLogs  int
	droppedLogs int
	onDropped   func(n int) // builds the "N log lines dropped" notice
}

type delivery struct {
	fn    func()
	isLog bool
}

func (d *deliverer) push(fn func(), isLog bool) {
	d.mu.Lock()
	if isLog {
		if d.queuedLogs >= maxQueuedLogs {
			d.droppedLogs++
			d.mu.Unlock()
			return
		}
		d.queuedLogs++
	}
	d.queue = append(d.queue, delivery{fn: fn, isLog: isLog})
	if !d.running {
		d.running = true
		go d.run()
	}
	d.mu.Unlock()
}

func (d *deliverer) run() {
	for {
		d.mu.Lock()
		if d.head == len(d.queue) {
			d.queue, d.head = d.queue[:0], 0
			if d.droppedLogs > 0 && d.onDropped != nil {
				n := d.droppedLogs
				d.droppedLogs = 0
				d.mu.Unlock()
				d.onDropped(n)
				continue
			}
			d.running = false
			d.mu.Unlock()
			return
		}
		item := d.queue[d.head]
		d.queue[d.head] = delivery{}
		d.head++
		if item.isLog {
			d.queuedLogs--
		}
		d.mu.Unlock()
		item.fn()
	}
}

// registration is one host handler with its destroy function. It counts the
// callbacks running through it so that destroy runs exactly once, after the
// registration is closed and no callback of it is running.
type registration struct {
	event   EventHandler
	host    HostRequestHandler
	destroy func()

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

func (r *registration) exit() {
	r.mu.Lock()
	r.inflight--
	run := r.closed && r.inflight == 0 && !r.destroyed
	if run {
		r.destroyed = true
	}
	r.mu.Unlock()
	if run && r.destroy != nil {
		r.destroy()
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
	if run {
		r.destroyed = true
	}
	r.mu.Unlock()
	if run && r.destroy != nil {
		r.destroy()
	}
}
