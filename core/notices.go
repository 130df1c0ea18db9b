package core

import (
	"context"
	"sync"
)

// notices counts the cancellation notices on their way to the server
// (finish sends each from a goroutine of its own: it may run where a send
// must not block, on the reader or a timer), so that Close lets them reach
// the server before it closes the transport: a call cancelled, or timed
// out, just before Close is still cancelled on the server's side. A
// sync.WaitGroup would not do: a notice may start while Close waits.
type notices struct {
	mu    sync.Mutex
	n     int
	empty chan struct{} // made by a waiter while n > 0; closed when n returns to 0
}

func (w *notices) add() {
	w.mu.Lock()
	w.n++
	w.mu.Unlock()
}

func (w *notices) done() {
	w.mu.Lock()
	if w.n--; w.n == 0 && w.empty != nil {
		close(w.empty)
		w.empty = nil
	}
	w.mu.Unlock()
}

// wait returns once no notice is on its way, or when ctx ends (a server
// that stopped reading must not hold Close past its timeout).
func (w *notices) wait(ctx context.Context) {
	w.mu.Lock()
	if w.n == 0 {
		w.mu.Unlock()
		return
	}
	if w.empty == nil {
		w.empty = make(chan struct{})
	}
	empty := w.empty
	w.mu.Unlock()
	select {
	case <-empty:
	case <-ctx.Done():
	}
}
