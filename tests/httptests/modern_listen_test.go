package httptests

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
)

// listenServer is a stateless SDK server that caches (ttlMs 60 s, public),
// takes resource subscriptions, and has tools that touch a resource and
// add a tool (which makes the SDK announce a tools list change).
func listenServer() http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "go-sdk-listen", Version: "1.0.0"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.TTLMs, c.CacheScope = 60000, "public"
		},
	})
	srv.AddResource(&mcp.Resource{URI: "test://doc", Name: "doc"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://doc", Text: "doc"}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "touch", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("ok"), srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "test://doc"})
	})
	srv.AddTool(&mcp.Tool{Name: "grow", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		srv.AddTool(&mcp.Tool{Name: "grown", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("grown"), nil
		})
		return text("ok"), nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
}

func (c *client) notified(method string) bool {
	for _, e := range c.eventsOf("notification") {
		if strings.Contains(e.Payload, `"`+method+`"`) {
			return true
		}
	}
	return false
}

// Over HTTP against the SDK's stateless server: list changes and resource
// updates arrive over subscriptions/listen as the usual notification
// events, resources/subscribe works, and a cached tools/list makes no
// second POST until the list changes.
func TestListenAndCacheOverHTTP(t *testing.T) {
	rec := &recorder{next: listenServer()}
	srv := serve(t, rec)
	c := connect(t, "streamable_http", srv.URL+"/mcp", `,"protocol":{"mode":"auto"}`)
	require.Equal(t, "modern", c.serverInfo(t)["era"])

	c.call(t, "resources/subscribe", map[string]any{"uri": "test://doc"}, core.CallOptions{})
	require.Equal(t, "ok", c.toolText(t, "touch", map[string]any{}))
	require.Eventually(t, func() bool { return c.notified("notifications/resources/updated") }, wait, 10*time.Millisecond)

	posts := func(method string) int {
		_, headers := rec.all()
		n := 0
		for _, h := range headers {
			if h.Get("Mcp-Method") == method {
				n++
			}
		}
		return n
	}
	c.call(t, "tools/list", nil, core.CallOptions{})
	c.call(t, "tools/list", nil, core.CallOptions{})
	require.Equal(t, 1, posts("tools/list"), "the second list was served from the cache")
	c.call(t, "tools/list", nil, core.CallOptions{NoCache: true})
	require.Equal(t, 2, posts("tools/list"), "no_cache goes to the server")

	require.Equal(t, "ok", c.toolText(t, "grow", map[string]any{}))
	require.Eventually(t, func() bool { return c.notified("notifications/tools/list_changed") }, wait, 10*time.Millisecond)
	tools := c.call(t, "tools/list", nil, core.CallOptions{})
	require.Contains(t, mustJSON(tools), "grown", "the list change made the cached list stale")
	require.GreaterOrEqual(t, posts("subscriptions/listen"), 2)
}
