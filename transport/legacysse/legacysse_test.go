package legacysse

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/callerhttp"
	"github.com/lemonmcp/lemonmcp/transport/internal/sinktest"
)

// The endpoint event names where to POST; responses come back on the
// stream, matched by id in the core, whatever their order.
func TestRoundTrip(t *testing.T) {
	srv := newServer(t, "/messages?session=abc")
	tr, sink, err := open(t, srv.URL+"/sse", func(c *Config) { c.Headers = map[string]string{"authorization": "Bearer t"} })
	require.NoError(t, err)
	require.Equal(t, "sse", tr.Name())
	require.Equal(t, srv.URL+"/messages?session=abc", tr.Endpoint())

	send(t, tr, request(1, "initialize"))
	require.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{"echo":"initialize"}}`, sink.Next(t))
	send(t, tr, transport.Outbound{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), Kind: transport.KindNotification, Method: "notifications/initialized"})

	srv.out <- "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"ping\"}\n\n"
	require.Equal(t, `{"jsonrpc":"2.0","id":"s1","method":"ping"}`, sink.Next(t))
	send(t, tr, transport.Outbound{Data: []byte(`{"jsonrpc":"2.0","id":"s1","result":{}}`), Kind: transport.KindResponse})

	srv.mu.Lock()
	get := srv.gets[0]
	srv.mu.Unlock()
	require.Equal(t, "text/event-stream", get.Header.Get("Accept"))
	require.Equal(t, "Bearer t", get.Header.Get("Authorization"))
	require.Equal(t, "lemonmcp/test", get.Header.Get("User-Agent"))
	posts := srv.postRequests()
	require.Len(t, posts, 3)
	for _, p := range posts {
		require.Equal(t, "/messages", p.URL.Path)
		require.Equal(t, "session=abc", p.URL.RawQuery)
		require.Equal(t, "application/json", p.Header.Get("Content-Type"))
		require.Equal(t, "Bearer t", p.Header.Get("Authorization"))
		require.Equal(t, "lemonmcp/test", p.Header.Get("User-Agent"))
		require.Empty(t, p.Header.Get("Mcp-Session-Id"), "2024-11-05 has no session header")
	}
	sink.NoFailure(t, 20*time.Millisecond)
}

// The endpoint is resolved against the stream URL (RFC 3986), and another
// origin is refused: it would receive every message and the configured
// credentials.
func TestEndpointOrigin(t *testing.T) {
	tests := []struct {
		name     string
		endpoint func(base string) string
		want     string // resolved path and query, "" when refused
	}{
		{name: "absolute path", endpoint: func(string) string { return "/messages?s=1" }, want: "/messages?s=1"},
		{name: "relative path", endpoint: func(string) string { return "messages?s=2" }, want: "/messages?s=2"},
		{name: "dot segments", endpoint: func(string) string { return "../up/./m" }, want: "/up/m"},
		{name: "same origin, absolute", endpoint: func(base string) string { return base + "/m?s=3" }, want: "/m?s=3"},
		{name: "upper-case scheme", endpoint: func(base string) string { return strings.Replace(base, "http:", "HTTP:", 1) + "/m" }, want: "/m"},
		{name: "other host", endpoint: func(string) string { return "http://evil.example/m" }},
		{name: "other port", endpoint: func(base string) string { return strings.Replace(base, "127.0.0.1:", "127.0.0.1:1", 1) + "/m" }},
		{name: "other scheme", endpoint: func(base string) string { return strings.Replace(base, "http:", "https:", 1) + "/m" }},
		{name: "scheme-relative", endpoint: func(string) string { return "//evil.example/m" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, "")
			srv.endpoint = tt.endpoint(srv.URL)
			tr, _, err := open(t, srv.URL+"/sse")
			if tt.want == "" {
				require.Error(t, err)
				require.Equal(t, transport.CodeTransport, codeOf(t, err))
				require.Contains(t, err.Error(), "the server's endpoint event names another origin")
				require.Contains(t, err.Error(), "refusing to send messages there")
				require.NotContains(t, err.Error(), "/m", "only the origin is named")
				return
			}
			require.NoError(t, err)
			require.Equal(t, srv.URL+tt.want, tr.Endpoint())
		})
	}
}

// Start fails clearly when the stream cannot be opened or never names an
// endpoint; the wait is bounded.
func TestStartFailures(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		code    transport.Code
		message string
	}{
		{
			name: "no endpoint event",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			},
			code:    transport.CodeTimeout,
			message: "the server did not send the endpoint event within 300 ms",
		},
		{
			name: "stream ends first",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write([]byte("event: message\ndata: {}\n\n"))
			},
			code:    transport.CodeTransport,
			message: "the server closed the SSE stream before sending the endpoint event",
		},
		{name: "401", handler: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(401) }, code: transport.CodeAuthRequired, message: "the server requires authorization (HTTP 401 Unauthorized)"},
		{name: "404", handler: http.NotFound, code: transport.CodeTransport, message: "HTTP 404 Not Found: 404 page not found"},
		{
			name: "not SSE",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte("{}"))
			},
			code:    transport.CodeTransport,
			message: `the server answered with content type "application/json", not an SSE stream`,
		},
		{
			name: "empty endpoint",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write([]byte("event: endpoint\ndata: \n\n"))
			},
			code:    transport.CodeTransport,
			message: "the server's endpoint event is empty",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			// The message tells the failures apart, which bounds the wait
			// without timing it: a case that waited for the endpoint
			// would fail with the timeout's message, and a timer not set
			// from EndpointTimeout (the default is 30 s) is outrun by
			// open's context, whose end has a message of its own.
			_, sink, err := open(t, srv.URL, func(c *Config) { c.EndpointTimeout = 300 * time.Millisecond })
			require.Error(t, err)
			require.Equal(t, tt.code, codeOf(t, err))
			require.Equal(t, tt.message, err.Error())
			require.Zero(t, sink.ClosedCount(), "a failed Start delivers no Closed")
		})
	}
}

// Start's own context bounds the wait too.
func TestStartContext(t *testing.T) {
	srv := newServer(t, "")
	tr, err := New(Config{URL: srv.URL + "/sse"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = tr.Start(ctx, nopSink{})
	require.Equal(t, transport.CodeTimeout, codeOf(t, err))
	require.Equal(t, "start ended before the server sent the endpoint event", err.Error())
}

// The session ends with the stream: Closed with the reason, so that the
// core fails every pending call, and Send fails from then on.
func TestStreamEndCloses(t *testing.T) {
	srv := newServer(t, "/m")
	srv.onPost = func(map[string]any) int { return http.StatusAccepted } // never answers
	tr, sink, err := open(t, srv.URL+"/sse")
	require.NoError(t, err)
	send(t, tr, request(1, "tools/call"))
	close(srv.end)
	ce := sink.WaitClosed(t)
	require.Equal(t, &transport.ClosedError{Message: "the server closed the SSE stream", ExitCode: -1}, ce)
	require.Equal(t, transport.CodeClosed, codeOf(t, tr.Send(context.Background(), request(2, "x"))))
	require.NoError(t, tr.Close(context.Background()))
	require.Equal(t, 1, sink.ClosedCount())
	require.Zero(t, sink.AfterClosed())
}

// A POST the server refuses fails that request (asynchronously) or that
// Send (notifications and responses).
func TestPostRefused(t *testing.T) {
	srv := newServer(t, "/m")
	srv.onPost = func(m map[string]any) int {
		if m["method"] == "bad" || m["method"] == "notifications/bad" {
			return http.StatusBadRequest
		}
		return srv.echo(m)
	}
	tr, sink, err := open(t, srv.URL+"/sse")
	require.NoError(t, err)
	send(t, tr, request(3, "bad"))
	f := sink.Failure(t)
	require.Equal(t, int64(3), f.ID)
	require.Equal(t, "HTTP 400 Bad Request", f.Err.Message)
	err = tr.Send(context.Background(), transport.Outbound{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/bad"}`), Kind: transport.KindNotification, Method: "notifications/bad"})
	require.Equal(t, "HTTP 400 Bad Request", err.Error())
	send(t, tr, request(4, "good"))
	require.Equal(t, `{"jsonrpc":"2.0","id":4,"result":{"echo":"good"}}`, sink.Next(t))
}

// An event over the limit fails the request it answers when its head
// names it, and is skipped with a warning otherwise.
func TestHugeEvent(t *testing.T) {
	srv := newServer(t, "/m")
	tr, sink, err := open(t, srv.URL+"/sse", func(c *Config) { c.MaxMessageBytes = 1024 })
	require.NoError(t, err)
	srv.out <- "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"t\":\"" + strings.Repeat("x", 4096) + "\"}}\n\n"
	f := sink.Failure(t)
	require.Equal(t, int64(5), f.ID)
	require.Equal(t, "the server's response is larger than the limit of 1024 bytes (limits.max_message_bytes)", f.Err.Message)
	srv.out <- "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":\"" + strings.Repeat("y", 4096) + "\"}\n\n"
	srv.out <- "event: message\ndata: {\"after\":1}\n\n"
	require.Equal(t, `{"after":1}`, sink.Next(t))
	sink.WaitLog(t, "skipped an SSE event larger than the limit of 1024 bytes")
	_ = tr
}

// Close closes the stream and delivers Closed once, as requested.
func TestClose(t *testing.T) {
	srv := newServer(t, "/m")
	tr, sink, err := open(t, srv.URL+"/sse")
	require.NoError(t, err)
	require.NoError(t, tr.Close(context.Background()))
	require.Equal(t, &transport.ClosedError{Message: "the client closed the connection", ExitCode: -1, Requested: true}, sink.WaitClosed(t))
	require.NoError(t, tr.Close(context.Background()))
	require.Equal(t, 1, sink.ClosedCount())
	require.Equal(t, transport.CodeClosed, codeOf(t, tr.Send(context.Background(), request(1, "x"))))
}

type nopSink struct{}

func (nopSink) Receive([]byte)                        {}
func (nopSink) Log(transport.LogLine)                 {}
func (nopSink) RequestFailed(int64, *transport.Error) {}
func (nopSink) Closed(*transport.ClosedError)         {}

// Requests' POSTs are made by runners the transport keeps: one runner
// makes those sent one after another, each exchange on the runner itself
// over one kept connection (callerhttp.Pooled), and Close ends the runner
// before it returns.
func TestRunnersKept(t *testing.T) {
	srv := newServer(t, "/messages?session=abc")
	tr, sink, err := open(t, srv.URL+"/sse")
	require.NoError(t, err)
	for id := int64(1); id <= 20; id++ {
		require.Eventually(t, func() bool { return tr.runners.Live() == tr.runners.Idle() }, 5*time.Second, time.Millisecond)
		send(t, tr, request(id, "seq"))
		require.Equal(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"echo":"seq"}}`, id), sink.Next(t))
	}
	require.EqualValues(t, 1, tr.runners.Started(), "POSTs sent one after another were not made by the one runner kept")
	require.Eventually(t, func() bool { return tr.runners.Live() == tr.runners.Idle() }, 5*time.Second, time.Millisecond)
	onCaller, pooled := tr.client.Transport.(*callerhttp.Transport).Kept()
	require.Zero(t, onCaller)
	require.Equal(t, 1, pooled, "the runner's POSTs share one connection of callerhttp's, in the netpoller")
	require.NoError(t, tr.Close(t.Context()))
	require.Zero(t, tr.runners.Live(), "a runner outlived Close")
}

// TestWaitingRequestPostedOnTheSender: a request whose sender waits for it
// (a blocking call) is POSTed on the sender's goroutine, on the thread
// itself (callerhttp): the server has it when Send returns, no runner is
// started, and net/http keeps no connection for it (the stream's is its
// only one). A failed POST is reported as the request's failure.
func TestWaitingRequestPostedOnTheSender(t *testing.T) {
	srv := newServer(t, "/messages?session=abc")
	srv.onPost = func(m map[string]any) int {
		if m["method"] == "refused" {
			return http.StatusInternalServerError
		}
		return srv.echo(m)
	}
	tr, sink, err := open(t, srv.URL+"/sse")
	require.NoError(t, err)
	for id := int64(1); id <= 5; id++ {
		msg := request(id, "seq")
		msg.Waiting = true
		send(t, tr, msg)
		require.Len(t, srv.postRequests(), int(id), "the POST was made before Send returned")
		require.Equal(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"echo":"seq"}}`, id), sink.Next(t))
	}
	require.Zero(t, tr.runners.Started(), "a runner made a waiting request's POST")
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	require.Equal(t, 1, bytes.Count(buf, []byte("net/http.(*persistConn).readLoop(")), "only the stream goes through net/http")

	msg := request(6, "refused")
	msg.Waiting = true
	send(t, tr, msg)
	f := sink.Failure(t)
	require.EqualValues(t, 6, f.ID)
	require.Contains(t, f.Err.Message, "500")
}

// TestWaitingPostEnds: a waiting sender's POST that the server never
// answers ends when the core gives the request up (Abort) or at the
// deadline of Send's context, and its failure is not reported (the core
// has already completed the call); the server sees the POST's connection
// go, and the next waiting POST is answered.
func TestWaitingPostEnds(t *testing.T) {
	tests := []struct {
		name string
		// ctx is Send's; end, run once the server has the POST, ends it.
		ctx func() (context.Context, context.CancelFunc)
		end func(tr *Transport, id int64)
	}{
		{"aborted", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			func(tr *Transport, id int64) { tr.Abort(id) }},
		{"past its deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 100*time.Millisecond)
		}, func(*Transport, int64) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, "/messages?session=abc")
			held, gone := make(chan struct{}, 1), make(chan struct{}, 1)
			srv.hold = func(r *http.Request) {
				held <- struct{}{}
				<-r.Context().Done()
				gone <- struct{}{}
			}
			tr, sink, err := open(t, srv.URL+"/sse")
			require.NoError(t, err)
			msg := request(1, "hold")
			msg.Waiting = true
			ctx, cancel := tt.ctx()
			defer cancel()
			sent := make(chan error, 1)
			go func() { sent <- tr.Send(ctx, msg) }()
			<-held
			tt.end(tr, 1)
			select {
			case err := <-sent:
				require.NoError(t, err)
			case <-time.After(sinktest.Wait):
				t.Fatal("the waiting POST was not ended")
			}
			<-gone
			sink.NoFailure(t, 50*time.Millisecond)
			tr.Abort(99) // an id with no POST under way: ignored

			next := request(2, "seq")
			next.Waiting = true
			send(t, tr, next)
			require.Equal(t, `{"jsonrpc":"2.0","id":2,"result":{"echo":"seq"}}`, sink.Next(t))
		})
	}
}
