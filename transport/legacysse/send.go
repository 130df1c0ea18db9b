package legacysse

import (
	"bytes"
	"context"
	"errors"
	"net/http"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/callerhttp"
	"github.com/lemonmcp/lemonmcp/transport/internal/httpclient"
)

// Send POSTs one message to the endpoint. A request's POST runs on a
// runner the transport keeps (transport/internal/runners) and Send returns
// at once (a failed POST is reported through Sink.RequestFailed), unless
// its sender waits for it anyway (Outbound.Waiting): then the POST is made
// on the sender's goroutine, with the transport's own client in blocking
// system calls on its thread (transport/internal/callerhttp), and Send
// returns once the server accepted it, ctx's deadline passed, or the
// request was aborted (Abort). A notification or response is delivered
// before Send returns, bounded by ctx's deadline. The reply itself always
// comes on the SSE stream.
func (t *Transport) Send(ctx context.Context, msg transport.Outbound) error {
	if len(msg.Data) == 0 {
		return transport.Errorf(transport.CodeInvalidArgument, "message is empty")
	}
	if err := ctx.Err(); err != nil {
		return transport.Errorf(transport.CodeTimeout, "send cancelled")
	}
	body := bytes.Clone(msg.Data) // Send must not retain msg.Data
	t.mu.Lock()
	if t.state != stateStarted || t.down {
		t.mu.Unlock()
		return transport.Errorf(transport.CodeClosed, "transport is closed")
	}
	t.posts.Add(1)
	endpoint := t.endpoint
	t.mu.Unlock()

	what := msg.Method
	if what == "" {
		what = "a response"
	}
	if msg.Kind == transport.KindRequest {
		q := queuedPost{id: msg.ID, endpoint: endpoint, body: body, what: what}
		if msg.Waiting {
			q.onCaller, q.thread = t.ownClient, msg.Thread
			t.postWaiting(ctx, q) // no runner woken, no hand-off
			return nil
		}
		t.runners.Go(q)
		return nil
	}
	defer t.posts.Done()
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d) // arms a timer even if ctx has none
		defer cancel()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(t.ctx, cancel)()
	if t.ownClient {
		ctx = callerhttp.Pooled(ctx)
	}
	if err := t.post(ctx, endpoint, body, what); err != nil {
		return err // not a nil *transport.Error in an error interface
	}
	return nil
}

// PostsOnCaller implements transport.CallerPoster: with a client of its
// own, a waiting request's POST runs on the sender's thread (callerhttp);
// a host-given client's exchanges are its own affair.
func (t *Transport) PostsOnCaller() bool { return t.ownClient }

// postWaiting makes a waiting sender's POST (Send): it ends with the
// transport, at ctx's deadline (the call's), or when the core gives the
// request up (Abort), so that a server that never answers the POST holds
// its caller no longer than the call.
func (t *Transport) postWaiting(ctx context.Context, r queuedPost) {
	var post context.Context
	var cancel context.CancelFunc
	if d, ok := ctx.Deadline(); ok {
		post, cancel = context.WithDeadline(t.ctx, d)
	} else {
		post, cancel = context.WithCancel(t.ctx)
	}
	t.waitMu.Lock()
	if t.waiting == nil {
		t.waiting = make(map[int64]context.CancelFunc)
	}
	t.waiting[r.id] = cancel
	t.waitMu.Unlock()
	t.postRequestIn(post, r)
	t.waitMu.Lock()
	delete(t.waiting, r.id)
	t.waitMu.Unlock()
	cancel()
}

// Abort implements transport.Aborter: the request's POST under way on its
// waiting sender ends, and its failure is not reported (the core has
// given the request up). The reply, if the server sends one anyway, still
// comes on the stream, where the core ignores it. Other ids are ignored.
func (t *Transport) Abort(id int64) {
	t.waitMu.Lock()
	cancel := t.waiting[id]
	t.waitMu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// postRequest makes a request's POST, on a runner (Send), and reports its
// failure; it holds the unit of t.posts Send took for it.
func (t *Transport) postRequest(r queuedPost) { t.postRequestIn(t.ctx, r) }

// postRequestIn is postRequest bounded by ctx, t.ctx or a context derived
// from it; a POST that ctx ended is not reported.
func (t *Transport) postRequestIn(ctx context.Context, r queuedPost) {
	defer t.posts.Done()
	defer transport.Recover(t.sink, "the goroutine posting "+r.what, func() {
		t.sink.RequestFailed(r.id, transport.Errorf(transport.CodeInternal, "internal error while sending %s (a bug: see the log)", r.what))
	})
	switch {
	case r.onCaller:
		ctx = callerhttp.ForWaiter(ctx, r.thread)
	case t.ownClient:
		ctx = callerhttp.Pooled(ctx) // on this runner, without net/http's two goroutines
	}
	if err := t.post(ctx, r.endpoint, r.body, r.what); err != nil && ctx.Err() == nil {
		t.sink.RequestFailed(r.id, err)
	}
}

// post makes one POST and checks that the server accepted it.
func (t *Transport) post(ctx context.Context, endpoint string, body []byte, what string) *transport.Error {
	req := t.newRequest(ctx, http.MethodPost, endpoint, body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := t.client.Do(req)
	if err != nil {
		switch {
		case t.ctx.Err() != nil:
			return transport.Errorf(transport.CodeClosed, "transport is closed")
		case errors.Is(err, context.DeadlineExceeded):
			return transport.Errorf(transport.CodeTimeout, "sending %s timed out", what)
		case errors.Is(err, context.Canceled):
			return transport.Errorf(transport.CodeTimeout, "sending %s cancelled", what)
		}
		return httpclient.RequestError(err, "sending "+what)
	}
	if !httpclient.OK(resp.StatusCode) {
		return httpclient.StatusError(resp)
	}
	httpclient.Discard(resp.Body)
	return nil
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
