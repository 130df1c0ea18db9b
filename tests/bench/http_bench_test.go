package bench

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/tests/internal/hostclient"
)

// minimalHTTP answers every POST with a JSON body built from the request's
// id (202 for a notification): the least a Streamable HTTP server does, so
// that the client's own cost shows.
func minimalHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	i := bytes.Index(body, []byte(`"id":`))
	if r.Method != http.MethodPost || i < 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	id := body[i+5 : i+5+bytes.IndexAny(body[i+5:], ",}")]
	result := `{"content":[{"type":"text","text":"hello"}]}`
	if bytes.Contains(body, []byte(`"initialize"`)) {
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"min","version":"1"}}`
	}
	reply := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(reply)))
	io.WriteString(w, reply)
}

// BenchmarkHTTPCallTool is one tools/call over Streamable HTTP against the
// minimal server: a floor client (one POST per call, nothing else) and
// LemonMCP's core. The difference is the client's overhead.
func BenchmarkHTTPCallTool(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(minimalHTTP))
	defer srv.Close()
	b.Run("floor", func(b *testing.B) {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		client := &http.Client{Transport: tr}
		defer tr.CloseIdleConnections()
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
		b.ReportAllocs()
		for b.Loop() {
			req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadAll(resp.Body); err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
	})
	b.Run("lemonmcp", func(b *testing.B) {
		c := hostclient.Ready(b, `{"transport":{"type":"streamable_http","url":"`+srv.URL+`"},"protocol":{"mode":"legacy","versions":["`+pinnedVersion+`"]}}`)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.CallSync("tools/call", echoParams, core.CallOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
