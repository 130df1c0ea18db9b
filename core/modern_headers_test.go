package core

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/memory"
	"github.com/stretchr/testify/require"
)

func TestEncodeHeaderValue(t *testing.T) {
	cases := []struct{ in, want string }{
		{"us-west1", "us-west1"},
		{"with inner space", "with inner space"},
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		{"=?base64?only-prefix", "=?base64?only-prefix"},
		{"", "=?base64??="},
		{"tab\tinside", "=?base64?dGFiCWluc2lkZQ==?="},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) { require.Equal(t, tc.want, encodeHeaderValue(tc.in)) })
	}
}

func TestHeaderBindings(t *testing.T) {
	cases := []struct {
		name   string
		schema string
		want   []headerBinding
		bad    string // part of the reason, "" when valid
	}{
		{name: "none", schema: `{"type":"object","properties":{"q":{"type":"string"}}}`},
		{name: "string", schema: `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`, want: []headerBinding{{[]string{"region"}, "Region"}}},
		{name: "nested through properties", schema: `{"type":"object","properties":{"opts":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}}}`, want: []headerBinding{{[]string{"opts", "n"}, "N"}}},
		{name: "value in default is data", schema: `{"type":"object","properties":{"o":{"type":"object","default":{"x-mcp-header":"X"}}}}`},
		{name: "number type", schema: `{"type":"object","properties":{"f":{"type":"number","x-mcp-header":"F"}}}`, bad: "string, integer or boolean"},
		{name: "empty", schema: `{"type":"object","properties":{"f":{"type":"string","x-mcp-header":""}}}`, bad: "non-empty"},
		{name: "not a token", schema: `{"type":"object","properties":{"f":{"type":"string","x-mcp-header":"a b"}}}`, bad: "HTTP token"},
		{name: "not a string", schema: `{"type":"object","properties":{"f":{"type":"string","x-mcp-header":7}}}`, bad: "non-empty string"},
		{name: "duplicate ignoring case", schema: `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Dup"},"b":{"type":"boolean","x-mcp-header":"dup"}}}`, bad: "twice"},
		{name: "under items", schema: `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"L"}}}}`, bad: "not reachable"},
		{name: "under anyOf", schema: `{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`, bad: "not reachable"},
		{name: "under $defs", schema: `{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"D"}}}`, bad: "not reachable"},
		{name: "at the root", schema: `{"type":"string","x-mcp-header":"R"}`, bad: "not reachable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var schema map[string]any
			require.NoError(t, jsonx.Unmarshal([]byte(tc.schema), &schema))
			got, why := headerBindings(schema)
			if tc.bad != "" {
				require.Contains(t, why, tc.bad)
				return
			}
			require.Empty(t, why)
			require.Equal(t, tc.want, got)
		})
	}
}

// headerTransport is a memory transport that carries headers as HTTP does,
// recording them, and cancels by aborting.
type headerTransport struct {
	*memory.Transport
	mu      sync.Mutex
	headers map[int64][]transport.Header
	aborted []int64
}

func (h *headerTransport) CarriesHeaders() bool { return true }

func (h *headerTransport) Send(ctx context.Context, msg transport.Outbound) error {
	h.mu.Lock()
	h.headers[msg.ID] = msg.Headers
	h.mu.Unlock()
	return h.Transport.Send(ctx, msg)
}

func (h *headerTransport) Abort(id int64) {
	h.mu.Lock()
	h.aborted = append(h.aborted, id)
	h.mu.Unlock()
}

func (h *headerTransport) headersOf(t *testing.T, m wireMsg) map[string]string {
	t.Helper()
	var id int64
	require.NoError(t, json.Unmarshal(m.ID, &id))
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]string{}
	for _, hd := range h.headers[id] {
		out[hd.Name] = hd.Value
	}
	return out
}

func headerClient(t *testing.T, s *fakeServer, opts Options) (*Client, *headerTransport) {
	mt, peer := s.pairForTest()
	ht := &headerTransport{Transport: mt, headers: map[int64][]transport.Header{}}
	c := New(opts, ht)
	s.peer = peer
	go s.serve()
	t.Cleanup(func() { c.Free(); close(s.stop); <-s.done })
	require.Nil(t, errOrNil(c.Connect()))
	require.Nil(t, errOrNil(c.WaitReady(3*time.Second)))
	return c, ht
}

var headerTools = map[string]any{"tools": []any{
	map[string]any{"name": "sql", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": "Region"},
		"limit":  map[string]any{"type": "integer", "x-mcp-header": "Limit"},
		"dry":    map[string]any{"type": "boolean", "x-mcp-header": "Dry"},
		"opts":   map[string]any{"type": "object", "properties": map[string]any{"tag": map[string]any{"type": "string", "x-mcp-header": "Tag"}}},
		"query":  map[string]any{"type": "string"},
	}}},
	map[string]any{"name": "broken", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{
		"f": map[string]any{"type": "number", "x-mcp-header": "F"},
	}}},
	map[string]any{"name": "plain", "inputSchema": map[string]any{"type": "object"}},
}}

// Over a header-carrying transport every modern request gets
// MCP-Protocol-Version and Mcp-Method, the named methods Mcp-Name, and
// tools/call the x-mcp-header parameters of the listed tool; an invalid
// tool is dropped from tools/list with a warning; cancel aborts instead
// of notifying.
func TestModernHeaders(t *testing.T) {
	s := newModernServer(t)
	s.handle("tools/list", func(*fakeServer, wireMsg) reply { return reply{result: headerTools} })
	s.handle("resources/read", func(*fakeServer, wireMsg) reply { return reply{result: map[string]any{"contents": []any{}}} })
	s.handle("prompts/get", func(*fakeServer, wireMsg) reply { return reply{result: map[string]any{"messages": []any{}}} })
	c, ht := headerClient(t, s, modernOptions(ModeModern))
	ev := recordEvents(c)

	list, err := c.CallSync("tools/list", nil, CallOptions{})
	require.Nil(t, errOrNil(err))
	require.Contains(t, string(list), `"sql"`)
	require.Contains(t, string(list), `"plain"`)
	require.NotContains(t, string(list), `"broken"`)
	logLine, ok := ev.wait("log")
	require.True(t, ok)
	require.Contains(t, string(logLine), `dropped tool \"broken\"`)
	require.Contains(t, string(logLine), `"level":"warning"`)

	cases := []struct {
		name   string
		method string
		params string
		want   map[string]string
		absent []string
	}{
		{"discover", "server/discover", ``, map[string]string{"MCP-Protocol-Version": modernVersion, "Mcp-Method": "server/discover"}, []string{"Mcp-Name"}},
		{"list", "tools/list", ``, map[string]string{"Mcp-Method": "tools/list"}, []string{"Mcp-Name"}},
		{"call mirrors params", "tools/call", `{"name":"sql","arguments":{"region":"us-west1","limit":42,"dry":false,"opts":{"tag":"Hello, 世界"},"query":"SELECT 1"}}`,
			map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "sql", "Mcp-Param-Region": "us-west1", "Mcp-Param-Limit": "42", "Mcp-Param-Dry": "false", "Mcp-Param-Tag": "=?base64?SGVsbG8sIOS4lueVjA==?="}, nil},
		{"null and absent omitted", "tools/call", `{"name":"sql","arguments":{"region":null}}`, map[string]string{"Mcp-Name": "sql"}, []string{"Mcp-Param-Region", "Mcp-Param-Limit", "Mcp-Param-Dry", "Mcp-Param-Tag"}},
		{"non-integer number omitted", "tools/call", `{"name":"sql","arguments":{"limit":1.5}}`, map[string]string{"Mcp-Name": "sql"}, []string{"Mcp-Param-Limit"}},
		{"unlisted tool", "tools/call", `{"name":"other","arguments":{"region":"x"}}`, map[string]string{"Mcp-Name": "other"}, []string{"Mcp-Param-Region"}},
		{"resource uri", "resources/read", `{"uri":"file:///a b.txt"}`, map[string]string{"Mcp-Method": "resources/read", "Mcp-Name": "file:///a b.txt"}, nil},
		{"prompt name encoded", "prompts/get", `{"name":" spaced "}`, map[string]string{"Mcp-Name": "=?base64?IHNwYWNlZCA=?="}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var sent wireMsg
			if tc.method == "server/discover" {
				sent = s.requests("server/discover")[0]
			} else {
				before := len(s.requests(tc.method))
				var p []byte
				if tc.params != "" {
					p = []byte(tc.params)
				}
				_, cerr := c.CallSync(tc.method, p, CallOptions{})
				require.Nil(t, errOrNil(cerr))
				sent = s.requests(tc.method)[before]
			}
			got := ht.headersOf(t, sent)
			require.Equal(t, modernVersion, got["MCP-Protocol-Version"], "on every request, equal to _meta's")
			for k, v := range tc.want {
				require.Equal(t, v, got[k], k)
			}
			for _, k := range tc.absent {
				require.NotContains(t, got, k)
			}
		})
	}

	t.Run("cancel closes the stream", func(t *testing.T) {
		s.handle("tools/call", func(*fakeServer, wireMsg) reply { return reply{none: true} })
		before := len(s.requests("tools/call"))
		id, ch := asyncCall(t, c, "tools/call", `{"name":"sql"}`, CallOptions{})
		require.Eventually(t, func() bool { return len(s.requests("tools/call")) > before }, 3*time.Second, 5*time.Millisecond)
		call := s.requests("tools/call")[before]
		require.Nil(t, errOrNil(c.Cancel(id)))
		require.Equal(t, StatusCancelled, waitCompletion(t, ch).status)
		var reqID int64
		require.NoError(t, json.Unmarshal(call.ID, &reqID))
		ht.mu.Lock()
		aborted := append([]int64(nil), ht.aborted...)
		ht.mu.Unlock()
		require.Equal(t, []int64{reqID}, aborted)
		_, notified := s.waitFor(func(m wireMsg) bool { return m.Method == "notifications/cancelled" })
		require.False(t, notified)
	})
}

// Legacy messages carry no headers at all: that path stays as it was.
func TestLegacyCarriesNoHeaders(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	c, ht := headerClient(t, s, legacyOptions())
	_, err := c.CallSync("tools/call", []byte(`{"name":"echo","arguments":{"text":"x"}}`), CallOptions{})
	require.Nil(t, errOrNil(err))
	ht.mu.Lock()
	defer ht.mu.Unlock()
	for id, h := range ht.headers {
		require.Nil(t, h, "message %d", id)
	}
}
