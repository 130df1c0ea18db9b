package core

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// TestMalformedResponsesFailFast: a broken response that carries the id of
// a pending request fails that call at once with StatusProtocol naming
// what was wrong, long before its timeout.
func TestMalformedResponsesFailFast(t *testing.T) {
	cases := []struct {
		name, method, params string
		all                  bool
		reply                string // %s is the request id
		want                 string
	}{
		{"no jsonrpc", "tools/call", `{"name":"x"}`, false, `{"id":%s,"result":{"content":[]}}`, `has no "jsonrpc" member`},
		{"wrong jsonrpc", "tools/call", `{"name":"x"}`, false, `{"jsonrpc":"1.0","id":%s,"result":{"content":[]}}`, `not "2.0"`},
		{"result and error", "tools/call", `{"name":"x"}`, false, `{"jsonrpc":"2.0","id":%s,"result":{"content":[]},"error":{"code":1,"message":"m"}}`, `both "result" and "error"`},
		{"result not an object", "tools/call", `{"name":"x"}`, false, `{"jsonrpc":"2.0","id":%s,"result":[1,2]}`, `result that is an array, not an object`},
		{"content not an array", "tools/call", `{"name":"x"}`, false, `{"jsonrpc":"2.0","id":%s,"result":{"content":"text"}}`, `"content" member that is a string, not an array`},
		{"broken JSON", "tools/call", `{"name":"x"}`, false, `{"jsonrpc": "2.0", "id": %s, "result": {"content": [}`, `is not valid JSON`},
		{"list without its member", "tools/list", ``, false, `{"jsonrpc":"2.0","id":%s,"result":{"nextCursor":null}}`, `without its "tools" member`},
		{"all pages without the member", "tools/list", ``, true, `{"jsonrpc":"2.0","id":%s,"result":{}}`, `without its "tools" member`},
		{"ping answered with null", "ping", ``, false, `{"jsonrpc":"2.0","id":%s,"result":null}`, `result that is null`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeServer(t, "2025-11-25", defaultCaps())
			s.handle(tc.method, func(s *fakeServer, m wireMsg) reply {
				s.peer.Write([]byte(fmt.Sprintf(tc.reply, m.ID)))
				return reply{none: true}
			})
			c := readyClient(t, s, testOptions())
			defer c.Close(time.Second)
			opts := CallOptions{Timeout: time.Minute, TimeoutSet: true, AllPages: tc.all}
			_, ch := asyncCall(t, c, tc.method, tc.params, opts)
			got := waitCompletion(t, ch)
			require.Equal(t, StatusProtocol, got.status, "%s", got.data)
			var e struct{ Message string }
			require.NoError(t, json.Unmarshal(got.data, &e))
			require.Contains(t, e.Message, tc.want)
			require.Equal(t, 0, c.pendingCount())
		})
	}
}

// TestMalformedResponseWithUnknownIDIsLogged: nothing waits for it, so it
// is only logged.
func TestMalformedResponseWithUnknownIDIsLogged(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	c := s.client(testOptions())
	ev := recordEvents(c)
	require.Nil(t, errOrNil(c.Connect()))
	require.Nil(t, errOrNil(c.WaitReady(3*time.Second)))
	defer c.Close(time.Second)
	s.peer.Write([]byte(`{"id":4242,"result":{}}`))
	require.True(t, ev.logContains("answers no pending request"))
}

// TestInvalidUTF8BecomesReplacement: each run of bytes that are not UTF-8
// in a server message becomes one U+FFFD in what the host gets: results,
// notifications and server error messages alike; a log says so.
func TestInvalidUTF8BecomesReplacement(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	s.handle("tools/call", func(s *fakeServer, m wireMsg) reply {
		s.peer.Write([]byte(fmt.Sprintf("{\"jsonrpc\": \"2.0\", \"id\": %s, \"result\": {\"content\": [{\"type\": \"text\", \"text\": \"bad \xff\xfe byte, cut \xe2\x82\"}]}}", m.ID)))
		return reply{none: true}
	})
	s.handle("prompts/get", func(s *fakeServer, m wireMsg) reply {
		s.peer.Write([]byte(fmt.Sprintf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32000,\"message\":\"no \xc3(\"}}", m.ID)))
		return reply{none: true}
	})
	c := s.client(testOptions())
	ev := recordEvents(c)
	require.Nil(t, errOrNil(c.Connect()))
	require.Nil(t, errOrNil(c.WaitReady(3*time.Second)))
	defer c.Close(time.Second)

	out, err := c.CallSync("tools/call", []byte(`{"name":"x"}`), CallOptions{})
	require.Nil(t, errOrNil(err))
	require.True(t, utf8.Valid(out))
	var r struct {
		Content []struct{ Text string }
	}
	require.NoError(t, json.Unmarshal(out, &r))
	require.Equal(t, "bad \uFFFD byte, cut \uFFFD", r.Content[0].Text)

	_, err = c.CallSync("prompts/get", []byte(`{"name":"x"}`), CallOptions{})
	require.NotNil(t, err)
	require.Equal(t, StatusProtocol, err.Status)
	require.Equal(t, "no \uFFFD(", err.Message)
	require.True(t, utf8.Valid(err.JSON()))

	s.peer.Write([]byte("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"\xc0\xaf\"}}"))
	got, ok := ev.wait("notification")
	require.True(t, ok)
	require.True(t, utf8.Valid(got))
	require.Contains(t, string(got), "\uFFFD")
	require.True(t, ev.logContains("not valid UTF-8"))
	for _, l := range ev.all("log") {
		require.True(t, utf8.Valid(l))
	}
}

// A message that is not JSON-RPC is reported with why, never quoted: a
// server may reflect a secret it was given.
func TestRejectedMessagesAreNotQuoted(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	c := s.client(testOptions())
	ev := recordEvents(c)
	require.Nil(t, errOrNil(c.Connect()))
	require.Nil(t, errOrNil(c.WaitReady(3*time.Second)))
	defer c.Close(time.Second)
	s.peer.Write([]byte(`{"env":{"API_KEY":"sk-env-0123456789"}}`))
	s.peer.Write([]byte(`{"jsonrpc":"1.0","method":"x","params":{"k":"sk-env-0123456789"}}`))
	require.True(t, ev.logContains("has neither a method nor an id with a result or error"))
	require.True(t, ev.logContains(`it has no \"jsonrpc\":\"2.0\" member`))
	for _, l := range ev.all("log") {
		require.NotContains(t, string(l), "sk-env")
	}
}
