package host

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// TestBindFreesAHalfBoundClient: a new generation's client whose handlers
// cannot all be installed is freed, not left running half bound.
func TestBindFreesAHalfBoundClient(t *testing.T) {
	h, err := Parse([]byte(`{"mcpServers":{"a":{"command":"/nonexistent/lmcp-test"}}}`), "test")
	require.Nil(t, err)
	t.Cleanup(h.Free)
	s := h.servers[0]
	cases := []struct {
		name    string
		prepare func(c *core.Client) // what makes a registration fail, if anything
		status  core.Status          // bind's error; StatusOK: none
	}{
		{"every handler installed", func(*core.Client) {}, core.StatusOK},
		// The event handler goes in; the app-request handler is refused
		// (a closed client takes none).
		{"the app-request handler refused", func(c *core.Client) { require.Nil(t, c.Close(0)) }, core.StatusInvalidState},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, perr := config.ParseSupervised(s.cfg.Client, "test")
			require.Nil(t, perr)
			client := core.New(p.Options, p.Transport)
			c.prepare(client)
			berr := s.bind(client, s.gen())
			_, callErr := client.Call("ping", nil, core.CallOptions{}, func(uint64, core.Status, []byte) {})
			require.NotNil(t, callErr)
			if c.status == core.StatusOK {
				require.Nil(t, berr)
				require.NotEqual(t, core.StatusInvalidHandle, callErr.Status, "a bound client is not freed")
				client.Free()
				return
			}
			require.NotNil(t, berr)
			require.Equal(t, c.status, berr.Status, berr.Message)
			require.Equal(t, core.StatusInvalidHandle, callErr.Status, "the half-bound client was freed: %s", callErr.Message)
		})
	}
}
