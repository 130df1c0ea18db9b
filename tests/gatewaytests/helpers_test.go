package gatewaytests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/gateway"
	"github.com/lemonmcp/lemonmcp/host"
)

// era names a protocol era on one side of the gateway.
type era string

const (
	legacy era = "legacy"
	modern era = "modern"
)

// frontVersion is the version the go-sdk client asks for in an era.
func (e era) frontVersion() string {
	if e == modern {
		return "2026-07-28"
	}
	return "2025-11-25"
}

// newHost starts a host over the fixture speaking upstream's era, with
// every relay handler declared upstream.
func newHost(t testing.TB, upstream era, servers ...string) *host.Host {
	t.Helper()
	if len(servers) == 0 {
		servers = []string{"fx"}
	}
	entries := ""
	for i, name := range servers {
		if i > 0 {
			entries += ","
		}
		entries += fmt.Sprintf(`%q: {"command": %q, "protocol": {"mode": %q}, "timeouts": {"ready_ms": 10000, "close_grace_ms": 300}}`, name, fixtureBin, string(upstream))
	}
	cfg := `{"mcpServers": {` + entries + `}, "tool_prefix": "never",
	  "defaults": {"handlers": {"sampling": {}, "elicitation": {"form": true, "url": true}, "roots": {}}}}`
	h, err := host.Parse([]byte(cfg), "test")
	require.Nil(t, err)
	require.Nil(t, h.Connect())
	require.Nil(t, h.WaitReady(20*time.Second))
	t.Cleanup(func() {
		_ = h.Close(5 * time.Second)
		h.Free()
	})
	return h
}

// newGateway serves h with opts (JSON, may be empty).
func newGateway(t testing.TB, h *host.Host, opts string) *gateway.Server {
	t.Helper()
	o, err := gateway.ParseOptions([]byte(opts))
	require.Nil(t, err)
	g, err := gateway.New(h, o)
	require.Nil(t, err)
	t.Cleanup(func() {
		_ = g.Stop(5 * time.Second)
		g.Release()
	})
	return g
}

// stdioFront serves g over a pipe pair and returns the go-sdk transport
// of its front.
func stdioFront(t testing.TB, g *gateway.Server) mcp.Transport {
	t.Helper()
	inR, inW := io.Pipe()   // front → gateway
	outR, outW := io.Pipe() // gateway → front
	require.Nil(t, g.ServeStream(inR, outW, func() { _ = inR.Close() }))
	go func() {
		<-g.Done()
		g.Flushed()
		_ = outW.Close()
	}()
	return &mcp.IOTransport{Reader: outR, Writer: inW}
}

// stdioSession is a go-sdk front client's 2025-11-25 session over a
// stdio front of g, and a context for its requests; both end with t.
func stdioSession(t *testing.T, g *gateway.Server) (context.Context, *mcp.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "front", Version: "1"}, nil).Connect(ctx, stdioFront(t, g), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return ctx, cs
}

// relayHTTPSession is relayClient's 2025-11-25 session over g's HTTP
// front at url, with no standalone GET stream (the go-sdk client fails
// its calls when that stream ends, as Stop ends it), the channel its
// progress notifications reach, and a context for its requests.
func relayHTTPSession(t *testing.T, url string) (context.Context, *mcp.ClientSession, chan *mcp.ProgressNotificationParams) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	progress := make(chan *mcp.ProgressNotificationParams, 16)
	cs, err := relayClient(progress).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return ctx, cs, progress
}

// fixtureItem is the URI of one of the fixture's fixture://item/
// resources, as cs lists them.
func fixtureItem(ctx context.Context, t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ListResources(ctx, nil)
	require.NoError(t, err)
	for _, r := range res.Resources {
		if strings.HasPrefix(r.URI, "fixture://item/") {
			return r.URI
		}
	}
	t.Fatalf("no fixture://item/ resource among %d", len(res.Resources))
	return ""
}

// rawStdioFront serves g over a pipe pair to a front written by hand:
// send writes one line and returns the next message that is not a
// notification, and the notifications before it; closing in ends the
// front.
func rawStdioFront(t *testing.T, g *gateway.Server) (send func(msg string) (map[string]any, []map[string]any), in io.WriteCloser) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	require.Nil(t, g.ServeStream(inR, outW, func() { _ = inR.Close() }))
	lines := bufio.NewReader(outR)
	return func(msg string) (map[string]any, []map[string]any) {
		t.Helper()
		_, err := io.WriteString(inW, msg+"\n")
		require.NoError(t, err)
		var notes []map[string]any
		for {
			line, err := lines.ReadBytes('\n')
			require.NoError(t, err)
			var m map[string]any
			require.NoError(t, json.Unmarshal(line, &m), string(line))
			if _, isNotification := m["method"]; !isNotification {
				return m, notes
			}
			notes = append(notes, m)
		}
	}, inW
}

// response drops send's notifications.
func response(m map[string]any, _ []map[string]any) map[string]any { return m }

// httpFront serves g over HTTP on loopback and returns its URL.
func httpFront(t testing.TB, g *gateway.Server) string {
	t.Helper()
	url, err := g.ServeHTTP("127.0.0.1:0")
	require.Nil(t, err)
	return url
}

// frontTransport serves g over front ("stdio" or "http") and returns the
// go-sdk transport of its front.
func frontTransport(t testing.TB, g *gateway.Server, front string) mcp.Transport {
	t.Helper()
	if front == "stdio" {
		return stdioFront(t, g)
	}
	return &mcp.StreamableClientTransport{Endpoint: httpFront(t, g), MaxRetries: -1}
}

// relayClient is a go-sdk client answering every relayed request; the
// progress notifications it gets go to progress (when there is room).
func relayClient(progress chan<- *mcp.ProgressNotificationParams) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "front", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "front-model", Role: "assistant", Content: &mcp.TextContent{Text: "sampled by the front"}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "front-user"}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if progress != nil {
				select {
				case progress <- req.Params:
				default:
				}
			}
		},
	})
}

// callText calls a tool and returns its first text content.
func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	require.NotEmpty(t, res.Content)
	text, ok := res.Content[0].(*mcp.TextContent)
	require.True(t, ok, "content %T", res.Content[0])
	require.False(t, res.IsError, "tool %s failed: %s", name, text.Text)
	return text.Text
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// hostFromConfig starts a host from a whole config.
func hostFromConfig(t *testing.T, cfg string) *host.Host {
	t.Helper()
	h, err := host.Parse([]byte(cfg), "test")
	require.Nil(t, err)
	require.Nil(t, h.Connect())
	require.Nil(t, h.WaitReady(20*time.Second))
	t.Cleanup(func() {
		_ = h.Close(5 * time.Second)
		h.Free()
	})
	return h
}

// eraPair is one front (stdio or http) with the era each side speaks.
type eraPair struct {
	name   string
	front  string
	fe, se era
}

// eraPairs is every front × front era × server era.
func eraPairs() []eraPair {
	var out []eraPair
	for _, front := range []string{"stdio", "http"} {
		for _, fe := range []era{legacy, modern} {
			for _, se := range []era{legacy, modern} {
				out = append(out, eraPair{front + "/front-" + string(fe) + "/server-" + string(se), front, fe, se})
			}
		}
	}
	return out
}
