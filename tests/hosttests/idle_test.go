package hosttests

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
)

// TestHostIdleStop: a lazy server with idle_ms is stopped (its process
// reaped) once nothing used it for that long, never during a call, and the
// next call starts it again.
func TestHostIdleStop(t *testing.T) {
	before := fixtureProcesses()
	cfg := fmt.Sprintf(`{"start":"lazy","idle_ms":300,"mcpServers":{"a":%s}}`, stdioServer(""))
	h, _ := newHost(t, cfg)
	res, err := h.CallToolSync("a__echo", []byte(`{"text":"one"}`), core.CallOptions{})
	require.Nil(t, errOrNil(err))
	require.Equal(t, "one", textOf(t, res))

	// A call that lasts longer than idle_ms is not cut short.
	res, err = h.CallToolSync("a__slow", []byte(`{"ms":900,"steps":3}`), core.CallOptions{})
	require.Nil(t, errOrNil(err), "a call in flight keeps its server")
	require.Equal(t, "done", textOf(t, res))

	require.Eventually(t, func() bool {
		return servers(t, h)["a"].State == "new" && fixtureProcesses() == before
	}, 15*time.Second, 20*time.Millisecond, "stopped and reaped once idle")

	res, err = h.CallToolSync("a__echo", []byte(`{"text":"two"}`), core.CallOptions{})
	require.Nil(t, errOrNil(err), "the next call starts it again")
	require.Equal(t, "two", textOf(t, res))
	require.Equal(t, "ready", servers(t, h)["a"].State)
	tools := listTools(t, h)
	require.Contains(t, tools, "a__echo")

	require.Nil(t, errOrNil(h.Close(5*time.Second)))
	require.Equal(t, before, fixtureProcesses(), "no orphan process")
}
