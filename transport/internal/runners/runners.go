package runners

import (
	"sync"
	"sync/atomic"
)

// MaxIdle is how many runners may wait idle, per pool: about the calls in
// flight a busy client keeps (16 in the benchmarks; a cap of 6 gave back
// half the gain, the runners of every burst ending and new ones growing
// their stacks again). An idle runner costs its stack, which the garbage
// collector shrinks, and ends when the pool's done channel closes.
const MaxIdle = 32

// Pool runs requests of type T on kept goroutines. Start it once, before
// the first Go; its zero value is not ready.
type Pool[T any] struct {
	run  func(T)
	done <-chan struct{}
	wg   *sync.WaitGroup

	// free holds the idle runners, each waiting on its own channel (of one
	// slot: a request handed to a runner that is about to wait is never
	// lost, and Go never blocks).
	mu   sync.Mutex
	free []chan T
	// live counts the runners alive, started every one so far.
	live    atomic.Int32
	started atomic.Int64
}

// Start readies the pool: run makes one request; the runners end once
// done is closed (the transport's context: Close); each holds a unit of wg
// while it lives, so that a Close waiting on wg outlasts them all.
func (p *Pool[T]) Start(run func(T), done <-chan struct{}, wg *sync.WaitGroup) {
	p.run, p.done, p.wg = run, done, wg
}

// Go hands r to an idle runner, or to a new one. The caller must hold a
// unit of the pool's wait group for r (the runner's own is added here,
// which therefore cannot race the wait group's Wait).
func (p *Pool[T]) Go(r T) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		in := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		p.mu.Unlock()
		in <- r // its one slot is empty: an idle runner took its last request
		return
	}
	p.mu.Unlock()
	p.wg.Add(1)
	p.live.Add(1)
	p.started.Add(1)
	go p.runner(r)
}

// runner makes r, then the requests handed to it while it waits idle,
// until MaxIdle runners wait already or done is closed.
func (p *Pool[T]) runner(r T) {
	defer p.wg.Done()
	defer p.live.Add(-1)
	in := make(chan T, 1)
	var zero T
	for {
		p.run(r)
		r = zero // nothing of the last request is kept while idle
		p.mu.Lock()
		if len(p.free) >= MaxIdle {
			p.mu.Unlock()
			return
		}
		p.free = append(p.free, in)
		p.mu.Unlock()
		select {
		case r = <-in:
		case <-p.done:
			if p.leave(in) {
				return
			}
			r = <-in // taken by a Go meanwhile: its request is on its way
		}
	}
}

// leave takes an idle runner's channel out of free, and reports whether it
// was still there (no Go took it).
func (p *Pool[T]) leave(in chan T) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, c := range p.free {
		if c == in {
			last := len(p.free) - 1
			copy(p.free[i:], p.free[i+1:])
			p.free[last] = nil
			p.free = p.free[:last]
			return true
		}
	}
	return false
}

// Idle, Live and Started report the runners waiting for a request, those
// alive, and every one started so far (diagnostics and tests).
func (p *Pool[T]) Idle() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.free)
}

func (p *Pool[T]) Live() int      { return int(p.live.Load()) }
func (p *Pool[T]) Started() int64 { return p.started.Load() }
