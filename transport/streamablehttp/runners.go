package streamablehttp

import "github.com/lemonmcp/lemonmcp/transport"

// A request that does not wait on its sender's goroutine (Send without
// Outbound.Waiting: callbacks, queued calls, asyncio) is made by a runner,
// a goroutine the transport keeps between requests. A new goroutine per
// request grew its stack to an HTTP exchange's depth every time (runtime
// copystack): 16 queued calls in flight from a C host cost 55 µs of CPU
// per call that way against 41 µs with kept runners (docs/abi-cost.md). Up to maxIdleRunners wait for the next
// request; past that a runner ends after its request. Each runner holds a
// unit of wg while it lives, and Close's cancel ends the idle ones, so
// Closed still follows every goroutine's end.
type queuedRequest struct {
	p       *pending
	body    []byte
	method  string
	headers []transport.Header
}

// maxIdleRunners is how many runners may wait idle, per transport: about
// the calls in flight a busy client keeps (16 in the benchmarks; a cap of
// 6 gave back half the gain, the runners of every burst ending and new
// ones growing their stacks again). An idle runner costs its stack, which
// the garbage collector shrinks, and ends when the transport closes.
const maxIdleRunners = 32

// run hands r to an idle runner, or to a new one. The caller holds r's
// unit of wg (enterLocked), so adding the runner's own unit cannot race
// Close's Wait.
func (t *Transport) run(r queuedRequest) {
	select {
	case t.runWork <- r:
		return
	default:
	}
	t.wg.Add(1)
	go t.runner(r)
}

// runner makes r, then the requests handed to it while it waits idle,
// until there are enough idle runners or the transport closes.
func (t *Transport) runner(r queuedRequest) {
	defer t.wg.Done()
	for {
		t.exchange(r.p, r.body, r.method, r.headers, false)
		r = queuedRequest{}
		if t.idleRunners.Add(1) > maxIdleRunners {
			t.idleRunners.Add(-1)
			return
		}
		select {
		case r = <-t.runWork:
			t.idleRunners.Add(-1)
		case <-t.ctx.Done():
			t.idleRunners.Add(-1)
			return
		}
	}
}
