package streamablehttp

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport"
)

// A 404 for a request that carried a session id reports CodeSessionExpired
// and drops the id; the core's new initialize then goes without one and the
// new session's id is used from there on.
func TestSessionExpired(t *testing.T) {
	var generation atomic.Int32
	generation.Store(1)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
		current := map[int32]string{1: "old", 2: "new"}[generation.Load()]
		if m.Method != "initialize" && r.Header.Get("Mcp-Session-Id") != current {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		mcp(current, echo)(w, r, m)
	})
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	require.Equal(t, "old", tr.SessionID())

	generation.Store(2) // the server restarted: "old" is unknown now
	send(t, tr, request(2, "tools/list"))
	f := sink.Failure(t)
	require.Equal(t, int64(2), f.ID)
	require.Equal(t, transport.CodeSessionExpired, f.Err.Code)
	require.Equal(t, "the server no longer knows the session (HTTP 404 Not Found)", f.Err.Message)
	require.Empty(t, tr.SessionID(), "the expired session id is forgotten")

	// What the core does next: initialize again, then the request anew.
	send(t, tr, request(3, "initialize"))
	sink.Next(t)
	init := srv.waitFor(t, func(r seen) bool { return r.Body.Method == "initialize" && string(r.Body.ID) == "3" })
	require.Empty(t, init.Header.Get("Mcp-Session-Id"))
	require.Empty(t, init.Header.Get("MCP-Protocol-Version"), "a new initialize carries no version either")
	require.Equal(t, "new", tr.SessionID())
	tr.SetProtocolVersion("2025-11-25")
	send(t, tr, notification("notifications/initialized", "{}"))
	send(t, tr, request(4, "tools/list"))
	require.Equal(t, `{"jsonrpc":"2.0","id":4,"result":{"echo":"tools/list"}}`, sink.Next(t))
	retried := srv.waitFor(t, isCall("tools/list"))
	for retried.Body.ID == nil || string(retried.Body.ID) != "4" {
		retried = srv.waitFor(t, isCall("tools/list"))
	}
	require.Equal(t, "new", retried.Header.Get("Mcp-Session-Id"))
}

// A 404 on a notification is reported but keeps the id: only a request can
// carry the re-initialization, and it needs the stale id to get its 404.
func TestSessionExpiredOnNotification(t *testing.T) {
	var gone atomic.Bool
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
		if gone.Load() && m.Method != "initialize" {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		mcp("s1", echo)(w, r, m)
	})
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	gone.Store(true)
	err := tr.Send(t.Context(), notification("notifications/roots/list_changed", "{}"))
	require.Equal(t, transport.CodeSessionExpired, codeOf(t, err))
	require.Equal(t, "s1", tr.SessionID())
	send(t, tr, request(2, "tools/list"))
	require.Equal(t, transport.CodeSessionExpired, sink.Failure(t).Err.Code)
}

// Once the session is gone, nothing but initialize goes out: each message
// fails as expired at once (so a new call makes the core initialize again)
// instead of reaching the server outside any session.
func TestExpiredSessionUntilInitialize(t *testing.T) {
	var forget atomic.Bool
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
		if forget.Load() && m.Method != "initialize" {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		mcp("s1", echo)(w, r, m)
	})
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	// The GET stream opens in the background once initialized is sent, on
	// the live session; wait for it, or it can reach the server after the
	// count below is taken and look like a request on the dead session.
	srv.waitFor(t, isGET)
	forget.Store(true)
	send(t, tr, request(2, "tools/list"))
	require.Equal(t, transport.CodeSessionExpired, sink.Failure(t).Err.Code)
	before := len(srv.requests())

	send(t, tr, request(3, "tools/list"))
	f := sink.Failure(t)
	require.Equal(t, int64(3), f.ID)
	require.Equal(t, transport.CodeSessionExpired, f.Err.Code)
	err := tr.Send(t.Context(), notification("notifications/x", "{}"))
	require.Equal(t, transport.CodeSessionExpired, codeOf(t, err))
	require.Len(t, srv.requests(), before, "nothing went out on the dead session")

	forget.Store(false)
	send(t, tr, request(4, "initialize"))
	sink.Next(t)
	send(t, tr, request(5, "tools/list"))
	require.Equal(t, `{"jsonrpc":"2.0","id":5,"result":{"echo":"tools/list"}}`, sink.Next(t))
}
