package httpdetect

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/sinktest"
	"github.com/lemonmcp/lemonmcp/transport/legacysse"
	"github.com/lemonmcp/lemonmcp/transport/streamablehttp"
)

// server answers the POST of initialize with postStatus (0: as a
// Streamable HTTP server would), and serves a 2024-11-05 SSE stream on GET
// when legacy is set.
type server struct {
	*httptest.Server
	postStatus int
	legacy     bool

	mu    sync.Mutex
	calls []string // "METHOD path jsonrpc-method"
	out   chan string
}

func newServer(t *testing.T, postStatus int, legacy bool) *server {
	s := &server{postStatus: postStatus, legacy: legacy, out: make(chan string, 16)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(raw, &m)
	s.mu.Lock()
	s.calls = append(s.calls, r.Method+" "+r.URL.Path+" "+m.Method)
	s.mu.Unlock()
	reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"t","version":"1"}}}`, m.ID)
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/messages":
		s.out <- "event: message\ndata: " + reply + "\n\n"
		w.WriteHeader(http.StatusAccepted)
	case r.Method == http.MethodPost && s.postStatus != 0:
		http.Error(w, "no", s.postStatus)
	case r.Method == http.MethodPost:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "session-1")
		w.Write([]byte(reply))
	case r.Method == http.MethodGet && s.legacy:
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: endpoint\ndata: /messages?s=1\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case ev := <-s.out:
				io.WriteString(w, ev)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (s *server) log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

func open(t *testing.T, url string) (*Transport, *sinktest.Sink) {
	t.Helper()
	tr, err := New(streamablehttp.Config{URL: url}, legacysse.Config{URL: url, EndpointTimeout: 2 * time.Second})
	require.NoError(t, err)
	sink := sinktest.New()
	require.NoError(t, tr.Start(context.Background(), sink))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		tr.Close(ctx)
	})
	return tr, sink
}

var initialize = transport.Outbound{
	Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`),
	Kind: transport.KindRequest, Method: "initialize", ID: 1,
}

// 400, 404 and 405 on the initialize POST mean a 2024-11-05 server: the
// same initialize goes over legacy SSE, and Name says so before the
// response reaches the core.
func TestFallback(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv := newServer(t, status, true)
			tr, sink := open(t, srv.URL+"/sse")
			require.Equal(t, "streamable_http", tr.Name(), "until decided")
			require.True(t, tr.ExchangesOnCaller(), "until decided")
			require.False(t, tr.PostsOnCaller(), "until decided")
			require.NoError(t, tr.Send(context.Background(), initialize))
			res := sink.Next(t)
			require.Contains(t, res, `"protocolVersion":"2024-11-05"`)
			require.Equal(t, "sse", tr.Name())
			require.Empty(t, tr.SessionID(), "legacy SSE has no Mcp-Session-Id")
			// A blocking C caller now POSTs on its thread and waits for the
			// reply from the stream (core.SyncPostThenWait).
			require.False(t, tr.ExchangesOnCaller())
			require.True(t, tr.PostsOnCaller())
			require.Equal(t, []string{"POST /sse initialize", "GET /sse ", "POST /messages initialize"}, srv.log())
			sink.NoFailure(t, 20*time.Millisecond)

			// Later messages go over SSE too; Closed comes once.
			tr.SetProtocolVersion("2024-11-05")
			require.NoError(t, tr.Send(context.Background(), transport.Outbound{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), Kind: transport.KindNotification, Method: "notifications/initialized"}))
			require.Equal(t, "POST /messages notifications/initialized", srv.log()[3])
			require.NoError(t, tr.Close(context.Background()))
			require.True(t, sink.WaitClosed(t).Requested)
			require.Equal(t, 1, sink.ClosedCount())
			require.Zero(t, sink.AfterClosed())
		})
	}
}

// Authorization problems and server errors are not a sign of an old
// server: no fallback, the initialize fails as it is.
func TestNoFallback(t *testing.T) {
	tests := []struct {
		status int
		code   transport.Code
	}{
		{http.StatusUnauthorized, transport.CodeAuthRequired},
		{http.StatusForbidden, transport.CodeAuthRequired},
		{http.StatusInternalServerError, transport.CodeTransport},
		{http.StatusNotAcceptable, transport.CodeTransport},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv := newServer(t, tt.status, true)
			tr, sink := open(t, srv.URL+"/sse")
			require.NoError(t, tr.Send(context.Background(), initialize))
			f := sink.Failure(t)
			require.Equal(t, int64(1), f.ID)
			require.Equal(t, tt.code, f.Err.Code)
			require.Equal(t, "streamable_http", tr.Name())
			require.Equal(t, []string{"POST /sse initialize"}, srv.log(), "no GET: no fallback")
		})
	}
}

// A network error is no fallback either.
func TestNoFallbackOnNetworkError(t *testing.T) {
	srv := newServer(t, 0, true)
	url := srv.URL
	srv.Close()
	tr, sink := open(t, url)
	require.NoError(t, tr.Send(context.Background(), initialize))
	f := sink.Failure(t)
	require.Equal(t, transport.CodeTransport, f.Err.Code)
	require.Contains(t, f.Err.Message, "connection refused")
	require.Equal(t, "streamable_http", tr.Name())
}

// A Streamable HTTP server is used as such.
func TestStreamableChosen(t *testing.T) {
	srv := newServer(t, 0, false)
	tr, sink := open(t, srv.URL+"/mcp")
	require.NoError(t, tr.Send(context.Background(), initialize))
	sink.Next(t)
	require.Equal(t, "streamable_http", tr.Name())
	require.Equal(t, "session-1", tr.SessionID(), "the Streamable HTTP session, for telemetry")
	require.True(t, tr.ExchangesOnCaller())
	require.False(t, tr.PostsOnCaller())
	require.Equal(t, []string{"POST /mcp initialize"}, srv.log())
	require.NoError(t, tr.Close(context.Background()))
	require.Equal(t, 1, sink.ClosedCount())
}

// When the fallback fails too, initialize fails with both reasons.
func TestFallbackFails(t *testing.T) {
	srv := newServer(t, http.StatusNotFound, false) // and no SSE on GET
	tr, sink := open(t, srv.URL+"/mcp")
	require.NoError(t, tr.Send(context.Background(), initialize))
	f := sink.Failure(t)
	require.Equal(t, int64(1), f.ID)
	require.Equal(t, "the server refused Streamable HTTP (HTTP 404 Not Found) and the legacy HTTP+SSE transport failed too: HTTP 405 Method Not Allowed", f.Err.Message)
	require.Equal(t, "streamable_http", tr.Name())
}

// Close during a fallback stops it; Closed still comes once.
func TestCloseDuringFallback(t *testing.T) {
	waiting := make(chan struct{}, 1)
	blocked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		select {
		case waiting <- struct{}{}:
		default:
		}
		<-r.Context().Done() // never sends the endpoint
	}))
	defer blocked.Close()
	// The fallback would wait a day for the endpoint: only Close can stop
	// it, and a Close that waited for it instead never returns.
	tr, err := New(streamablehttp.Config{URL: blocked.URL}, legacysse.Config{URL: blocked.URL, EndpointTimeout: 24 * time.Hour})
	require.NoError(t, err)
	sink := sinktest.New()
	require.NoError(t, tr.Start(context.Background(), sink))
	require.NoError(t, tr.Send(context.Background(), initialize))
	select {
	case <-waiting: // the fallback waits for its endpoint
	case <-time.After(sinktest.Wait):
		require.FailNow(t, "no fallback")
	}
	closed := make(chan error, 1)
	go func() { closed <- tr.Close(context.Background()) }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(sinktest.Wait): // not a time limit: see EndpointTimeout
		require.FailNow(t, "Close waited for the fallback")
	}
	require.Equal(t, 1, sink.ClosedCount())
}
