package gatewaytests

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// frontEvents is what one front session heard.
type frontEvents struct {
	toolsChanged chan struct{}
	logs         chan string
	updated      chan string
}

func newFrontEvents() *frontEvents {
	return &frontEvents{toolsChanged: make(chan struct{}, 16), logs: make(chan string, 16), updated: make(chan string, 16)}
}

func (e *frontEvents) client(name string) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case e.toolsChanged <- struct{}{}:
			default:
			}
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			text, _ := req.Params.Data.(string)
			select {
			case e.logs <- text:
			default:
			}
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case e.updated <- req.Params.URI:
			default:
			}
		},
	})
}

func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(15 * time.Second):
		t.Fatalf("the front never got %s", what)
	}
	var zero T
	return zero
}

// quiet checks that nothing has arrived on ch by the time the session
// that asked got its own.
func quiet[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("the front got %s it did not ask for: %v", what, v)
	default:
	}
}

// TestNotificationsReachTheSessionsThatAsked: list_changed reaches every
// session, log messages only the session that set a level, resource
// updates only the session that subscribed; from servers of both eras.
func TestNotificationsReachTheSessionsThatAsked(t *testing.T) {
	for _, se := range []era{legacy, modern} {
		t.Run("http/server-"+string(se), func(t *testing.T) {
			h := newHost(t, se)
			g := newGateway(t, h, "")
			url := httpFront(t, g)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			asker, other := newFrontEvents(), newFrontEvents()
			csA, err := asker.client("asker").Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			require.NoError(t, err)
			defer csA.Close()
			csB, err := other.client("other").Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			require.NoError(t, err)
			defer csB.Close()
			_, err = csA.ListTools(ctx, nil)
			require.NoError(t, err)
			_, err = csB.ListTools(ctx, nil)
			require.NoError(t, err)

			require.NoError(t, csA.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}))
			item := fixtureItem(ctx, t, csA)
			require.NoError(t, csA.Subscribe(ctx, &mcp.SubscribeParams{URI: item}))

			callText(t, csA, "notify", map[string]any{})
			require.Equal(t, "notify called", waitFor(t, asker.logs, "the server's log message"))
			waitFor(t, asker.toolsChanged, "tools list_changed")
			// Each list_changed the session that did not call hears makes
			// it list again (an earlier one, from the servers' start, may
			// come first), until the list has the tool notify added.
			for found := false; !found; {
				waitFor(t, other.toolsChanged, "tools list_changed (a session that did not call)")
				tools, err := csB.ListTools(ctx, nil)
				require.NoError(t, err)
				for _, tool := range tools.Tools {
					found = found || strings.HasPrefix(tool.Name, "dynamic_")
				}
			}

			callText(t, csA, "touch", map[string]any{"uri": item})
			require.Equal(t, item, waitFor(t, asker.updated, "resources/updated"))
			quiet(t, other.logs, "a log message")
			quiet(t, other.updated, "a resource update")
		})
	}
}

// TestCancellationReachesTheServersOwnRequest: the front's
// notifications/cancelled becomes the server's cancellation of the very
// request the gateway sent it (the fixture logs it by its own id), in
// every era pair over both fronts.
func TestCancellationReachesTheServersOwnRequest(t *testing.T) {
	for _, tc := range eraPairs() {
		front, fe, se := tc.front, tc.fe, tc.se
		t.Run(tc.name, func(t *testing.T) {
			logFile := t.TempDir() + "/stdin.log"
			h := hostFromConfig(t, `{"mcpServers": {"fx": {"command": "`+fixtureBin+`", "args": ["-log-file", "`+logFile+`-`+front+`"], "protocol": {"mode": "`+string(se)+`"}}}, "tool_prefix": "never"}`)
			g := newGateway(t, h, "")
			tr := frontTransport(t, g, front)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "front", Version: "1"}, nil).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: fe.frontVersion()})
			require.NoError(t, err)
			defer cs.Close()
			callCtx, callCancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 20000, "steps": 200}})
				done <- err
			}()
			// Wait until the server has the call (its stdin log shows it).
			log := logFile + "-" + front
			waitFile(t, log, "the call", func(s string) bool { return strings.Contains(s, `"slow"`) })
			callCancel()
			require.Error(t, <-done)
			b := waitFile(t, log, "the cancellation", func(s string) bool { return strings.Contains(s, "cancelled ") })
			var callID string
			for _, line := range strings.Split(b, "\n") {
				if strings.Contains(line, `"tools/call"`) && strings.Contains(line, `"slow"`) {
					i := strings.Index(line, `"id":`)
					require.GreaterOrEqual(t, i, 0)
					callID = strings.TrimSpace(strings.SplitN(strings.SplitN(line[i+5:], ",", 2)[0], "}", 2)[0])
				}
			}
			require.Contains(t, b, "cancelled "+callID, "the cancellation names the server's own request id %s", callID)
			require.Contains(t, callText(t, cs, "echo", map[string]any{"text": "after"}), "after")
		})
	}
}

// TestPromptsResourcesAndCompletions through the gateway, with a URI two
// servers share told apart.
func TestPromptsResourcesAndCompletions(t *testing.T) {
	h := newHost(t, legacy, "one", "two")
	g := newGateway(t, h, "")
	ctx, cs := stdioSession(t, g)

	prompts, err := cs.ListPrompts(ctx, nil)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, p := range prompts.Prompts {
		names[p.Name] = true
	}
	require.True(t, names["one__greet"] && names["two__greet"], "a prompt two servers share is told apart: %v", names)
	got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "two__greet", Arguments: map[string]string{"name": "Ada"}})
	require.NoError(t, err)
	require.NotEmpty(t, got.Messages)

	res, err := cs.ListResources(ctx, nil)
	require.NoError(t, err)
	uris := map[string]bool{}
	for _, r := range res.Resources {
		uris[r.URI] = true
	}
	require.True(t, uris["one+fixture://item/03"] && uris["two+fixture://item/03"], "shared URIs: %v", uris)
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "two+fixture://item/03"})
	require.NoError(t, err)
	require.Equal(t, "two+fixture://item/03", read.Contents[0].URI)

	templates, err := cs.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	require.Len(t, templates.ResourceTemplates, 2)
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "nope://missing"})
	require.Error(t, err)
	require.Contains(t, err.Error(), "not found")
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// waitFile waits until the file at path (a fixture server's log) satisfies
// has, and returns its text. No clock of its own: the test's timeout bounds
// the wait, and a failure shows what the file held.
func waitFile(t *testing.T, path, what string, has func(string) bool) string {
	t.Helper()
	for {
		text := readFile(path)
		if has(text) {
			return text
		}
		if d, ok := t.Deadline(); ok && time.Until(d) < 5*time.Second {
			t.Fatalf("the server's log never showed %s: %s", what, text)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServerRestartReachesTheFront: a server that dies goes from the
// lists and comes back when the host restarts it; the front hears
// list_changed and lists it again (the new process), over both eras.
func TestServerRestartReachesTheFront(t *testing.T) {
	for _, fe := range []era{legacy, modern} {
		t.Run("front-"+string(fe), func(t *testing.T) {
			h := hostFromConfig(t, `{"tool_prefix": "always", "mcpServers": {
			  "a": {"command": "`+fixtureBin+`", "restart": {"max_restarts": 3, "backoff_ms": 300}},
			  "b": {"command": "`+fixtureBin+`"}}}`)
			g := newGateway(t, h, "")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ev := newFrontEvents()
			cs, err := ev.client("front").Connect(ctx, stdioFront(t, g), &mcp.ClientSessionOptions{ProtocolVersion: fe.frontVersion()})
			require.NoError(t, err)
			defer cs.Close()
			require.True(t, toolNames(t, cs)["a__echo"])
			before := callText(t, cs, "a__pid", map[string]any{})
			for len(ev.toolsChanged) > 0 { // what the servers' start said
				<-ev.toolsChanged
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a__crash", Arguments: map[string]any{"kill": true}})
			require.True(t, err != nil || res.IsError, "the crashed server's call fails")
			waitFor(t, ev.toolsChanged, "tools list_changed when the server went")
			for back := false; !back; {
				if back = toolNames(t, cs)["a__echo"]; !back {
					waitFor(t, ev.toolsChanged, "tools list_changed when the server came back")
				}
			}
			require.NotEqual(t, before, callText(t, cs, "a__pid", map[string]any{}), "a new process")
			require.Contains(t, callText(t, cs, "b__echo", map[string]any{"text": "untouched"}), "untouched")
		})
	}
}
