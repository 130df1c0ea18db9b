package streamablehttp

import (
	"context"
	"time"

	"github.com/lemonmcp/lemonmcp/transport/internal/rpcpeek"
)

// responseGrace is how long a response stream may go on after its response
// arrived. Servers end it at once, and reading it to the end lets the
// connection be reused; a server that keeps it open must not hold a
// goroutine and a connection for the rest of the session.
const responseGrace = 2 * time.Second

// pending is a request whose outcome has not been decided: no response has
// been seen and no failure reported. Exactly one party settles it (the
// stream that delivers its response, the goroutine that reports its
// failure, or a cancellation), so a request is never failed after it was
// answered, nor failed twice.
type pending struct {
	id     int64
	ctx    context.Context // the request's POST and its resumptions
	cancel context.CancelFunc
}

// track registers a request about to be sent. t.mu must be held.
func (t *Transport) trackLocked(id int64) *pending {
	ctx, cancel := context.WithCancel(t.ctx)
	p := &pending{id: id, ctx: ctx, cancel: cancel}
	t.inflight[id] = p
	return p
}

// settle takes the pending request with this id out of the table; nil when
// it was already settled (or never tracked).
func (t *Transport) settle(id int64) *pending {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.inflight[id]
	if p != nil {
		delete(t.inflight, id)
	}
	return p
}

// settleOwn settles p itself; false when someone else did first.
func (t *Transport) settleOwn(p *pending) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.inflight[p.id] != p {
		return false
	}
	delete(t.inflight, p.id)
	return true
}

// settled reports whether p's outcome is decided.
func (t *Transport) settled(p *pending) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.inflight[p.id] != p
}

// fail reports p's failure, unless it was settled already.
func (t *Transport) fail(p *pending, err error) {
	if t.settleOwn(p) {
		t.sink.RequestFailed(p.id, asError(err))
	}
}

// abort gives up on a request the core cancelled: its stream is closed and
// nothing more is reported for it.
func (t *Transport) abort(id int64) {
	if p := t.settle(id); p != nil {
		p.cancel()
	}
}

// deliver hands one inbound message to the sink and settles every request
// it answers. owner is the request whose stream carried it (nil for the GET
// stream); another request answered here has its own stream closed, since
// its response will not come there any more.
func (t *Transport) deliver(data []byte, owner *pending) {
	rpcpeek.ResponseIDs(data, func(id int64) {
		if p := t.settle(id); p != nil && p != owner {
			p.cancel()
		}
	})
	t.sink.Receive(data)
}
