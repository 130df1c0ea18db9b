package hosttests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
)

// requestsSeen counts the requests of method in a fixture's -log-file.
func requestsSeen(t *testing.T, log, method string) int {
	t.Helper()
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	return strings.Count(string(b), `"method":"`+method+`"`)
}

// TestHostKeepsModernListsWithoutTTL: a 2026-07-28 server whose tools/list
// carries no ttlMs is listed once; searches, list_tools and (deferred
// loading) the host's search tool then answer from the host's catalogue
// (the server sees no further tools/list) until the server says its list
// changed, through the listen stream, and then the new list is seen.
func TestHostKeepsModernListsWithoutTTL(t *testing.T) {
	for _, deferred := range []bool{false, true} {
		t.Run(fmt.Sprintf("deferred %t", deferred), func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "stdin.log")
			cfg := fmt.Sprintf(`{"mcpServers":{"a":%s}`, stdioServer(`"protocol":{"mode":"modern"}`, "-log-file", log))
			if deferred {
				cfg += `,"deferred_tools":{"always_loaded":[]}`
			}
			h, ev := newHost(t, cfg+"}")
			require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
			require.Equal(t, "modern", servers(t, h)["a"].Era)
			lists := func() int { return requestsSeen(t, log, "tools/list") }
			// found searches as the application does: the host's search
			// tool under deferred loading, search_tools otherwise.
			found := func(query string) string {
				if !deferred {
					return strings.Join(hitNames(search(t, h, query, `{"limit":100}`)), " ")
				}
				res, err := h.CallToolSync(host.SearchToolName, []byte(`{"query":"`+query+`","limit":100}`), core.CallOptions{})
				require.Nil(t, errOrNil(err))
				return string(res)
			}
			// The first listings may fetch again once the listen is in
			// place (a change before it went unheard); then two searches
			// in a row list nothing.
			require.Eventually(t, func() bool {
				found("echo text")
				n := lists()
				found("echo text")
				return lists() == n
			}, 10*time.Second, 20*time.Millisecond, "every search lists the tools again")
			before := lists()
			for range 20 {
				require.Contains(t, found("echo text"), "a__echo")
				require.NotEmpty(t, listTools(t, h))
			}
			require.Equal(t, before, lists(), "searches and listings asked the server")
			require.NotContains(t, found("dynamic"), "a__dynamic_1")

			// The server adds a tool and says so on the listen stream.
			_, err := h.CallToolSync("a__notify", nil, core.CallOptions{})
			require.Nil(t, errOrNil(err))
			require.Eventually(t, func() bool { return ev.has("notification", "tools/list_changed") }, 5*time.Second, 10*time.Millisecond)
			require.Eventually(t, func() bool { return strings.Contains(found("dynamic"), "a__dynamic_1") }, 5*time.Second, 10*time.Millisecond)
		})
	}
}

// With protocol.listen off, nothing would tell the host that a 2026-07-28
// server's list changed: a list without ttlMs is stale at once (SEP-2549)
// and every listing asks the server again.
func TestHostRelistsModernListsWithoutListen(t *testing.T) {
	log := filepath.Join(t.TempDir(), "stdin.log")
	cfg := fmt.Sprintf(`{"mcpServers":{"a":%s}}`, stdioServer(`"protocol":{"mode":"modern","listen":false}`, "-log-file", log))
	h, _ := newHost(t, cfg)
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
	lists := func() int { return requestsSeen(t, log, "tools/list") }
	listTools(t, h)
	before := lists()
	for range 3 {
		require.NotEmpty(t, search(t, h, "echo text", ""))
	}
	// The host's own refresh after ready may come late: it may add one
	// list, or one search may share it while it is in flight (concurrent
	// callers share one fetch). A catalogue answering from its cache would
	// add at most that one.
	require.GreaterOrEqual(t, lists(), before+2, "each search asks the server")
	_, err := h.CallToolSync("a__notify", nil, core.CallOptions{})
	require.Nil(t, errOrNil(err))
	require.Contains(t, listTools(t, h), "a__dynamic_1", "the change is seen without a notification")
}
