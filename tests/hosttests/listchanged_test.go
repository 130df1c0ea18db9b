package hosttests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
)

// count counts the events of kind that mention every one of parts.
func (e *hostEvents) count(kind string, parts ...string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.events {
		if !strings.HasPrefix(ev, kind+" ") {
			continue
		}
		all := true
		for _, p := range parts {
			all = all && strings.Contains(ev, p)
		}
		if all {
			n++
		}
	}
	return n
}

// TestHostListChangedOnlyOnChange: the aggregated tools list changes when a
// server first becomes ready and when it adds a tool (list_changed each
// time), but not when the server restarts and comes back with the same
// tools.
func TestHostListChangedOnlyOnChange(t *testing.T) {
	cfg := fmt.Sprintf(`{"mcpServers":{"a":%s}}`, stdioServer(""))
	h, ev := newHost(t, cfg)
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
	toolsChanged := func() int { return ev.count("list_changed", `"server":"a"`, `"list":"tools"`) }
	require.Eventually(t, func() bool { return toolsChanged() == 1 }, 5*time.Second, 10*time.Millisecond, "first ready")

	_, err := h.CallToolSync("a__crash", nil, core.CallOptions{})
	require.NotNil(t, err)
	require.Eventually(t, func() bool { return ev.count("ready", `"server":"a"`) == 2 }, 10*time.Second, 20*time.Millisecond)
	// The refresh after the restart found the same tools: let it finish (a
	// listing waits for the same fetch), then nothing new was announced.
	listTools(t, h)
	time.Sleep(50 * time.Millisecond)
	require.Equal(t, 1, toolsChanged(), "a restart that changed nothing")

	_, err = h.CallToolSync("a__notify", nil, core.CallOptions{})
	require.Nil(t, errOrNil(err))
	require.Eventually(t, func() bool { return toolsChanged() == 2 }, 5*time.Second, 10*time.Millisecond, "a tool was added")
}
