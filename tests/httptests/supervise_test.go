package httptests

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// A supervised client of a legacy HTTP+SSE server whose event stream is
// lost reconnects (a new SSE stream, a new session), handshakes again and
// is ready again; the call in flight fails once with StatusClosed.
func TestSupervisedSSEReconnectsAfterALostStream(t *testing.T) {
	sw := &swappable{}
	sw.set(legacySSE())
	srv := serve(t, sw)
	cfg := fmt.Sprintf(`{"transport":{"type":"sse","url":%q},"restart":{"backoff_ms":20,"max_backoff_ms":100},
		"timeouts":{"ready_ms":5000,"call_ms":5000,"close_grace_ms":300}}`, srv.URL+"/sse")
	p, perr := config.Parse([]byte(cfg), "test")
	require.Nil(t, errOrNil(perr))
	c := core.New(p.Options, p.Transport)
	var mu sync.Mutex
	var kinds []string
	c.SetEventHandler(func(kind string, payload []byte) {
		mu.Lock()
		kinds = append(kinds, kind+" "+string(payload))
		mu.Unlock()
	}, nil)
	t.Cleanup(func() {
		c.Close(5 * time.Second)
		c.Free()
	})
	require.Nil(t, errOrNil(c.Connect()))
	require.Nil(t, errOrNil(c.WaitReady(wait)))

	// The server restarts: every connection dropped, a fresh server behind
	// the same URL (the old session is gone with it).
	sw.set(legacySSE())
	srv.CloseClientConnections()

	has := func(prefix string) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, k := range kinds {
			if strings.HasPrefix(k, prefix) {
				return true
			}
		}
		return false
	}
	require.Eventually(t, func() bool { return has("restarting ") }, 5*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return c.State() == core.StateReady && c.Restarts() == 1 }, 5*time.Second, 10*time.Millisecond)
	res, err := c.CallSync("tools/call", []byte(`{"name":"echo","arguments":{"text":"again"}}`), core.CallOptions{})
	require.Nil(t, errOrNil(err))
	require.Contains(t, string(res), "again")
	require.False(t, has("closed "), "a supervised client is not closed by a lost stream")
}
