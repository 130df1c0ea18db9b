package streamablehttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/httpclient"
)

// listener is the running GET stream of one session.
type listener struct {
	cancel context.CancelFunc
	// answered is closed once the server answered the first GET (any
	// status, or the request failed), or the listener ended.
	answered     chan struct{}
	answeredOnce sync.Once
}

func (l *listener) markAnswered() { l.answeredOnce.Do(func() { close(l.answered) }) }

// listenerAnswerWait bounds how long notifications/initialized waits for
// the server to answer the GET stream's first request (see
// awaitListener). Servers answer a GET at once (the SSE headers, or 405);
// one that holds its headers back delays the handshake by this much, once.
var listenerAnswerWait = time.Second

// startListener opens the GET stream unless one runs, and returns the
// listener it started (nil if none). The core's notifications/initialized
// triggers it: the specification's order, and the point from which the
// server may send requests of its own.
func (t *Transport) startListener() *listener {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.listener != nil || !t.enterLocked() {
		return nil
	}
	ctx, cancel := context.WithCancel(t.ctx)
	l := &listener{cancel: cancel, answered: make(chan struct{})}
	t.listener = l
	go t.listen(ctx, l)
	return l
}

// awaitListener waits until the server answered l's first GET, up to
// listenerAnswerWait or until ctx (the notification's send) or the
// transport ends. So the handshake ends, and the client is ready, only
// once the server knows the GET stream: a request sent at once cannot
// reach the server before the stream it may answer on or notify through
// (the GET would otherwise race the first calls, and a server that sends
// a notification before it registered the stream drops it).
func (t *Transport) awaitListener(ctx context.Context, l *listener) {
	timer := time.NewTimer(listenerAnswerWait)
	defer timer.Stop()
	select {
	case <-l.answered:
	case <-timer.C:
		t.log("debug", "the server has not answered the GET stream yet; going on")
	case <-ctx.Done():
	case <-t.ctx.Done():
	}
}

// stopListenerLocked stops the GET stream, e.g. of a session that ended.
func (t *Transport) stopListenerLocked() {
	if t.listener != nil {
		t.listener.cancel()
		t.listener = nil
	}
}

// listen keeps the GET stream open: every message goes to the sink, and a
// stream that ends or breaks is reconnected (with Last-Event-ID once the
// server gave ids) after the server's retry delay or a growing backoff,
// until the attempts run out, the server says it has no GET stream, or the
// session ends.
func (t *Transport) listen(ctx context.Context, l *listener) {
	defer t.wg.Done()
	defer func() {
		l.markAnswered() // a listener that ends unanswered holds no one up
		t.mu.Lock()
		if t.listener == l {
			t.listener = nil
		}
		t.mu.Unlock()
		l.cancel()
	}()
	defer transport.Recover(t.sink, "the GET stream", nil) // the stream ends; requests go on
	var lastID string
	b := t.newBackoff()
	end := streamEnd{}
	for {
		var stop bool
		end, stop = t.listenOnce(ctx, l, lastID, end)
		if stop || ctx.Err() != nil {
			return
		}
		if end.events > 0 {
			b.alive()
		}
		if end.lastID != "" {
			lastID = end.lastID
		}
		delay, ok := b.delay(end.retry, end.hasRetry, end.events == 0 && end.err != nil)
		if !ok {
			why := "it kept ending"
			if end.err != nil {
				why = httpclient.Describe(end.err)
			}
			t.log("warning", fmt.Sprintf("stopped reconnecting the GET stream after %d attempts (last: %s)", t.cfg.MaxReconnectAttempts, why))
			return
		}
		if !t.waitToReconnect(ctx, delay) {
			return
		}
	}
}

// listenOnce makes one GET (l learns when it is answered) and reads the
// stream until it ends. stop means
// the server does not want a GET stream (or not from us), so retrying is
// pointless. prev carries the retry field across connections.
func (t *Transport) listenOnce(ctx context.Context, l *listener, lastID string, prev streamEnd) (end streamEnd, stop bool) {
	end.retry, end.hasRetry = prev.retry, prev.hasRetry
	req, _ := t.newGET(ctx, lastID)
	resp, err := t.client.Do(req)
	l.markAnswered()
	if err != nil {
		end.err = err
		if aerr, ok := httpclient.AuthError(err); ok {
			t.log("warning", "the GET stream needs authorization the client could not obtain: "+aerr.Message)
			return end, true
		}
		return end, false
	}
	defer resp.Body.Close()
	switch code := resp.StatusCode; {
	case code == http.StatusMethodNotAllowed || code == http.StatusNotFound || code == http.StatusNotAcceptable:
		// A 404 with a session may also mean the session is gone; the
		// next request finds out and re-initializes.
		httpclient.Discard(resp.Body)
		t.log("debug", "the server offers no GET stream ("+httpclient.Status(code)+")")
		return end, true
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
		end.err = errors.New(httpclient.StatusError(resp).Message)
		return end, false
	case !httpclient.OK(code):
		t.log("warning", "the server refused the GET stream: "+httpclient.StatusError(resp).Message)
		return end, true
	case httpclient.MediaType(resp.Header) != mediaStream:
		httpclient.Discard(resp.Body)
		t.log("warning", "the server answered the GET stream with something other than an SSE stream")
		return end, true
	}
	got := t.readStream(resp.Body, nil)
	if !got.hasRetry {
		got.retry, got.hasRetry = end.retry, end.hasRetry
	}
	return got, false
}
