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

// notes records the notification events a client's host receives, and
// every event's kind and beginning, to show when one is missing.
type notes struct {
	mu     sync.Mutex
	got    []string
	events []string
}

// seen is what the host received so far, for a failure's message.
func (n *notes) seen() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.events, "\n")
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
		text := string(payload)
		if len(text) > 300 {
			text = text[:300]
		}
		n.mu.Lock()
		n.events = append(n.events, kind+" "+text)
		n.mu.Unlock()
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

// noteWait bounds waitNote: far longer than any delivery takes, even on a
// loaded machine, so that a lost notification fails the test in seconds
// rather than at the test binary's deadline (580 s once).
const noteWait = 30 * time.Second

// waitNote waits for a notification event of method, up to noteWait (or
// until shortly before the test's deadline); a failure shows every event
// the host received.
func waitNote(t *testing.T, n *notes, method string) {
	t.Helper()
	giveUp := time.Now().Add(noteWait)
	if d, ok := t.Deadline(); ok && d.Add(-5*time.Second).Before(giveUp) {
		giveUp = d.Add(-5 * time.Second)
	}
	for !n.has(method) {
		if time.Now().After(giveUp) {
			t.Fatalf("no %s event; the host received:\n%s", method, n.seen())
		}
		time.Sleep(10 * time.Millisecond)
	}
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
			waitNote(t, n, "notifications/resources/updated")
			require.Equal(t, "ok", toolText(t, c, "notify", `{}`))
			waitNote(t, n, "notifications/tools/list_changed")
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
