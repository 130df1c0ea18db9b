package hosttests

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
)

// A supervised server SIGKILLed while writing a large reply: the call
// completes with StatusClosed (what a caller retries on), and the server
// comes back and serves the retry.
func TestHostReplyCutBySIGKILL(t *testing.T) {
	cfg := fmt.Sprintf(`{"mcpServers":{"a":%s}}`, stdioServer(""))
	h, ev := newHost(t, cfg)
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
	_, err := h.CallToolSync("a__crash", []byte(`{"cut_reply":300000,"kill":true}`), core.CallOptions{})
	require.NotNil(t, err)
	require.Equal(t, core.StatusClosed, err.Status, err.Message)
	require.Eventually(t, func() bool { return ev.count("ready", `"server":"a"`) == 2 }, 10*time.Second, 20*time.Millisecond)
	res, err := h.CallToolSync("a__echo", []byte(`{"text":"again"}`), core.CallOptions{})
	require.Nil(t, errOrNil(err))
	require.Equal(t, "again", textOf(t, res))
}
