package streamablehttp

import (
	"bytes"
	"io"
	"net/http"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/callerhttp"
	"github.com/lemonmcp/lemonmcp/transport/internal/httpclient"
)

// exchange POSTs one request and follows its reply until the request is
// settled; it holds one unit of t.wg, which it releases. inline: it runs on
// a waiting sender's goroutine (sendWaiting), which only a JSON reply may
// hold: any other reply goes on in a goroutine of its own; thread: that
// sender is a thread outside Go (transport.Outbound.Thread).
func (t *Transport) exchange(p *pending, body []byte, method string, headers []transport.Header, inline, thread bool) {
	handedOver := false
	defer func() {
		if !handedOver {
			t.settleOwn(p) // an unanswered request is not tracked past its POST
			p.cancel()
			t.wg.Done()
		}
	}()
	defer transport.Recover(t.sink, "the goroutine sending "+method, func() {
		t.fail(p, transport.Errorf(transport.CodeInternal, "internal error while sending %s (a bug: see the log)", method))
	})

	if gone := t.sessionGone(method); gone != nil {
		t.fail(p, gone)
		return
	}
	session, version := t.wireState(method)
	ctx := p.ctx
	if t.ownClient {
		if inline {
			ctx = callerhttp.ForWaiter(ctx, thread) // the exchange may run on this very thread
		} else {
			ctx = callerhttp.Pooled(ctx) // on this goroutine, without net/http's two
		}
	}
	resp, err := t.client.Do(t.newRequest(ctx, http.MethodPost, body, session, version, headers))
	if err != nil {
		if p.ctx.Err() == nil {
			t.fail(p, httpclient.RequestError(err, "sending "+method))
		}
		return
	}
	if inline && !(resp.StatusCode == http.StatusOK && httpclient.MediaType(resp.Header) == mediaJSON) {
		handedOver = true // the unit of t.wg goes with it
		go t.followReply(p, resp, method, headers, session)
		return
	}
	t.reply(p, resp, method, headers, session)
}

// followReply is the goroutine that follows a reply sendWaiting handed
// over.
func (t *Transport) followReply(p *pending, resp *http.Response, method string, headers []transport.Header, session string) {
	defer t.wg.Done()
	defer p.cancel()
	defer t.settleOwn(p)
	defer transport.Recover(t.sink, "the goroutine sending "+method, func() {
		t.fail(p, transport.Errorf(transport.CodeInternal, "internal error while sending %s (a bug: see the log)", method))
	})
	t.reply(p, resp, method, headers, session)
}

// reply handles the response to a request's POST: its status, then a JSON
// body or an SSE stream.
func (t *Transport) reply(p *pending, resp *http.Response, method string, headers []transport.Header, session string) {
	defer resp.Body.Close()

	if !httpclient.OK(resp.StatusCode) {
		if method == "initialize" && t.cfg.InitializeRefused != nil && t.cfg.InitializeRefused(resp.StatusCode) {
			httpclient.Discard(resp.Body)
			t.settleOwn(p)
			return
		}
		if headers != nil {
			// A 2026-07-28 request: the body may be the server's JSON-RPC
			// error, which the core must see.
			t.fail(p, modernStatusError(resp, t.cfg.MaxMessageBytes))
			return
		}
		t.fail(p, t.requestStatusError(resp, session))
		return
	}
	if method == "initialize" {
		// Before the response reaches the core: the core sends
		// notifications/initialized as soon as it reads it, and that must
		// carry the new session id.
		t.adoptSession(resp.Header.Get(HeaderSessionID))
	}
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
		// No reply here: the response comes on the GET stream, if at all,
		// and the core's timeout bounds the wait.
		t.log("debug", "the server accepted "+method+" without answering it; waiting for the response on another stream")
		return
	}
	switch mt := httpclient.MediaType(resp.Header); mt {
	case mediaJSON:
		t.readJSON(p, resp, method)
	case mediaStream:
		t.followStream(p, t.readStream(resp.Body, p))
	default:
		t.fail(p, transport.Errorf(transport.CodeTransport, "the server answered %s with content type %q, not JSON or an SSE stream", method, truncate(mt, 64)))
	}
}

// requestStatusError maps an error status of a request's POST or resuming
// GET. A 404 for a request that carried a session id is the server saying
// it forgot the session.
func (t *Transport) requestStatusError(resp *http.Response, session string) *transport.Error {
	if resp.StatusCode == http.StatusNotFound && session != "" {
		httpclient.Discard(resp.Body)
		t.expireSession(session)
		return transport.Errorf(transport.CodeSessionExpired, "the server no longer knows the session (%s)", httpclient.Status(resp.StatusCode))
	}
	return httpclient.StatusError(resp)
}

// readJSON takes a JSON reply: one message (or a batch) that must answer
// the request.
func (t *Transport) readJSON(p *pending, resp *http.Response, method string) {
	limit := t.cfg.MaxMessageBytes
	if resp.ContentLength > int64(limit) {
		t.fail(p, tooLargeError(limit))
		return
	}
	var data []byte
	var err error
	if resp.ContentLength >= 0 {
		data = make([]byte, resp.ContentLength)
		_, err = io.ReadFull(resp.Body, data)
	} else {
		data, err = io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	}
	switch {
	case err != nil:
		if p.ctx.Err() == nil {
			t.fail(p, transport.Errorf(transport.CodeTransport, "reading the response to %s failed: %s", method, httpclient.Describe(err)))
		}
		return
	case len(data) > limit:
		t.fail(p, tooLargeError(limit))
		return
	case len(bytes.TrimSpace(data)) == 0:
		t.fail(p, transport.Errorf(transport.CodeTransport, "the server answered %s with an empty body", method))
		return
	}
	t.deliver(data, p)
	if t.settleOwn(p) { // built only when needed: this runs after every reply
		t.sink.RequestFailed(p.id, transport.Errorf(transport.CodeTransport, "the server's reply to %s did not contain its response", method))
	}
}
