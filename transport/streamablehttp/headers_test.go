package streamablehttp

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport"
)

// Every request carries the headers the specification asks for, and the
// configured ones; initialize carries no session and no version.
func TestHeaders(t *testing.T) {
	srv := newServer(t, mcp("sess-1", echo))
	tr, sink := open(t, srv.URL, func(c *Config) {
		c.Headers = map[string]string{"authorization": "Bearer tok", "X-Tenant": "blue"}
	})
	handshake(t, tr, sink)
	send(t, tr, request(2, "tools/list"))
	sink.Next(t)
	srv.waitFor(t, isGET)
	closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, tr.Close(closeCtx))

	byKind := map[string]seen{}
	for _, r := range srv.requests() {
		key := r.Method + " " + r.Body.Method
		if _, dup := byKind[key]; !dup {
			byKind[key] = r
		}
	}
	tests := []struct {
		name                string
		key                 string
		accept, contentType string
		session, version    string
	}{
		{name: "initialize", key: "POST initialize", accept: "application/json, text/event-stream", contentType: "application/json"},
		{name: "initialized", key: "POST notifications/initialized", accept: "application/json, text/event-stream", contentType: "application/json", session: "sess-1", version: "2025-11-25"},
		{name: "request", key: "POST tools/list", accept: "application/json, text/event-stream", contentType: "application/json", session: "sess-1", version: "2025-11-25"},
		{name: "GET stream", key: "GET ", accept: "text/event-stream", session: "sess-1", version: "2025-11-25"},
		{name: "DELETE", key: "DELETE ", session: "sess-1", version: "2025-11-25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := byKind[tt.key]
			require.True(t, ok, "no %s request; got %v", tt.key, byKind)
			h := r.Header
			require.Equal(t, tt.accept, h.Get("Accept"))
			require.Equal(t, tt.contentType, h.Get("Content-Type"))
			require.Equal(t, tt.session, h.Get("Mcp-Session-Id"))
			require.Equal(t, tt.version, h.Get("MCP-Protocol-Version"))
			require.Equal(t, "lemonmcp/test", h.Get("User-Agent"))
			require.Equal(t, []string{"Bearer tok"}, h.Values("Authorization"), "configured, case-insensitively")
			require.Equal(t, []string{"blue"}, h.Values("X-Tenant"))
			require.Empty(t, h.Get("Last-Event-ID"))
		})
	}
}

// The transport's own headers cannot be configured, in any spelling, and a
// header may not be given twice in different cases.
func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		message string
	}{
		{name: "no url", cfg: Config{}, message: "url: is empty"},
		{name: "not http", cfg: Config{URL: "ws://h/mcp"}, message: "url: must be an http:// or https:// URL"},
		{name: "no host", cfg: Config{URL: "http:///mcp"}, message: "url: must name a host"},
		{name: "accept", cfg: Config{URL: "http://h/", Headers: map[string]string{"accept": "text/html"}}, message: "headers.accept: is set by the transport"},
		{name: "content type", cfg: Config{URL: "http://h/", Headers: map[string]string{"CONTENT-TYPE": "text/plain"}}, message: "headers.CONTENT-TYPE: is set by the transport"},
		{name: "session id", cfg: Config{URL: "http://h/", Headers: map[string]string{"mcp-session-id": "s"}}, message: "is set by the transport"},
		{name: "protocol version", cfg: Config{URL: "http://h/", Headers: map[string]string{"MCP-Protocol-Version": "2099-01-01"}}, message: "is set by the transport"},
		{name: "any Mcp- header", cfg: Config{URL: "http://h/", Headers: map[string]string{"Mcp-Method": "x"}}, message: "is set by the transport"},
		{name: "last event id", cfg: Config{URL: "http://h/", Headers: map[string]string{"last-event-id": "7"}}, message: "is set by the transport"},
		{name: "user agent", cfg: Config{URL: "http://h/", Headers: map[string]string{"User-Agent": "x"}}, message: "is set by the transport"},
		{name: "host", cfg: Config{URL: "http://h/", Headers: map[string]string{"Host": "evil"}}, message: "is set by the transport"},
		{name: "twice", cfg: Config{URL: "http://h/", Headers: map[string]string{"X-Key": "a", "x-key": "b"}}, message: "is given twice"},
		{name: "bad name", cfg: Config{URL: "http://h/", Headers: map[string]string{"X Key": "a"}}, message: `headers: "X Key" is not a valid header name`},
		{name: "line break", cfg: Config{URL: "http://h/", Headers: map[string]string{"X-Key": "a\nb"}}, message: "headers.X-Key: the value must not contain line breaks"},
		{name: "negative limit", cfg: Config{URL: "http://h/", MaxMessageBytes: -1}, message: "MaxMessageBytes"},
		{name: "client timeout", cfg: Config{URL: "http://h/", HTTPClient: &http.Client{Timeout: time.Second}}, message: "HTTPClient.Timeout must be zero"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			require.Error(t, err)
			require.Equal(t, transport.CodeInvalidArgument, codeOf(t, err))
			require.Contains(t, err.Error(), tt.message)
			for _, v := range tt.cfg.Headers {
				if len(v) > 1 {
					require.NotContains(t, err.Error(), v, "header values are never echoed")
				}
			}
		})
	}
}

// A session id the server gives in a form that could not be sent back
// (not visible ASCII) is ignored rather than used.
func TestInvalidSessionIDIgnored(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, m msg) {
		if m.Method == "initialize" {
			w.Header().Set("Mcp-Session-Id", "has space")
		}
		mcp("", echo)(w, r, m)
	})
	tr, sink := open(t, srv.URL)
	handshake(t, tr, sink)
	require.Empty(t, tr.SessionID())
	sink.WaitLog(t, "ignored an Mcp-Session-Id")
	for _, l := range sink.Logs() {
		require.False(t, strings.Contains(l.Text, "has space"), "the session id is never logged")
	}
}
