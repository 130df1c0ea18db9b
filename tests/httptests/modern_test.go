package httptests

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
)

// recorder keeps what every HTTP request to the server looked like.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	seen []http.Header
	verb []string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.seen = append(r.seen, req.Header.Clone())
	r.verb = append(r.verb, req.Method)
	r.mu.Unlock()
	r.next.ServeHTTP(w, req)
}

func (r *recorder) all() ([]string, []http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.verb...), append([]http.Header(nil), r.seen...)
}

// modernServer is the go-sdk fixture plus a tool with an x-mcp-header
// parameter (the SDK checks Mcp-Param-Region against the body and answers
// -32020 on a mismatch) and a tool that asks for input through MRTR.
func modernServer() *mcp.Server {
	s := newSDKServer()
	s.AddTool(&mcp.Tool{Name: "where", InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": "Region"},
		"limit":  map[string]any{"type": "integer", "x-mcp-header": "Limit"},
	}}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &args)
		return text("region=" + args["region"].(string)), nil
	})
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if answer, ok := req.Params.InputResponses["name"]; ok {
			b, _ := json.Marshal(answer)
			return text(string(b)), nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string", "default": "anon"}},
		}}}}, nil
	})
	return s
}

func statelessHandler(json bool) http.Handler {
	srv := modernServer()
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: json})
}

// Against the SDK's stateless Streamable HTTP server a dual-era or
// modern-only client speaks 2026-07-28: no initialize, no session, POST
// only, the standard headers on every request, x-mcp-header mirrored (the
// server would refuse a mismatch), and MRTR answered through the host.
func TestModernEraOverHTTP(t *testing.T) {
	for _, tc := range []struct {
		name, kind, mode string
		json             bool
	}{
		{"auto sse", "streamable_http", "auto", false},
		{"auto json", "streamable_http", "auto", true},
		{"modern detected", "http", "modern", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{next: statelessHandler(tc.json)}
			srv := serve(t, rec)
			c := connect(t, tc.kind, srv.URL+"/mcp", `,"protocol":{"mode":"`+tc.mode+`"},"handlers":{"elicitation":{}}`)
			info := c.serverInfo(t)
			require.Equal(t, "modern", info["era"])
			require.Equal(t, "2026-07-28", info["protocolVersion"])
			require.Equal(t, "streamable_http", info["transport"])

			require.Equal(t, "hi", c.toolText(t, "echo", map[string]any{"text": "hi"}))
			tools := c.call(t, "tools/list", nil, core.CallOptions{})
			require.NotEmpty(t, tools["tools"])
			require.Equal(t, "region=eu", c.toolText(t, "where", map[string]any{"region": "eu", "limit": 3}))
			all := c.call(t, "resources/list", nil, core.CallOptions{AllPages: true})
			require.Len(t, all["resources"], itemCount)
			read := c.call(t, "resources/read", map[string]any{"uri": "test://item/03"}, core.CallOptions{})
			require.Contains(t, mustJSON(read), "item 03")
			prompt := c.call(t, "prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}}, core.CallOptions{})
			require.Contains(t, mustJSON(prompt), "Hello, Ada!")
			require.JSONEq(t, `{"action":"accept","content":{"name":"anon"}}`, c.toolText(t, "ask", map[string]any{}), "the host's answer, schema default filled, came back through MRTR")
			_, perr := c.try("ping", nil, core.CallOptions{})
			require.NotNil(t, perr)
			require.Equal(t, core.StatusUnsupported, perr.Status)

			require.Nil(t, errOrNil(c.Close(wait)))
			verbs, headers := rec.all()
			for i, h := range headers {
				require.Equal(t, http.MethodPost, verbs[i], "POST only")
				require.Equal(t, "2026-07-28", h.Get("Mcp-Protocol-Version"))
				require.NotEmpty(t, h.Get("Mcp-Method"))
				require.Empty(t, h.Get("Mcp-Session-Id"))
			}
		})
	}
}

// The SDK's stateful server discovers but offers only legacy versions:
// a dual-era client speaks the legacy era to it; detection still falls back
// to legacy SSE for an old server.
func TestAutoModeFallsBackToLegacy(t *testing.T) {
	for _, tc := range []struct {
		name, kind, path, want string
		handler                func() http.Handler
	}{
		{"stateful streamable", "streamable_http", "/mcp", "streamable_http", streamable(false, false)},
		{"detected legacy sse", "http", "/sse", "sse", legacySSE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, tc.handler())
			c := connect(t, tc.kind, srv.URL+tc.path, `,"protocol":{"mode":"auto"}`)
			info := c.serverInfo(t)
			require.Equal(t, "legacy", info["era"])
			require.Equal(t, tc.want, info["transport"])
			require.Equal(t, "hi", c.toolText(t, "echo", map[string]any{"text": "hi"}))
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
