package httptests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	itemCount = 25 // resources, listed 10 per page
	pageSize  = 10
)

type echoIn struct {
	Text string `json:"text"`
}
type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}
type slowIn struct {
	Steps int `json:"steps"`
	MS    int `json:"ms"`
}
type largeIn struct {
	Bytes int `json:"bytes"`
}
type none struct{}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// newSDKServer builds the server every test talks to: tools, paginated
// resources, prompts, progress, a server-to-client request (roots), and a
// tool that closes its SSE stream to be resumed (SEP-1699).
func newSDKServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "go-sdk-fixture", Version: "1.0.0"}, &mcp.ServerOptions{PageSize: pageSize})
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return text(in.Text), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "add"}, func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
		return text(fmt.Sprint(in.A + in.B)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "large"}, func(_ context.Context, _ *mcp.CallToolRequest, in largeIn) (*mcp.CallToolResult, any, error) {
		return text(strings.Repeat("x", in.Bytes)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, req *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
		token := req.Params.GetProgressToken()
		for i := 1; i <= in.Steps; i++ {
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
			}
			if token != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: float64(in.Steps)})
			}
		}
		return text("done"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.ListRoots(ctx, &mcp.ListRootsParams{})
		if err != nil {
			return nil, nil, err
		}
		b, _ := json.Marshal(res.Roots)
		return text(string(b)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "poll"}, func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		// Close the response stream and answer later: the client must come
		// back with GET and Last-Event-ID after the retry delay.
		if req.Extra != nil && req.Extra.CloseSSEStream != nil {
			req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 100 * time.Millisecond})
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
		return text("polled"), nil, nil
	})
	for i := 1; i <= itemCount; i++ {
		uri := fmt.Sprintf("test://item/%02d", i)
		body := fmt.Sprintf("item %02d", i)
		s.AddResource(&mcp.Resource{URI: uri, Name: fmt.Sprintf("item-%02d", i), MIMEType: "text/plain"},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: body}}}, nil
			})
	}
	s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["name"] + "!"}}}}, nil
		})
	return s
}

// mode is one way of serving the SDK server over HTTP.
type mode struct {
	name      string
	transport string // the config type
	path      string // appended to the server URL
	want      string // the transport server info reports
	stateful  bool   // server-to-client requests and the GET stream work
	handler   func() http.Handler
}

func streamable(stateless, jsonResponse bool) func() http.Handler {
	return func() http.Handler {
		srv := newSDKServer()
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
			&mcp.StreamableHTTPOptions{Stateless: stateless, JSONResponse: jsonResponse, EventStore: mcp.NewMemoryEventStore(nil)})
	}
}

func legacySSE() http.Handler {
	srv := newSDKServer()
	return mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
}

var modes = []mode{
	{name: "streamable stateful sse", transport: "streamable_http", path: "/mcp", want: "streamable_http", stateful: true, handler: streamable(false, false)},
	{name: "streamable stateful json", transport: "streamable_http", path: "/mcp", want: "streamable_http", stateful: true, handler: streamable(false, true)},
	{name: "streamable stateless sse", transport: "streamable_http", path: "/mcp", want: "streamable_http", handler: streamable(true, false)},
	{name: "streamable stateless json", transport: "streamable_http", path: "/mcp", want: "streamable_http", handler: streamable(true, true)},
	{name: "legacy sse", transport: "sse", path: "/sse", want: "sse", stateful: true, handler: legacySSE},
	{name: "detected streamable", transport: "http", path: "/mcp", want: "streamable_http", stateful: true, handler: streamable(false, false)},
	{name: "detected legacy", transport: "http", path: "/sse", want: "sse", stateful: true, handler: legacySSE},
}

// swappable serves whatever handler is current, so a test can restart the
// server under a running client, and lets a fault middleware intercept.
type swappable struct {
	current atomic.Pointer[http.Handler]
}

func (s *swappable) set(h http.Handler) { s.current.Store(&h) }

func (s *swappable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.current.Load()).ServeHTTP(w, r)
}

// serve starts h on a loopback httptest server.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
