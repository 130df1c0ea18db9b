package host

import (
	"testing"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/stretchr/testify/require"
)

// TestLazyServerStartsAfterTheCallIsQueued: the first call of a lazy server
// is queued on its client, and the server is started afterwards, on a
// goroutine of the library's: the call returns without spawning anything
// on the caller's thread (a Python caller holds the GIL there). A server
// that cannot be started therefore fails the queued call through its
// completion, not the call itself, with what a call to a server that
// failed earlier gets (InvalidState, the reason, its cause as data);
// before, the start ran inside the call, which returned the spawn's error.
func TestLazyServerStartsAfterTheCallIsQueued(t *testing.T) {
	h, err := Parse([]byte(`{"start":"lazy","mcpServers":{"gone":{"command":"/nonexistent/lmcp-lazy-test"}}}`), "test")
	require.Nil(t, err)
	t.Cleanup(h.Free)
	require.Nil(t, h.Connect())

	type outcome struct {
		status core.Status
		data   string
	}
	done := make(chan outcome, 1)
	id, cerr := h.Call("gone", "tools/list", nil, core.CallOptions{}, func(_ uint64, st core.Status, data []byte) {
		done <- outcome{st, string(data)}
	})
	require.Nil(t, cerr, "the call is queued before the server starts")
	require.NotZero(t, id)
	o := <-done
	require.Equal(t, core.StatusInvalidState, o.status, o.data)
	require.Contains(t, o.data, "executable not found: /nonexistent/lmcp-lazy-test", o.data)
	require.Contains(t, o.data, `"cause":"executable_not_found"`, o.data)
	_, after := h.CallSync("gone", "tools/list", nil, core.CallOptions{})
	require.NotNil(t, after)
	require.Equal(t, after.Status, o.status, "a call after the failure gets what the queued one got")
	require.JSONEq(t, string(after.JSON()), o.data)
}
