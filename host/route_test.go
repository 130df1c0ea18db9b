package host

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// TestGuessedRoute: a tool name routed by its server prefix alone (before
// the host listed its tools, or a tool the catalogue leaves out) is read
// against the server's list: the host's name of one of its tools is a use
// of that tool (refused as that tool, sent by its own name), in the guard
// chain as in ToolRoute; two tools of that name are an error naming both.
func TestGuessedRoute(t *testing.T) {
	h, err := Parse([]byte(`{"mcpServers":{"r":{"command":"/nonexistent/lmcp-test","enabled":false,"tools":{"deny":["no way"]}}}}`), "test")
	require.Nil(t, err)
	t.Cleanup(h.Free)
	s := h.servers[0]
	long := strings.Repeat("long name ", 15)
	tool := func(name string) item {
		return item{name: name, raw: jsonx.MustMarshal(map[string]string{"name": name})}
	}

	// Before any list, the guess stands.
	before, err := h.ToolRoute("r__echo_it")
	require.Nil(t, err)
	require.JSONEq(t, `{"server":"r","original_name":"echo_it"}`, string(before))

	s.listThroughGuards(listTools, []item{tool("echo it"), tool("bad\u200bname"), tool("no way"), tool("a b"), tool("a\tb"), tool("x_y"), tool("x y"), tool("plain"), tool(long)})
	cases := []struct {
		name   string // as called
		tool   string // the server's own name it is a use of
		status core.Status
		msg    string // the refusal names
	}{
		{name: "r__echo_it", tool: "echo it"},
		{name: "r__echo it", tool: "echo it"},
		{name: "r__plain", tool: "plain"},
		{name: "r__x_y", tool: "x_y"}, // offered by that name: never another's
		{name: "r__zz_top", tool: "zz_top"},
		{name: boundedName("r__" + exposedName(long)), tool: long},
		{name: "r__bad_name", tool: "bad\u200bname", status: core.StatusPolicyDenied, msg: `the tool "badname" of the server "r" is held: its name carries hidden characters`},
		{name: "r__no_way", tool: "no way", status: core.StatusPolicyDenied, msg: `the tool "no way" of the server "r" is not allowed`},
		{name: "r__a_b", status: core.StatusInvalidArgument, msg: `the tool name "r__a_b" is the host's name of 2 tools of the server "r", "a\tb" and "a b"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := h.knownRoute(tc.name)
			require.True(t, ok)
			require.True(t, r.guessed)
			use := &guardReq{op: guardUse, s: s, k: listTools, name: r.tool, guessed: true}
			params := []byte(`{"name":` + jsonQuote(r.tool) + `,"arguments":{"text":"hi"}}`)
			err := h.guards(use)
			got, rerr := h.ToolRoute(tc.name)
			if tc.status == core.StatusInvalidArgument {
				require.NotNil(t, err)
				require.Equal(t, tc.status, err.Status)
				require.Contains(t, err.Message, tc.msg)
				require.Equal(t, err, rerr, "ToolRoute says what the call says")
				return
			}
			require.Nil(t, rerr)
			require.JSONEq(t, string(jsonx.MustMarshal(map[string]string{"server": "r", "original_name": tc.tool})), string(got))
			require.Equal(t, tc.tool, use.name)
			if tc.status != core.StatusOK {
				require.NotNil(t, err)
				require.Equal(t, tc.status, err.Status)
				require.Contains(t, err.Message, tc.msg)
				return
			}
			require.Nil(t, err)
			require.JSONEq(t, `{"name":`+jsonQuote(tc.tool)+`,"arguments":{"text":"hi"}}`, string(use.retarget(params)))
		})
	}

	// Found in the catalogue, a route is no guess: the chain takes it as is.
	h.mu.Lock()
	h.routes = map[string]route{"r__echo_it": {srv: s, tool: "echo it"}}
	h.mu.Unlock()
	r, ok := h.knownRoute("r__echo_it")
	require.True(t, ok)
	require.False(t, r.guessed)
	require.Equal(t, "echo it", r.tool)
}
