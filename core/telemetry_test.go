package core

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/tracecontext"
	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/stretchr/testify/require"
)

// recordSink collects telemetry records.
type recordSink struct {
	mu   sync.Mutex
	recs []*TelemetryRecord
}

func (r *recordSink) handle(rec *TelemetryRecord) {
	r.mu.Lock()
	r.recs = append(r.recs, rec)
	r.mu.Unlock()
}

// ofKind returns the records of kind so far.
func (r *recordSink) ofKind(kind string) []*TelemetryRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*TelemetryRecord
	for _, rec := range r.recs {
		if rec.Kind == kind {
			out = append(out, rec)
		}
	}
	return out
}

// wait returns the first record of kind for method ("" any), or fails.
func (r *recordSink) wait(t *testing.T, kind, method string) *TelemetryRecord {
	t.Helper()
	var got *TelemetryRecord
	require.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, rec := range r.recs {
			if rec.Kind == kind && (method == "" || rec.Method == method) {
				got = rec
				return true
			}
		}
		return false
	}, 5*time.Second, 5*time.Millisecond, "no %s record for %q", kind, method)
	return got
}

// Each completed call becomes one record with what the core measured.
func TestTelemetryCallRecords(t *testing.T) {
	cases := []struct {
		name      string
		method    string
		params    string
		server    handlerFunc
		opts      CallOptions
		status    Status
		errorType string
		target    string
	}{
		{name: "tool call", method: "tools/call", params: `{"name":"echo","arguments":{"text":"hi"}}`, target: "echo",
			opts: CallOptions{Trace: tracecontext.Context{TraceParent: testTraceParent}}},
		{name: "tool error", method: "tools/call", params: `{"name":"bad","arguments":{}}`, target: "bad", errorType: "tool_error",
			server: func(*fakeServer, wireMsg) reply {
				return reply{result: map[string]any{"isError": true, "content": []any{}}}
			}},
		{name: "JSON-RPC error", method: "prompts/get", params: `{"name":"p"}`, target: "p", status: StatusProtocol, errorType: "-32602",
			server: func(*fakeServer, wireMsg) reply { return reply{err: &rpcError{Code: -32602, Message: "bad"}} }},
		{name: "timeout", method: "resources/read", params: `{"uri":"file:///x"}`, target: "file:///x", status: StatusTimeout, errorType: "timeout",
			opts:   CallOptions{Timeout: 50 * time.Millisecond, TimeoutSet: true},
			server: func(*fakeServer, wireMsg) reply { return reply{none: true} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeServer(t, "2025-11-25", defaultCaps())
			if tc.server != nil {
				s.handle(tc.method, tc.server)
			}
			c := s.client(legacyOptions())
			sink := &recordSink{}
			require.Nil(t, errOrNil(c.SetTelemetryHandler(sink.handle, nil)))
			require.Nil(t, errOrNil(c.Connect()))
			require.Nil(t, errOrNil(c.WaitReady(3*time.Second)))
			_, err := c.CallSync(tc.method, []byte(tc.params), tc.opts)
			if tc.status == StatusOK {
				require.Nil(t, errOrNil(err))
			} else {
				require.NotNil(t, err)
				require.Equal(t, tc.status, err.Status)
			}
			rec := sink.wait(t, RecordCall, tc.method)
			require.Equal(t, tc.status, rec.Status)
			require.Equal(t, tc.errorType, rec.ErrorType)
			require.Equal(t, tc.target, rec.Target)
			require.Equal(t, "2025-11-25", rec.ProtocolVersion)
			require.Positive(t, rec.RequestID)
			require.Positive(t, rec.CallID)
			require.Positive(t, rec.DurationNS)
			require.GreaterOrEqual(t, rec.BytesOut, len(tc.params), "params as sent, trace context included")
			require.Positive(t, rec.BytesIn)
			require.Equal(t, tc.opts.Trace.TraceParent, rec.TraceParent)
		})
	}
}

// A modern call's record counts its MRTR round as a retry and names the
// modern protocol version.
func TestTelemetryModernRetries(t *testing.T) {
	s := newModernServer(t)
	s.handle("tools/call", inputTool(nil, "s1"))
	opts := modernOptions(ModeModern)
	tr, peer := s.pairForTest()
	c := New(opts, tr)
	s.peer = peer
	go s.serve()
	t.Cleanup(func() { c.Free(); close(s.stop); <-s.done })
	sink := &recordSink{}
	require.Nil(t, errOrNil(c.SetTelemetryHandler(sink.handle, nil)))
	require.Nil(t, errOrNil(c.Connect()))
	require.Nil(t, errOrNil(c.WaitReady(3*time.Second)))
	_, err := c.CallSync("tools/call", []byte(`{"name":"ask","arguments":{}}`), CallOptions{})
	require.Nil(t, errOrNil(err))
	rec := sink.wait(t, RecordCall, "tools/call")
	require.Equal(t, 1, rec.Retries)
	require.Equal(t, ModernVersions[0], rec.ProtocolVersion)
}

// Without a handler nothing is measured; a handler's destroy runs once when
// it is replaced, and Free runs the last one's.
func TestTelemetryOffAndDestroy(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	s.handle("x/untimed", func(*fakeServer, wireMsg) reply { return reply{result: map[string]any{}} })
	s.handle("x/timed", func(*fakeServer, wireMsg) reply { return reply{result: map[string]any{}} })
	c := readyClient(t, s, legacyOptions())
	// The histograms are the process's: an earlier run of this test
	// (-count) left its calls in them, so only what this run adds counts.
	before := DurationHistograms()
	_, err := c.CallSync("x/untimed", nil, CallOptions{})
	require.Nil(t, errOrNil(err))
	require.Equal(t, before["x/untimed"].Count, DurationHistograms()["x/untimed"].Count, "no handler, no measurement")

	var mu sync.Mutex
	destroyed := map[string]int{}
	destroy := func(name string) func() {
		return func() { mu.Lock(); destroyed[name]++; mu.Unlock() }
	}
	first, second := &recordSink{}, &recordSink{}
	require.Nil(t, errOrNil(c.SetTelemetryHandler(first.handle, destroy("first"))))
	_, err = c.CallSync("x/timed", nil, CallOptions{})
	require.Nil(t, errOrNil(err))
	first.wait(t, RecordCall, "x/timed")
	h := DurationHistograms()["x/timed"]
	require.EqualValues(t, before["x/timed"].Count+1, h.Count)
	require.Len(t, h.Buckets, len(DurationBoundsMS)+1)
	require.Nil(t, errOrNil(c.SetTelemetryHandler(second.handle, destroy("second"))))
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return destroyed["first"] == 1 }, 3*time.Second, 5*time.Millisecond)
	c.Free()
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, map[string]int{"first": 1, "second": 1}, destroyed)
	require.NotNil(t, c.SetTelemetryHandler(first.handle, nil), "a freed client refuses a handler")
}

// An Unrecorded call (a host's own list) is no record: the records are
// exactly the recorded calls, in order.
func TestTelemetryUnrecordedCall(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	s.handle("x/own", func(*fakeServer, wireMsg) reply { return reply{result: map[string]any{}} })
	s.handle("x/app", func(*fakeServer, wireMsg) reply { return reply{result: map[string]any{}} })
	c := readyClient(t, s, legacyOptions())
	sink := &recordSink{}
	require.Nil(t, errOrNil(c.SetTelemetryHandler(sink.handle, nil)))
	_, err := c.CallSync("x/own", nil, CallOptions{Unrecorded: true})
	require.Nil(t, errOrNil(err))
	_, err = c.CallSync("x/app", nil, CallOptions{})
	require.Nil(t, errOrNil(err))
	sink.wait(t, RecordCall, "x/app")
	sink.mu.Lock()
	defer sink.mu.Unlock()
	methods := []string{}
	for _, rec := range sink.recs {
		methods = append(methods, rec.Method)
	}
	require.Equal(t, []string{"x/app"}, methods)
}

// A failed handshake is a failure record.
func TestTelemetryFailureRecord(t *testing.T) {
	s := newFakeServer(t, "1999-01-01", defaultCaps())
	c := s.client(legacyOptions())
	sink := &recordSink{}
	require.Nil(t, errOrNil(c.SetTelemetryHandler(sink.handle, nil)))
	require.Nil(t, errOrNil(c.Connect()))
	require.NotNil(t, c.WaitReady(3*time.Second))
	rec := sink.wait(t, RecordFailure, "")
	require.NotEqual(t, StatusOK, rec.Status)
	require.NotEmpty(t, rec.Message)
	require.NotEmpty(t, rec.ErrorType)
}

func TestHistogramMethodBound(t *testing.T) {
	for i := 0; i < maxHistogramMethods+5; i++ {
		observeDuration("bound/m"+itoa(int64(i)), int64(time.Millisecond))
	}
	require.LessOrEqual(t, int(processHistograms.names.Load()), maxHistogramMethods)
	require.Contains(t, DurationHistograms(), "other")
}

// A session that ends becomes one "session" record: how long it lasted,
// and, when it was lost rather than closed, why.
func TestTelemetrySessionRecord(t *testing.T) {
	cases := []struct {
		name      string
		end       func(t *testing.T, s *fakeServer, c *Client)
		status    Status
		errorType string
		// lateHandler: the handler is set after the session started (an
		// application that configures telemetry later still gets it).
		lateHandler bool
	}{
		{name: "closed", end: func(t *testing.T, _ *fakeServer, c *Client) { require.Nil(t, errOrNil(c.Close(3*time.Second))) }},
		{name: "closed and freed at once", end: func(t *testing.T, _ *fakeServer, c *Client) {
			require.Nil(t, errOrNil(c.Close(3*time.Second)))
			c.Free() // the record was queued as a completion: Free delivers it
		}},
		{name: "freed without a close", end: func(_ *testing.T, _ *fakeServer, c *Client) { c.Free() }},
		{name: "handler set once ready, then closed", lateHandler: true,
			end: func(t *testing.T, _ *fakeServer, c *Client) { require.Nil(t, errOrNil(c.Close(3*time.Second))) }},
		{name: "lost", end: func(_ *testing.T, s *fakeServer, _ *Client) { s.peer.Hangup("server exited with status 3", 3) },
			status: StatusClosed, errorType: "closed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeServer(t, "2025-11-25", defaultCaps())
			c := s.client(legacyOptions())
			sink := &recordSink{}
			if !tc.lateHandler {
				require.Nil(t, errOrNil(c.SetTelemetryHandler(sink.handle, nil)))
			}
			require.Nil(t, errOrNil(c.Connect()))
			require.Nil(t, errOrNil(c.WaitReady(3*time.Second)))
			if tc.lateHandler {
				require.Nil(t, errOrNil(c.SetTelemetryHandler(sink.handle, nil)))
			}
			before := time.Now()
			tc.end(t, s, c)
			rec := sink.wait(t, RecordSession, "")
			require.Equal(t, tc.status, rec.Status)
			require.Equal(t, tc.errorType, rec.ErrorType)
			require.Equal(t, "2025-11-25", rec.ProtocolVersion)
			require.Positive(t, rec.DurationNS)
			require.LessOrEqual(t, rec.StartUnixNano, before.UnixNano())
			if tc.status != StatusOK {
				require.Contains(t, rec.Message, "status 3")
			}
			require.Len(t, sink.ofKind(RecordSession), 1, "one record per session")
		})
	}
}

// A session the server forgot (Streamable HTTP's 404) and the client
// initialized again is two sessions: the expired one ends, lost, when the
// expiry is seen, and the new one is measured from its initialize.
func TestTelemetryReinitializedSessionIsANewSession(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	var expired atomic.Bool
	peerRef := &s.peer
	s.handle("tools/call", func(s *fakeServer, m wireMsg) reply {
		if expired.CompareAndSwap(false, true) {
			var id int64
			_ = json.Unmarshal(m.ID, &id)
			go (*peerRef).FailRequest(id, transport.Errorf(transport.CodeSessionExpired, "the server no longer knows the session (HTTP 404)"))
			return reply{none: true}
		}
		return reply{result: map[string]any{"content": []any{}}}
	})
	c := s.client(legacyOptions())
	sink := &recordSink{}
	require.Nil(t, errOrNil(c.SetTelemetryHandler(sink.handle, nil)))
	require.Nil(t, errOrNil(c.Connect()))
	require.Nil(t, errOrNil(c.WaitReady(3*time.Second)))
	_, err := c.CallSync("tools/call", []byte(`{"name":"x"}`), CallOptions{})
	require.Nil(t, errOrNil(err), "re-initialized and re-sent")
	expiredSession := sink.wait(t, RecordSession, "")
	require.Equal(t, StatusClosed, expiredSession.Status)
	require.Equal(t, "closed", expiredSession.ErrorType)
	require.Contains(t, expiredSession.Message, "no longer knows the session")
	expiredEnd := expiredSession.StartUnixNano + expiredSession.DurationNS

	require.Nil(t, errOrNil(c.Close(3*time.Second)))
	require.Eventually(t, func() bool { return len(sink.ofKind(RecordSession)) == 2 }, 5*time.Second, 5*time.Millisecond, "a record for each session")
	last := sink.ofKind(RecordSession)[1]
	require.Equal(t, StatusOK, last.Status, "the new session was closed, not lost")
	require.GreaterOrEqual(t, last.StartUnixNano, expiredEnd, "the new session starts after the expired one ended")
}
