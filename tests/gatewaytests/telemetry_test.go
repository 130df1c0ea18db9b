package gatewaytests

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
)

// TestFrontTraceContinuesIntoTheServerCall: the front's traceparent is
// the server call's (one trace), and the host's record of that call
// names the front session.
func TestFrontTraceContinuesIntoTheServerCall(t *testing.T) {
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	traceparent := "00-" + traceID + "-00f067aa0ba902b7-01"
	logFile := t.TempDir() + "/stdin.log"
	h := hostFromConfig(t, `{"mcpServers": {"fx": {"command": "`+fixtureBin+`", "args": ["-log-file", "`+logFile+`"], "protocol": {"mode": "legacy"}}}, "tool_prefix": "never"}`)
	var mu sync.Mutex
	var records []core.TelemetryRecord
	require.Nil(t, h.SetTelemetryHandler(func(rec *core.TelemetryRecord) {
		mu.Lock()
		records = append(records, *rec)
		mu.Unlock()
	}, nil))
	g := newGateway(t, h, "")
	url := httpFront(t, g)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var sessionID string
	httpClient := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil && resp.Header.Get("Mcp-Session-Id") != "" {
			mu.Lock()
			sessionID = resp.Header.Get("Mcp-Session-Id")
			mu.Unlock()
		}
		return resp, err
	})}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "front", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer cs.Close()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "traced"}, Meta: mcp.Meta{"traceparent": traceparent}})
	require.NoError(t, err)
	logged, _ := os.ReadFile(logFile)
	var line string
	for _, l := range strings.Split(string(logged), "\n") {
		if strings.Contains(l, "traced") {
			line = l
		}
	}
	require.Contains(t, line, traceID, "the server's request continues the front's trace")
	carried := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, rec := range records {
			if rec.Kind == core.RecordCall && rec.Method == "tools/call" && rec.Target == "echo" {
				return rec.FrontSession != "" && rec.FrontSession == sessionID && strings.Contains(rec.TraceParent, traceID)
			}
		}
		return false
	}
	if !assert.Eventually(t, carried, 10*time.Second, 10*time.Millisecond) {
		// The records and the session are read under mu: the handler may
		// still be appending (a message's arguments are read at once).
		mu.Lock()
		defer mu.Unlock()
		require.FailNow(t, "the host's record does not carry the front session and the trace", "%+v (session %s)", records, sessionID)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
