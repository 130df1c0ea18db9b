package cqueue

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Completion is one finished call as the host reads it back.
type Completion struct {
	Tag    uint64 // the host's value given with the call
	CallID uint64
	Status int32  // an lmcp_status
	Data   []byte // the result JSON, or the error object's JSON
}

// live counts queues created and not yet closed, for leak diagnostics.
var live atomic.Int64

// Live reports how many queues are open.
func Live() int64 { return live.Load() }

// Queue is safe for concurrent use: any number of pushers and poppers.
type Queue struct {
	mu     sync.Mutex
	items  []Completion
	head   int // items[head:] are waiting
	fd     eventFD
	armed  bool // fd is readable: set on the empty-to-non-empty push
	closed bool
}

// New opens a queue and its descriptor.
func New() (*Queue, error) {
	fd, err := newEventFD()
	if err != nil {
		return nil, fmt.Errorf("could not create the completion queue's eventfd: %w", err)
	}
	live.Add(1)
	return &Queue{fd: fd}, nil
}

// FD is the descriptor to poll for readability; valid until Close.
func (q *Queue) FD() int { return int(q.fd) }

// Push queues c. It never blocks on the host: it reports false, and drops c,
// once the queue is closed.
func (q *Queue) Push(c Completion) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.items = append(q.items, c)
	if !q.armed {
		q.armed = true
		q.fd.signal()
	}
	return true
}

// Pop appends up to max waiting completions (max <= 0: all of them) to dst,
// oldest first, and returns it. When the queue is left empty the descriptor
// stops being readable. A closed queue yields nothing and reports false.
func (q *Queue) Pop(dst []Completion, max int) ([]Completion, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return dst, false
	}
	n := len(q.items) - q.head
	if max > 0 && n > max {
		n = max
	}
	for i := q.head; i < q.head+n; i++ {
		dst = append(dst, q.items[i])
		q.items[i] = Completion{} // no reference kept to popped data
	}
	q.head += n
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
		if cap(q.items) > 1024 {
			q.items = nil // a burst is over: give its memory back
		}
		if q.armed {
			q.armed = false
			q.fd.clear()
		}
	}
	return dst, true
}

// Len reports how many completions are waiting.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}

// Close drops every waiting completion and closes the descriptor; later
// pushes are dropped. Before closing, the descriptor is made readable, so a
// thread already blocked polling it wakes up (and then finds the queue
// gone). Only the first Close reports true.
func (q *Queue) Close() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.closed = true
	q.items, q.head = nil, 0
	if !q.armed {
		q.fd.signal()
	}
	q.fd.close()
	live.Add(-1)
	return true
}
