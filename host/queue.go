package host

import "sync"

// queue runs the host's callbacks one at a time, in order, on a library
// goroutine that exists only while there is work: events and requests of
// many servers reach the application as one serial stream.
type queue struct {
	mu      sync.Mutex
	items   []func()
	running bool
}

func (q *queue) push(fn func()) {
	q.mu.Lock()
	q.items = append(q.items, fn)
	if !q.running {
		q.running = true
		go q.run()
	}
	q.mu.Unlock()
}

func (q *queue) run() {
	for {
		q.mu.Lock()
		if len(q.items) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		fn := q.items[0]
		q.items[0] = nil
		q.items = q.items[1:]
		q.mu.Unlock()
		fn()
	}
}

// registration is one application handler with its destroy function, which
// runs exactly once, after the handler is replaced and none of its
// callbacks is running.
type registration struct {
	event   func(kind string, payload []byte)
	request func(id uint64, kind string, payload []byte)
	destroy func()

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

func (r *registration) exit() {
	r.mu.Lock()
	r.inflight--
	run := r.closed && r.inflight == 0 && !r.destroyed
	r.destroyed = r.destroyed || run
	r.mu.Unlock()
	if run && r.destroy != nil {
		r.destroy()
	}
}

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
		r.destroy()
	}
}
