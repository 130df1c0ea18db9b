package httptests

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
)

// Every feature a host uses, over every way the SDK serves HTTP.
func TestFeatures(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			srv := serve(t, m.handler())
			c := connect(t, m.transport, srv.URL+m.path, "")

			t.Run("initialize", func(t *testing.T) {
				info := c.serverInfo(t)
				require.Equal(t, m.want, info["transport"])
				// The default era (auto): the SDK's stateless server speaks
				// 2026-07-28; its stateful ones discover only legacy revisions.
				version, era := "2025-11-25", "legacy"
				if !m.stateful {
					version, era = "2026-07-28", "modern"
				}
				require.Equal(t, version, info["protocolVersion"])
				require.Equal(t, era, info["era"])
				require.Equal(t, "go-sdk-fixture", info["serverInfo"].(map[string]any)["name"])
			})
			t.Run("tools/list all pages", func(t *testing.T) {
				res := c.call(t, "tools/list", nil, core.CallOptions{AllPages: true})
				var names []string
				for _, tool := range res["tools"].([]any) {
					names = append(names, tool.(map[string]any)["name"].(string))
				}
				require.ElementsMatch(t, []string{"echo", "add", "large", "slow", "roots", "poll"}, names)
			})
			t.Run("tools/call", func(t *testing.T) {
				require.Equal(t, "hello over http", c.toolText(t, "echo", map[string]any{"text": "hello over http"}))
				require.Equal(t, "5", c.toolText(t, "add", map[string]any{"a": 2, "b": 3}))
			})
			t.Run("concurrent calls", func(t *testing.T) {
				errs := make(chan error, 20)
				for i := 0; i < 20; i++ {
					go func(i int) {
						res, err := c.try("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": fmt.Sprint(i)}}, core.CallOptions{})
						if err != nil {
							errs <- err
							return
						}
						if got := res["content"].([]any)[0].(map[string]any)["text"]; got != fmt.Sprint(i) {
							errs <- fmt.Errorf("call %d got %v", i, got)
							return
						}
						errs <- nil
					}(i)
				}
				for i := 0; i < 20; i++ {
					require.NoError(t, <-errs)
				}
			})
			t.Run("resources", func(t *testing.T) {
				res := c.call(t, "resources/list", nil, core.CallOptions{AllPages: true})
				require.Len(t, res["resources"], itemCount, "every page was fetched")
				read := c.call(t, "resources/read", map[string]any{"uri": "test://item/07"}, core.CallOptions{})
				require.Equal(t, "item 07", read["contents"].([]any)[0].(map[string]any)["text"])
			})
			t.Run("prompts", func(t *testing.T) {
				list := c.call(t, "prompts/list", nil, core.CallOptions{})
				require.Len(t, list["prompts"], 1)
				got := c.call(t, "prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Lemon"}}, core.CallOptions{})
				msg := got["messages"].([]any)[0].(map[string]any)
				require.Equal(t, "Hello, Lemon!", msg["content"].(map[string]any)["text"])
			})
			t.Run("progress", func(t *testing.T) {
				res := c.call(t, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 3, "ms": 150}}, core.CallOptions{Progress: true})
				require.Equal(t, "done", firstText(t, res))
				switch m.name {
				case "streamable stateless json":
					return // a JSON reply cannot carry notifications, and there is no GET stream
				case "streamable stateful json":
					// The notifications travel on the GET stream, the reply on
					// the POST: the last progress can lose the race with the
					// reply, and progress for a finished call is dropped. The
					// first one was sent 300 ms before the reply.
					c.waitEvent(t, "progress", `"progress":1`)
				default:
					c.waitEvent(t, "progress", `"progress":3`)
				}
			})
			t.Run("server to client request", func(t *testing.T) {
				if !m.stateful {
					t.Skip("a stateless server cannot send requests to the client")
				}
				require.JSONEq(t, `[{"uri":"file:///work","name":"work"}]`, c.toolText(t, "roots", map[string]any{}))
			})
		})
	}
}

// A server-initiated notification with no request behind it arrives on the
// GET stream.
func TestGETStreamNotification(t *testing.T) {
	sdk := newSDKServer()
	listening := make(chan struct{})
	var once sync.Once
	h := streamableHandler(sdk, false)
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w = &onHeader{ResponseWriter: w, f: func() { once.Do(func() { close(listening) }) }}
		}
		h.ServeHTTP(w, r)
	}))
	c := connect(t, "streamable_http", srv.URL+"/mcp", "")
	c.call(t, "tools/list", nil, core.CallOptions{}) // the server only notifies sessions that listed tools
	// The client opens its GET stream in the background after the
	// handshake, and the SDK drops a notification no stream can carry. The
	// SDK writes the GET's header holding the stream's lock, and sets the
	// stream's writer before it lets go: once the header is out, the
	// notification waits for the stream instead of being dropped.
	select {
	case <-listening:
	case <-time.After(10 * time.Second):
		t.Fatal("the client did not open its GET stream")
	}
	sdk.AddTool(newTool("late"), lateTool)
	c.waitEvent(t, "notification", "notifications/tools/list_changed")
}

// SEP-1699 against the SDK: the tool closes its response stream with a
// retry delay; the client resumes with GET and Last-Event-ID, and the SDK's
// event store replays the response.
func TestResumedResponseStream(t *testing.T) {
	srv := serve(t, streamable(false, false)())
	c := connect(t, "streamable_http", srv.URL+"/mcp", "")
	require.Equal(t, "polled", c.toolText(t, "poll", map[string]any{}))
}

// onHeader calls f when a 200 header is written.
type onHeader struct {
	http.ResponseWriter
	f func()
}

func (o *onHeader) WriteHeader(code int) {
	o.ResponseWriter.WriteHeader(code)
	if code == http.StatusOK {
		o.f()
	}
}

func (o *onHeader) Unwrap() http.ResponseWriter { return o.ResponseWriter }
