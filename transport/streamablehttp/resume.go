package streamablehttp

import (
	"errors"
	"net/http"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/httpclient"
)

// followStream goes on after a request's response stream ended. If the
// response has not arrived, the stream is resumed with GET and
// Last-Event-ID when the server gave event ids (it may have closed the
// connection on purpose, to be polled: SEP-1699), and the request fails
// otherwise.
func (t *Transport) followStream(p *pending, end streamEnd) {
	lastID := end.lastID
	retry, hasRetry := end.retry, end.hasRetry
	b := t.newBackoff()
	for {
		if t.settled(p) || p.ctx.Err() != nil {
			return
		}
		if end.tooLarge {
			t.fail(p, transport.Errorf(transport.CodeTransport,
				"the response stream carried an event larger than the limit of %d bytes (limits.max_message_bytes) and ended without the response", t.cfg.MaxMessageBytes))
			return
		}
		if lastID == "" {
			if end.err != nil {
				t.fail(p, transport.Errorf(transport.CodeTransport, "the response stream broke before the response: %s", httpclient.Describe(end.err)))
			} else {
				t.fail(p, transport.Errorf(transport.CodeTransport, "the response stream ended before the response"))
			}
			return
		}
		if end.events > 0 {
			b.alive()
		}
		delay, ok := b.delay(retry, hasRetry, end.events == 0 && end.err != nil)
		if !ok {
			why := "it kept ending"
			if end.err != nil {
				why = httpclient.Describe(end.err)
			}
			t.fail(p, transport.Errorf(transport.CodeTransport,
				"the response stream broke and could not be resumed in %d attempts (last: %s)", t.cfg.MaxReconnectAttempts, why))
			return
		}
		if !t.waitToReconnect(p.ctx, delay) {
			return
		}
		var fatal *transport.Error
		end, fatal = t.resume(p, lastID)
		if fatal != nil {
			t.fail(p, fatal)
			return
		}
		if end.lastID != "" {
			lastID = end.lastID
		}
		if end.hasRetry {
			retry, hasRetry = end.retry, true
		}
	}
}

// resume makes one GET with Last-Event-ID and reads what it brings. A
// transient failure (network, 408, 429, 5xx) comes back as end.err, to be
// retried; a refusal is fatal for the request.
func (t *Transport) resume(p *pending, lastID string) (streamEnd, *transport.Error) {
	req, session := t.newGET(p.ctx, lastID)
	resp, err := t.client.Do(req)
	if err != nil {
		if aerr, ok := httpclient.AuthError(err); ok {
			return streamEnd{}, aerr // retrying cannot help
		}
		return streamEnd{err: err}, nil
	}
	defer resp.Body.Close()
	switch code := resp.StatusCode; {
	case code == http.StatusNotFound && session != "":
		return streamEnd{}, t.requestStatusError(resp, session)
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
		return streamEnd{err: errors.New(httpclient.StatusError(resp).Message)}, nil
	case !httpclient.OK(code):
		e := httpclient.StatusError(resp)
		if e.Code == transport.CodeTransport {
			e.Message = "the response stream broke and the server refused to resume it (" + e.Message + ")"
		}
		return streamEnd{}, e
	case httpclient.MediaType(resp.Header) != mediaStream:
		httpclient.Discard(resp.Body)
		return streamEnd{}, transport.Errorf(transport.CodeTransport, "the server resumed the response stream with something other than an SSE stream")
	}
	return t.readStream(resp.Body, p), nil
}
