package core

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lemonmcp/lemonmcp/internal/jsonstyle"
	"github.com/stretchr/testify/require"
)

// sameJSON reports whether a and b are the same JSON value (numbers
// compared as float64, as a host's decoder would).
func sameJSON(t *testing.T, a, b []byte) {
	t.Helper()
	var va, vb any
	require.NoError(t, json.Unmarshal(a, &va), "%q", a)
	require.NoError(t, json.Unmarshal(b, &vb), "%q", b)
	require.Equal(t, va, vb)
}

func TestDecodeEnvelopeAnySpelling(t *testing.T) {
	compact := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"héllo"}]}}`
	cases := []struct{ name, in string }{
		{"compact", compact},
		{"json.dumps defaults", `{"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "héllo"}]}}`},
		{"pretty printed", "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {\n    \"content\": [\n      {\"type\": \"text\", \"text\": \"héllo\"}\n    ]\n  }\n}"},
		{"crlf and tabs", "{\r\n\t\"jsonrpc\"\t:\t\"2.0\" ,\r\n\t\"id\"\r\n:\r\n1,\"result\" : {\"content\":[{\"type\":\"text\",\"text\":\"héllo\"}]}\r\n}"},
		{"reverse key order", `{"result":{"content":[{"text":"héllo","type":"text"}]},"id":1,"jsonrpc":"2.0"}`},
		{"escapes everywhere", `{"\u006asonrpc":"2\u002e0","\u0069d":1,"result":{"content":[{"type":"text","text":"h\u00e9llo"}]}}`},
		{"id 1.0e0", `{"jsonrpc":"2.0","id":1.0e0,"result":{"content":[{"type":"text","text":"héllo"}]}}`},
		{"id 10e-1", `{"jsonrpc":"2.0","id":10e-1,"result":{"content":[{"type":"text","text":"héllo"}]}}`},
		{"empty member name", `{"":{"x":1},"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"héllo"}]}}`},
	}
	var want envelope
	require.NoError(t, decodeEnvelope([]byte(compact), &want))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var env envelope
			require.NoError(t, decodeEnvelope([]byte(tc.in), &env))
			require.True(t, env.versionOK)
			require.True(t, env.idIsInt)
			require.Equal(t, int64(1), env.id)
			require.True(t, env.hasResult)
			require.NotContains(t, " \t\r\n", string(env.result[0]))
			sameJSON(t, want.result, env.result)
		})
	}
}

func TestDecodeEnvelopeIDKinds(t *testing.T) {
	cases := []struct {
		name, in string
		isInt    bool
		bad      bool
		raw      string
	}{
		{"string that looks numeric", `{"jsonrpc":"2.0","id": "1","result":{}}`, false, false, `"1"`},
		{"fraction", `{"jsonrpc":"2.0","id":1.5,"result":{}}`, false, false, `1.5`},
		{"null", `{"jsonrpc":"2.0","id" : null,"error":{"code":-32700,"message":"parse"}}`, false, false, `null`},
		{"object", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, false, true, `{"a":1}`},
		{"bool", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, false, true, `true`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var env envelope
			require.NoError(t, decodeEnvelope([]byte(tc.in), &env))
			require.Equal(t, tc.isInt, env.idIsInt)
			require.Equal(t, tc.bad, env.badID)
			require.Equal(t, tc.raw, string(env.idRaw))
		})
	}
}

// styles are the interoperability corpus's JSON styles, one feature each
// and all together.
var styles = []struct {
	name  string
	style jsonstyle.Style
}{
	{"json.dumps defaults", jsonstyle.Style{Spaces: true}},
	{"JSON.stringify indent 2", jsonstyle.Style{Indent: true}},
	{"CRLF pretty", jsonstyle.Style{Indent: true, CRLF: true}},
	{"reverse keys", jsonstyle.Style{ReverseKeys: true}},
	{"escape non-ASCII", jsonstyle.Style{EscapeAll: true}},
	{"numbers as 1.0e0", jsonstyle.Style{NumberSpells: true}},
	{"everything", jsonstyle.Style{Spaces: true, Indent: true, CRLF: true, ReverseKeys: true, EscapeAll: true, NumberSpells: true}},
}

// TestRestyledServer runs the handshake, a tool call, a notification and a
// server request against a server writing each style.
func TestRestyledServer(t *testing.T) {
	for _, st := range styles {
		t.Run(st.name, func(t *testing.T) {
			s := newFakeServer(t, "2025-11-25", defaultCaps())
			style := st.style
			style.Rand = rand.New(rand.NewSource(1))
			s.style = &style
			c := s.client(testOptions())
			ev := recordEvents(c)
			require.Nil(t, errOrNil(c.Connect()))
			require.Nil(t, errOrNil(c.WaitReady(3*time.Second)))
			defer c.Close(time.Second)

			out, err := c.CallSync("tools/call", []byte(`{"name":"echo","arguments":{"text":"grüße ✓ 𝄞"}}`), CallOptions{})
			require.Nil(t, errOrNil(err))
			sameJSON(t, []byte(`{"content":[{"type":"text","text":"grüße ✓ 𝄞"}]}`), out)

			s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": "ünïcode"}})
			got, ok := ev.wait("notification")
			require.True(t, ok)
			sameJSON(t, []byte(`{"method":"notifications/message","params":{"level":"info","data":"ünïcode"}}`), got)

			s.write(map[string]any{"jsonrpc": "2.0", "id": 77, "method": "ping"})
			m, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "" && len(m.Result) > 0 })
			require.True(t, ok, "the client did not answer the server's ping")
			sameJSON(t, []byte(`77`), m.ID)
		})
	}
}

// TestResponseIDsComparedAsValues: a string id that spells one of our
// numbers answers nothing; an id we never sent is logged and dropped.
func TestResponseIDsComparedAsValues(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	s.handle("tools/call", func(s *fakeServer, m wireMsg) reply {
		s.peer.Write([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":"%s","result":{"content":[]}}`, m.ID)))
		s.peer.Write([]byte(`{"jsonrpc":"2.0","id":999,"result":{"content":[]}}`))
		return reply{result: map[string]any{"content": []any{map[string]any{"type": "text", "text": "real"}}}}
	})
	c := s.client(testOptions())
	ev := recordEvents(c)
	require.Nil(t, errOrNil(c.Connect()))
	require.Nil(t, errOrNil(c.WaitReady(3*time.Second)))
	defer c.Close(time.Second)
	out, err := c.CallSync("tools/call", []byte(`{"name":"x"}`), CallOptions{})
	require.Nil(t, errOrNil(err))
	require.Contains(t, string(out), "real")
	require.True(t, ev.logContains("never used by this client"))
	require.True(t, ev.logContains("unknown response (id 999)"))
}

// logContains waits up to 3 s for a log event containing text.
func (e *events) logContains(text string) bool {
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		for _, l := range e.all("log") {
			if strings.Contains(string(l), text) {
				return true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// recordedMessages are real messages as servers sent them, the corpus the
// re-serialisation property starts from.
var recordedMessages = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true},"logging":{}},"serverInfo":{"name":"everything","version":"1.0.0"},"instructions":"Testing server ✓"}}`,
	`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","description":"Echoes","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}],"nextCursor":"c2"}}`,
	`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Echo: héllo 𝄞 \"quoted\" \\ back"}],"isError":false}}`,
	`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Unknown tool: nope","data":{"tool":"nope"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":0.5,"total":1,"message":"half"}}`,
	`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"x","data":{"n":[1,2.5,-3e2,true,null]}}}`,
	`{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"日本語"}}],"maxTokens":100}}`,
	`{"jsonrpc":"2.0","id":12,"method":"roots/list"}`,
	`{"jsonrpc":"2.0","id":5,"result":{}}`,
}

// checkRestyled asserts that msg in style st decodes to what its compact
// form decodes to.
func checkRestyled(t *testing.T, msg []byte, st jsonstyle.Style) {
	t.Helper()
	var want envelope
	if decodeEnvelope(msg, &want) != nil {
		return
	}
	styled := jsonstyle.Restyle(msg, st)
	var got envelope
	require.NoError(t, decodeEnvelope(styled, &got), "%s", styled)
	require.Equal(t, want.versionOK, got.versionOK, "%s", styled)
	require.Equal(t, want.method, got.method, "%s", styled)
	require.Equal(t, want.hasID, got.hasID, "%s", styled)
	require.Equal(t, want.idIsInt, got.idIsInt, "%s", styled)
	require.Equal(t, want.id, got.id, "%s", styled)
	for _, pair := range [][2][]byte{{want.idRaw, got.idRaw}, {want.params, got.params}, {want.result, got.result}, {want.errRaw, got.errRaw}} {
		require.Equal(t, pair[0] == nil, pair[1] == nil, "%s", styled)
		if pair[0] != nil {
			sameJSON(t, pair[0], pair[1])
		}
	}
}

func TestRestyledMessagesDecodeAlike(t *testing.T) {
	r := rand.New(rand.NewSource(42))
	for i, msg := range recordedMessages {
		for n := 0; n < 50; n++ {
			checkRestyled(t, []byte(msg), jsonstyle.Random(r))
		}
		t.Logf("message %d: 50 styles", i)
	}
}

// FuzzRestyledMessages is the property as a fuzz target: any valid message
// object, re-serialised in a random valid style, decodes to what its
// compact form decodes to.
func FuzzRestyledMessages(f *testing.F) {
	for i, msg := range recordedMessages {
		f.Add([]byte(msg), int64(i))
	}
	f.Fuzz(func(t *testing.T, msg []byte, seed int64) {
		// A JSON text is UTF-8 (RFC 8259 §8.1); json.Unmarshal accepts other
		// bytes in strings, but a re-serialisation cannot keep them (the
		// core turns them into U+FFFD before decoding anyway).
		var v map[string]any
		if !utf8.Valid(msg) || json.Unmarshal(msg, &v) != nil {
			return
		}
		checkRestyled(t, msg, jsonstyle.Random(rand.New(rand.NewSource(seed))))
	})
}

func TestSameID(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{`5`, ` 5`, true},
		{`5`, `5.0e0`, true},
		{`"a"`, `"\u0061"`, true},
		{`"5"`, `5`, false},
		{`5`, `6`, false},
		{``, ``, false},
		{`null`, `null`, true},
	} {
		require.Equal(t, tc.same, sameID([]byte(tc.a), []byte(tc.b)), "%s %s", tc.a, tc.b)
	}
}
