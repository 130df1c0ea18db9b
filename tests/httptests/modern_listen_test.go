package httptests

import (
	"context"
	"net/http"
	"strings"
	"sync"
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
	// The listen opened at ready may be replaced (by the subscribe's) before
	// its POST goes out, so only one is certain.
	require.GreaterOrEqual(t, posts("subscriptions/listen"), 1)
}

// breakFirstListen answers the first subscriptions/listen with a bare 502,
// as a broken proxy would, and passes everything else through.
type breakFirstListen struct {
	next   http.Handler
	mu     sync.Mutex
	broken int
}

func (b *breakFirstListen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Mcp-Method") == "subscriptions/listen" {
		b.mu.Lock()
		first := b.broken == 0
		b.broken++
		b.mu.Unlock()
		if first {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
	}
	b.next.ServeHTTP(w, r)
}

// A listen whose stream breaks is opened again (with backoff), and the
// list changes it carries still reach the host.
func TestListenReopensAfterABrokenStream(t *testing.T) {
	h := &breakFirstListen{next: listenServer()}
	srv := serve(t, h)
	c := connect(t, "streamable_http", srv.URL+"/mcp", `,"protocol":{"mode":"modern"}`)
	require.Eventually(t, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.broken >= 2
	}, wait, 10*time.Millisecond, "the client listened again")
	require.Eventually(t, func() bool {
		c.try("tools/call", map[string]any{"name": "grow", "arguments": map[string]any{}}, core.CallOptions{})
		return c.notified("notifications/tools/list_changed")
	}, wait, 200*time.Millisecond)
}
