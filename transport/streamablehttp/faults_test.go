package streamablehttp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/sinktest"
)

// Requests are not serialized, and Send does not wait for a reply: the
// server answers neither of two requests until both are in, which they can
// only be if the first Send returned before its reply and the two POSTs
// overlap. (Should they not, the server gives up waiting after
// sinktest.Wait and the peak it saw is 1.)
func TestRequestsRunConcurrently(t *testing.T) {
	var mu sync.Mutex
	inside, peak := 0, 0
	both := make(chan struct{})
	srv := newServer(t, mcp("s", func(w http.ResponseWriter, r *http.Request, m msg) {
		mu.Lock()
		inside++
		peak = max(peak, inside)
		if inside == 2 {
			close(both)
		}
		mu.Unlock()
		select {
		case <-both:
		case <-time.After(sinktest.Wait):
		}
		echo(w, r, m)
	}))
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	send(t, tr, request(2, "slow"))
	send(t, tr, request(3, "slow"))
	got := []string{sink.Next(t), sink.Next(t)}
	require.ElementsMatch(t, []string{
		`{"jsonrpc":"2.0","id":2,"result":{"echo":"slow"}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"echo":"slow"}}`,
	}, got)
	mu.Lock()
	require.Equal(t, 2, peak, "the two requests did not overlap: Send waited for a reply, or the requests were serialized")
	mu.Unlock()
}

// A dead server fails each request promptly, and only that request; the
// transport stays open (Closed only on Close).
func TestConnectionRefused(t *testing.T) {
	srv := newServer(t, mcp("", echo))
	var posts atomic.Int32
	tr, sink := open(t, srv.URL, observe(func(r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
	}))
	handshake(t, tr, sink)
	srv.Close()
	// Let the pool notice that the server closed its idle connections; a
	// POST written into one just as it closes fails "closed the
	// connection" instead, as net/http never replays a POST.
	time.Sleep(50 * time.Millisecond)
	for id := int64(2); id <= 3; id++ {
		before := posts.Load()
		send(t, tr, request(id, "tools/list"))
		f := sink.Failure(t)
		require.Equal(t, id, f.ID)
		require.Equal(t, transport.CodeTransport, f.Err.Code)
		require.Equal(t, "sending tools/list failed: connection refused", f.Err.Message)
		require.NotContains(t, f.Err.Message, srv.URL, "no URL in messages")
		// Promptly: failed at the first refusal, not after retries.
		require.Equal(t, before+1, posts.Load(), "the refused request was tried again")
	}
	err := tr.Send(context.Background(), notification("notifications/x", "{}"))
	require.Equal(t, transport.CodeTransport, codeOf(t, err))
	require.Zero(t, sink.ClosedCount())
}

// A connection reset in the middle of a response stream fails that
// request; the next one is fine.
func TestConnectionResetMidStream(t *testing.T) {
	srv := newServer(t, mcp("", func(w http.ResponseWriter, r *http.Request, m msg) {
		if m.Method != "reset" {
			echo(w, r, m)
			return
		}
		startSSE(w)
		event(w, "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"res")
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		conn.(*net.TCPConn).SetLinger(0) // RST, not FIN
		conn.Close()
	}))
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	send(t, tr, request(2, "reset"))
	f := sink.Failure(t)
	require.Equal(t, int64(2), f.ID)
	require.Equal(t, transport.CodeTransport, f.Err.Code)
	require.True(t, strings.HasPrefix(f.Err.Message, "the response stream broke before the response: "), f.Err.Message)
	send(t, tr, request(3, "fine"))
	require.Equal(t, `{"jsonrpc":"2.0","id":3,"result":{"echo":"fine"}}`, sink.Next(t))
}

// A stream that stops sending is the core's to time out; at the transport
// level nothing fails, and Close ends it promptly without leaking.
func TestStreamStopsSending(t *testing.T) {
	before := settledGoroutines()
	srv := newServer(t, mcp("s", func(w http.ResponseWriter, r *http.Request, _ msg) {
		startSSE(w)
		event(w, ": one comment, then silence\n\n")
		<-r.Context().Done()
	}))
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	send(t, tr, request(2, "hang"))
	send(t, tr, request(3, "hang"))
	sink.NoFailure(t, 200*time.Millisecond)

	// The server ends neither stream (nor the DELETE, bounded by
	// DeleteTimeout) until the client drops it: Close must.
	closeReturns(t, tr)
	require.True(t, sink.WaitClosed(t).Requested)
	srv.Close()
	requireNoLeak(t, before)
}

// An SSE event over the limit fails the request it answers with a clear
// error, without the event ever being held in memory.
func TestHugeSSEEvent(t *testing.T) {
	const limit = 64 << 10
	const huge = 32 << 20
	srv := newServer(t, mcp("s", func(w http.ResponseWriter, r *http.Request, m msg) {
		startSSE(w)
		switch m.Method {
		case "huge":
			io.WriteString(w, `data: {"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"text":"`)
			chunk := bytes.Repeat([]byte("x"), 64<<10)
			for n := 0; n < huge; n += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
			event(w, "\"}}\n\n")
		case "huge-notification":
			io.WriteString(w, `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`+strings.Repeat("y", 2*limit)+"\"}}\n\n")
			event(w, message(result(m.ID, `{"after":true}`)))
		}
	}))
	tr, sink := open(t, srv.URL, func(c *Config) { c.MaxMessageBytes = limit })
	handshake(t, tr, sink)

	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	allocBefore := ms.TotalAlloc

	send(t, tr, request(2, "huge"))
	f := sink.Failure(t)
	require.Equal(t, int64(2), f.ID)
	require.Equal(t, "the server's response is larger than the limit of 65536 bytes (limits.max_message_bytes)", f.Err.Message)

	runtime.ReadMemStats(&ms)
	require.Less(t, ms.TotalAlloc-allocBefore, uint64(huge/4), "the event was not buffered")

	// A huge notification is skipped with a warning; the response after it
	// still arrives.
	send(t, tr, request(3, "huge-notification"))
	require.Equal(t, `{"jsonrpc":"2.0","id":3,"result":{"after":true}}`, sink.Next(t))
	sink.WaitLog(t, "skipped an SSE event larger than the limit of 65536 bytes")
}

// A JSON body over the limit fails its request, whether or not the server
// announced its length.
func TestHugeJSONBody(t *testing.T) {
	const limit = 4096
	srv := newServer(t, mcp("s", func(w http.ResponseWriter, r *http.Request, m msg) {
		body := result(m.ID, `{"text":"`+strings.Repeat("z", 2*limit)+`"}`)
		w.Header().Set("Content-Type", "application/json")
		if m.Method == "chunked" {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush() // no Content-Length
		}
		io.WriteString(w, body)
	}))
	tr, sink := open(t, srv.URL, func(c *Config) { c.MaxMessageBytes = limit })
	handshake(t, tr, sink)
	for i, method := range []string{"sized", "chunked"} {
		send(t, tr, request(int64(10+i), method))
		f := sink.Failure(t)
		require.Equal(t, int64(10+i), f.ID)
		require.Equal(t, "the server's response is larger than the limit of 4096 bytes (limits.max_message_bytes)", f.Err.Message)
	}
}

// Redirects are followed within the origin only: configured headers carry
// credentials.
func TestRedirects(t *testing.T) {
	other := newServer(t, mcp("", echo))
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
		switch r.URL.Path {
		case "/old":
			http.Redirect(w, r, "/new", http.StatusPermanentRedirect)
		case "/away":
			http.Redirect(w, r, other.URL+"/x", http.StatusTemporaryRedirect)
		default:
			mcp("", echo)(w, r, m)
		}
	})
	t.Run("same origin", func(t *testing.T) {
		tr, sink := open(t, srv.URL+"/old", func(c *Config) { c.Headers = map[string]string{"X-Key": "k"} })
		send(t, tr, request(1, "initialize"))
		require.Contains(t, sink.Next(t), `"protocolVersion"`)
	})
	t.Run("other origin", func(t *testing.T) {
		tr, sink := open(t, srv.URL+"/away", func(c *Config) { c.Headers = map[string]string{"X-Key": "k"} })
		send(t, tr, request(1, "initialize"))
		f := sink.Failure(t)
		require.Equal(t, "sending initialize failed: refused a redirect to another origin", f.Err.Message)
		require.Empty(t, other.requests())
	})
}

// Close ends the session with a DELETE carrying its id; 405 is fine, and a
// DELETE that hangs holds Close up for DeleteTimeout at most.
func TestDeleteOnClose(t *testing.T) {
	tests := []struct {
		name   string
		delete func(w http.ResponseWriter, r *http.Request)
		warn   bool
	}{
		{name: "204", delete: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }},
		{name: "405", delete: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusMethodNotAllowed) }},
		{name: "500", delete: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }, warn: true},
		{name: "hangs", delete: func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
				if r.Method == http.MethodDelete {
					tt.delete(w, r)
					return
				}
				mcp("sess-9", echo)(w, r, m)
			})
			const deleteTimeout = 300 * time.Millisecond
			// What the DELETE had left of its deadline as it went out.
			var left atomic.Int64
			var hasDeadline atomic.Bool
			tr, sink := open(t, srv.URL, func(c *Config) { c.DeleteTimeout = deleteTimeout }, observe(func(r *http.Request) {
				if r.Method == http.MethodDelete {
					dl, ok := r.Context().Deadline()
					left.Store(int64(time.Until(dl)))
					hasDeadline.Store(ok)
				}
			}))
			handshake(t, tr, sink)
			// "hangs" holds the DELETE until the client gives up on it.
			closeReturns(t, tr)
			require.True(t, hasDeadline.Load(), "the DELETE had no deadline")
			require.LessOrEqual(t, time.Duration(left.Load()), deleteTimeout, "the DELETE's deadline is not DeleteTimeout")
			del := filter(srv.requests(), isDELETE)
			require.Len(t, del, 1)
			require.Equal(t, "sess-9", del[0].Header.Get("Mcp-Session-Id"))
			require.Equal(t, "2025-11-25", del[0].Header.Get("MCP-Protocol-Version"))
			require.Equal(t, tt.warn, len(sink.Warnings()) > 0, "%v", sink.Logs())
			ce := sink.WaitClosed(t)
			require.Equal(t, &transport.ClosedError{Message: "the client closed the connection", ExitCode: -1, Requested: true}, ce)
		})
	}
}

// Without a session there is nothing to DELETE.
func TestNoDeleteWithoutSession(t *testing.T) {
	srv := newServer(t, mcp("", echo))
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	require.NoError(t, tr.Close(context.Background()))
	require.Empty(t, filter(srv.requests(), isDELETE))
}

// Closed comes exactly once, after everything else; Send and Close after
// Close are harmless.
func TestCloseOnceAndAfter(t *testing.T) {
	srv := newServer(t, mcp("s", func(w http.ResponseWriter, r *http.Request, _ msg) {
		startSSE(w)
		<-r.Context().Done()
	}))
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	for i := int64(0); i < 5; i++ {
		send(t, tr, request(10+i, "hang"))
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr.Close(context.Background())
		}()
	}
	wg.Wait()
	require.Equal(t, 1, sink.ClosedCount())
	require.Zero(t, sink.AfterClosed())
	require.Equal(t, transport.CodeClosed, codeOf(t, tr.Send(context.Background(), request(99, "x"))))
	require.Equal(t, transport.CodeClosed, codeOf(t, tr.Send(context.Background(), notification("n", "{}"))))
	require.NoError(t, tr.Close(context.Background()))
}

// Close before Start, Start after Close, and a nil sink.
func TestLifecycleErrors(t *testing.T) {
	tr, err := New(Config{URL: "http://127.0.0.1:1/"})
	require.NoError(t, err)
	require.Equal(t, "streamable_http", tr.Name())
	require.Equal(t, transport.CodeInvalidArgument, codeOf(t, tr.Start(context.Background(), nil)))
	require.Equal(t, transport.CodeClosed, codeOf(t, tr.Send(context.Background(), request(1, "initialize"))))
	require.NoError(t, tr.Close(context.Background()))
	require.Equal(t, transport.CodeClosed, codeOf(t, tr.Start(context.Background(), nil2())))
}

func nil2() transport.Sink { return discard{} }

type discard struct{}

func (discard) Receive([]byte)                        {}
func (discard) Log(transport.LogLine)                 {}
func (discard) RequestFailed(int64, *transport.Error) {}
func (discard) Closed(*transport.ClosedError)         {}

// Every goroutine of the transport is gone once Close has returned, after
// ordinary calls, streams, resumptions and faults.
func TestNoGoroutineLeak(t *testing.T) {
	before := settledGoroutines()
	for round := 0; round < 3; round++ {
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
			switch {
			case r.Method == http.MethodGet:
				startSSE(w)
				event(w, "id: g\nretry: 10\ndata:\n\n")
			case m.Method == "stream":
				startSSE(w)
				event(w, message(result(m.ID, `{}`)))
			case m.Method == "hang":
				startSSE(w)
				<-r.Context().Done()
			case m.Method == "fail":
				w.WriteHeader(http.StatusInternalServerError)
			default:
				mcp("s", echo)(w, r, m)
			}
		})
		tr, sink := open(t, srv.URL)
		handshake(t, tr, sink)
		send(t, tr, request(2, "stream"))
		send(t, tr, request(3, "json"))
		send(t, tr, request(4, "hang"))
		send(t, tr, request(5, "fail"))
		sink.Next(t)
		sink.Next(t)
		sink.Failure(t)
		srv.waitFor(t, isGET)
		require.NoError(t, tr.Close(context.Background()))
		srv.Close()
	}
	requireNoLeak(t, before)
}

func settledGoroutines() int {
	runtime.GC()
	return runtime.NumGoroutine()
}

func requireNoLeak(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for settledGoroutines() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		require.FailNow(t, fmt.Sprintf("%d goroutines leaked", n-before), "%s", buf)
	}
}

// panickyTransport is a host-supplied RoundTripper with a bug.
type panickyTransport struct{}

func (p *panickyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	panic("host round tripper bug")
}

// A panic in a request's goroutine (here: in a host-given RoundTripper)
// fails that request with CodeInternal and a log line; it does not take
// the host process down.
func TestPanicInRequestGoroutineIsRecovered(t *testing.T) {
	srv := newServer(t, mcp("s", echo))
	tr, sink := open(t, srv.URL, func(c *Config) {
		c.HTTPClient = &http.Client{Transport: &panickyTransport{}}
	})
	send(t, tr, request(1, "initialize"))
	f := sink.Failure(t)
	require.Equal(t, int64(1), f.ID)
	require.Equal(t, transport.CodeInternal, f.Err.Code)
	require.Contains(t, f.Err.Message, "internal error while sending initialize")
	var logged bool
	for _, l := range sink.Logs() {
		if l.Level == "error" && strings.Contains(l.Text, "internal error in the goroutine sending initialize: host round tripper bug") {
			logged = true
		}
	}
	require.True(t, logged, "the panic was not reported: %v", sink.Logs())
}
