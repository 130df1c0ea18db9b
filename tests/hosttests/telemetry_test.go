package hosttests

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
)

// telemetrySink keeps a host's telemetry records.
type telemetrySink struct {
	mu   sync.Mutex
	recs []core.TelemetryRecord
}

func (s *telemetrySink) handle(rec *core.TelemetryRecord) {
	s.mu.Lock()
	s.recs = append(s.recs, *rec)
	s.mu.Unlock()
}

func (s *telemetrySink) find(match func(core.TelemetryRecord) bool) (core.TelemetryRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.recs {
		if match(r) {
			return r, true
		}
	}
	return core.TelemetryRecord{}, false
}

// Every record of a host names its server: calls (with the host's call
// id and the tool's name on the server), the restart after a crash, and
// the aggregated list's changes.
func TestHostTelemetryRecords(t *testing.T) {
	cfg := fmt.Sprintf(`{"mcpServers":{"a":%s,"b":%s}}`, stdioServer(""), stdioServer(""))
	h, _ := newHost(t, cfg)
	sink := &telemetrySink{}
	destroyed := make(chan struct{})
	h.SetTelemetryHandler(sink.handle, func() { close(destroyed) })
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
	listTools(t, h)

	done := make(chan uint64, 1)
	id, err := h.CallTool("b__echo", []byte(`{"text":"hi"}`), core.CallOptions{}, func(id uint64, _ core.Status, _ []byte) { done <- id })
	require.Nil(t, errOrNil(err))
	require.Equal(t, id, <-done)
	var call core.TelemetryRecord
	require.Eventually(t, func() bool {
		var ok bool
		call, ok = sink.find(func(r core.TelemetryRecord) bool { return r.Kind == core.RecordCall && r.Method == "tools/call" })
		return ok
	}, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, "b", call.Server)
	require.Equal(t, "echo", call.Target)
	require.Equal(t, id, call.CallID, "the host's call id")
	require.Equal(t, core.StatusOK, call.Status)
	require.NotEmpty(t, call.ProtocolVersion)

	// The server's own duration histograms (lmcp_host_servers).
	var servers map[string]struct {
		Durations map[string]core.MethodDuration `json:"durations"`
	}
	require.NoError(t, json.Unmarshal(h.Servers(), &servers))
	d := servers["b"].Durations["tools/call"]
	require.EqualValues(t, 1, d.Count, "b's call, once")
	require.Len(t, d.Buckets, len(core.DurationBoundsMS)+1)
	require.Positive(t, d.SumMS)
	require.NotContains(t, servers["a"].Durations, "tools/call", "a made no call")

	_, err = h.CallToolSync("a__crash", nil, core.CallOptions{})
	require.NotNil(t, err)
	require.Eventually(t, func() bool {
		_, restart := sink.find(func(r core.TelemetryRecord) bool { return r.Kind == core.RecordRestart && r.Server == "a" })
		_, failed := sink.find(func(r core.TelemetryRecord) bool {
			return r.Kind == core.RecordCall && r.Server == "a" && r.Target == "crash" && r.ErrorType == "closed"
		})
		_, listed := sink.find(func(r core.TelemetryRecord) bool { return r.Kind == core.RecordListChanged && r.List == "tools" })
		return restart && failed && listed
	}, 10*time.Second, 20*time.Millisecond, "restart, failed call and list change records")

	h.SetTelemetryHandler(nil, nil)
	select {
	case <-destroyed:
	case <-time.After(5 * time.Second):
		t.Fatal("the replaced handler's destroy did not run")
	}
}

// A server's session that ends is a "session" record naming the server:
// lost to a crash (before the restart), or closed with the host, even when
// the host is freed at once after its close.
func TestHostTelemetrySessionRecords(t *testing.T) {
	cfg := fmt.Sprintf(`{"mcpServers":{"a":%s,"b":%s}}`, stdioServer(""), stdioServer(""))
	h, _ := newHost(t, cfg)
	sink := &telemetrySink{}
	h.SetTelemetryHandler(sink.handle, nil)
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
	listTools(t, h)

	crashAndWaitLostSession(t, h, sink, "a")
	// The restarted server's new session (a call waits for its handshake).
	_, err := h.CallToolSync("a__echo", []byte(`{"text":"again"}`), core.CallOptions{WaitReady: true})
	require.Nil(t, errOrNil(err))

	h.Close(5 * time.Second)
	h.Free()
	for _, server := range []string{"a", "b"} {
		rec, ok := sink.find(func(r core.TelemetryRecord) bool {
			return r.Kind == core.RecordSession && r.Server == server && r.ErrorType == ""
		})
		require.True(t, ok, "server %s: its closed session was reported before Free returned", server)
		require.Equal(t, core.StatusOK, rec.Status)
		require.Positive(t, rec.DurationNS)
	}
}

// A handler installed once the servers are ready still hears of a session
// that began before it: the crash of server "a" is a "session" record.
func TestHostTelemetryLateHandlerSeesCrash(t *testing.T) {
	cfg := fmt.Sprintf(`{"mcpServers":{"a":%s}}`, stdioServer(""))
	h, _ := newHost(t, cfg)
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
	sink := &telemetrySink{}
	h.SetTelemetryHandler(sink.handle, nil)

	crashAndWaitLostSession(t, h, sink, "a")
}

// crashAndWaitLostSession crashes the host's server (its "crash" tool)
// and waits for the "session" record of the session the crash ended.
func crashAndWaitLostSession(t *testing.T, h *host.Host, sink *telemetrySink, server string) {
	t.Helper()
	_, err := h.CallToolSync(server+"__crash", nil, core.CallOptions{})
	require.NotNil(t, err)
	require.Eventually(t, func() bool {
		_, lost := sink.find(func(r core.TelemetryRecord) bool {
			return r.Kind == core.RecordSession && r.Server == server && r.ErrorType == "closed" && r.DurationNS > 0
		})
		return lost
	}, 10*time.Second, 20*time.Millisecond, "server %s: the crashed session's record", server)
}
