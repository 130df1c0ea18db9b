package core

import (
	"strings"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/tracecontext"
	"github.com/stretchr/testify/require"
)

// telemetrySink collects records on the delivery goroutine; the test
// goroutine reads them from the channel.
func telemetrySink(t *testing.T, c *Client) <-chan *TelemetryRecord {
	t.Helper()
	recs := make(chan *TelemetryRecord, 64)
	require.Nil(t, errOrNil(c.SetTelemetryHandler(func(r *TelemetryRecord) { recs <- r }, nil)))
	return recs
}

func nextRecord(t *testing.T, recs <-chan *TelemetryRecord) *TelemetryRecord {
	t.Helper()
	select {
	case r := <-recs:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no telemetry record arrived")
		return nil
	}
}

// Each completed call is measured once and handed to the handler: method,
// target, protocol version, status, error type, sizes and the trace it
// carried; a duration histogram per method is kept for lmcp_diagnostics.
func TestTelemetryRecordsCalls(t *testing.T) {
	cases := []struct {
		name      string
		method    string
		params    string
		target    string
		status    Status
		errorType string
	}{
		{name: "tool call", method: "tools/call", params: `{"name":"echo","arguments":{"text":"hi"}}`, target: "echo", status: StatusOK},
		{name: "tool error", method: "tools/call", params: `{"name":"broken"}`, target: "broken", status: StatusOK, errorType: "tool_error"},
		{name: "server error", method: "prompts/get", params: `{"name":"p"}`, target: "p", status: StatusProtocol, errorType: "-32602"},
		{name: "resource read", method: "resources/read", params: `{"uri":"file:///a"}`, target: "file:///a", status: StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeServer(t, "2025-11-25", defaultCaps())
			s.handle("tools/call", func(_ *fakeServer, m wireMsg) reply {
				if strings.Contains(string(m.Params), `"broken"`) {
					return reply{result: map[string]any{"content": []any{}, "isError": true}}
				}
				return reply{result: map[string]any{"content": []any{}}}
			})
			s.handle("prompts/get", func(_ *fakeServer, _ wireMsg) reply {
				return reply{err: &rpcError{Code: -32602, Message: "no such prompt"}}
			})
			s.handle("resources/read", func(_ *fakeServer, _ wireMsg) reply {
				return reply{result: map[string]any{"contents": []any{}}}
			})
			c, err := connectWith(t, s, legacyOptions(), nil)
			require.Nil(t, errOrNil(err))
			recs := telemetrySink(t, c)
			before := DurationHistograms()[tc.method].Count
			_, _ = c.CallSync(tc.method, []byte(tc.params), CallOptions{Trace: tracecontext.Context{TraceParent: testTraceParent}})
			r := nextRecord(t, recs)
			require.Equal(t, RecordCall, r.Kind)
			require.Equal(t, tc.method, r.Method)
			require.Equal(t, tc.target, r.Target)
			require.Equal(t, "2025-11-25", r.ProtocolVersion)
			require.Equal(t, tc.status, r.Status)
			require.Equal(t, tc.errorType, r.ErrorType)
			require.Greater(t, r.BytesOut, len(tc.params), "the params as sent, with the trace in _meta")
			require.Positive(t, r.BytesIn)
			require.Positive(t, r.RequestID)
			require.GreaterOrEqual(t, r.DurationNS, int64(0))
			require.Equal(t, testTraceParent, r.TraceParent)
			require.Greater(t, DurationHistograms()[tc.method].Count, before)
		})
	}
}

// Without a handler nothing is recorded; removing the handler runs its
// destroy once.
func TestTelemetryHandlerRemoved(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	c, err := connectWith(t, s, legacyOptions(), nil)
	require.Nil(t, errOrNil(err))
	recs := make(chan *TelemetryRecord, 4)
	destroyed := make(chan struct{}, 2)
	require.Nil(t, errOrNil(c.SetTelemetryHandler(func(r *TelemetryRecord) { recs <- r }, func() { destroyed <- struct{}{} })))
	require.Nil(t, errOrNil(c.SetTelemetryHandler(nil, nil)))
	select {
	case <-destroyed:
	case <-time.After(10 * time.Second):
		t.Fatal("the removed handler's destroy did not run")
	}
	_, cerr := c.CallSync("tools/call", []byte(`{"name":"echo","arguments":{"text":"hi"}}`), CallOptions{})
	require.Nil(t, errOrNil(cerr))
	// A marker event through the same gate proves no record was queued
	// before it.
	marker := recordEvents(c)
	c.emit("log", []byte(`{"level":"info","data":"marker"}`), false)
	_, ok := marker.wait("log")
	require.True(t, ok)
	require.Empty(t, recs)
	require.Len(t, destroyed, 0)
}
