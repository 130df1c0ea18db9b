package streamablehttp

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport/internal/sinktest"
)

// The GET stream opens after notifications/initialized and delivers what
// the server sends on its own.
func TestGETStreamDelivers(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
		if r.Method == http.MethodGet {
			startSSE(w)
			event(w, message(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`))
			event(w, message(`{"jsonrpc":"2.0","id":"s1","method":"ping"}`))
			<-r.Context().Done()
			return
		}
		mcp("s", echo)(w, r, m)
	})
	tr, sink := open(t, srv.URL)
	send(t, tr, request(1, "initialize"))
	sink.Next(t)
	tr.SetProtocolVersion("2025-11-25")
	require.Empty(t, filter(srv.requests(), isGET), "no GET before initialized")
	send(t, tr, notification("notifications/initialized", "{}"))
	require.Equal(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, sink.Next(t))
	require.Equal(t, `{"jsonrpc":"2.0","id":"s1","method":"ping"}`, sink.Next(t))
}

// notifications/initialized returns (so the core becomes ready) only once
// the server has answered the GET stream's request: a call made at once
// cannot reach the server before the stream, and a server that notifies
// right after the handshake does not find the stream missing. A server that
// holds its GET answer back delays the handshake by listenerAnswerWait at
// most, and the stream still opens once it answers.
func TestInitializedWaitsForTheGETStream(t *testing.T) {
	for _, tc := range []struct {
		name     string
		getDelay time.Duration // before the GET's headers
		bound    time.Duration // listenerAnswerWait
		answered bool          // the GET answered when Send returns
	}{
		{"answered before ready", 200 * time.Millisecond, time.Minute, true},
		{"a held GET stops holding the handshake at the bound", time.Minute, 50 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := listenerAnswerWait
			listenerAnswerWait = tc.bound
			t.Cleanup(func() { listenerAnswerWait = saved })
			var getAnswered atomic.Bool
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
				if r.Method == http.MethodGet {
					select {
					case <-time.After(tc.getDelay):
					case <-r.Context().Done():
						return
					}
					getAnswered.Store(true)
					startSSE(w)
					<-r.Context().Done()
					return
				}
				mcp("s", echo)(w, r, m)
			})
			tr, sink := open(t, srv.URL)
			handshake(t, tr, sink)
			require.Equal(t, tc.answered, getAnswered.Load())
			send(t, tr, request(2, "tools/list"))
			require.Contains(t, sink.Next(t), "tools/list")
			if !tc.answered {
				sink.WaitLog(t, "has not answered the GET stream yet")
			}
		})
	}
}

// 405, 404 and 406 on the GET mean the server has no GET stream: one try,
// no warning, and requests go on working.
func TestGETStreamNotOffered(t *testing.T) {
	for _, status := range []int{http.StatusMethodNotAllowed, http.StatusNotFound, http.StatusNotAcceptable} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
				if r.Method == http.MethodGet {
					w.WriteHeader(status)
					return
				}
				mcp("s", echo)(w, r, m)
			})
			tr, sink := open(t, srv.URL)
			handshake(t, tr, sink)
			srv.waitFor(t, isGET)
			send(t, tr, request(2, "tools/list"))
			sink.Next(t)
			time.Sleep(150 * time.Millisecond) // several reconnect delays
			require.Len(t, filter(srv.requests(), isGET), 1)
			require.Empty(t, sink.Warnings())
			sink.WaitLog(t, "the server offers no GET stream")
		})
	}
}

// A GET stream that ends is reconnected after the server's retry delay,
// resuming with Last-Event-ID.
func TestGETStreamReconnects(t *testing.T) {
	var n atomic.Int32
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
		if r.Method == http.MethodGet {
			k := n.Add(1)
			startSSE(w)
			event(w, fmt.Sprintf("id: g%d\nretry: 150\ndata:\n\n", k))
			if k == 2 {
				event(w, message(`{"jsonrpc":"2.0","method":"notifications/second"}`))
				<-r.Context().Done()
			}
			return // the first stream ends at once
		}
		mcp("s", echo)(w, r, m)
	})
	tr, sink := open(t, srv.URL)
	delays := recordReconnectDelays(tr)
	handshake(t, tr, sink)
	first := srv.waitFor(t, isGET)
	second := srv.waitFor(t, isGET)
	require.Empty(t, first.Header.Get("Last-Event-ID"))
	require.Equal(t, "g1", second.Header.Get("Last-Event-ID"))
	require.Equal(t, "s", second.Header.Get("Mcp-Session-Id"))
	// The delay is the server's retry, not the 20 ms reconnect delay, and
	// the GET waited it out.
	require.Equal(t, 150*time.Millisecond, <-delays)
	require.GreaterOrEqual(t, second.At.Sub(first.At), 150*time.Millisecond)
	require.Equal(t, `{"jsonrpc":"2.0","method":"notifications/second"}`, sink.Next(t))
}

// SEP-1699, as the conformance scenario sse-retry checks it: a response
// stream that the server closes after a priming event is resumed with a
// GET carrying Last-Event-ID, after exactly the retry delay (read where
// the transport chooses it, not timed), and the response arrives there.
func TestResponseStreamResumedAfterRetry(t *testing.T) {
	for _, retry := range []time.Duration{200 * time.Millisecond, 500 * time.Millisecond} {
		t.Run(retry.String(), func(t *testing.T) {
			closedAt := make(chan time.Time, 1)
			pending := make(chan msg, 1)
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
				switch {
				case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "":
					startSSE(w)
					event(w, "id: e2\ndata:\n\n")
					req := <-pending
					event(w, "id: e3\n"+message(result(req.ID, `{"resumed":true}`)))
					<-r.Context().Done()
				case r.Method == http.MethodGet:
					startSSE(w) // the standalone stream: stays open, silent
					<-r.Context().Done()
				case m.Method == "tools/call":
					startSSE(w)
					event(w, fmt.Sprintf("id: e1\nretry: %d\ndata:\n\n", retry.Milliseconds()))
					pending <- m
					closedAt <- time.Now()
				default:
					mcp("s", echo)(w, r, m)
				}
			})
			tr, sink := open(t, srv.URL)
			delays := recordReconnectDelays(tr)
			handshake(t, tr, sink)
			send(t, tr, request(2, "tools/call"))
			resumed := srv.waitFor(t, func(r seen) bool { return isGET(r) && r.Header.Get("Last-Event-ID") != "" })
			require.Equal(t, "e1", resumed.Header.Get("Last-Event-ID"))
			require.Equal(t, "s", resumed.Header.Get("Mcp-Session-Id"))
			require.Equal(t, "2025-11-25", resumed.Header.Get("MCP-Protocol-Version"))
			require.Equal(t, retry, <-delays)
			require.GreaterOrEqual(t, resumed.At.Sub(<-closedAt), retry)
			require.Equal(t, `{"jsonrpc":"2.0","id":2,"result":{"resumed":true}}`, sink.Next(t))
			sink.NoFailure(t, 50*time.Millisecond)
		})
	}
}

// A response stream that breaks before an event id arrived cannot be
// resumed: the request fails, and no GET tries to resume it.
func TestResponseStreamNotResumableWithoutID(t *testing.T) {
	srv := newServer(t, mcp("", func(w http.ResponseWriter, _ *http.Request, _ msg) {
		startSSE(w)
		event(w, "retry: 10\ndata:\n\n")
	}))
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	send(t, tr, request(2, "tools/call"))
	f := sink.Failure(t)
	require.Equal(t, "the response stream ended before the response", f.Err.Message)
	for _, r := range srv.requests() {
		require.Empty(t, r.Header.Get("Last-Event-ID"))
	}
}

// The server refusing the resumption (here: no GET at all) fails the
// request with the reason.
func TestResumeRefused(t *testing.T) {
	srv := newServer(t, mcp("", func(w http.ResponseWriter, _ *http.Request, _ msg) {
		startSSE(w)
		event(w, "id: 1\nretry: 10\ndata:\n\n")
	}))
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	send(t, tr, request(2, "tools/call"))
	f := sink.Failure(t)
	require.Equal(t, "the response stream broke and the server refused to resume it (HTTP 405 Method Not Allowed: no GET stream)", f.Err.Message)
}

// A server that keeps ending the resumed stream without progress uses up
// the bounded attempts.
func TestResumeAttemptsBounded(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
		switch {
		case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "":
			w.WriteHeader(http.StatusServiceUnavailable)
		case m.Method == "tools/call":
			startSSE(w)
			event(w, "id: 1\ndata:\n\n")
		default:
			mcp("", echo)(w, r, m)
		}
	})
	tr, sink := open(t, srv.URL, func(c *Config) { c.MaxReconnectAttempts = 3 })
	handshake(t, tr, sink)
	send(t, tr, request(2, "tools/call"))
	f := sink.Failure(t)
	require.Equal(t, "the response stream broke and could not be resumed in 3 attempts (last: HTTP 503 Service Unavailable)", f.Err.Message)
	require.Len(t, filter(srv.requests(), func(r seen) bool { return r.Header.Get("Last-Event-ID") == "1" }), 3)
}

// A response that arrives on another stream settles the request: its own
// stream, which will not carry it any more, is closed.
func TestResponseOnAnotherStream(t *testing.T) {
	pending := make(chan msg, 1)
	postDone := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
		switch {
		case r.Method == http.MethodGet:
			startSSE(w)
			req := <-pending
			event(w, message(result(req.ID, `{"via":"get"}`)))
			<-r.Context().Done()
		case m.Method == "tools/call":
			startSSE(w)
			pending <- m
			<-r.Context().Done() // closed by the client
			close(postDone)
		default:
			mcp("s", echo)(w, r, m)
		}
	})
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	send(t, tr, request(2, "tools/call"))
	require.Equal(t, `{"jsonrpc":"2.0","id":2,"result":{"via":"get"}}`, sink.Next(t))
	select {
	case <-postDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the answered request's stream stayed open")
	}
	sink.NoFailure(t, 50*time.Millisecond)
}

// A response stream the server keeps open after the response is closed
// after a grace period, so it holds no connection for the session.
func TestResponseStreamLeftOpenIsClosed(t *testing.T) {
	postDone := make(chan time.Time, 1)
	srv := newServer(t, mcp("s", func(w http.ResponseWriter, r *http.Request, m msg) {
		startSSE(w)
		event(w, message(result(m.ID, `{}`)))
		<-r.Context().Done()
		postDone <- time.Now()
	}))
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	start := time.Now() // before the grace timer can start
	send(t, tr, request(2, "tools/call"))
	sink.Next(t)
	// The server never ends the stream itself, so only the grace timer can
	// end it; the wait below is not a time limit, as it lasts far beyond.
	select {
	case at := <-postDone:
		require.GreaterOrEqual(t, at.Sub(start), responseGrace, "cut before the grace period")
	case <-time.After(responseGrace + sinktest.Wait):
		t.Fatal("the stream stayed open")
	}
	sink.NoFailure(t, 10*time.Millisecond)
}

// notifications/cancelled from the core closes the abandoned request's
// stream once the server has been told.
func TestCancelledRequestStreamClosed(t *testing.T) {
	postDone := make(chan struct{})
	var cancelledSeen atomic.Bool
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
		switch m.Method {
		case "tools/call":
			startSSE(w)
			<-r.Context().Done()
			close(postDone)
		case "notifications/cancelled":
			cancelledSeen.Store(true)
			mcp("s", echo)(w, r, m)
		default:
			mcp("s", echo)(w, r, m)
		}
	})
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	send(t, tr, request(5, "tools/call"))
	srv.waitFor(t, isCall("tools/call"))
	send(t, tr, notification("notifications/cancelled", `{"requestId":5,"reason":"timed out"}`))
	require.True(t, cancelledSeen.Load())
	select {
	case <-postDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled request's stream stayed open")
	}
	sink.NoFailure(t, 100*time.Millisecond)
}

func filter(reqs []seen, keep func(seen) bool) []seen {
	var out []seen
	for _, r := range reqs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}
