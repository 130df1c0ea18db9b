package stdiotests

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
)

// TestReplyCutByServerDeath: a server that dies while writing a call's
// answer (half the line written, then exit or SIGKILL) has lost the
// connection: the call completes with StatusClosed, which callers retry
// on, not with a protocol error about JSON the server never finished.
func TestReplyCutByServerDeath(t *testing.T) {
	cases := []struct {
		name  string
		mode  string
		bytes int
		kill  bool
	}{
		{"small reply then exit", "legacy", 2_000, false},
		{"large reply then exit", "legacy", 400_000, false},
		{"large reply then SIGKILL", "legacy", 400_000, true},
		{"large reply then SIGKILL, modern", "modern", 400_000, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := start(t, tc.mode)
			require.Nil(t, errOrNil(err))
			args := fmt.Sprintf(`{"name":"crash","arguments":{"cut_reply":%d,"kill":%t}}`, tc.bytes, tc.kill)
			_, cerr := h.CallSync("tools/call", []byte(args), core.CallOptions{})
			require.NotNil(t, cerr)
			require.Equal(t, core.StatusClosed, cerr.Status, cerr.Message)
			require.NotContains(t, cerr.Message, "JSON")
		})
	}
}
