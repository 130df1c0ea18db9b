package httptests

import (
	"bytes"
	"encoding/json"
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

	"github.com/lemonmcp/lemonmcp/core"
)

// faults wraps the SDK handler: tool calls named after a fault get that
// fault instead of reaching the SDK, and every request is recorded.
type faults struct {
	next http.Handler

	mu    sync.Mutex
	seen  []*http.Request
	calls []string // "METHOD jsonrpc-method tool"
	// expire404 answers every tools/call that carries a session id with
	// 404, as a server that keeps forgetting sessions would.
	expire404 atomic.Bool
}

func (f *faults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(raw))
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	_ = json.Unmarshal(raw, &m)
	f.mu.Lock()
	f.seen = append(f.seen, r.Clone(r.Context()))
	f.calls = append(f.calls, r.Method+" "+m.Method+" "+m.Params.Name)
	f.mu.Unlock()

	if m.Method == "tools/call" {
		if f.expire404.Load() && r.Header.Get("Mcp-Session-Id") != "" {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		switch m.Params.Name {
		case "boom":
			http.Error(w, "internal failure", http.StatusInternalServerError)
			return
		case "echo-headers":
			// A careless server that shows the request's headers in its
			// error, as plain text or as a JSON-RPC error.
			var dump strings.Builder
			for _, k := range []string{"Authorization", "X-Api-Key", "Mcp-Session-Id"} {
				dump.WriteString(k + ": " + r.Header.Get(k) + "; ")
			}
			for k, v := range r.Header {
				dump.WriteString(k + ": " + strings.Join(v, ",") + "; ")
			}
			if r.Header.Get("Accept") != "" && strings.Contains(r.URL.RawQuery, "json") {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32600, "message": dump.String()}})
				return
			}
			http.Error(w, dump.String(), http.StatusBadRequest)
			return
		case "reset":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",")
			w.(http.Flusher).Flush()
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.(*net.TCPConn).SetLinger(0)
				conn.Close()
			}
			return
		case "hang":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
	}
	f.next.ServeHTTP(w, r)
}

// waitCalls waits until the server has received n calls of the tool.
func (f *faults) waitCalls(t *testing.T, tool string, n int) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for f.callCount(tool) < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.Equal(t, n, f.callCount(tool), "calls of %s", tool)
}

// callCount counts the tools/call POSTs of a tool the server received.
func (f *faults) callCount(tool string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c == "POST tools/call "+tool {
			n++
		}
	}
	return n
}

func (f *faults) requests() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*http.Request(nil), f.seen...)
}

func sessionIDs(reqs []*http.Request) []string {
	var out []string
	for _, r := range reqs {
		id := r.Header.Get("Mcp-Session-Id")
		if id != "" && (len(out) == 0 || out[len(out)-1] != id) {
			out = append(out, id)
		}
	}
	return out
}

// The server restarts mid-session: the old session is unknown (404), and
// the core re-initializes once, transparently; the call succeeds.
func TestServerRestartMidSession(t *testing.T) {
	sw := &swappable{}
	sw.set(streamable(false, false)())
	f := &faults{next: sw}
	srv := serve(t, f)
	c := connect(t, "streamable_http", srv.URL+"/mcp", "")
	require.Equal(t, "before", c.toolText(t, "echo", map[string]any{"text": "before"}))

	sw.set(streamable(false, false)()) // a new server: no sessions
	require.Equal(t, "after", c.toolText(t, "echo", map[string]any{"text": "after"}))
	require.Equal(t, "again", c.toolText(t, "echo", map[string]any{"text": "again"}))
	c.waitEvent(t, "log", "re-initializing")
	ids := sessionIDs(f.requests())
	require.Len(t, ids, 2, "one session before the restart, one after: %v", ids)
	require.Equal(t, core.StateReady, c.State())
}

// A second 404 for the same call is an error, not a loop.
func TestSecondExpiryFails(t *testing.T) {
	f := &faults{next: streamable(false, false)()}
	srv := serve(t, f)
	c := connect(t, "streamable_http", srv.URL+"/mcp", "")
	f.expire404.Store(true)
	_, err := c.try("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}, core.CallOptions{})
	require.NotNil(t, err)
	require.Equal(t, core.StatusClosed, err.Status)
	require.Contains(t, err.Message, "the server no longer knows the session")
	f.expire404.Store(false)
	require.Equal(t, "fine", c.toolText(t, "echo", map[string]any{"text": "fine"}))
}

// A 500 fails that call only, over every transport.
func TestServerError(t *testing.T) {
	for _, m := range []mode{modes[0], modes[1], modes[2], modes[4]} {
		t.Run(m.name, func(t *testing.T) {
			srv := serve(t, &faults{next: m.handler()})
			c := connect(t, m.transport, srv.URL+m.path, "")
			_, err := c.try("tools/call", map[string]any{"name": "boom", "arguments": map[string]any{}}, core.CallOptions{})
			require.NotNil(t, err)
			require.Equal(t, core.StatusTransport, err.Status)
			require.Equal(t, "HTTP 500 Internal Server Error: internal failure", err.Message)
			require.Equal(t, "ok", c.toolText(t, "echo", map[string]any{"text": "ok"}))
		})
	}
}

// A server that echoes the request's headers in an error body gets no
// configured header value (and no part of the Authorization) into the
// message, over every transport.
func TestEchoedHeadersRedacted(t *testing.T) {
	const token = "sk-live-0123456789abcdef"
	for _, m := range []mode{modes[0], modes[1], modes[4]} {
		for _, query := range []string{"", "?json"} {
			t.Run(m.name+query, func(t *testing.T) {
				srv := serve(t, &faults{next: m.handler()})
				c := connectHeaders(t, m.transport, srv.URL+m.path+query, `{"Authorization":"Bearer `+token+`","X-Api-Key":"key-9876543210"}`)
				_, err := c.try("tools/call", map[string]any{"name": "echo-headers", "arguments": map[string]any{}}, core.CallOptions{})
				require.NotNil(t, err)
				text := string(err.JSON())
				require.NotContains(t, text, "0123456789abcdef")
				require.NotContains(t, text, "key-9876543210")
				require.Contains(t, text, "[redacted]", "the test must see the echo: %s", text)
				for _, e := range c.eventsOf("log") {
					require.NotContains(t, e.Payload, "0123456789abcdef")
					require.NotContains(t, e.Payload, "key-9876543210")
				}
			})
		}
	}
}

// A connection reset in the middle of a response stream fails that call,
// promptly; the client carries on.
func TestConnectionResetMidStream(t *testing.T) {
	f := &faults{next: streamable(false, false)()}
	srv := serve(t, f)
	c := connect(t, "streamable_http", srv.URL+"/mcp", "")
	_, err := c.try("tools/call", map[string]any{"name": "reset", "arguments": map[string]any{}}, core.CallOptions{})
	require.NotNil(t, err)
	// Promptly: the break itself failed the call (a call left to its
	// timeout ends StatusTimeout), at the first attempt.
	require.Equal(t, core.StatusTransport, err.Status)
	require.Contains(t, err.Message, "the response stream broke before the response")
	require.Equal(t, 1, f.callCount("reset"), "the call was sent again")
	require.Equal(t, "ok", c.toolText(t, "echo", map[string]any{"text": "ok"}))
}

// An answer over max_message_bytes fails its call with a clear error, as an
// SSE event, a JSON body, and over legacy SSE.
func TestHugeResponse(t *testing.T) {
	for _, m := range []mode{modes[0], modes[1], modes[4]} {
		t.Run(m.name, func(t *testing.T) {
			srv := serve(t, m.handler())
			c := connect(t, m.transport, srv.URL+m.path, `,"limits":{"max_message_bytes":65536}`)
			_, err := c.try("tools/call", map[string]any{"name": "large", "arguments": map[string]any{"bytes": 4 << 20}}, core.CallOptions{})
			require.NotNil(t, err)
			require.Equal(t, core.StatusTransport, err.Status)
			require.Equal(t, "the server's response is larger than the limit of 65536 bytes (limits.max_message_bytes)", err.Message)
			require.Equal(t, strings.Repeat("x", 1000), c.toolText(t, "large", map[string]any{"bytes": 1000}))
		})
	}
}

// A stream that stops sending is bounded by the call timeout; closing the
// client afterwards is prompt and leaves nothing running.
func TestStreamStopsSending(t *testing.T) {
	before := goroutines()
	func() {
		f := &faults{next: streamable(false, false)()}
		srv := serve(t, f)
		c := connect(t, "streamable_http", srv.URL+"/mcp", "")
		hang := map[string]any{"name": "hang", "arguments": map[string]any{}}
		_, err := c.try("tools/call", hang, core.CallOptions{Timeout: 300 * time.Millisecond, TimeoutSet: true})
		require.NotNil(t, err)
		require.Equal(t, core.StatusTimeout, err.Status)
		// The call's own timeout, not the client's call_ms of 10 s.
		require.Equal(t, "no response to tools/call within 300 ms", err.Message)
		require.Equal(t, "ok", c.toolText(t, "echo", map[string]any{"text": "ok"}))

		// Close with a silent stream open: the server holds it until the
		// client drops it, so a Close that waited for it would never
		// finish. The wait below is not a time limit on Close.
		inFlight := make(chan *core.Error, 1)
		go func() {
			_, err := c.try("tools/call", hang, core.CallOptions{})
			inFlight <- err
		}()
		f.waitCalls(t, "hang", 2)
		closed := make(chan *core.Error, 1)
		go func() { closed <- c.Close(wait) }()
		select {
		case err := <-closed:
			require.Nil(t, errOrNil(err))
		case <-time.After(2 * wait):
			require.FailNow(t, "Close waited for the server's silent stream")
		}
		err = <-inFlight
		require.NotNil(t, err)
		require.Equal(t, core.StatusClosed, err.Status)
		c.Free()
		srv.Close()
	}()
	deadline := time.Now().Add(5 * time.Second)
	for goroutines() > before+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	require.LessOrEqual(t, goroutines(), before+2, "goroutines left running")
}

// A dead server fails calls promptly and does not close the client.
func TestDeadServer(t *testing.T) {
	srv := serve(t, streamable(false, false)())
	c := connect(t, "streamable_http", srv.URL+"/mcp", "")
	// The server dies: no listener, every connection dropped (Close would
	// wait for the SDK's GET stream, which waits for us).
	srv.Listener.Close()
	srv.CloseClientConnections()
	time.Sleep(50 * time.Millisecond)
	_, err := c.try("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}, core.CallOptions{})
	require.NotNil(t, err)
	// Promptly: the refusal failed the call; one left to its timeout ends
	// StatusTimeout.
	require.Equal(t, core.StatusTransport, err.Status)
	require.Contains(t, err.Message, "connection refused")
	require.Equal(t, core.StateReady, c.State())
}

// The resumption of TestResumedResponseStream really happened: GET with
// Last-Event-ID.
func TestResumptionOnTheWire(t *testing.T) {
	f := &faults{next: streamable(false, false)()}
	srv := serve(t, f)
	c := connect(t, "streamable_http", srv.URL+"/mcp", "")
	require.Equal(t, "polled", c.toolText(t, "poll", map[string]any{}))
	var resumed int
	for _, r := range f.requests() {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			resumed++
		}
	}
	require.GreaterOrEqual(t, resumed, 1)
}

func goroutines() int {
	runtime.GC()
	return runtime.NumGoroutine()
}

// A session re-initialized after the server forgot it is a new session in
// telemetry: the old one's record (lost) carries the old Mcp-Session-Id,
// the calls after it and the new one's record the new id.
func TestReinitializedSessionIsANewSessionInTelemetry(t *testing.T) {
	sw := &swappable{}
	sw.set(streamable(false, false)())
	f := &faults{next: sw}
	srv := serve(t, f)
	c := connect(t, "streamable_http", srv.URL+"/mcp", "")
	var mu sync.Mutex
	var recs []*core.TelemetryRecord
	require.Nil(t, errOrNil(c.SetTelemetryHandler(func(r *core.TelemetryRecord) {
		mu.Lock()
		recs = append(recs, r)
		mu.Unlock()
	}, nil)))
	require.Equal(t, "before", c.toolText(t, "echo", map[string]any{"text": "before"}))
	sw.set(streamable(false, false)()) // a new server: the session is unknown
	require.Equal(t, "after", c.toolText(t, "echo", map[string]any{"text": "after"}))
	require.Nil(t, errOrNil(c.Close(5*time.Second)))
	ids := sessionIDs(f.requests())
	require.Len(t, ids, 2, "%v", ids)

	byKind := func(kind string) []*core.TelemetryRecord {
		mu.Lock()
		defer mu.Unlock()
		var out []*core.TelemetryRecord
		for _, r := range recs {
			if r.Kind == kind {
				out = append(out, r)
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(byKind(core.RecordSession)) == 2 }, 10*time.Second, 10*time.Millisecond, "a record for each session")
	sessions := byKind(core.RecordSession)
	require.Equal(t, ids[0], sessions[0].SessionID)
	require.Equal(t, "closed", sessions[0].ErrorType, "the expired session was lost")
	require.Equal(t, ids[1], sessions[1].SessionID)
	require.Equal(t, "", sessions[1].ErrorType, "the new one was closed")
	require.GreaterOrEqual(t, sessions[1].StartUnixNano, sessions[0].StartUnixNano+sessions[0].DurationNS)
	calls := byKind(core.RecordCall)
	require.Equal(t, ids[1], calls[len(calls)-1].SessionID, "the re-sent call is the new session's")
}
