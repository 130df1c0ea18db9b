package host

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// TestGuardChain: a list and a use of what it held or filtered meet the
// same stages: what a list leaves out, a use of it is refused, with the
// stage's own reason (held as data, or the tool filters).
func TestGuardChain(t *testing.T) {
	h, err := Parse([]byte(`{"mcpServers":{"a":{"command":"/nonexistent/lmcp-test","enabled":false,"tools":{"deny":["denied"]}}}}`), "test")
	require.Nil(t, err)
	t.Cleanup(h.Free)
	s := h.servers[0]
	items := []item{
		{name: "ok", raw: []byte(`{"name":"ok","description":"fine\u200b"}`)},
		{name: "denied", raw: []byte(`{"name":"denied"}`)},
		{name: "bad\u200bname", raw: []byte(`{"name":"bad\u200bname"}`)},
	}
	listed := s.listThroughGuards(listTools, items)
	require.Len(t, listed, 1)
	require.Equal(t, "ok", listed[0].name)
	require.JSONEq(t, `{"name":"ok","description":"fine"}`, string(listed[0].raw), "hidden characters removed")

	cases := []struct {
		name, message string
		status        core.Status
		held          string // the held reason's status, as data
	}{
		{"ok", "", core.StatusOK, ""},
		{"denied", "is not allowed by its tools.allow/tools.deny", core.StatusPolicyDenied, ""},
		{"bad\u200bname", "its name carries hidden characters", core.StatusPolicyDenied, PinFlagged},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := h.guards(&guardReq{op: guardUse, s: s, k: listTools, name: tc.name})
			if tc.status == core.StatusOK {
				require.Nil(t, err)
				return
			}
			require.NotNil(t, err)
			require.Equal(t, tc.status, err.Status)
			require.Contains(t, err.Message, tc.message)
			if tc.held == "" {
				return
			}
			var data struct {
				Held map[string]string `json:"held"`
			}
			require.NoError(t, jsonx.Unmarshal(err.Data, &data))
			require.Equal(t, map[string]string{"server": "a", "kind": "tool", "name": "badname", "status": tc.held}, data.Held)
		})
	}

	// The host's aggregated list passes the chain's last stage.
	h.cfg.Deferred = &DeferredConfig{MaxResults: 5}
	r := &guardReq{op: guardExpose, h: h, cat: &catalogue{raws: []jsonx.RawMessage{[]byte(`{"name":"ok"}`)}}}
	require.Nil(t, h.guards(r))
	require.Len(t, r.exposed, 1)
	require.Contains(t, string(r.exposed[0]), `"name":"`+SearchToolName+`"`, "deferred: only the search tool")
}
