package gatewaytests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
)

// TestBadInputOverStdio: each bad message gets a clear JSON-RPC error and
// the gateway keeps serving.
func TestBadInputOverStdio(t *testing.T) {
	h := newHost(t, legacy)
	g := newGateway(t, h, `{"max_body_bytes": 4096}`)
	exchange, inW := rawStdioFront(t, g)
	send := func(msg string) map[string]any { return response(exchange(msg)) }
	errOf := func(m map[string]any) (float64, string) {
		e, ok := m["error"].(map[string]any)
		require.True(t, ok, "not an error: %v", m)
		return e["code"].(float64), e["message"].(string)
	}
	require.NotNil(t, send(initBody)["result"])
	cases := []struct {
		name, msg, want string
		code            float64
	}{
		{"malformed JSON", `{"jsonrpc":"2.0","id":2,`, "parse error", -32700},
		{"batch", `[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, "batches", -32600},
		{"no jsonrpc member", `{"id":4,"method":"ping"}`, "jsonrpc", -32600},
		{"unknown method", `{"jsonrpc":"2.0","id":5,"method":"tools/frobnicate"}`, "method not found", -32601},
		{"unknown tool", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"no_such_tool"}}`, "no_such_tool", -32602},
		{"params not an object", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":[1]}`, "invalid params", -32602},
		{"huge body", `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"x":"` + strings.Repeat("a", 8000) + `"}}`, "max_body_bytes", -32600},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := errOf(send(tc.msg))
			require.Equal(t, tc.code, code)
			require.Contains(t, msg, tc.want)
		})
	}
	// Still serving.
	require.NotNil(t, send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)["result"])
	// The front closing its input ends serving.
	require.NoError(t, inW.Close())
	require.Nil(t, g.Wait(10*time.Second))
}

// TestBadInputOverHTTP: the HTTP front's refusals, each naming the
// problem.
func TestBadInputOverHTTP(t *testing.T) {
	h := newHost(t, legacy)
	g := newGateway(t, h, `{"max_body_bytes": 4096}`)
	url := httpFront(t, g)
	status, _, body := post(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "Mcp-Session-Id")
	status, _, body = post(t, url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Mcp-Session-Id": "nope"})
	require.Equal(t, http.StatusNotFound, status, body)
	status, _, body = post(t, url, `{"x":"`+strings.Repeat("a", 8000)+`"}`, nil)
	require.Equal(t, http.StatusRequestEntityTooLarge, status, body)
	require.Contains(t, body, "max_body_bytes")
	status, hdr, _ := post(t, url, initBody, nil)
	require.Equal(t, http.StatusOK, status)
	sid := map[string]string{"Mcp-Session-Id": hdr.Get("Mcp-Session-Id")}
	status, _, body = post(t, url, `{not json`, sid)
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "-32700")
	status, _, body = post(t, url, `[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, sid)
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "batches")
	status, _, body = post(t, url, `{"jsonrpc":"2.0","id":4,"method":"nope/nope"}`, sid)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "-32601")
	// DELETE ends the session; it is gone afterwards.
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", sid["Mcp-Session-Id"])
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	status, _, _ = post(t, url, `{"jsonrpc":"2.0","id":5,"method":"ping"}`, sid)
	require.Equal(t, http.StatusNotFound, status)
}

// TestBatchesIn20250326: a session that negotiated 2025-03-26 (the one
// revision with batches) gets one array of answers for a batch.
func TestBatchesIn20250326(t *testing.T) {
	h := newHost(t, legacy)
	g := newGateway(t, h, "")
	url := httpFront(t, g)
	status, hdr, body := post(t, url, strings.Replace(initBody, "2025-11-25", "2025-03-26", 1), nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `"protocolVersion":"2025-03-26"`)
	sid := map[string]string{"Mcp-Session-Id": hdr.Get("Mcp-Session-Id")}
	status, _, body = post(t, url, `[{"jsonrpc":"2.0","id":"a","method":"ping"},
	  {"jsonrpc":"2.0","method":"notifications/initialized"},
	  {"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"echo","arguments":{"text":"in a batch"}}},
	  {"jsonrpc":"2.0","id":"c","method":"no/such"}]`, sid)
	require.Equal(t, http.StatusOK, status, body)
	var answers []map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &answers), body)
	require.Len(t, answers, 3)
	byID := map[string]map[string]any{}
	for _, a := range answers {
		byID[a["id"].(string)] = a
	}
	require.NotNil(t, byID["a"]["result"])
	require.Contains(t, fmt.Sprint(byID["b"]["result"]), "in a batch")
	require.NotNil(t, byID["c"]["error"])
	status, _, _ = post(t, url, `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`, sid)
	require.Equal(t, http.StatusAccepted, status, "a batch of notifications only")
}

// TestHTTPReplyShapes: a call is answered with an SSE stream when the
// front accepts one, else with one JSON body; in the initialize era on a
// session, in 2026-07-28 without one.
func TestHTTPReplyShapes(t *testing.T) {
	h := newHost(t, legacy)
	g := newGateway(t, h, "")
	url := httpFront(t, g)
	sid := initSession(t, url)
	const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	cases := []struct {
		name, accept, body string
		session            bool
		contentType        string
	}{
		{"initialize era, JSON only", "application/json", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","arguments":{"text":"shape"}}}`, true, "application/json"},
		{"initialize era, both", "application/json, text/event-stream", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"shape"}}}`, true, "text/event-stream"},
		{"2026-07-28, JSON only", "application/json", `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"echo","arguments":{"text":"shape"},` + modernMeta + `}}`, false, "application/json"},
		{"2026-07-28, both", "application/json, text/event-stream", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"echo","arguments":{"text":"shape"},` + modernMeta + `}}`, false, "text/event-stream"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(tc.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", tc.accept)
			if tc.session {
				req.Header.Set("Mcp-Session-Id", sid["Mcp-Session-Id"])
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
			require.Equal(t, tc.contentType, resp.Header.Get("Content-Type"))
			body := string(b)
			if tc.contentType == "text/event-stream" {
				require.Contains(t, body, "data: ")
			} else {
				var m map[string]any
				require.NoError(t, json.Unmarshal(b, &m), body)
				require.Contains(t, m, "result")
			}
			require.Contains(t, body, "shape")
		})
	}
}

// TestStdioFrontVanishingMidCall: a stdio front that closes its input
// with a call in flight ends serving, and the server's request is
// cancelled rather than left running for nobody.
func TestStdioFrontVanishingMidCall(t *testing.T) {
	logFile := t.TempDir() + "/stdin.log"
	h := hostFromConfig(t, `{"mcpServers": {"fx": {"command": "`+fixtureBin+`", "args": ["-log-file", "`+logFile+`"], "protocol": {"mode": "legacy"}}}, "tool_prefix": "never"}`)
	g := newGateway(t, h, "")
	exchange, in := rawStdioFront(t, g)
	require.NotNil(t, response(exchange(initBody))["result"])
	_, err := io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"ms":30000,"steps":300}}}`+"\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(readFile(logFile), `"slow"`) }, 15*time.Second, 10*time.Millisecond)
	require.NoError(t, in.Close())
	require.Nil(t, g.Wait(10*time.Second))
	require.Eventually(t, func() bool { return strings.Contains(readFile(logFile), "cancelled ") }, 15*time.Second, 10*time.Millisecond,
		"the server's request outlived its front")
	// The host is the application's, and works.
	out, herr := h.CallToolSync("echo", []byte(`{"text":"mine"}`), core.CallOptions{})
	require.Nil(t, herr)
	require.Contains(t, string(out), "mine")
}
