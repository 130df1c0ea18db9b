package streamablehttp

import (
	"bytes"
	"context"
	"errors"
	"net/http"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/httpclient"
	"github.com/lemonmcp/lemonmcp/transport/internal/rpcpeek"
)

// Send POSTs one message. A request is handed to a runner (t.runners)
// and Send returns at once; its reply, or its failure through
// Sink.RequestFailed, comes later. A notification or a response is
// delivered before Send returns, bounded by ctx's deadline, and any
// failure is returned: CodeClosed once closing, CodeTimeout when ctx ends,
// CodeAuthRequired for 401/403, CodeSessionExpired for a 404 on a session,
// CodeTransport otherwise.
func (t *Transport) Send(ctx context.Context, msg transport.Outbound) error {
	if len(msg.Data) == 0 {
		return transport.Errorf(transport.CodeInvalidArgument, "message is empty")
	}
	if err := ctx.Err(); err != nil {
		return ctxError("send", err)
	}
	if msg.Kind == transport.KindRequest {
		if msg.Waiting {
			return t.sendWaiting(msg)
		}
		return t.startRequest(msg)
	}
	return t.post(ctx, msg)
}

func (t *Transport) startRequest(msg transport.Outbound) error {
	body := bytes.Clone(msg.Data) // Send must not retain msg.Data
	t.mu.Lock()
	if !t.enterLocked() {
		t.mu.Unlock()
		return errClosed()
	}
	p := t.trackLocked(msg.ID)
	t.mu.Unlock()
	t.runners.Go(queuedRequest{p, body, msg.Method, msg.Headers})
	return nil
}

// sendWaiting runs a request's exchange on the sender's goroutine, which
// waits for the request anyway (Outbound.Waiting): no goroutine is started
// and none hands the response back. A JSON reply is read right here; any
// other reply (an SSE stream, which may go on after the response, or an
// error status) is followed by a goroutine of its own, so the sender is
// held no longer than the POST.
func (t *Transport) sendWaiting(msg transport.Outbound) error {
	body := bytes.Clone(msg.Data) // the client may read the body after Do returns
	t.mu.Lock()
	if !t.enterLocked() {
		t.mu.Unlock()
		return errClosed()
	}
	p := t.trackLocked(msg.ID)
	t.mu.Unlock()
	t.exchange(p, body, msg.Method, msg.Headers, true, msg.Thread)
	return nil
}

// CarriesHeaders implements transport.HeaderCarrier: Outbound.Headers go on
// the POST.
func (t *Transport) CarriesHeaders() bool { return true }

// Abort implements transport.Aborter: the request's stream is closed, which
// is how a 2026-07-28 client cancels over HTTP, and nothing more is
// reported for it.
func (t *Transport) Abort(id int64) { t.abort(id) }

// post delivers a notification or a response and waits for the server to
// accept it.
func (t *Transport) post(ctx context.Context, msg transport.Outbound) error {
	if !t.enter() {
		return errClosed()
	}
	defer t.wg.Done()
	what := msg.Method
	if msg.Kind == transport.KindResponse || what == "" {
		what = "a response"
	}
	if msg.Method == "notifications/cancelled" {
		// The core has given up on that request: once the server has been
		// told, its stream is closed too, so it cannot linger.
		if id, ok := rpcpeek.CancelledRequestID(msg.Data); ok {
			defer t.abort(id)
		}
	}

	// The core's contexts may carry a deadline without a timer; this arms
	// one, and Close cancels the POST too.
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d)
		defer cancel()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(t.ctx, cancel)()

	if gone := t.sessionGone(msg.Method); gone != nil {
		return gone
	}
	session, version := t.wireState(msg.Method)
	body := bytes.Clone(msg.Data) // the client may read the body after Do returns
	resp, err := t.client.Do(t.newRequest(ctx, http.MethodPost, body, session, version, msg.Headers))
	if err != nil {
		switch {
		case t.ctx.Err() != nil:
			return errClosed()
		case errors.Is(err, context.DeadlineExceeded):
			return transport.Errorf(transport.CodeTimeout, "sending %s timed out", what)
		case errors.Is(err, context.Canceled):
			return transport.Errorf(transport.CodeTimeout, "sending %s cancelled", what)
		}
		return httpclient.RequestError(err, "sending "+what)
	}
	if !httpclient.OK(resp.StatusCode) {
		if resp.StatusCode == http.StatusNotFound && session != "" {
			// Reported, but the id is kept: only a request can carry the
			// re-initialization, and it needs the stale id to get its 404.
			httpclient.Discard(resp.Body)
			return transport.Errorf(transport.CodeSessionExpired, "the server no longer knows the session (%s)", httpclient.Status(resp.StatusCode))
		}
		return httpclient.StatusError(resp)
	}
	httpclient.Discard(resp.Body)
	if msg.Method == "notifications/initialized" {
		if l := t.startListener(); l != nil {
			t.awaitListener(ctx, l)
		}
	}
	return nil
}

// ctxError converts a context error. There is no "cancelled" code: the core
// tells cancellation from a timeout by its own context.
func ctxError(op string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return transport.Errorf(transport.CodeTimeout, "%s timed out", op)
	}
	return transport.Errorf(transport.CodeTimeout, "%s cancelled", op)
}

func errClosed() *transport.Error {
	return transport.Errorf(transport.CodeClosed, "transport is closed")
}

// asError returns err as a *transport.Error.
func asError(err error) *transport.Error {
	var te *transport.Error
	if errors.As(err, &te) {
		return te
	}
	return transport.Errorf(transport.CodeTransport, "%s", err.Error())
}

// Networked implements transport.Networked.
func (t *Transport) Networked() bool { return true }

// ExchangesOnCaller implements transport.CallerExchanger: with a client of
// its own, a waiting request's exchange runs on the sender's thread
// (callerhttp); a host-given client's exchanges are its own affair.
func (t *Transport) ExchangesOnCaller() bool { return t.ownClient }
