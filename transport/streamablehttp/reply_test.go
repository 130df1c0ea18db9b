package streamablehttp

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport"
)

// A request's reply may be a JSON body or an SSE stream; on a stream, the
// server's own notifications and requests come first, in order.
func TestReplies(t *testing.T) {
	tests := []struct {
		name  string
		reply handler
		want  []string
	}{
		{
			name:  "JSON body",
			reply: echo,
			want:  []string{`{"jsonrpc":"2.0","id":2,"result":{"echo":"tools/call"}}`},
		},
		{
			name: "JSON body with charset",
			reply: func(w http.ResponseWriter, _ *http.Request, m msg) {
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.Write([]byte(result(m.ID, `{}`)))
			},
			want: []string{`{"jsonrpc":"2.0","id":2,"result":{}}`},
		},
		{
			name: "SSE stream",
			reply: func(w http.ResponseWriter, _ *http.Request, m msg) {
				startSSE(w)
				event(w, message(result(m.ID, `{"n":1}`)))
			},
			want: []string{`{"jsonrpc":"2.0","id":2,"result":{"n":1}}`},
		},
		{
			name: "SSE with notifications first",
			reply: func(w http.ResponseWriter, _ *http.Request, m msg) {
				startSSE(w)
				event(w, ": keepalive\n\n")
				event(w, "id: p\nretry: 1000\ndata:\n\n") // priming: not a message
				event(w, message(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`))
				event(w, "data: {\"jsonrpc\":\"2.0\",\r\ndata: \"method\":\"notifications/message\"}\r\n\r\n")
				event(w, message(result(m.ID, `{}`)))
			},
			want: []string{
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
				"{\"jsonrpc\":\"2.0\",\n\"method\":\"notifications/message\"}",
				`{"jsonrpc":"2.0","id":2,"result":{}}`,
			},
		},
		{
			name: "SSE batch",
			reply: func(w http.ResponseWriter, _ *http.Request, m msg) {
				startSSE(w)
				event(w, message(`[`+result(m.ID, `{}`)+`]`))
			},
			want: []string{`[{"jsonrpc":"2.0","id":2,"result":{}}]`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, mcp("s", tt.reply))
			tr, sink := open(t, srv.URL)
			handshake(t, tr, sink)
			send(t, tr, request(2, "tools/call"))
			for _, want := range tt.want {
				require.Equal(t, want, sink.Next(t))
			}
			sink.NoFailure(t, 100*time.Millisecond)
		})
	}
}

// A request the server sends on a POST stream is answered with a POST
// while that stream stays open; the original response follows on it.
func TestServerRequestOnPOSTStream(t *testing.T) {
	answered := make(chan string, 1)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
		switch {
		case m.Method == "" && len(m.ID) > 0: // the client's response
			answered <- string(m.ID)
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "tools/call":
			startSSE(w)
			event(w, message(`{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}`))
			select {
			case id := <-answered:
				event(w, message(result(m.ID, `{"answered":`+id+`}`)))
			case <-time.After(5 * time.Second):
			}
		default:
			mcp("s", echo)(w, r, m)
		}
	})
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	send(t, tr, request(2, "tools/call"))
	require.Equal(t, `{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}`, sink.Next(t))
	send(t, tr, transport.Outbound{Data: []byte(`{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}}`), Kind: transport.KindResponse})
	require.Equal(t, `{"jsonrpc":"2.0","id":2,"result":{"answered":"srv-1"}}`, sink.Next(t))
	sink.NoFailure(t, 50*time.Millisecond)
}

// Notifications and responses are delivered (202) before Send returns.
func TestNotificationDeliveredBeforeSendReturns(t *testing.T) {
	var got atomic.Int32
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
		if m.Method == "notifications/roots/list_changed" {
			time.Sleep(100 * time.Millisecond)
			got.Add(1)
		}
		mcp("s", echo)(w, r, m)
	})
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	send(t, tr, notification("notifications/roots/list_changed", "{}"))
	require.EqualValues(t, 1, got.Load())
	send(t, tr, transport.Outbound{Data: []byte(`{"jsonrpc":"2.0","id":9,"result":{}}`), Kind: transport.KindResponse})
}

// A notification the server refuses is an error of that Send, classified
// by status; a refused request fails that request only.
func TestErrorStatuses(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		ctype   string
		body    string
		code    transport.Code
		message string
	}{
		{name: "400 with JSON-RPC error", status: 400, ctype: "application/json", body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad\nthing"}}`, code: transport.CodeTransport, message: "HTTP 400 Bad Request: bad thing"},
		{name: "500 plain text", status: 500, ctype: "text/plain", body: "boom\nstack trace line", code: transport.CodeTransport, message: "HTTP 500 Internal Server Error: boom"},
		{name: "502 HTML", status: 502, ctype: "text/html", body: "<html>gateway</html>", code: transport.CodeTransport, message: "HTTP 502 Bad Gateway"},
		{name: "503 long body", status: 503, ctype: "text/plain", body: strings.Repeat("x", 100000), code: transport.CodeTransport, message: "HTTP 503 Service Unavailable: " + strings.Repeat("x", 200) + "…"},
		{name: "401", status: 401, code: transport.CodeAuthRequired, message: "the server requires authorization (HTTP 401 Unauthorized)"},
		{name: "403", status: 403, ctype: "text/plain", body: "origin not allowed", code: transport.CodeAuthRequired, message: "the server refused access (HTTP 403 Forbidden): origin not allowed"},
		{name: "404 without session", status: 404, code: transport.CodeTransport, message: "HTTP 404 Not Found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fail := func(w http.ResponseWriter) {
				if tt.ctype != "" {
					w.Header().Set("Content-Type", tt.ctype)
				}
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
				if m.Method == "bad" || m.Method == "notifications/bad" {
					fail(w)
					return
				}
				mcp("", echo)(w, r, m)
			})
			tr, sink := open(t, srv.URL)
			handshake(t, tr, sink)

			err := tr.Send(context.Background(), notification("notifications/bad", "{}"))
			require.Error(t, err)
			require.Equal(t, tt.code, codeOf(t, err))
			require.Equal(t, tt.message, err.Error())

			send(t, tr, request(7, "bad"))
			send(t, tr, request(8, "good"))
			f := sink.Failure(t)
			require.Equal(t, int64(7), f.ID)
			require.Equal(t, tt.code, f.Err.Code)
			require.Equal(t, tt.message, f.Err.Message)
			require.Equal(t, `{"jsonrpc":"2.0","id":8,"result":{"echo":"good"}}`, sink.Next(t))
			sink.NoFailure(t, 50*time.Millisecond)
		})
	}
}

// Replies that cannot answer a request fail it with a reason.
func TestBadReplies(t *testing.T) {
	tests := []struct {
		name    string
		reply   handler
		message string
	}{
		{
			name: "stream ends before the response",
			reply: func(w http.ResponseWriter, _ *http.Request, _ msg) {
				startSSE(w)
				event(w, message(`{"jsonrpc":"2.0","method":"notifications/x"}`))
			},
			message: "the response stream ended before the response",
		},
		{
			name: "JSON without the response",
			reply: func(w http.ResponseWriter, _ *http.Request, _ msg) {
				writeJSON(w, `{"jsonrpc":"2.0","id":99,"result":{}}`)
			},
			message: "the server's reply to tools/call did not contain its response",
		},
		{
			name:    "empty JSON body",
			reply:   func(w http.ResponseWriter, _ *http.Request, _ msg) { writeJSON(w, "") },
			message: "the server answered tools/call with an empty body",
		},
		{
			name: "wrong content type",
			reply: func(w http.ResponseWriter, _ *http.Request, _ msg) {
				w.Header().Set("Content-Type", "text/html")
				w.Write([]byte("<p>hi</p>"))
			},
			message: `the server answered tools/call with content type "text/html", not JSON or an SSE stream`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, mcp("s", tt.reply))
			tr, sink := open(t, srv.URL)
			handshake(t, tr, sink)
			send(t, tr, request(2, "tools/call"))
			f := sink.Failure(t)
			require.Equal(t, int64(2), f.ID)
			require.Equal(t, transport.CodeTransport, f.Err.Code)
			require.Equal(t, tt.message, f.Err.Message)
		})
	}
}

// A request answered 202 waits for its response elsewhere (the GET
// stream) instead of failing.
func TestRequestAcceptedAnsweredOnGETStream(t *testing.T) {
	pending := make(chan msg, 1)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
		switch {
		case r.Method == http.MethodGet:
			startSSE(w)
			select {
			case req := <-pending:
				event(w, message(result(req.ID, `{"late":true}`)))
			case <-r.Context().Done():
				return
			}
			<-r.Context().Done()
		case m.Method == "tools/call":
			pending <- m
			w.WriteHeader(http.StatusAccepted)
		default:
			mcp("s", echo)(w, r, m)
		}
	})
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	send(t, tr, request(2, "tools/call"))
	require.Equal(t, `{"jsonrpc":"2.0","id":2,"result":{"late":true}}`, sink.Next(t))
	sink.NoFailure(t, 50*time.Millisecond)
}
