package streamablehttp

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

// The tests run hand-written servers, not an SDK, so that every header and
// byte on the wire is the test's choice.

// msg is a JSON-RPC message as a test server sees it.
type msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func (m msg) isRequest() bool { return m.Method != "" && len(m.ID) > 0 }

// seen is one request the server received.
type seen struct {
	Method string
	Header http.Header
	Body   msg
	At     time.Time
}

// server is an httptest server that records every request and hands it to
// the test's handler.
type server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
	hit  chan seen
}

type handler func(w http.ResponseWriter, r *http.Request, m msg)

func newServer(t *testing.T, h handler) *server {
	s := &server{hit: make(chan seen, 256)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var m msg
		_ = json.Unmarshal(raw, &m)
		rec := seen{Method: r.Method, Header: r.Header.Clone(), Body: m, At: time.Now()}
		s.mu.Lock()
		s.reqs = append(s.reqs, rec)
		s.mu.Unlock()
		s.hit <- rec
		h(w, r, m)
	}))
	t.Cleanup(s.Close)
	return s
}

// requests returns what the server received so far.
func (s *server) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.reqs...)
}

// waitFor waits for a request that matches.
func (s *server) waitFor(t testing.TB, match func(seen) bool) seen {
	t.Helper()
	timeout := time.After(sinktest.Wait)
	for {
		select {
		case r := <-s.hit:
			if match(r) {
				return r
			}
		case <-timeout:
			require.FailNow(t, "the server did not receive the expected request", "got %d requests", len(s.requests()))
		}
	}
}

func isGET(r seen) bool    { return r.Method == http.MethodGet }
func isDELETE(r seen) bool { return r.Method == http.MethodDelete }
func isCall(method string) func(seen) bool {
	return func(r seen) bool { return r.Method == http.MethodPost && r.Body.Method == method }
}

// mcp answers what every test needs the same way: initialize (JSON, with
// session as the session id), notifications and responses (202), GET
// (405), DELETE (204); every other request goes to next.
func mcp(session string, next handler) handler {
	return func(w http.ResponseWriter, r *http.Request, m msg) {
		switch {
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		case r.Method == http.MethodGet:
			http.Error(w, "no GET stream", http.StatusMethodNotAllowed)
		case m.Method == "initialize":
			if session != "" {
				w.Header().Set("Mcp-Session-Id", session)
			}
			writeJSON(w, result(m.ID, `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"t","version":"1"}}`))
		case !m.isRequest():
			w.WriteHeader(http.StatusAccepted)
		default:
			next(w, r, m)
		}
	}
}

// echo answers every request with {"echo": <method>} as JSON.
func echo(w http.ResponseWriter, _ *http.Request, m msg) {
	writeJSON(w, result(m.ID, fmt.Sprintf(`{"echo":%q}`, m.Method)))
}

func result(id json.RawMessage, res string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, res)
}

func writeJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, body)
}

// startSSE begins an SSE response.
func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

// event writes one SSE event's raw text and flushes it.
func event(w http.ResponseWriter, text string) {
	io.WriteString(w, text)
	w.(http.Flusher).Flush()
}

func message(data string) string { return "event: message\ndata: " + data + "\n\n" }

// recordReconnectDelays makes tr report every reconnect delay it waits;
// call it before the first Send, so no stream is running yet.
func recordReconnectDelays(tr *Transport) <-chan time.Duration {
	delays := make(chan time.Duration, 16)
	tr.waitToReconnect = func(ctx context.Context, d time.Duration) bool {
		select {
		case delays <- d:
		default:
		}
		return sleep(ctx, d)
	}
	return delays
}

// open starts a transport to url with test-friendly settings.
func open(t *testing.T, url string, edit ...func(*Config)) (*Transport, *sinktest.Sink) {
	t.Helper()
	cfg := Config{URL: url, UserAgent: "lemonmcp/test", ReconnectDelay: 20 * time.Millisecond, MaxReconnectDelay: 100 * time.Millisecond, DeleteTimeout: 500 * time.Millisecond}
	for _, e := range edit {
		e(&cfg)
	}
	tr, err := New(cfg)
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

func request(id int64, method string) transport.Outbound {
	return transport.Outbound{
		Data: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{}}`, id, method)),
		Kind: transport.KindRequest, Method: method, ID: id,
	}
}

func notification(method, params string) transport.Outbound {
	return transport.Outbound{
		Data: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params)),
		Kind: transport.KindNotification, Method: method,
	}
}

func send(t testing.TB, tr *Transport, m transport.Outbound) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), sinktest.Wait)
	defer cancel()
	require.NoError(t, tr.Send(ctx, m))
}

// handshake runs initialize and notifications/initialized, as the core
// does, and returns the initialize result text.
func handshake(t testing.TB, tr *Transport, sink *sinktest.Sink) string {
	t.Helper()
	send(t, tr, request(1, "initialize"))
	res := sink.Next(t)
	tr.SetProtocolVersion("2025-11-25")
	send(t, tr, notification("notifications/initialized", "{}"))
	return res
}

func codeOf(t testing.TB, err error) transport.Code {
	t.Helper()
	var te *transport.Error
	require.True(t, errors.As(err, &te), "want *transport.Error, got %T %v", err, err)
	return te.Code
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// observe makes every request the transport sends pass through see
// before it goes out.
func observe(see func(*http.Request)) func(*Config) {
	return func(c *Config) {
		c.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				see(r)
				return next.RoundTrip(r)
			})
		}
	}
}

// closeReturns closes tr and fails the test if Close does not return.
// Callers make the server hold what Close must not wait for until the
// client gives up on it, so a Close that waited would never return: the
// wait here is not a time limit.
func closeReturns(t *testing.T, tr *Transport) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- tr.Close(context.Background()) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(sinktest.Wait):
		require.FailNow(t, "Close waited for the server")
	}
}
