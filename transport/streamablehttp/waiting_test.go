package streamablehttp

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/callerhttp"
	"github.com/lemonmcp/lemonmcp/transport/internal/sinktest"
)

// countingSink counts deliveries as they happen.
type countingSink struct {
	*sinktest.Sink
	received atomic.Int32
}

func (s *countingSink) Receive(data []byte) {
	s.received.Add(1)
	s.Sink.Receive(data)
}

// waiting is a request whose sender waits for it (a synchronous call).
func waiting(id int64, method string) transport.Outbound {
	m := request(id, method)
	m.Waiting = true
	return m
}

// TestSendWaiting: a waiting request's exchange runs inside Send. A JSON
// reply has been delivered when Send returns; an SSE stream that the
// server keeps open after the response does not hold the sender; a server
// that never answers holds it only until the request is aborted, as the
// core does when the call times out.
func TestSendWaiting(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	openStream := make(chan struct{}) // ends the sse-open stream
	var closeOpenStream sync.Once
	defer closeOpenStream.Do(func() { close(openStream) })
	srv := newServer(t, mcp("s1", func(w http.ResponseWriter, r *http.Request, m msg) {
		switch m.Method {
		case "json":
			echo(w, r, m)
		case "sse-open":
			startSSE(w)
			event(w, message(result(m.ID, `{"sse":true}`)))
			select { // keeps the stream open past the response
			case <-openStream:
			case <-r.Context().Done():
			}
		case "error":
			http.Error(w, "nope", http.StatusInternalServerError)
		case "hang":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	}))
	tr, err := New(Config{URL: srv.URL})
	require.NoError(t, err)
	// The open stream is held until the test ends it, not cut by the
	// grace timer: a Send that waited for its end would never return.
	tr.grace = time.Hour
	sink := &countingSink{Sink: sinktest.New()}
	require.NoError(t, tr.Start(context.Background(), sink))
	defer tr.Close(context.Background())
	handshake(t, tr, sink.Sink)

	t.Run("json reply delivered before Send returns", func(t *testing.T) {
		before := sink.received.Load()
		require.NoError(t, tr.Send(context.Background(), waiting(2, "json")))
		require.Equal(t, before+1, sink.received.Load(), "the reply was not delivered inside Send")
		require.JSONEq(t, `{"jsonrpc":"2.0","id":2,"result":{"echo":"json"}}`, sink.Next(t))
	})
	t.Run("sse stream held open does not hold the sender", func(t *testing.T) {
		done := make(chan error, 1)
		go func() { done <- tr.Send(context.Background(), waiting(3, "sse-open")) }()
		select { // not a time limit: the stream ends only once Send has returned
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(sinktest.Wait):
			closeOpenStream.Do(func() { close(openStream) })
			<-done
			require.FailNow(t, "Send waited for the stream's end")
		}
		require.JSONEq(t, `{"jsonrpc":"2.0","id":3,"result":{"sse":true}}`, sink.Next(t))
	})
	t.Run("error status reported", func(t *testing.T) {
		require.NoError(t, tr.Send(context.Background(), waiting(4, "error")))
		f := sink.Failure(t)
		require.Equal(t, int64(4), f.ID)
		require.Equal(t, transport.CodeTransport, f.Err.Code)
	})
	t.Run("abort releases the sender", func(t *testing.T) {
		done := make(chan error, 1)
		go func() { done <- tr.Send(context.Background(), waiting(5, "hang")) }()
		srv.waitFor(t, isCall("hang"))
		tr.Abort(5)
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(sinktest.Wait):
			require.FailNow(t, "Send still running after Abort")
		}
	})
}

// TestExchangesOnTheirOwnConnections: with a client of its own, the
// transport makes a waiting request's exchange on a blocking connection
// of the caller's, and any other request's on a kept connection in the
// netpoller, on the goroutine that makes it (callerhttp): neither goes
// through net/http's connections.
func TestExchangesOnTheirOwnConnections(t *testing.T) {
	srv := newServer(t, mcp("s1", func(w http.ResponseWriter, r *http.Request, m msg) { echo(w, r, m) }))
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	kept := tr.client.Transport.(*callerhttp.Transport)
	idle := func() {
		// The runners that made the exchanges have given their
		// connections back.
		require.Eventually(t, func() bool { return tr.runners.Live() == tr.runners.Idle() }, sinktest.Wait, time.Millisecond)
	}
	idle()
	_, handshakes := kept.Kept() // the handshake's POSTs: one or two at once
	require.NotZero(t, handshakes, "the handshake's POSTs went through callerhttp")

	for id := int64(2); id < 6; id++ {
		require.NoError(t, tr.Send(context.Background(), request(id, "queued")))
		require.JSONEq(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"echo":"queued"}}`, id), sink.Next(t))
	}
	idle()
	onCaller, pooled := kept.Kept()
	require.Zero(t, onCaller)
	require.GreaterOrEqual(t, pooled, handshakes, "no connection was lost")

	require.NoError(t, tr.Send(context.Background(), waiting(6, "waited")))
	require.JSONEq(t, `{"jsonrpc":"2.0","id":6,"result":{"echo":"waited"}}`, sink.Next(t))
	onCaller, pooled = kept.Kept()
	require.Equal(t, 1, onCaller, "a waiting request's exchange has a blocking connection")
	require.GreaterOrEqual(t, pooled, handshakes)
}

// TestAThreadWaitsInItsOwnReadNotAlone: while another blocking exchange
// is under way, a waiting goroutine's request is exchanged in the
// netpoller, and a waiting thread's (Outbound.Thread, a C host's) still on
// a blocking connection of its own.
func TestAThreadWaitsInItsOwnReadNotAlone(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	defer letGo()
	srv := newServer(t, mcp("s1", func(w http.ResponseWriter, r *http.Request, m msg) {
		if m.Method == "hang" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		echo(w, r, m)
	}))
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	kept := tr.client.Transport.(*callerhttp.Transport)

	thread := func(m transport.Outbound) transport.Outbound { m.Thread = true; return m }
	done := make(chan error, 1)
	go func() { done <- tr.Send(context.Background(), thread(waiting(2, "hang"))) }()
	srv.waitFor(t, isCall("hang")) // one blocking exchange under way

	require.NoError(t, tr.Send(context.Background(), waiting(3, "goroutine")))
	require.JSONEq(t, `{"jsonrpc":"2.0","id":3,"result":{"echo":"goroutine"}}`, sink.Next(t))
	blocking, _ := kept.Kept()
	require.Zero(t, blocking, "a goroutine not alone was given a blocking connection")

	require.NoError(t, tr.Send(context.Background(), thread(waiting(4, "thread"))))
	require.JSONEq(t, `{"jsonrpc":"2.0","id":4,"result":{"echo":"thread"}}`, sink.Next(t))
	blocking, _ = kept.Kept()
	require.Equal(t, 1, blocking, "a thread's exchange blocks however many do")

	letGo()
	require.NoError(t, <-done)
	require.JSONEq(t, `{"jsonrpc":"2.0","id":2,"result":{"echo":"hang"}}`, sink.Next(t))
}
