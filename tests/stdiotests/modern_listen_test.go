package stdiotests

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
)

// notes records the notification events a client's host receives.
type notes struct {
	mu  sync.Mutex
	got []string
}

func (n *notes) has(method string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, m := range n.got {
		if m == method {
			return true
		}
	}
	return false
}

func recordNotes(c *host) *notes {
	n := &notes{}
	c.SetEventHandler(func(kind string, payload []byte) {
		if kind != "notification" {
			return
		}
		var ev struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(payload, &ev) == nil {
			n.mu.Lock()
			n.got = append(n.got, ev.Method)
			n.mu.Unlock()
		}
	}, nil)
	return n
}

// Against the Go SDK's server (the fixture), the host's code is the same
// in both eras: resources/subscribe works, and resource updates and list
// changes arrive as the same notification events, over
// subscriptions/listen in the modern era.
func TestListenAgainstGoSDK(t *testing.T) {
	for _, mode := range []string{"modern", "legacy"} {
		t.Run(mode, func(t *testing.T) {
			c, err := start(t, mode)
			require.Nil(t, errOrNil(err))
			n := recordNotes(c)
			_, serr := c.CallSync("resources/subscribe", []byte(`{"uri":"fixture://blob"}`), core.CallOptions{})
			require.Nil(t, errOrNil(serr))
			require.Equal(t, "ok", toolText(t, c, "touch", `{"uri":"fixture://blob"}`))
			require.Eventually(t, func() bool { return n.has("notifications/resources/updated") }, 5*time.Second, 10*time.Millisecond)
			require.Equal(t, "ok", toolText(t, c, "notify", `{}`))
			require.Eventually(t, func() bool { return n.has("notifications/tools/list_changed") }, 5*time.Second, 10*time.Millisecond)
			_, serr = c.CallSync("resources/unsubscribe", []byte(`{"uri":"fixture://blob"}`), core.CallOptions{})
			require.Nil(t, errOrNil(serr))
		})
	}
}

// The fixture's ttlMs makes tools/list cacheable: a second list is served
// without a round trip, until the tools change.
func TestResultCacheAgainstGoSDK(t *testing.T) {
	c, err := start(t, "modern", "-ttl-ms", "60000")
	require.Nil(t, errOrNil(err))
	n := recordNotes(c)
	list := func() []byte {
		res, lerr := c.CallSync("tools/list", nil, core.CallOptions{})
		require.Nil(t, errOrNil(lerr))
		return res
	}
	h0, _ := core.CacheStats()
	first := list()
	require.Equal(t, string(first), string(list()))
	h1, _ := core.CacheStats()
	require.Greater(t, h1, h0, "the second list was a cache hit")
	require.Equal(t, "ok", toolText(t, c, "notify", `{}`))
	require.Eventually(t, func() bool { return n.has("notifications/tools/list_changed") }, 5*time.Second, 10*time.Millisecond)
	require.True(t, strings.Contains(string(list()), "dynamic_1"), "list_changed made the entry stale")
}
