package legacysse

import (
	"context"
	"encoding/json"
	"errors"
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
)

// server is a hand-written 2024-11-05 SSE server: GET /sse opens the
// stream and announces endpoint; POSTs to it are answered 202 and handled
// by the test's onPost, which writes replies to the stream through out.
type server struct {
	*httptest.Server
	endpoint string // the endpoint event's data
	out      chan string
	onPost   func(m map[string]any) (status int)
	// hold, when set, gets each POST of a request named "hold" instead of
	// onPost, and answers nothing.
	hold func(r *http.Request)

	mu    sync.Mutex
	posts []*http.Request
	gets  []*http.Request
	end   chan struct{} // closing it ends the stream
}

func newServer(t *testing.T, endpoint string) *server {
	s := &server{endpoint: endpoint, out: make(chan string, 64), end: make(chan struct{})}
	s.onPost = s.echo
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/sse":
		s.mu.Lock()
		s.gets = append(s.gets, r)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if s.endpoint != "" {
			fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", s.endpoint)
		}
		w.(http.Flusher).Flush()
		for {
			select {
			case ev := <-s.out:
				io.WriteString(w, ev)
				w.(http.Flusher).Flush()
			case <-s.end:
				return
			case <-r.Context().Done():
				return
			}
		}
	case r.Method == http.MethodPost:
		raw, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(nil)
		s.mu.Lock()
		s.posts = append(s.posts, r)
		s.mu.Unlock()
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		if s.hold != nil && m["method"] == "hold" {
			s.hold(r)
			return
		}
		w.WriteHeader(s.onPost(m))
	default:
		http.NotFound(w, r)
	}
}

// echo answers requests on the stream with {"echo": method}.
func (s *server) echo(m map[string]any) int {
	if id, ok := m["id"]; ok && m["method"] != nil {
		s.out <- fmt.Sprintf("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%v,\"result\":{\"echo\":%q}}\n\n", id, m["method"])
	}
	return http.StatusAccepted
}

func (s *server) postRequests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.posts...)
}

func open(t *testing.T, url string, edit ...func(*Config)) (*Transport, *sinktest.Sink, error) {
	t.Helper()
	cfg := Config{URL: url, UserAgent: "lemonmcp/test", EndpointTimeout: 2 * time.Second}
	for _, e := range edit {
		e(&cfg)
	}
	tr, err := New(cfg)
	require.NoError(t, err)
	sink := sinktest.New()
	ctx, cancel := context.WithTimeout(context.Background(), sinktest.Wait)
	defer cancel()
	err = tr.Start(ctx, sink)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		tr.Close(ctx)
	})
	return tr, sink, err
}

func request(id int64, method string) transport.Outbound {
	return transport.Outbound{
		Data: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, id, method)),
		Kind: transport.KindRequest, Method: method, ID: id,
	}
}

func send(t testing.TB, tr *Transport, m transport.Outbound) {
	t.Helper()
	require.NoError(t, tr.Send(context.Background(), m))
}

func codeOf(t testing.TB, err error) transport.Code {
	t.Helper()
	var te *transport.Error
	require.True(t, errors.As(err, &te), "want *transport.Error, got %T %v", err, err)
	return te.Code
}
