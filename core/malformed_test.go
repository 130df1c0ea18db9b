package core

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

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
